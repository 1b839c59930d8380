// Engine: stop-loss and take-profit orders (market and limit). A trigger order waits outside the
// book, in its account's order list and in its market's trigger index, until the mark price
// reaches its trigger; then it comes back with the same order index as a live order: a market
// IOC (stop-loss, take-profit) or a limit order at its price with its time in force. Its size,
// reduce-only room and margin are judged then, as for a new order.
#include <algorithm>

#include "context.hpp"
#include "tachyon/engine/engine.hpp"
#include "tachyon/engine/order_checks.hpp"

namespace tachyon {

namespace {
std::pair<Ticks, OrderIndex> trigger_key(const Order& o) {
  // `below` is walked from the highest trigger down: keyed by −trigger.
  return fires_below(o.type, o.is_ask) ? std::make_pair(-o.trigger_price, o.order_index)
                                       : std::make_pair(o.trigger_price, o.order_index);
}
bool reached(const Order& o, Ticks mark) {
  return fires_below(o.type, o.is_ask) ? mark <= o.trigger_price : mark >= o.trigger_price;
}
}  // namespace

void Engine::link_pending(Market& m, Account& a, uint32_t slot) {
  Order& o = pool_[slot];
  o.acct_prev = kNoSlot;
  o.acct_next = a.order_head;
  if (a.order_head != kNoSlot) pool_[a.order_head].acct_prev = slot;
  a.order_head = slot;
  ++a.open_orders;
  ++a.position_or_add(m.id).open_orders;  // counts against max_orders_per_account
  if (o.pending == kWaitingTrigger) {
    (fires_below(o.type, o.is_ask) ? m.triggers_below : m.triggers_above).insert(trigger_key(o));
    ++m.pending_orders;
  } else {
    ++m.waiting_orders;
    if (o.pending == kWaitingTwap) twaps_.insert({o.trigger_price, o.order_index});
  }
  if (o.expiry_ms != 0) expiries_.push(slot);
  order_slot_.insert(o.order_index, slot);
  if (o.client_order_index != 0) coi_slot_.emplace(CoiKey{o.account, o.client_order_index}, slot);
}

void Engine::unlink_pending(Market& m, Account& a, uint32_t slot) {
  Order& o = pool_[slot];
  if (o.acct_prev != kNoSlot)
    pool_[o.acct_prev].acct_next = o.acct_next;
  else
    a.order_head = o.acct_next;
  if (o.acct_next != kNoSlot) pool_[o.acct_next].acct_prev = o.acct_prev;
  o.acct_prev = o.acct_next = kNoSlot;
  --a.open_orders;
  --a.position(m.id)->open_orders;
  if (o.pending == kWaitingTrigger) {
    (fires_below(o.type, o.is_ask) ? m.triggers_below : m.triggers_above).erase(trigger_key(o));
    --m.pending_orders;
  } else {
    --m.waiting_orders;
    if (o.pending == kWaitingTwap) twaps_.erase({o.trigger_price, o.order_index});
  }
  if (o.heap_pos != kNoSlot) expiries_.erase(slot);
  order_slot_.erase(o.order_index, pool_);
  if (o.client_order_index != 0) coi_slot_.erase(CoiKey{o.account, o.client_order_index});
}

OrderIndex Engine::place_trigger(Ctx& c, Account& a, Market& m, const CreateOrderTx& tx,
                                 uint8_t pending, OrderIndex parent, OrderIndex sibling) {
  const uint32_t slot = pool_.alloc();
  Order& o = pool_[slot];
  o.order_index = next_order_index_++;
  o.client_order_index = tx.client_order_index;
  o.account = a.index;
  o.account_slot = static_cast<uint32_t>(&a - accounts_.data());
  o.price = tx.price;
  o.remaining = o.initial = tx.base_amount;  // 0 (reduce-only): the whole position when it fires
  o.expiry_ms = tx.order_expiry_ms;
  o.prev = o.next = o.acct_prev = o.acct_next = o.heap_pos = kNoSlot;
  o.market = m.id;
  o.is_ask = tx.is_ask;
  o.type = tx.type;
  o.tif = tx.tif;
  o.reduce_only = tx.reduce_only;
  o.stp = tx.stp;
  o.pending = pending;
  o.trigger_price = tx.trigger_price;
  o.parent = parent;
  o.child = 0;
  o.sibling = sibling;
  link_pending(m, a, slot);
  emit_order(c, UpdateType::kOrderAdded, o);
  if (pending == kWaitingTrigger && reached(o, m.mark_price))
    c.triggered.push_back(o.order_index);  // fires this tx
  return o.order_index;
}

void Engine::remove_pending(Ctx& c, uint32_t slot, RemoveReason why) {
  Order& o = pool_[slot];
  unlink_pending(markets_[o.market], accounts_[o.account_slot], slot);
  emit_order(c, UpdateType::kOrderRemoved, o, why);
  order_gone(c, slot, why);
  pool_.release(slot);
}

// Called when the mark moved: hands every order whose trigger it reached to the risk pass.
void Engine::collect_triggers(Ctx& c, Market& m) {
  const Ticks mark = m.mark_price;
  for (auto it = m.triggers_below.begin(); it != m.triggers_below.end() && -it->first >= mark; ++it)
    c.triggered.push_back(it->second);
  for (auto it = m.triggers_above.begin(); it != m.triggers_above.end() && it->first <= mark; ++it)
    c.triggered.push_back(it->second);
}

void Engine::fire_trigger(Ctx& c, uint32_t slot) {
  Order& o = pool_[slot];
  Market& m = markets_[o.market];
  Account& a = accounts_[o.account_slot];
  unlink_pending(m, a, slot);
  emit_order(c, UpdateType::kOrderRemoved, o, RemoveReason::kTriggered);
  o.pending = 0;
  if (o.sibling != 0) {  // OCO: the other order of the pair goes
    const OrderIndex other = o.sibling;
    o.sibling = 0;
    cancel_linked(c, other, RemoveReason::kOco);
  }
  if (check_market_status(m.status(), o.tif, o.reduce_only) != Reject::kOk) {
    finish_taker(c, slot, RemoveReason::kMarketHalted);
    return;
  }
  if (o.reduce_only) {
    const Lots room = reduce_only_room(a, m.id, o.is_ask);
    o.remaining = o.remaining == 0 ? room : std::min(o.remaining, room);
    o.initial = o.remaining;
    if (o.remaining == 0) {
      finish_taker(c, slot, RemoveReason::kReduceOnly);
      return;
    }
  } else if (check_order_margin(a, m, o.is_ask, o.remaining) != Reject::kOk) {
    finish_taker(c, slot, RemoveReason::kMarginNotAllowed);
    return;
  }
  const bool market_like = o.type == OrderType::kStopLoss || o.type == OrderType::kTakeProfit;
  if (o.tif != TimeInForce::kIoc && m.open_orders >= m.params.max_orders) {
    finish_taker(c, slot, RemoveReason::kCanceled);
    return;
  }
  // the market's price protection, as for a market order
  const Ticks bound = market_like ? protection_bound(m, o.is_ask, o.price) : o.price;
  if (o.tif == TimeInForce::kPostOnly && m.book.crosses(o.is_ask, o.price)) {
    finish_taker(c, slot, RemoveReason::kPostOnly);
    return;
  }
  match_and_rest(c, m, a, slot, bound, market_like);
}

// ---- TWAP ----

OrderIndex Engine::place_twap(Ctx& c, Account& a, Market& m, const CreateOrderTx& tx) {
  CreateOrderTx t = tx;
  t.trigger_price = c.now_ms;  // the first slice is due now
  const OrderIndex id = place_trigger(c, a, m, t, kWaitingTwap);
  fire_twap(c, order_slot_.find(id, pool_));
  return id;
}

void Engine::fire_twaps(Ctx& c) {
  // Each firing moves its TWAP past now or removes it: the loop ends.
  while (!twaps_.empty() && twaps_.begin()->first <= c.now_ms)
    fire_twap(c, order_slot_.find(twaps_.begin()->second, pool_));
}

// One slice: an IOC market order of the TWAP's account, bounded by the TWAP's price and the
// market's price protection; its fill comes off the TWAP. A halted market skips the slice; a
// reduce-only TWAP with nothing left to reduce, or a slice the margin refuses, ends the TWAP.
void Engine::fire_twap(Ctx& c, uint32_t slot) {
  Order& p = pool_[slot];
  Market& m = markets_[p.market];
  Account& a = accounts_[p.account_slot];
  const int64_t due = p.trigger_price, next = due + kTwapSliceMs;
  const bool last = next >= p.expiry_ms;
  Lots size = twap_slice(p.remaining, due, p.expiry_ms);
  twaps_.erase({due, p.order_index});
  p.trigger_price = last ? 0 : next;
  if (!last) twaps_.insert({next, p.order_index});
  bool run = check_market_status(m.status(), TimeInForce::kIoc, p.reduce_only) == Reject::kOk &&
             !pool_.full();
  if (run && p.reduce_only) {
    size = std::min(size, reduce_only_room(a, m.id, p.is_ask));
    if (size == 0) {
      remove_pending(c, slot, RemoveReason::kReduceOnly);
      return;
    }
  } else if (run && check_order_margin(a, m, p.is_ask, size) != Reject::kOk) {
    remove_pending(c, slot, RemoveReason::kMarginNotAllowed);
    return;
  }
  if (run) {
    const uint32_t s = pool_.alloc();
    Order& t = pool_[s];
    t.order_index = next_order_index_++;
    t.client_order_index = 0;
    t.account = p.account;
    t.account_slot = p.account_slot;
    t.price = p.price;
    t.remaining = t.initial = size;
    t.expiry_ms = 0;
    t.prev = t.next = t.acct_prev = t.acct_next = t.heap_pos = kNoSlot;
    t.market = m.id;
    t.is_ask = p.is_ask;
    t.type = OrderType::kTwapSub;
    t.tif = TimeInForce::kIoc;
    t.reduce_only = p.reduce_only;
    t.stp = p.stp;
    t.pending = 0;
    t.trigger_price = 0;
    t.child = t.sibling = 0;
    t.parent = p.order_index;
    const Ticks bound = protection_bound(m, p.is_ask, p.price);
    const Position* before = a.position(m.id);
    const Lots size_before = before != nullptr ? before->size : 0;
    match_and_rest(c, m, a, s, bound, /*is_market=*/true);
    const Position* after = a.position(m.id);
    const Lots moved = (after != nullptr ? after->size : 0) - size_before;
    p.remaining -= std::min(p.remaining, moved < 0 ? -moved : moved);
  }
  if (p.remaining == 0) {
    remove_pending(c, slot, RemoveReason::kFilled);
  } else if (last) {
    remove_pending(c, slot, RemoveReason::kExpired);  // its time is up with some unfilled
  } else {
    emit_order(c, UpdateType::kOrderReduced, p);  // what is left, and when the next slice is due
  }
}

// New size, price and trigger for a waiting order: it keeps its order index and waits again
// (or fires at once if the mark is already there).
Reject Engine::modify_pending(const Tx& tx, Ctx& c, uint32_t slot) {
  const ModifyOrderTx& x = tx.modify;
  Order& o = pool_[slot];
  Market& m = markets_[o.market];
  // a TWAP is not modified (cancel it and place another); a grouped child waits for its primary
  if (o.pending == kWaitingTwap) return Reject::kInvalidOrderType;
  if (o.pending != kWaitingTrigger) return Reject::kInvalidTrigger;
  if (x.trigger_price <= 0 || x.trigger_price > kMaxPriceTicks) return Reject::kInvalidTrigger;
  if (x.base_amount < 0 || x.base_amount > kMaxBaseAmount || (x.base_amount == 0 && !o.reduce_only))
    return Reject::kInvalidBaseAmount;
  if (x.price <= 0 || x.price > kMaxPriceTicks) return Reject::kInvalidPrice;
  const bool market_like = o.type == OrderType::kStopLoss || o.type == OrderType::kTakeProfit;
  if (!market_like && check_limit_band(m.params, x.trigger_price, o.is_ask, x.price) != Reject::kOk)
    return Reject::kPriceBandFatFinger;
  Account& a = accounts_[o.account_slot];
  unlink_pending(m, a, slot);
  emit_order(c, UpdateType::kOrderRemoved, o, RemoveReason::kModified);
  o.remaining = o.initial = x.base_amount;
  o.price = x.price;
  o.trigger_price = x.trigger_price;
  link_pending(m, a, slot);
  emit_order(c, UpdateType::kOrderAdded, o);
  if (reached(o, m.mark_price)) c.triggered.push_back(o.order_index);
  return Reject::kOk;
}

// A grouped child whose primary is done starts waiting for its trigger.
void Engine::arm_child(Ctx& c, OrderIndex id) {
  const uint32_t slot = order_slot_.find(id, pool_);
  if (slot == kNoSlot || pool_[slot].pending != kWaitingParent) return;
  Order& o = pool_[slot];
  Market& m = markets_[o.market];
  Account& a = accounts_[o.account_slot];
  unlink_pending(m, a, slot);
  emit_order(c, UpdateType::kOrderRemoved, o, RemoveReason::kArmed);
  o.pending = kWaitingTrigger;
  link_pending(m, a, slot);
  emit_order(c, UpdateType::kOrderAdded, o);
  if (reached(o, m.mark_price)) c.triggered.push_back(o.order_index);
}

}  // namespace tachyon
