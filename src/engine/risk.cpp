// Engine: funding, the dead man's switch, the circuit breaker, and the liquidation index that
// decides which accounts the risk pass looks at after a tx (ENGINE.md "Risk lifecycle").
#include <algorithm>

#include "context.hpp"
#include "tachyon/engine/engine.hpp"

namespace tachyon {

namespace {
constexpr int64_t kRateOne = 1'000'000'000;       // funding rates and premiums: 1e-9
constexpr int64_t kDriftOne = 1'000'000'000'000;  // liquidation index drift: 1e-12
constexpr __int128 kMaxDistance = kDriftOne / 2;  // distances are capped at 50% (risk.cpp proof)

int64_t sat64(__int128 v) {
  return static_cast<int64_t>(std::clamp<__int128>(v, INT64_MIN, INT64_MAX));
}

// Impact price of one side: the book's average price to fill `impact` micro-USDC, as the exact
// fraction notional / (lots × quote_multiplier). False when the side is too thin.
bool impact_price(const Market& m, bool asks, Usdc impact, __int128& notional, __int128& lots) {
  notional = 0;
  lots = 0;
  for (size_t i = 0; i < m.book.level_count(asks); ++i) {
    const Level& l = m.book.level(asks, i);
    const __int128 unit = m.notional(1, l.price);
    const __int128 need = ceil_div(impact - notional, unit);
    const __int128 q = std::min<__int128>(need, l.total);
    notional += q * unit;
    lots += q;
    if (notional >= impact) return true;
  }
  return false;
}
}  // namespace

// ---- funding ----

int64_t Engine::premium_now(MarketId id) const {
  const Market& m = markets_[id];
  if (!m.exists || m.index_price <= 0) return 0;
  const __int128 idx = m.index_price;
  __int128 n = 0, l = 0;
  __int128 premium = 0;  // (max(0, impactBid − index) − max(0, index − impactAsk)) / index
  if (impact_price(m, false, cfg_.impact_notional, n, l)) {
    const __int128 diff = n - idx * l * m.quote_multiplier;  // impactBid − index, × lots·qm
    if (diff > 0) premium += div_trunc(diff * kRateOne, idx * l * m.quote_multiplier);
  }
  if (impact_price(m, true, cfg_.impact_notional, n, l)) {
    const __int128 diff = idx * l * m.quote_multiplier - n;  // index − impactAsk
    if (diff > 0) premium -= div_trunc(diff * kRateOne, idx * l * m.quote_multiplier);
  }
  return sat64(premium);
}

int64_t Engine::funding_estimate(MarketId id) const {
  const Market& m = markets_[id];
  const int64_t premium = m.premium_samples > 0 ? m.premium_sum / m.premium_samples : 0;
  const int64_t small = int64_t{m.params.funding_clamp_small} * 1000;
  const int64_t big = int64_t{m.params.funding_clamp_big} * 1000;
  const int64_t interest = int64_t{m.params.interest_rate} * 1000;
  const int64_t r = premium + std::clamp(interest - premium, -small, small);
  return std::clamp(r, -big, big) / 8;
}

// The server's clock submits it as an internal tx (no nonce: kTxFlagInternal, which no parser
// sets); the operator may also send one over the admin port, signed, with the operator nonce.
// Journaled like every tx, so a replay samples and pays exactly the same.
Reject Engine::funding_tick(const Tx& tx, Ctx& c) {
  if (!is_internal_tx(tx.h)) {
    if (Reject r = check_operator(tx); r != Reject::kOk) return r;
  }
  const MarketId only = tx.funding.market;
  if (only != kAllMarkets && (only >= kMaxMarkets || !markets_[only].exists))
    return Reject::kInvalidMarket;
  if (!is_internal_tx(tx.h)) ++operator_nonce_;
  const int64_t interval = std::max<int64_t>(cfg_.funding_interval_ms, 1);
  for (Market& m : markets_) {
    if (!m.exists || (only != kAllMarkets && m.id != only)) continue;
    if (m.status() == MarketStatus::kHalted) continue;  // no price discovery: no sample
    m.premium_sum += premium_now(m.id);
    ++m.premium_samples;
    const int64_t next = (c.now_ms / interval + 1) * interval;
    if (m.next_funding_ms == 0) {
      m.next_funding_ms = next;
      emit_funding(c, m, false, 0, 0);
    } else if (c.now_ms >= m.next_funding_ms) {
      const int64_t rate = funding_estimate(m.id);
      m.premium_sum = 0;
      m.premium_samples = 0;
      m.last_funding_rate = rate;
      m.last_funding_ms = c.now_ms;
      m.next_funding_ms = next;
      settle_funding(c, m, rate);
    } else {
      emit_funding(c, m, false, 0, 0);
    }
  }
  return Reject::kOk;
}

// Every position pays or receives size × mark × rate: the paying side rounds up, the receiving
// side down, and the residue goes to the fee account, so not one micro-USDC is created.
void Engine::settle_funding(Ctx& c, Market& m, int64_t rate) {
  ++risk_stats_.funding_payments;
  Usdc paid = 0, received = 0;
  if (rate != 0) {
    std::vector<uint32_t> holders = m.holders;
    std::sort(holders.begin(), holders.end());  // deterministic across restarts
    for (uint32_t slot : holders) {
      Account& a = accounts_[slot];
      Position& p = *a.position(m.id);
      const __int128 amount = m.notional(p.size, m.mark_price) * rate;  // > 0: pays
      const Usdc delta = amount > 0 ? -static_cast<Usdc>(ceil_div(amount, kRateOne))
                                    : static_cast<Usdc>(div_trunc(-amount, kRateOne));
      if (delta == 0) continue;
      (delta < 0 ? paid : received) += delta < 0 ? -delta : delta;
      (p.isolated ? p.allocated : a.collateral) += delta;  // an isolated position pays its own
      p.funding_paid -= delta;
      emit_position(c, a, p);
      if (!p.isolated) emit_balance(c, a, delta, BalanceReason::kFunding);
      c.risk(slot);
    }
  }
  const Usdc residue = paid - received;
  // Payers round up, receivers down, and longs = shorts: funding never pays out more than it
  // collects.
  TACHYON_ASSERT(residue >= 0, "funding paid out more than it collected");
  if (residue > 0) {
    Account& fee = accounts_[kFeeAccountSlot];
    fee.collateral += residue;
    emit_balance(c, fee, residue, BalanceReason::kFunding);
  }
  emit_funding(c, m, true, paid, residue);
}

void Engine::emit_funding(Ctx& c, const Market& m, bool settled, Usdc paid, Usdc residue) {
  StateUpdate u = c.make(UpdateType::kFunding);
  u.funding = FundingUpdate{funding_estimate(m.id),
                            m.last_funding_rate,
                            m.last_funding_ms,
                            m.next_funding_ms,
                            paid,
                            residue,
                            m.mark_price,
                            m.id,
                            static_cast<uint8_t>(settled)};
  c.sink.on_update(u);
}

// ---- the dead man's switch ----

void Engine::fire_scheduled_cancels(Ctx& c) {
  while (!scheduled_cancels_.empty() && scheduled_cancels_.begin()->first <= c.now_ms) {
    const uint32_t slot = scheduled_cancels_.begin()->second;
    scheduled_cancels_.erase(scheduled_cancels_.begin());
    accounts_[slot].cancel_all_at_ms = 0;
    cancel_account_orders(c, slot, kAllMarkets, RemoveReason::kScheduledCancelAll);
  }
}

// ---- circuit breaker ----

void Engine::clear_breakers(Ctx& c) {
  for (int w = 0; w < 4; ++w) {
    for (uint64_t bits = breaker_markets_[w]; bits != 0; bits &= bits - 1) {
      Market& m = markets_[w * 64 + __builtin_ctzll(bits)];
      if (c.now_ms < m.breaker_until_ms) continue;
      m.breaker_level = 0;
      m.window_start_ms = c.now_ms;
      m.window_ref = m.mark_price;
      breaker_markets_[w] &= ~(uint64_t{1} << (m.id & 63));
      emit_market(c, m);
      emit_risk(c, accounts_[kFeeAccountSlot], m.id, RiskEvent::kBreakerCleared, MarginInfo{}, 0);
    }
  }
}

// A move of more than the band from the window's reference trips the breaker one level up
// (post-only, then halted) and starts the cool-down again.
void Engine::breaker_on_mark(Ctx& c, Market& m, Ticks old_mark) {
  const Bps4 band = m.params.breaker_band;
  if (band <= 0) return;
  const int64_t window = int64_t{m.params.breaker_window_s} * 1000;
  if (m.window_ref <= 0 || c.now_ms - m.window_start_ms >= window) {
    m.window_start_ms = c.now_ms;
    m.window_ref = old_mark;
  }
  const __int128 ref = m.window_ref;
  const __int128 dev = m.mark_price > ref ? m.mark_price - ref : ref - m.mark_price;
  if (dev * kFractionOne <= ref * band) return;
  m.breaker_level = static_cast<uint8_t>(std::min(m.breaker_level + 1, 2));
  m.breaker_until_ms = c.now_ms + int64_t{m.params.breaker_cooldown_s} * 1000;
  m.window_start_ms = c.now_ms;
  m.window_ref = m.mark_price;
  breaker_markets_[m.id >> 6] |= uint64_t{1} << (m.id & 63);
  emit_market(c, m);
  emit_risk(c, accounts_[kFeeAccountSlot], m.id,
            m.breaker_level == 1 ? RiskEvent::kBreakerPostOnly : RiskEvent::kBreakerHalted,
            MarginInfo{}, 0);
}

void Engine::emit_risk(Ctx& c, const Account& a, MarketId m, RiskEvent e, const MarginInfo& mi,
                       Usdc amount) {
  StateUpdate u = c.make(UpdateType::kRisk);
  u.risk = RiskUpdate{a.index, sat64(mi.tav), sat64(mi.mmr), amount, m, e};
  c.sink.on_update(u);
}

// ---- holders and the liquidation index ----

void Engine::track_holder(Market& m, uint32_t slot, Position& p) {
  if (p.size != 0 && p.holder_pos == kNoSlot) {
    p.holder_pos = static_cast<uint32_t>(m.holders.size());
    m.holders.push_back(slot);
  } else if (p.size == 0 && p.holder_pos != kNoSlot) {
    const uint32_t last = m.holders.back();
    m.holders[p.holder_pos] = last;
    if (last != slot) accounts_[last].position(m.id)->holder_pos = p.holder_pos;
    m.holders.pop_back();
    p.holder_pos = kNoSlot;
    if (p.risk_key != kNoRiskKey) m.risk_index.erase({p.risk_key, slot});
    p.risk_key = kNoRiskKey;
  }
}

void Engine::unindex(uint32_t slot) {
  for (Position& p : accounts_[slot].positions) {
    if (p.risk_key != kNoRiskKey) markets_[p.market].risk_index.erase({p.risk_key, slot});
    p.risk_key = kNoRiskKey;
  }
}

// Why the index is safe. Let slack = TAV − MMR − 2 micro-USDC per position (MMR rounds up by at
// most 1 per position) and E = Σ|S_i|·mark_i·(1 + MMF_i). An account is keyed, in each market it
// holds, at drift + δ with δ = min(slack / E, 0.5) / 2 ≤ 0.25. While no market's drift has grown
// by δ, every mark has moved by at most mark_eval·δ·e^δ ≤ 0.65·(slack / E)·mark_eval (each
// step adds at least |Δmark| / mark to the drift), so TAV − MMR has fallen by at most
// 0.65·slack: the account cannot be below maintenance margin before the index hands it back.
// An isolated position is its own account in this argument (its TAV and MMR, its exposure alone).
void Engine::reindex(uint32_t slot, const MarginInfo& mi) {
  Account& a = accounts_[slot];
  auto exposure_of = [this](const Position& p) {
    const Market& m = markets_[p.market];
    return abs128(m.notional(p.size, m.mark_price)) * (kFractionOne + m.params.mmf);
  };
  auto distance = [](__int128 slack, __int128 exposure) {
    const __int128 d = exposure > 0 ? slack * kDriftOne * kFractionOne / exposure : kMaxDistance;
    return std::min(d, kMaxDistance) / 2;
  };
  __int128 exposure = 0;
  int n = 0, open = 0;
  for (const Position& p : a.positions) {
    if (p.size == 0) continue;
    ++open;
    if (p.isolated) continue;
    exposure += exposure_of(p);
    ++n;
  }
  if (open == 0) {
    unindex(slot);
    return;
  }
  const __int128 d = distance(std::max<__int128>(mi.tav - mi.mmr - 2 * n, 0), exposure);
  for (Position& p : a.positions) {
    if (p.size == 0) continue;
    Market& m = markets_[p.market];
    __int128 dist = d;
    if (p.isolated) {
      const MarginInfo own = isolated(p);
      dist = distance(std::max<__int128>(own.tav - own.mmr - 2, 0), exposure_of(p));
    }
    const int64_t key = m.drift + static_cast<int64_t>(dist);
    if (key == p.risk_key) continue;
    if (p.risk_key != kNoRiskKey) m.risk_index.erase({p.risk_key, slot});
    m.risk_index.insert({key, slot});
    p.risk_key = key;
  }
}

// In rounds: refresh the marks of touched markets (which hands back the accounts the index says
// may have moved), then take every candidate under maintenance margin at the start of the round
// and liquidate them in account-slot order, each re-checked at its turn. Liquidations touch
// markets and accounts, which start the next round. The naive reference (tests/support) runs
// the same rounds over every account; the index only narrows who is looked at.
void Engine::settle_risk(Ctx& c) {
  for (;;) {
    for (int w = 0; w < 4; ++w) {
      const uint64_t bits = c.touched[w];
      c.touched[w] = 0;
      for (uint64_t b = bits; b != 0; b &= b - 1)
        update_mark(c, markets_[w * 64 + __builtin_ctzll(b)]);
    }
    if (c.risk_accounts.empty() && c.triggered.empty()) break;
    // Stop-loss / take-profit orders the mark reached fire first (by order index), before the
    // liquidation checks: a stop placed to avoid liquidation gets its chance.
    if (!c.triggered.empty()) {
      absl::InlinedVector<OrderIndex, 4> fired;
      fired.swap(c.triggered);
      std::sort(fired.begin(), fired.end());
      fired.erase(std::unique(fired.begin(), fired.end()), fired.end());
      for (OrderIndex id : fired) {
        const uint32_t slot = order_slot_.find(id, pool_);
        if (slot != kNoSlot && pool_[slot].pending) fire_trigger(c, slot);
      }
    }
    decltype(c.risk_accounts) batch;
    batch.swap(c.risk_accounts);
    std::sort(batch.begin(), batch.end());
    batch.erase(std::unique(batch.begin(), batch.end()), batch.end());
    absl::InlinedVector<uint32_t, 4> under;
    for (uint32_t slot : batch) {
      ++risk_stats_.margin_checks;
      const MarginInfo mi = margin(accounts_[slot]);
      if (health_of(mi) >= Health::kPartialLiquidation ||
          isolated_below_maintenance(accounts_[slot])) {
        under.push_back(slot);
      } else {
        reindex(slot, mi);
      }
    }
    for (uint32_t slot : under) check_account(c, slot);
  }
}

// The cross bucket first, then each isolated position below maintenance, by market. A bucket
// liquidated here comes back to the next round through its fills (re-checked, re-keyed).
void Engine::check_account(Ctx& c, uint32_t slot) {
  bool liquidated = false;
  switch (health_of(margin(accounts_[slot]))) {
    case Health::kHealthy:
    case Health::kPreLiquidation: break;
    case Health::kPartialLiquidation:
      liquidate_partial(c, slot, kAllMarkets);
      liquidated = true;
      break;
    case Health::kFullLiquidation:
      liquidate_full(c, slot, kAllMarkets);
      liquidated = true;
      break;
  }
  absl::InlinedVector<MarketId, 4> isolated_under;
  for (const Position& p : accounts_[slot].positions)
    if (p.isolated && p.size != 0 && health_of(isolated(p)) >= Health::kPartialLiquidation)
      isolated_under.push_back(p.market);
  for (MarketId mid : isolated_under) {
    const Position* p = accounts_[slot].position(mid);
    if (p == nullptr || p->size == 0) continue;
    const Health h = health_of(isolated(*p));
    if (h == Health::kPartialLiquidation) {
      liquidate_partial(c, slot, mid);
    } else if (h == Health::kFullLiquidation) {
      liquidate_full(c, slot, mid);
    } else {
      continue;
    }
    liquidated = true;
  }
  if (!liquidated) reindex(slot, margin(accounts_[slot]));
}

void Engine::rebuild_risk_indexes() {
  scheduled_cancels_.clear();
  for (auto& w : breaker_markets_) w = 0;
  for (Market& m : markets_) {
    m.holders.clear();
    m.risk_index.clear();
    m.drift = 0;
    if (m.exists && m.breaker_level != 0) breaker_markets_[m.id >> 6] |= uint64_t{1} << (m.id & 63);
  }
  for (uint32_t slot = 0; slot < accounts_.size(); ++slot) {
    Account& a = accounts_[slot];
    if (a.cancel_all_at_ms != 0) scheduled_cancels_.insert({a.cancel_all_at_ms, slot});
    for (Position& p : a.positions) {
      p.holder_pos = kNoSlot;
      p.risk_key = kNoRiskKey;
      track_holder(markets_[p.market], slot, p);
    }
  }
  for (uint32_t slot = 0; slot < accounts_.size(); ++slot) {
    const auto& ps = accounts_[slot].positions;
    if (std::any_of(ps.begin(), ps.end(), [](const Position& p) { return p.size != 0; }))
      reindex(slot, margin(accounts_[slot]));  // a flat account is not indexed
  }
}

}  // namespace tachyon
