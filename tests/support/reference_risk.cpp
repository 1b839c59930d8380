// The reference engine's liquidation waterfall (docs/ARCHITECTURE.md "Risk lifecycle"), the obvious
// way: after every tx, rounds that refresh every mark, take every account under maintenance margin
// (all accounts scanned, in creation order) and liquidate them one after the other. No index:
// the fast engine's liquidation index must find exactly the same accounts.
#include <algorithm>

#include "support/reference_engine.hpp"

namespace tachyon::testing {

namespace {
__int128 iabs(__int128 v) { return v < 0 ? -v : v; }
__int128 cdiv(__int128 a, __int128 b) {
  return a / b + ((a % b != 0 && (a > 0) == (b > 0)) ? 1 : 0);
}
__int128 fdiv(__int128 a, __int128 b) { return a / b - ((a % b != 0 && a < 0) ? 1 : 0); }
}  // namespace

// ---- funding (docs/ARCHITECTURE.md "Risk lifecycle") ----

// (max(0, impact bid − index) − max(0, index − impact ask)) / index in 1e-9, where an impact price
// is the average price of walking one side of the book (best first) for impact_notional.
int64_t ReferenceEngine::premium(const Mkt& m) const {
  if (m.index <= 0) return 0;
  __int128 premium = 0;
  for (int side = 0; side < 2; ++side) {  // 0: bids (impact bid), 1: asks (impact ask)
    std::vector<std::pair<Ticks, Lots>> levels;
    if (side == 0) {
      for (auto it = m.bids.rbegin(); it != m.bids.rend(); ++it) levels.push_back({it->first, 0});
    } else {
      for (auto& [px, q] : m.asks) levels.push_back({px, 0});
    }
    for (auto& [px, total] : levels) {
      const auto& q = side == 0 ? m.bids.at(px) : m.asks.at(px);
      for (OrderIndex id : q) total += orders_.at(id).remaining;
    }
    __int128 cost = 0, lots = 0;
    bool enough = false;
    for (auto& [px, total] : levels) {
      const __int128 unit = static_cast<__int128>(px) * m.mult;  // one lot at this price
      const __int128 want = cdiv(cfg_.impact_notional - cost, unit);
      const __int128 take = std::min<__int128>(want, total);
      cost += take * unit;
      lots += take;
      if (cost >= cfg_.impact_notional) {
        enough = true;
        break;
      }
    }
    if (!enough) continue;
    const __int128 at_index = static_cast<__int128>(m.index) * lots * m.mult;
    const __int128 diff = side == 0 ? cost - at_index : at_index - cost;
    if (diff <= 0) continue;
    const __int128 part = diff * 1'000'000'000 / at_index;  // both positive: truncation
    premium += side == 0 ? part : -part;
  }
  return static_cast<int64_t>(std::clamp<__int128>(premium, INT64_MIN, INT64_MAX));
}

// The mean premium plus the interest, the gap clamped to ±small, all clamped to ±big; per 8 h.
int64_t ReferenceEngine::funding_rate(const Mkt& m) const {
  const int64_t mean = m.premium_samples > 0 ? m.premium_sum / m.premium_samples : 0;
  const int64_t small = int64_t{m.p.funding_clamp_small} * 1000;
  const int64_t big = int64_t{m.p.funding_clamp_big} * 1000;
  const int64_t gap = std::clamp<int64_t>(int64_t{m.p.interest_rate} * 1000 - mean, -small, small);
  return std::clamp<int64_t>(mean + gap, -big, big) / 8;
}

Reject ReferenceEngine::funding_tick(const Tx& tx) {
  const bool internal = (tx.h.flags & kTxFlagInternal) != 0;
  if (!internal) {
    if (Reject r = op_auth(tx); r != Reject::kOk) return r;
  }
  const MarketId only = tx.funding.market;
  if (only != kAllMarkets && !mkts_.count(only)) return Reject::kInvalidMarket;
  if (!internal) ++op_nonce_;
  const int64_t interval = std::max<int64_t>(cfg_.funding_interval_ms, 1);
  for (auto& [mid, m] : mkts_) {
    if (only != kAllMarkets && mid != only) continue;
    if (m.p.status == MarketStatus::kHalted) continue;  // no sample while halted
    m.premium_sum += premium(m);
    m.premium_samples += 1;
    const int64_t next = (now_ms_ / interval + 1) * interval;
    if (m.next_funding_ms != 0 && now_ms_ >= m.next_funding_ms) {  // a payment is due
      const int64_t rate = funding_rate(m);
      m.premium_sum = m.premium_samples = 0;
      m.last_rate = rate;
      m.last_funding_ms = now_ms_;
      // size × mark × rate: a payer pays it rounded up, a receiver gets it rounded down, the
      // fee account keeps the difference
      Usdc residue = 0;
      for (AccountIndex ai : created_) {
        Acc& a = accs_.at(ai);
        auto pit = a.pos.find(mid);
        if (pit == a.pos.end() || pit->second.size == 0 || rate == 0) continue;
        Pos& p = pit->second;
        const __int128 owed = static_cast<__int128>(p.size) * m.mark * m.mult * rate;
        const Usdc pay = owed > 0 ? static_cast<Usdc>(cdiv(owed, 1'000'000'000))
                                  : -static_cast<Usdc>(-owed / 1'000'000'000);
        (p.iso ? p.alloc : a.collateral) -= pay;
        p.funding += pay;
        residue += pay;
      }
      accs_.at(cfg_.fee_account).collateral += residue;
      ++funding_payments_;
    }
    m.next_funding_ms = next;
  }
  return Reject::kOk;
}

int ReferenceEngine::health(AccountIndex ai, __int128& tav, __int128& mmr, MarketId bucket) const {
  __int128 imr, plain, cmr = 0;
  if (bucket == kAllMarkets) {
    margin(ai, 0, 0, 0, tav, imr, plain);
  } else {
    const Pos& p = accs_.at(ai).pos.at(bucket);
    const Mkt& m = mkts_.at(bucket);
    tav = p.alloc + static_cast<__int128>(p.size) * m.mark * m.mult - p.entry;
  }
  mmr = 0;
  for (auto& [mid, p] : accs_.at(ai).pos) {
    if (p.size == 0 || (bucket == kAllMarkets ? p.iso : mid != bucket)) continue;
    const Mkt& m = mkts_.at(mid);
    const __int128 n = iabs(static_cast<__int128>(p.size) * m.mark * m.mult);
    mmr += cdiv(n * m.p.mmf, 10000);
    cmr += cdiv(n * m.p.cmf, 10000);
  }
  if (mmr == 0) return 0;
  if (tav < cmr) return 3;
  if (tav < mmr) return 2;
  return 0;
}

void ReferenceEngine::settle_risk(std::vector<RefFill>& fills) {
  auto isolated_under = [&](AccountIndex ai) {
    std::vector<MarketId> out;
    for (auto& [mid, p] : accs_.at(ai).pos) {
      __int128 tav, mmr;
      if (p.iso && p.size != 0 && health(ai, tav, mmr, mid) != 0) out.push_back(mid);
    }
    return out;
  };
  for (;;) {
    refresh_marks();
    // Trigger orders the mark reached fire first, by order index, before the liquidation checks
    // (at the marks of the round's start).
    std::vector<OrderIndex> due;
    due.swap(due_);
    std::sort(due.begin(), due.end());
    due.erase(std::unique(due.begin(), due.end()), due.end());
    for (OrderIndex id : due) fire(id, fills);
    std::vector<AccountIndex> under;
    for (AccountIndex ai : created_) {
      __int128 tav, mmr;
      if (health(ai, tav, mmr) != 0 || !isolated_under(ai).empty()) under.push_back(ai);
    }
    if (under.empty()) {
      if (due.empty() && due_.empty()) return;
      continue;
    }
    for (AccountIndex ai : under) {  // the cross bucket, then each isolated position by market
      __int128 tav, mmr;
      const int h = health(ai, tav, mmr);
      if (h == 2) liquidate_partial(ai, kAllMarkets, fills);
      if (h == 3) liquidate_full(ai, kAllMarkets, fills);
      for (MarketId mid : isolated_under(ai)) {
        const int hi = health(ai, tav, mmr, mid);
        if (hi == 2) liquidate_partial(ai, mid, fills);
        if (hi == 3) liquidate_full(ai, mid, fills);
      }
    }
  }
}

void ReferenceEngine::drop_orders(AccountIndex ai, MarketId bucket) {
  std::vector<OrderIndex> mine;
  for (auto& [id, o] : orders_)
    if (o.account == ai && (bucket == kAllMarkets || o.market == bucket)) mine.push_back(id);
  for (OrderIndex id : mine)
    if (orders_.count(id)) remove(id);
  if (bucket != kAllMarkets) {
    iso_liq_ = true;
    iso_liq_account_ = ai;
    iso_liq_market_ = bucket;
  }
}

void ReferenceEngine::cover(AccountIndex ai, __int128 deficit) {
  const AccountIndex ins = cfg_.insurance_account;
  __int128 itav = 0, iimr, plain;
  if (ai != ins) margin(ins, 0, 0, 0, itav, iimr, plain);
  const __int128 have = ai == ins ? 0 : std::min<__int128>(accs_.at(ins).collateral, itav);
  const __int128 from_ins = std::clamp<__int128>(have, 0, deficit);
  accs_.at(ins).collateral -= static_cast<Usdc>(from_ins);
  accs_.at(cfg_.fee_account).collateral -= static_cast<Usdc>(deficit - from_ins);
}

void ReferenceEngine::end_isolated(AccountIndex ai, MarketId mid) {
  iso_liq_ = false;
  Acc& a = accs_.at(ai);
  Pos& p = a.pos.at(mid);
  if (p.size != 0) return;
  if (p.alloc < 0) {
    cover(ai, -p.alloc);
    p.alloc = 0;
  }
  a.collateral += p.alloc;
  p.alloc = 0;
}

static Ticks zero_price(Ticks mark, Bps4 mmf, Lots size, __int128 tav, __int128 mmr) {
  const __int128 x =
      fdiv(static_cast<__int128>(mark) * mmf * tav, __int128{10000} * std::max<__int128>(mmr, 1));
  const __int128 zp = size > 0 ? mark - x : mark + x;
  return static_cast<Ticks>(std::clamp<__int128>(zp, 1, kMaxPriceTicks));
}

void ReferenceEngine::liquidate_partial(AccountIndex ai, MarketId bucket,
                                        std::vector<RefFill>& fills) {
  drop_orders(ai, bucket);
  std::vector<MarketId> held;
  for (auto& [mid, p] : accs_.at(ai).pos)
    if (bucket == kAllMarkets ? !p.iso : (p.iso && mid == bucket)) held.push_back(mid);
  for (MarketId mid : held) {
    __int128 tav, mmr;
    health(ai, tav, mmr, bucket);
    if (tav >= mmr) break;
    const Lots size = accs_.at(ai).pos.at(mid).size;
    const Mkt& m = mkts_.at(mid);
    if (size == 0 || m.p.status != MarketStatus::kActive || orders_.size() >= cfg_.max_orders)
      continue;
    const Ticks zp = zero_price(m.mark, m.p.mmf, size, tav, mmr);
    const Lots q = size > 0 ? size : -size;
    Ord t{next_order_++,
          0,
          ai,
          mid,
          size > 0,
          zp,
          q,
          q,
          0,
          TimeInForce::kIoc,
          OrderType::kLiquidation,
          true,
          StpMode::kExpireTaker};
    liq_order_ = t.id;
    liq_zp_ = zp;
    match(t, zp, fills);
    liq_order_ = 0;
  }
  __int128 tav, mmr;
  if (health(ai, tav, mmr, bucket) != 0) {
    liquidate_full(ai, bucket, fills);
  } else if (bucket != kAllMarkets) {
    end_isolated(ai, bucket);
  }
}

void ReferenceEngine::move(AccountIndex from, AccountIndex to, MarketId mid, Lots from_delta,
                           Ticks px, std::vector<RefFill>& fills) {
  Mkt& m = mkts_.at(mid);
  const Lots q = from_delta > 0 ? from_delta : -from_delta;
  fills.push_back(RefFill{0, 0, to, from, px, q, 0, 0});
  ++next_trade_;
  settle(from, m, mid, from_delta > 0, q, px, 0);
  settle(to, m, mid, from_delta < 0, q, px, 0);
  m.trades += 1;
  m.vol_base += q;
  m.vol_quote += static_cast<Usdc>(static_cast<__int128>(q) * px * m.mult);
}

void ReferenceEngine::liquidate_full(AccountIndex ai, MarketId bucket,
                                     std::vector<RefFill>& fills) {
  drop_orders(ai, bucket);
  std::vector<std::pair<__int128, MarketId>> order;
  for (auto& [mid, p] : accs_.at(ai).pos) {
    if (p.size == 0 || (bucket == kAllMarkets ? p.iso : (!p.iso || mid != bucket))) continue;
    const Mkt& m = mkts_.at(mid);
    order.emplace_back(static_cast<__int128>(p.size) * m.mark * m.mult - p.entry, mid);
  }
  std::sort(order.begin(), order.end());
  const AccountIndex ins = cfg_.insurance_account;
  for (const auto& [upnl, mid] : order) {
    __int128 tav, mmr;
    health(ai, tav, mmr, bucket);
    const Mkt& m = mkts_.at(mid);
    const Lots size = accs_.at(ai).pos.at(mid).size;
    const Ticks zp = zero_price(m.mark, m.p.mmf, size, tav, mmr);
    // The insurance fund takes it all if it stays at or above its initial margin.
    if (ai != ins) {
      const Acc saved = accs_.at(ins);
      settle(ins, mkts_.at(mid), mid, size > 0, size > 0 ? size : -size, zp, 0);
      __int128 itav, iimr, plain;
      margin(ins, 0, 0, 0, itav, iimr, plain);
      accs_.at(ins) = saved;
      if (itav >= iimr) {
        move(ai, ins, mid, -size, zp, fills);
        continue;
      }
    }
    // ADL: opposite positions by PnL ratio x leverage (losers by ratio / leverage), ranked once
    // per tx and side (at the first deleverage), ranked again only when that list runs out.
    const bool longs = size < 0;
    auto rank = [&] {
      struct Cand {
        __int128 score;
        AccountIndex index;
      };
      std::vector<Cand> cands;
      for (auto& [oi, o] : accs_) {
        auto it = o.pos.find(mid);
        if (it == o.pos.end() || it->second.size == 0 || (it->second.size > 0) != longs) continue;
        const __int128 value = static_cast<__int128>(it->second.size) * m.mark * m.mult;
        const __int128 ratio =
            (value - it->second.entry) * 1'000'000 / std::max<__int128>(iabs(it->second.entry), 1);
        __int128 otav, oimr, plain, ommr;
        if (it->second.iso) {
          health(oi, otav, ommr, mid);
        } else {
          margin(oi, 0, 0, 0, otav, oimr, plain);
        }
        const __int128 lev = iabs(value) * 10'000 / std::max<__int128>(otav, 1);
        cands.push_back(
            {ratio >= 0 ? ratio * lev : ratio * 10'000 / std::max<__int128>(lev, 1), oi});
      }
      std::sort(cands.begin(), cands.end(), [](const Cand& x, const Cand& y) {
        return x.score != y.score ? x.score > y.score : x.index < y.index;
      });
      std::vector<AccountIndex> order;
      for (const Cand& c : cands) order.push_back(c.index);
      return order;
    };
    auto [it, fresh] = adl_.try_emplace(mid * 2 + (longs ? 1 : 0));
    auto& [order_list, next] = it->second;
    if (fresh) order_list = rank();
    Lots left = size > 0 ? size : -size;
    bool reranked = false;
    while (left > 0) {
      if (next == order_list.size()) {
        if (reranked) break;
        order_list = rank();
        next = 0;
        reranked = true;
        continue;
      }
      const AccountIndex ci = order_list[next];
      const Lots theirs = accs_.at(ci).pos[mid].size;
      if (ci == ai || theirs == 0 || (theirs > 0) != longs) {
        ++next;
        continue;
      }
      const Lots q = std::min(left, theirs > 0 ? theirs : -theirs);
      move(ai, ci, mid, size > 0 ? -q : q, zp, fills);
      left -= q;
    }
  }
  // Dust below zero: the insurance fund pays what it has (collateral, capped by its account
  // value), the fee account the rest.
  if (bucket != kAllMarkets) {
    end_isolated(ai, bucket);
  } else if (Acc& a = accs_.at(ai); a.collateral < 0) {
    cover(ai, -a.collateral);
    a.collateral = 0;
  }
}

}  // namespace tachyon::testing
