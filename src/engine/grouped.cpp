// Engine: grouped orders (Lighter tx 28: OTO, OCO, OTOCO) and what an order's group does when it
// leaves. Links are order indices: a primary's first child, a child's primary, an OCO pair's
// other order. A child waits outside the book (kWaitingParent) until its primary has left: with
// a fill it is armed (waits for its trigger), without one it is canceled (canceled-child). When
// an OCO order fires or goes, the other is canceled (canceled-oco).
#include <algorithm>
#include <vector>

#include "context.hpp"
#include "tachyon/engine/engine.hpp"

namespace tachyon {

Reject Engine::create_grouped(const Tx& tx, Ctx& c, OrderIndex& out) {
  Account* a = nullptr;
  ApiKey* key = nullptr;
  if (Reject r = authenticate(tx, c, a, key); r != Reject::kOk) return r;
  const CreateGroupedOrdersTx& g = tx.grouped;
  const bool oco = g.grouping == Grouping::kOco;
  const bool with_primary = g.grouping == Grouping::kOto || g.grouping == Grouping::kOtoco;
  if (!oco && !with_primary) return Reject::kInvalidGrouping;
  if (g.count != (g.grouping == Grouping::kOtoco ? 3 : 2)) return Reject::kInvalidGrouping;
  const MarketId mid = g.orders[0].market;
  for (int i = 0; i < g.count; ++i) {
    const CreateOrderTx& o = g.orders[i];
    if (o.market != mid) return Reject::kInvalidGrouping;  // one market per group
    const bool primary = with_primary && i == 0;
    // the primary is a plain order; every other is a trigger order on the other side of the
    // primary (it closes what the primary opens), reduce-only
    if (primary == is_trigger_type(o.type)) return Reject::kInvalidGrouping;
    if (o.type == OrderType::kTwap) return Reject::kInvalidGrouping;  // slices have no primary
    if (!primary && (!o.reduce_only || o.is_ask != g.orders[with_primary ? 1 : 0].is_ask))
      return Reject::kInvalidGrouping;
    if (!primary && with_primary && o.is_ask == g.orders[0].is_ask) return Reject::kInvalidGrouping;
    for (int j = 0; j < i; ++j) {
      if (o.client_order_index != 0 && o.client_order_index == g.orders[j].client_order_index)
        return Reject::kClientOrderIndexExists;
    }
  }
  if (oco && g.orders[0].type == g.orders[1].type) return Reject::kInvalidGrouping;
  if (g.grouping == Grouping::kOtoco && g.orders[1].type == g.orders[2].type)
    return Reject::kInvalidGrouping;
  Lots size0 = 0;
  for (int i = 0; i < g.count; ++i) {
    Lots size = 0;
    if (Reject r =
            check_new_order(*a, g.orders[i], c.now_ms, static_cast<uint32_t>(g.count - 1), size);
        r != Reject::kOk)
      return r;
    if (i == 0) size0 = size;
  }
  // accepted
  consume_nonce(c, *key, tx);
  Market& m = markets_[mid];
  // Order indices are handed out in sequence, so every order is placed with its links already
  // set and its first update carries them.
  if (oco) {
    const OrderIndex first = next_order_index_;
    place_trigger(c, *a, m, g.orders[0], kWaitingTrigger, 0, first + 1);
    place_trigger(c, *a, m, g.orders[1], kWaitingTrigger, 0, first);
    out = first;
    return Reject::kOk;
  }
  const uint32_t ps = start_order(*a, g.orders[0], size0);
  const OrderIndex primary = pool_[ps].order_index;
  out = primary;
  const OrderIndex kid0 = next_order_index_;
  const bool pair = g.count == 3;
  place_trigger(c, *a, m, g.orders[1], kWaitingParent, primary, pair ? kid0 + 1 : 0);
  if (pair) place_trigger(c, *a, m, g.orders[2], kWaitingParent, primary, kid0);
  pool_[ps].child = kid0;
  run_order(c, m, *a, ps);
  return Reject::kOk;
}

void Engine::cancel_linked(Ctx& c, OrderIndex id, RemoveReason why) {
  const uint32_t slot = order_slot_.find(id, pool_);
  if (slot != kNoSlot) remove_order(c, slot, why);
}

// Called for every order that leaves for good (not a modify's re-placement, not a firing).
void Engine::order_gone(Ctx& c, uint32_t slot, RemoveReason why) {
  Order& o = pool_[slot];
  if (o.sibling != 0) {
    const OrderIndex other = o.sibling;
    o.sibling = 0;
    const uint32_t os = order_slot_.find(other, pool_);
    if (os != kNoSlot) pool_[os].sibling = 0;
    // a pair of children whose primary left without a fill go together as canceled-child
    cancel_linked(c, other,
                  why == RemoveReason::kChild ? RemoveReason::kChild : RemoveReason::kOco);
  }
  if (o.child != 0) {
    const OrderIndex first = o.child;
    o.child = 0;
    std::vector<OrderIndex> kids{first};
    const uint32_t fs = order_slot_.find(first, pool_);
    if (fs != kNoSlot && pool_[fs].sibling != 0) kids.push_back(pool_[fs].sibling);
    const bool filled = o.initial > o.remaining;
    for (OrderIndex k : kids) {
      if (filled) {
        arm_child(c, k);
      } else {
        cancel_linked(c, k, RemoveReason::kChild);
      }
    }
  }
}

// Every order of an account (in one market, or all), safe against cascades: a primary that goes
// takes its children with it, so the list is read first and each order looked up again.
void Engine::cancel_account_orders(Ctx& c, uint32_t account_slot, MarketId only, RemoveReason why) {
  std::vector<OrderIndex> ids;
  for (uint32_t s = accounts_[account_slot].order_head; s != kNoSlot; s = pool_[s].acct_next) {
    if (only == kAllMarkets || pool_[s].market == only) ids.push_back(pool_[s].order_index);
  }
  for (OrderIndex id : ids) cancel_linked(c, id, why);
}

}  // namespace tachyon
