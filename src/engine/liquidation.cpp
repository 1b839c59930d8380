// Engine: the liquidation waterfall (LIGHTER_API.md §5). Partial liquidation sends IOC orders at
// the zero price into the book; what the book cannot take, or an account under its close-out
// requirement, goes to the insurance fund while the fund stays above its initial margin, and the
// rest is deleveraged (ADL) against opposite positions ranked by profit and leverage.
#include <algorithm>
#include <vector>

#include "context.hpp"
#include "tachyon/engine/engine.hpp"

namespace tachyon {

// ZP = mark·(1 ∓ MMF·TAV/MMR), − for a long: closing every position at its zero price leaves the
// account's TAV at zero, so it is the bankruptcy price of the position's share of the
// maintenance requirement. Rounded in the liquidated account's favour (a long sells higher, a
// short buys lower) so the waterfall never leaves it below zero by rounding.
Ticks Engine::zero_price(const Market& m, const Position& p, const MarginInfo& mi) const {
  const __int128 mark = m.mark_price;
  const __int128 x = floor_div(mark * m.params.mmf * mi.tav,
                               static_cast<__int128>(kFractionOne) * std::max<__int128>(mi.mmr, 1));
  const __int128 zp = p.size > 0 ? mark - x : mark + x;
  return static_cast<Ticks>(std::clamp<__int128>(zp, 1, kMaxPriceTicks));
}

// Which positions a bucket holds: the cross ones, or the one isolated position.
static bool in_bucket(const Position& p, MarketId bucket) {
  return bucket == kAllMarkets ? !p.isolated : (p.isolated && p.market == bucket);
}

// A cross liquidation cancels every order (isolated ones too: they reserve cross margin); an
// isolated one only the orders in its market, and keeps the position's margin with it until
// end_isolated_liquidation.
void Engine::start_liquidation(Ctx& c, uint32_t slot, MarketId bucket, RiskEvent event) {
  emit_risk(c, accounts_[slot], bucket, event, bucket_margin(accounts_[slot], bucket), 0);
  cancel_account_orders(c, slot, bucket, RemoveReason::kLiquidation);
  if (bucket != kAllMarkets) {
    c.liq_isolated_slot = slot;
    c.liq_isolated_market = bucket;
  }
}

// A closed isolated position: its deficit (rounding dust at the zero price) is covered, what is
// left goes back to cross collateral.
void Engine::end_isolated_liquidation(Ctx& c, uint32_t slot, MarketId bucket) {
  c.liq_isolated_slot = kNoSlot;
  Account& a = accounts_[slot];
  Position& p = *a.position(bucket);
  if (p.size != 0) return;
  const Usdc coll_before = a.collateral;
  release_isolated(c, a, p, true);
  emit_position(c, a, p);
  emit_balance(c, a, a.collateral - coll_before, BalanceReason::kIsolatedMargin);
}

void Engine::liquidate_partial(Ctx& c, uint32_t slot, MarketId bucket) {
  ++risk_stats_.partial_liquidations;
  start_liquidation(c, slot, bucket, RiskEvent::kPartialLiquidation);
  Account& a = accounts_[slot];
  for (size_t i = 0; i < a.positions.size(); ++i) {
    const MarginInfo mi = bucket_margin(a, bucket);
    if (mi.tav >= mi.mmr) break;
    const Position& p = a.positions[i];
    Market& m = markets_[p.market];
    if (!in_bucket(p, bucket) || p.size == 0 || m.status() != MarketStatus::kActive || pool_.full())
      continue;
    const Ticks zp = zero_price(m, p, mi);
    const uint32_t os = pool_.alloc();
    Order& o = pool_[os];
    o.order_index = next_order_index_++;
    o.client_order_index = 0;
    o.account = a.index;
    o.account_slot = slot;
    o.price = zp;
    o.remaining = o.initial = p.size > 0 ? p.size : -p.size;
    o.expiry_ms = 0;
    o.prev = o.next = o.acct_prev = o.acct_next = o.heap_pos = kNoSlot;
    o.market = m.id;
    o.is_ask = p.size > 0;
    o.type = OrderType::kLiquidation;
    o.tif = TimeInForce::kIoc;
    o.reduce_only = 1;
    o.stp = StpMode::kExpireTaker;
    c.liq_order = os;
    c.liq_zero_price = zp;
    match_and_rest(c, m, a, os, zp, false);
    c.liq_order = kNoSlot;
    c.liq_zero_price = 0;
  }
  // The book could not bring it back above maintenance margin: the waterfall goes on now
  // rather than leaving an under-margined account waiting for liquidity.
  if (health_of(bucket_margin(accounts_[slot], bucket)) >= Health::kPartialLiquidation) {
    liquidate_full(c, slot, bucket);
  } else if (bucket != kAllMarkets) {
    end_isolated_liquidation(c, slot, bucket);  // closed by the book
  }
}

void Engine::liquidate_full(Ctx& c, uint32_t slot, MarketId bucket) {
  ++risk_stats_.full_liquidations;
  start_liquidation(c, slot, bucket, RiskEvent::kFullLiquidation);
  // Positions in ascending unrealized PnL order (the fund takes the worst first), market id to
  // break ties.
  std::vector<std::pair<__int128, MarketId>> order;
  for (const Position& p : accounts_[slot].positions) {
    if (p.size == 0 || !in_bucket(p, bucket)) continue;
    const Market& m = markets_[p.market];
    order.emplace_back(m.notional(p.size, m.mark_price) - p.entry_notional, p.market);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [upnl, mid] : order) {
    Account& a = accounts_[slot];
    const MarginInfo mi = bucket_margin(a, bucket);
    Market& m = markets_[mid];
    const Ticks zp = zero_price(m, *a.position(mid), mi);
    if (!takeover(c, m, slot, zp)) deleverage(c, m, slot, zp);
  }
  // Flat now, at the zero prices: what is left below zero is rounding dust (a partial close's
  // cost basis rounds by < 1 micro-USDC). The insurance fund pays it from what it has (never going
  // negative), the fee account the rest, so the bucket ends at zero.
  Account& a = accounts_[slot];
  if (bucket != kAllMarkets) {
    end_isolated_liquidation(c, slot, bucket);
  } else if (a.collateral < 0) {
    const Usdc deficit = -a.collateral;
    cover_deficit(c, a, deficit);
    a.collateral = 0;
    emit_balance(c, a, deficit, BalanceReason::kInsurance);
  }
}

void Engine::cover_deficit(Ctx& c, Account& a, Usdc deficit) {
  Account& ins = *find_account(cfg_.insurance_account);
  const __int128 ins_value = &ins == &a ? 0 : std::min<__int128>(ins.collateral, margin(ins).tav);
  const Usdc from_ins = static_cast<Usdc>(std::clamp<__int128>(ins_value, 0, deficit));
  if (from_ins > 0) {
    ins.collateral -= from_ins;
    emit_balance(c, ins, -from_ins, BalanceReason::kInsurance);
    c.risk(static_cast<uint32_t>(&ins - accounts_.data()));
  }
  if (deficit > from_ins) {
    Account& fee = accounts_[kFeeAccountSlot];
    fee.collateral -= deficit - from_ins;
    emit_balance(c, fee, from_ins - deficit, BalanceReason::kInsurance);
    c.risk(kFeeAccountSlot);
  }
  risk_stats_.deficit_covered += deficit;
  emit_risk(c, a, kAllMarkets, RiskEvent::kDeficitCovered, margin(a), deficit);
}

void Engine::release_isolated(Ctx& c, Account& a, Position& p, bool cover) {
  if (p.allocated < 0 && cover) {
    cover_deficit(c, a, -p.allocated);
    p.allocated = 0;
  }
  a.collateral += p.allocated;
  p.allocated = 0;
}

// The insurance fund takes the whole position at the zero price if it stays at or above its
// initial margin afterwards (tried on a copy of the fund's account first).
bool Engine::takeover(Ctx& c, Market& m, uint32_t slot, Ticks zp) {
  Account* ins = find_account(cfg_.insurance_account);
  if (ins == nullptr || ins == &accounts_[slot]) return false;
  Account& a = accounts_[slot];
  const Lots size = a.position(m.id)->size;
  Account trial = *ins;
  Position& tp = trial.position_or_add(m.id);
  fill_position(m, tp, trial.collateral, size > 0, size > 0 ? size : -size, zp);
  const MarginInfo mi = margin(trial);
  if (mi.tav < mi.imr) return false;
  ++risk_stats_.takeovers;
  move_position(c, m, a, *ins, -size, zp, TradeKind::kTakeover);
  return true;
}

// ADL: opposite positions ranked by PnL ratio × leverage (losers last, by PnL ratio / leverage),
// account index breaking ties; each closes against the bankrupt position at the zero price. The
// ranking is made once per tx and market side (at the first deleverage; a cascade walks it
// instead of ranking every holder again for every bankrupt account), and made again from the
// current holders only if it runs out.
std::vector<std::pair<uint32_t, AccountIndex>> Engine::adl_ranking(const Market& m,
                                                                   bool longs) const {
  struct Candidate {
    __int128 score;
    AccountIndex index;
    uint32_t slot;
  };
  std::vector<Candidate> cands;
  for (uint32_t h : m.holders) {
    const Account& o = accounts_[h];
    const Position& p = *o.position(m.id);
    if ((p.size > 0) != longs) continue;
    const __int128 value = m.notional(p.size, m.mark_price);
    const __int128 upnl = value - p.entry_notional;
    const __int128 ratio = upnl * 1'000'000 / std::max<__int128>(abs128(p.entry_notional), 1);
    const __int128 tav = p.isolated ? isolated(p).tav : margin(o).tav;
    const __int128 leverage = abs128(value) * 10'000 / std::max<__int128>(tav, 1);
    const __int128 score =
        ratio >= 0 ? ratio * leverage : ratio * 10'000 / std::max<__int128>(leverage, 1);
    cands.push_back({score, o.index, h});
  }
  std::sort(cands.begin(), cands.end(), [](const Candidate& x, const Candidate& y) {
    return x.score != y.score ? x.score > y.score : x.index < y.index;
  });
  std::vector<std::pair<uint32_t, AccountIndex>> out;
  out.reserve(cands.size());
  for (const Candidate& cd : cands) out.emplace_back(cd.slot, cd.index);
  return out;
}

void Engine::deleverage(Ctx& c, Market& m, uint32_t slot, Ticks zp) {
  const Lots size = accounts_[slot].position(m.id)->size;
  const bool longs = size < 0;  // the candidates hold the other side
  auto [it, fresh] = c.adl.try_emplace(m.id * 2 + (longs ? 1 : 0));
  Ctx::AdlRanking& r = it->second;
  if (fresh) r.order = adl_ranking(m, longs);
  Lots left = size > 0 ? size : -size;
  bool reranked = false;
  while (left > 0) {
    if (r.next == r.order.size()) {  // ran out: rank the current holders once more
      if (reranked) break;
      r.order = adl_ranking(m, longs);
      r.next = 0;
      reranked = true;
      continue;
    }
    const uint32_t cs = r.order[r.next].first;
    const Lots their = accounts_[cs].position(m.id)->size;
    if (cs == slot || their == 0 || (their > 0) != longs) {
      ++r.next;
      continue;
    }
    const Lots q = std::min(left, their > 0 ? their : -their);
    ++risk_stats_.deleverages;
    move_position(c, m, accounts_[slot], accounts_[cs], size > 0 ? -q : q, zp,
                  TradeKind::kDeleverage);
    left -= q;
  }
}

// A risk transfer outside the book, without fees: `from` changes its position by from_delta,
// `to` by the opposite, at `price`. It is a trade on the market's tape.
void Engine::move_position(Ctx& c, Market& m, Account& from, Account& to, Lots from_delta,
                           Ticks price, TradeKind kind) {
  const bool from_buys = from_delta > 0;
  const Lots q = from_buys ? from_delta : -from_delta;
  StateUpdate u = c.make(UpdateType::kTrade);
  u.trade = TradeUpdate{next_trade_id_++,
                        0,
                        0,
                        to.index,
                        from.index,
                        price,
                        q,
                        0,
                        0,
                        m.id,
                        static_cast<uint8_t>(!from_buys),
                        kind,
                        0,
                        0,
                        c.tx.h.block};
  c.sink.on_update(u);
  const uint64_t from_moved = apply_fill(c, m, from, from_buys, q, price, 0);
  const uint64_t to_moved = apply_fill(c, m, to, !from_buys, q, price, 0);
  TACHYON_ASSERT(from_moved + to_moved == 0, "a position transfer created or destroyed money");
  ++m.trade_count;
  m.volume_base += q;
  m.volume_quote += static_cast<Usdc>(m.notional(q, price));
  c.touch(m.id);
}

}  // namespace tachyon
