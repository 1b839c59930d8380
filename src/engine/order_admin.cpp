// Engine: cancel, cancel-all, modify, expiries and the mark price.
#include <algorithm>

#include "context.hpp"
#include "tachyon/engine/engine.hpp"

namespace tachyon {

Reject Engine::cancel_order(const Tx& tx, Ctx& c, OrderIndex& out) {
  Account* a = nullptr;
  ApiKey* key = nullptr;
  if (Reject r = authenticate(tx, c, a, key); r != Reject::kOk) return r;
  const CancelOrderTx& x = tx.cancel;
  if (x.market >= kMaxMarkets || !markets_[x.market].exists) return Reject::kInvalidMarket;
  const uint32_t slot = find_order(*a, x.market, x.index);
  if (slot == kNoSlot) return Reject::kOrderNotFound;
  consume_nonce(c, *key, tx);
  out = pool_[slot].order_index;
  remove_order(c, slot, RemoveReason::kCanceled);
  return Reject::kOk;
}

Reject Engine::cancel_all(const Tx& tx, Ctx& c) {
  Account* a = nullptr;
  ApiKey* key = nullptr;
  if (Reject r = authenticate(tx, c, a, key); r != Reject::kOk) return r;
  const CancelAllOrdersTx& x = tx.cancel_all;
  if (x.tif > kCancelAllAbort) return Reject::kUnsupportedCancelAllMode;
  const uint32_t slot = static_cast<uint32_t>(a - accounts_.data());
  if (x.tif == kCancelAllScheduled) {  // set or renew the dead man's switch
    if (x.time_ms < c.now_ms + kCancelAllMinDelayMs || x.time_ms > c.now_ms + kCancelAllMaxDelayMs)
      return Reject::kInvalidExpiry;
    consume_nonce(c, *key, tx);
    if (a->cancel_all_at_ms != 0) scheduled_cancels_.erase({a->cancel_all_at_ms, slot});
    a->cancel_all_at_ms = x.time_ms;
    scheduled_cancels_.insert({x.time_ms, slot});
    return Reject::kOk;
  }
  if (x.tif == kCancelAllAbort) {
    if (x.time_ms != 0) return Reject::kInvalidExpiry;
    if (a->cancel_all_at_ms == 0) return Reject::kOrderNotFound;  // nothing scheduled
    consume_nonce(c, *key, tx);
    scheduled_cancels_.erase({a->cancel_all_at_ms, slot});
    a->cancel_all_at_ms = 0;
    return Reject::kOk;
  }
  if (x.market != kAllMarkets && (x.market >= kMaxMarkets || !markets_[x.market].exists))
    return Reject::kInvalidMarket;
  consume_nonce(c, *key, tx);
  cancel_account_orders(c, slot, x.market, RemoveReason::kCancelAll);
  return Reject::kOk;
}

Reject Engine::modify_order(const Tx& tx, Ctx& c, OrderIndex& out) {
  Account* a = nullptr;
  ApiKey* key = nullptr;
  if (Reject r = authenticate(tx, c, a, key); r != Reject::kOk) return r;
  const ModifyOrderTx& x = tx.modify;
  if (x.market >= kMaxMarkets || !markets_[x.market].exists) return Reject::kInvalidMarket;
  Market& m = markets_[x.market];
  const uint32_t slot = find_order(*a, x.market, x.index);
  if (slot == kNoSlot) return Reject::kOrderNotFound;
  Order& o = pool_[slot];
  if (o.pending) {
    const Reject r = modify_pending(tx, c, slot);
    if (r == Reject::kOk) {
      consume_nonce(c, *key, tx);
      out = o.order_index;
    }
    return r;
  }
  switch (m.status()) {
    case MarketStatus::kActive: break;
    case MarketStatus::kPostOnly:
      if (o.tif != TimeInForce::kPostOnly) return Reject::kMarketStatus;
      break;
    case MarketStatus::kReduceOnly:
      if (!o.reduce_only) return Reject::kMarketStatus;
      break;
    case MarketStatus::kHalted: return Reject::kMarketStatus;
  }
  if (x.trigger_price != 0) return Reject::kInvalidTrigger;
  if (x.base_amount <= 0 || x.base_amount > kMaxBaseAmount) return Reject::kInvalidBaseAmount;
  if (x.price <= 0 || x.price > kMaxPriceTicks) return Reject::kInvalidPrice;
  if (!o.reduce_only) {
    if (x.base_amount < m.params.min_base_lots) return Reject::kInvalidBaseAmount;
    if (m.notional(x.base_amount, x.price) < m.params.min_quote_usdc) return Reject::kInvalidAmount;
  }
  if (Reject r = check_price_band(m, o.is_ask, x.price); r != Reject::kOk) return r;
  if (!o.reduce_only) {
    const Lots delta = x.base_amount - o.remaining;
    __int128 imr_before = 0;
    MarginInfo mi = margin_with(*a, m.id, o.is_ask ? 0 : delta, o.is_ask ? delta : 0, &imr_before);
    if (mi.tav < mi.imr && mi.imr > imr_before) return Reject::kNotEnoughMargin;
  }
  consume_nonce(c, *key, tx);
  out = o.order_index;
  if (x.price == o.price && x.base_amount <= o.remaining) {  // keeps time priority
    reduce_resting(c, m, slot, o.remaining - x.base_amount, RemoveReason::kCanceled);
    return Reject::kOk;
  }
  // Loses priority: leaves its level and comes back as a taker with the same order index.
  unlink_resting(m, *a, slot);
  emit_order(c, UpdateType::kOrderRemoved, o, RemoveReason::kModified);
  c.touch(m.id);
  o.initial = (o.initial - o.remaining) + x.base_amount;
  o.remaining = x.base_amount;
  o.price = x.price;
  if (o.reduce_only) o.remaining = std::min(o.remaining, reduce_only_room(*a, m.id, o.is_ask));
  if (o.remaining == 0) {
    finish_taker(c, slot, RemoveReason::kReduceOnly);
  } else if (o.tif == TimeInForce::kPostOnly && m.book.crosses(o.is_ask, o.price)) {
    finish_taker(c, slot, RemoveReason::kPostOnly);
  } else {
    match_and_rest(c, m, *a, slot, o.price, false);
  }
  return Reject::kOk;
}

void Engine::expire_orders(Ctx& c, int64_t now_ms) {
  while (!expiries_.empty() && pool_[expiries_.top()].expiry_ms <= now_ms) {
    remove_order(c, expiries_.top(), RemoveReason::kExpired);
  }
}

// Mark = median(index, best bid, best ask); the index alone when a side is empty.
void Engine::update_mark(Ctx& c, Market& m) {
  const Level* bid = m.book.best(false);
  const Level* ask = m.book.best(true);
  Ticks mark = m.index_price;
  if (bid != nullptr && ask != nullptr) {
    mark = std::max(std::min(m.index_price, bid->price),
                    std::min(std::max(m.index_price, bid->price), ask->price));
  }
  if (mark == m.mark_price && m.index_price == m.emitted_index &&
      m.open_interest == m.emitted_open_interest)
    return;
  const Ticks old = m.mark_price;
  m.mark_price = mark;
  if (old != mark && old > 0) {
    // Liquidation index: the drift grows by the relative move (rounded up, 1e-12), and every
    // account whose key it reaches is looked at again.
    const __int128 num =
        static_cast<__int128>(mark > old ? mark - old : old - mark) * 1'000'000'000'000;
    m.drift += static_cast<int64_t>(ceil_div(num, std::min(mark, old)));
    while (!m.risk_index.empty() && m.risk_index.begin()->first <= m.drift) {
      c.risk(m.risk_index.begin()->second);
      const auto key = *m.risk_index.begin();
      m.risk_index.erase(m.risk_index.begin());
      Position* p = accounts_[key.second].position(m.id);
      if (p != nullptr) p->risk_key = kNoRiskKey;
    }
    breaker_on_mark(c, m, old);
    if (m.pending_orders != 0) collect_triggers(c, m);
  }
  m.emitted_index = m.index_price;
  m.emitted_open_interest = m.open_interest;
  StateUpdate u = c.make(UpdateType::kMarkPrice);
  u.mark = MarkPriceUpdate{m.mark_price, m.index_price, m.open_interest, m.id};
  c.sink.on_update(u);
}

}  // namespace tachyon
