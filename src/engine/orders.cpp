// Engine: order transactions and matching (price-time priority, maker's price).
#include <algorithm>

#include "context.hpp"
#include "tachyon/engine/engine.hpp"
#include "tachyon/engine/order_checks.hpp"

namespace tachyon {

namespace {
Lots abs_lots(Lots v) { return v < 0 ? -v : v; }

// What an account holds in a market's terms: collateral + isolated margin - cost basis (the sum
// validate() checks), in wrapping arithmetic. The difference of two readings is the change modulo
// 2^64: a sum of such changes is zero exactly when no money was made or lost.
uint64_t held(const Account& a, const Position& p) {
  return static_cast<uint64_t>(a.collateral) + static_cast<uint64_t>(p.allocated) -
         static_cast<uint64_t>(p.entry_notional);
}

}  // namespace

Reject Engine::check_price_band(const Market& m, bool is_ask, Ticks price) const {
  return check_limit_band(m.params, m.mark_price, is_ask, price);
}

Ticks Engine::protection_bound(const Market& m, bool is_ask, Ticks price) const {
  const __int128 mark = m.mark_price;
  const Bps4 prot = m.params.market_protection;
  return is_ask
             ? std::max<Ticks>(
                   price, static_cast<Ticks>(ceil_div(mark * (kFractionOne - prot), kFractionOne)))
             : std::min<Ticks>(price,
                               static_cast<Ticks>(mark * (kFractionOne + prot) / kFractionOne));
}

Lots Engine::reduce_only_room(const Account& a, MarketId m, bool is_ask) const {
  const Position* p = a.position(m);
  if (p == nullptr) return 0;
  if (is_ask) return p->size > 0 ? p->size : 0;
  return p->size < 0 ? -p->size : 0;
}

uint32_t Engine::find_order(const Account& a, MarketId m, uint64_t index) const {
  uint32_t slot = kNoSlot;
  if (index >= kFirstOrderIndex) {
    slot = order_slot_.find(index, pool_);
  } else if (index != 0) {
    auto it = coi_slot_.find(CoiKey{a.index, index});
    if (it != coi_slot_.end()) slot = it->second;
  }
  if (slot == kNoSlot) return kNoSlot;
  const Order& o = pool_[slot];
  return (o.account == a.index && o.market == m) ? slot : kNoSlot;
}

Reject Engine::create_order(const Tx& tx, Ctx& c, OrderIndex& out) {
  Account* a = nullptr;
  ApiKey* key = nullptr;
  if (Reject r = authenticate(tx, c, a, key); r != Reject::kOk) return r;
  const CreateOrderTx& o = tx.order;
  Lots size = 0;
  if (Reject r = check_new_order(*a, o, c.now_ms, 0, size); r != Reject::kOk) return r;
  // accepted: from here on nothing is refused
  consume_nonce(c, *key, tx);
  Market& m = markets_[o.market];
  if (is_trigger_type(o.type)) {  // waits for the mark (engine/triggers.cpp)
    out = place_trigger(c, *a, m, o);
    return Reject::kOk;
  }
  if (o.type == OrderType::kTwap) {  // waits between its slices (engine/triggers.cpp)
    out = place_twap(c, *a, m, o);
    return Reject::kOk;
  }
  const uint32_t slot = start_order(*a, o, size);
  out = pool_[slot].order_index;
  run_order(c, m, *a, slot);
  return Reject::kOk;
}

// The checks of a new order after authentication, in the documented precedence. `extra_slots`:
// more orders the same tx places (grouped orders) that need pool room too.
Reject Engine::check_new_order(const Account& a, const CreateOrderTx& o, int64_t now_ms,
                               uint32_t extra_slots, Lots& size) const {
  // market and its status
  if (o.market >= kMaxMarkets || !markets_[o.market].exists) return Reject::kInvalidMarket;
  const Market& m = markets_[o.market];
  if (Reject r = check_market_status(m.status(), o.tif, o.reduce_only); r != Reject::kOk) return r;
  if (Reject r = check_order_shape(o, now_ms); r != Reject::kOk) return r;
  if (o.client_order_index != 0 && coi_slot_.contains(CoiKey{a.index, o.client_order_index}))
    return Reject::kClientOrderIndexExists;
  const OrderMarket om{m.params, m.mark_price, m.quote_multiplier};
  if (Reject r = check_order_amounts(o, om); r != Reject::kOk) return r;
  if (Reject r = check_order_band(o, om); r != Reject::kOk) return r;
  if (pool_.capacity() - pool_.live_count() <= extra_slots) return Reject::kBookFull;
  const Position* p = a.position(o.market);
  // A trigger order waits for the mark: size, margin and room are judged when it fires.
  if (is_trigger_type(o.type)) {
    if (p != nullptr && p->open_orders >= static_cast<uint32_t>(m.params.max_orders_per_account))
      return Reject::kMaxOrdersPerAccount;
    size = o.base_amount;
    return Reject::kOk;
  }
  // reduce-only: only ever shrinks the position
  size = o.base_amount;
  // A TWAP's first slice executes now: its room and margin are judged now, the later ones' when
  // they are due.
  if (o.type == OrderType::kTwap) size = twap_slice(o.base_amount, now_ms, o.order_expiry_ms);
  if (o.reduce_only) {
    if (p == nullptr || p->size == 0) return Reject::kNoPosition;
    const Lots room = reduce_only_room(a, o.market, o.is_ask);
    if (room == 0) return Reject::kReduceOnlyIncreasesPosition;
    size = size == 0 ? room : std::min(size, room);
  }
  // capacity
  if (o.tif != TimeInForce::kIoc) {
    if (p != nullptr && p->open_orders >= static_cast<uint32_t>(m.params.max_orders_per_account))
      return Reject::kMaxOrdersPerAccount;
    if (m.open_orders >= m.params.max_orders) return Reject::kMaxOrdersPerMarket;
  }
  // margin
  if (!o.reduce_only) {
    if (Reject r = check_order_margin(a, m, o.is_ask, size); r != Reject::kOk) return r;
  }
  return Reject::kOk;
}

uint32_t Engine::start_order(Account& a, const CreateOrderTx& o, Lots size) {
  const uint32_t slot = pool_.alloc();
  Order& ord = pool_[slot];
  ord.order_index = next_order_index_++;
  ord.client_order_index = o.client_order_index;
  ord.account = a.index;
  ord.account_slot = static_cast<uint32_t>(&a - accounts_.data());
  ord.price = o.price;
  ord.remaining = size;
  ord.initial = size;
  ord.expiry_ms = o.order_expiry_ms;
  ord.prev = ord.next = ord.acct_prev = ord.acct_next = ord.heap_pos = kNoSlot;
  ord.market = o.market;
  ord.is_ask = o.is_ask;
  ord.type = o.type;
  ord.tif = o.tif;
  ord.reduce_only = o.reduce_only;
  ord.stp = o.stp;
  return slot;
}

// A new live order as the taker: price protection for market orders, post-only, then matching.
void Engine::run_order(Ctx& c, Market& m, Account& a, uint32_t slot) {
  const Order& o = pool_[slot];
  const bool is_market = o.type == OrderType::kMarket;
  // price protection: never walk further than the market's band from mark
  const Ticks bound = is_market ? protection_bound(m, o.is_ask, o.price) : o.price;
  if (o.tif == TimeInForce::kPostOnly && m.book.crosses(o.is_ask, o.price)) {
    finish_taker(c, slot, RemoveReason::kPostOnly);
    return;
  }
  match_and_rest(c, m, a, slot, bound, is_market);
}

void Engine::match_and_rest(Ctx& c, Market& m, Account& taker, uint32_t slot, Ticks bound,
                            bool is_market) {
  // The taker's and the fee account's updates of this matching go out once, at its end, whichever
  // way it ends (a matching inside it, of another order, keeps its own).
  struct Flush {
    Engine& e;
    Ctx& c;
    Ctx::Coalesce outer;
    ~Flush() {
      e.flush_fills(c);
      c.co = outer;
    }
  } flush{*this, c, c.co};
  c.co = Ctx::Coalesce{static_cast<uint32_t>(&taker - accounts_.data()), m.id};
  Order& t = pool_[slot];
  bool hit_bound = false;
  while (t.remaining > 0) {
    const Level* best = m.book.best(!t.is_ask);
    if (best == nullptr) break;
    if (t.is_ask ? best->price < bound : best->price > bound) {
      hit_bound = true;
      break;
    }
    const uint32_t ms = best->head;
    Order& mk = pool_[ms];
    if (mk.account == t.account) {  // self-trade prevention: the taker's setting decides
      switch (t.stp) {
        case StpMode::kExpireMaker: remove_order(c, ms, RemoveReason::kSelfTrade); continue;
        case StpMode::kExpireBoth: remove_order(c, ms, RemoveReason::kSelfTrade); [[fallthrough]];
        case StpMode::kExpireTaker: finish_taker(c, slot, RemoveReason::kSelfTrade); return;
        case StpMode::kDecrement: {
          const Lots q = std::min(t.remaining, mk.remaining);
          t.remaining -= q;
          reduce_resting(c, m, ms, q, RemoveReason::kSelfTrade);
          continue;
        }
      }
    }
    Lots q = std::min(t.remaining, mk.remaining);
    if (mk.reduce_only) {
      const Lots room = reduce_only_room(accounts_[mk.account_slot], m.id, mk.is_ask);
      if (room == 0) {
        remove_order(c, ms, RemoveReason::kReduceOnly);
        continue;
      }
      q = std::min(q, room);
    }
    if (t.reduce_only) {
      const Lots room = reduce_only_room(taker, m.id, t.is_ask);
      if (room == 0) {
        finish_taker(c, slot, RemoveReason::kReduceOnly);
        return;
      }
      q = std::min(q, room);
    }
    fill(c, m, taker, slot, ms, q);
  }
  TACHYON_ASSERT(t.remaining >= 0 && t.remaining <= t.initial, "taker size out of range");
  if (t.remaining == 0) {
    finish_taker(c, slot, RemoveReason::kFilled);
  } else if (t.tif == TimeInForce::kIoc) {
    finish_taker(
        c, slot,
        is_market && hit_bound ? RemoveReason::kMarketProtection : RemoveReason::kIocRemainder);
  } else {
    rest(c, m, taker, slot);
  }
  // The matching leaves this market's book uncrossed, whatever rests now (O(1): the two bests).
  TACHYON_ASSERT(!m.book.crossed(), "book crossed after a matching");
}

void Engine::fill(Ctx& c, Market& m, Account& taker, uint32_t taker_slot, uint32_t maker_slot,
                  Lots q) {
  Order& t = pool_[taker_slot];
  Order& mk = pool_[maker_slot];
  TACHYON_ASSERT(q > 0 && q <= t.remaining && q <= mk.remaining, "fill size out of range");
  TACHYON_ASSERT(mk.account != t.account, "a self-trade reached fill()");
  Account& maker = accounts_[mk.account_slot];
  const Ticks price = mk.price;
  const __int128 notional = m.notional(q, price);
  TACHYON_ASSERT(notional <= INT64_MAX, "fill notional overflows int64");
  const bool liquidation = taker_slot == c.liq_order;
  // A liquidation order pays no trading fee (its price already gives way to the zero price).
  const Usdc taker_fee =
      liquidation ? 0 : static_cast<Usdc>(ceil_div(notional * m.params.taker_fee_ppm, kPpmOne));
  const Usdc maker_fee = static_cast<Usdc>(ceil_div(notional * m.params.maker_fee_ppm, kPpmOne));
  StateUpdate u = c.make(UpdateType::kTrade);
  u.trade = TradeUpdate{next_trade_id_++,
                        mk.order_index,
                        t.order_index,
                        maker.index,
                        taker.index,
                        price,
                        q,
                        maker_fee,
                        taker_fee,
                        m.id,
                        t.is_ask,
                        liquidation ? TradeKind::kLiquidation : TradeKind::kTrade,
                        mk.client_order_index,
                        t.client_order_index,
                        c.tx.h.block};
  c.sink.on_update(u);
  const uint64_t taker_moved = apply_fill(c, m, taker, !t.is_ask, q, price, taker_fee);
  const uint64_t maker_moved = apply_fill(c, m, maker, !mk.is_ask, q, price, maker_fee);
  if (taker_fee + maker_fee > 0) {
    Account& fee = accounts_[kFeeAccountSlot];
    fee.collateral += taker_fee + maker_fee;
    c.co.fee_due = true;  // (fill() runs only inside a matching: emitted at its end)
    c.co.fee_delta += taker_fee + maker_fee;
  }
  // Money moved equals money received: the buyer paid what the seller got, and what the two paid
  // in fees the fee account received. Over taker, maker and fee account the deltas sum to zero.
  TACHYON_ASSERT(taker_moved + maker_moved + static_cast<uint64_t>(taker_fee + maker_fee) == 0,
                 "a fill created or destroyed money");
  if (liquidation) pay_liquidation_fee(c, m, taker, t.is_ask, q, price, notional);
  t.remaining -= q;
  m.last_trade_price = price;
  ++m.trade_count;
  m.volume_base += q;
  m.volume_quote += static_cast<Usdc>(notional);
  reduce_resting(c, m, maker_slot, q, RemoveReason::kFilled);
}

// A fill better than the zero price pays the improvement, up to liquidation_fee of the notional,
// to the insurance fund.
void Engine::pay_liquidation_fee(Ctx& c, Market& m, Account& taker, bool taker_is_ask, Lots q,
                                 Ticks price, __int128 notional) {
  const __int128 better = taker_is_ask ? price - c.liq_zero_price : c.liq_zero_price - price;
  if (better <= 0) return;
  const __int128 cap = notional * cfg_.liquidation_fee / kFractionOne;
  const Usdc lf = static_cast<Usdc>(std::min<__int128>(m.notional(q, 1) * better, cap));
  if (lf <= 0) return;
  Account& ins = *find_account(cfg_.insurance_account);
  Position& tp = *taker.position(m.id);
  if (tp.isolated) {
    tp.allocated -= lf;
    emit_position(c, taker, tp);
  } else {
    taker.collateral -= lf;
    emit_balance(c, taker, -lf, BalanceReason::kLiquidationFee);
  }
  ins.collateral += lf;
  emit_balance(c, ins, lf, BalanceReason::kLiquidationFee);
}

// One side of a fill. Keeps Σ(collateral − entry_notional) exact: realized PnL moves value from
// the cost basis into collateral within the account, so rounding never creates money.
Lots Engine::fill_position(const Market& m, Position& p, Usdc& collateral, bool is_buy, Lots q,
                           Ticks price) {
  const Lots long_before = std::max<Lots>(p.size, 0);
  const FillOutcome f =
      fill_outcome(p.size, p.entry_notional, is_buy, q, price, m.quote_multiplier);
  p.size = f.size;
  p.entry_notional = f.entry_notional;
  p.realized_pnl += f.pnl;
  collateral += f.pnl;
  return std::max<Lots>(p.size, 0) - long_before;
}

uint64_t Engine::apply_fill(Ctx& c, Market& m, Account& a, bool is_buy, Lots q, Ticks price,
                            Usdc fee) {
  Position& p = a.position_or_add(m.id);
  const Usdc coll_before = a.collateral;
  const uint64_t held_before = held(a, p);
  const Lots before = p.size;
  // An isolated position realizes its PnL into its own margin; fees come from cross collateral.
  m.open_interest += fill_position(m, p, p.isolated ? p.allocated : a.collateral, is_buy, q, price);
  a.collateral -= fee;
  const uint32_t slot = static_cast<uint32_t>(&a - accounts_.data());
  if (p.isolated) {
    // What the fill opened brings its initial margin from cross collateral (reserved there while
    // the order was open), as much as there is; a closed position hands its margin back.
    const Lots opened = (before == 0 || (before > 0) != (p.size > 0))
                            ? abs_lots(p.size)
                            : std::max<Lots>(abs_lots(p.size) - abs_lots(before), 0);
    if (opened > 0) {
      const __int128 im = ceil_div(
          m.notional(opened, price) * effective_imf(margin_market(m), p.imf), kFractionOne);
      const Usdc move =
          static_cast<Usdc>(std::clamp<__int128>(im, 0, std::max<Usdc>(a.collateral, 0)));
      a.collateral -= move;
      p.allocated += move;
    }
    if (p.size == 0 && !(c.liq_isolated_slot == slot && c.liq_isolated_market == m.id))
      release_isolated(c, a, p, false);
  }
  track_holder(m, slot, p);
  c.risk(slot);
  const uint64_t moved = held(a, p) - held_before;
  if (slot == c.co.taker_slot && m.id == c.co.market) {  // the matching's taker: at its end
    c.co.position_due = c.co.balance_due = true;
    c.co.trade_delta += a.collateral - coll_before;
    return moved;
  }
  emit_position(c, a, p);
  emit_balance(c, a, a.collateral - coll_before, BalanceReason::kTrade);
  return moved;
}

void Engine::flush_fills(Ctx& c) {
  Ctx::Coalesce& co = c.co;
  if (co.position_due || co.balance_due) {
    const Account& a = accounts_[co.taker_slot];
    if (co.position_due) emit_position(c, a, *a.position(co.market));
    if (co.balance_due) emit_balance(c, a, co.trade_delta, BalanceReason::kTrade);
  }
  if (co.fee_due) emit_balance(c, accounts_[kFeeAccountSlot], co.fee_delta, BalanceReason::kFee);
  co.position_due = co.balance_due = co.fee_due = false;
  co.trade_delta = co.fee_delta = 0;
}

void Engine::rest(Ctx& c, Market& m, Account& a, uint32_t slot) {
  Order& o = pool_[slot];
  TACHYON_ASSERT(o.remaining > 0 && o.remaining <= o.initial, "resting order size out of range");
  m.book.add(pool_, slot);
  o.acct_prev = kNoSlot;
  o.acct_next = a.order_head;
  if (a.order_head != kNoSlot) pool_[a.order_head].acct_prev = slot;
  a.order_head = slot;
  ++a.open_orders;
  Position& p = a.position_or_add(m.id);
  (o.is_ask ? p.sell_open : p.buy_open) += o.remaining;
  ++p.open_orders;
  ++m.open_orders;
  if (o.expiry_ms != 0) expiries_.push(slot);
  order_slot_.insert(o.order_index, slot);
  if (o.client_order_index != 0) coi_slot_.emplace(CoiKey{o.account, o.client_order_index}, slot);
  emit_order(c, UpdateType::kOrderAdded, o);
  c.touch(m.id);
}

void Engine::unlink_resting(Market& m, Account& a, uint32_t slot) {
  Order& o = pool_[slot];
  m.book.remove(pool_, slot);
  if (o.acct_prev != kNoSlot)
    pool_[o.acct_prev].acct_next = o.acct_next;
  else
    a.order_head = o.acct_next;
  if (o.acct_next != kNoSlot) pool_[o.acct_next].acct_prev = o.acct_prev;
  o.acct_prev = o.acct_next = kNoSlot;
  Position* p = a.position(m.id);
  TACHYON_ASSERT(p != nullptr && p->open_orders > 0 && a.open_orders > 0 && m.open_orders > 0,
                 "open order counts out of step with the book");
  --a.open_orders;
  Lots& open = o.is_ask ? p->sell_open : p->buy_open;
  open -= o.remaining;
  TACHYON_ASSERT(open >= 0, "open size below zero");
  --p->open_orders;
  --m.open_orders;
  if (o.heap_pos != kNoSlot) expiries_.erase(slot);
  order_slot_.erase(o.order_index, pool_);
  if (o.client_order_index != 0) coi_slot_.erase(CoiKey{o.account, o.client_order_index});
}

void Engine::remove_order(Ctx& c, uint32_t slot, RemoveReason why) {
  Order& o = pool_[slot];
  if (o.pending) {
    remove_pending(c, slot, why);
    return;
  }
  Market& m = markets_[o.market];
  unlink_resting(m, accounts_[o.account_slot], slot);
  emit_order(c, UpdateType::kOrderRemoved, o, why);
  c.touch(m.id);
  order_gone(c, slot, why);
  pool_.release(slot);
}

void Engine::finish_taker(Ctx& c, uint32_t slot, RemoveReason why) {
  emit_order(c, UpdateType::kOrderRemoved, pool_[slot], why);
  order_gone(c, slot, why);
  pool_.release(slot);
}

void Engine::reduce_resting(Ctx& c, Market& m, uint32_t slot, Lots by, RemoveReason if_empty) {
  if (by == 0) return;
  Order& o = pool_[slot];
  TACHYON_ASSERT(by > 0 && by <= o.remaining && o.remaining <= o.initial,
                 "resting order reduced out of range");
  Position* p = accounts_[o.account_slot].position(m.id);
  Lots& open = o.is_ask ? p->sell_open : p->buy_open;
  open -= by;
  TACHYON_ASSERT(open >= 0, "open size below zero");
  m.book.reduce(pool_, slot, by);  // also lowers o.remaining
  c.touch(m.id);
  if (o.remaining == 0) {
    remove_order(c, slot, if_empty);  // nothing left to subtract from the aggregates
  } else {
    emit_order(c, UpdateType::kOrderReduced, o);
  }
}

}  // namespace tachyon
