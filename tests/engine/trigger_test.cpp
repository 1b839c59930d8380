// Stop-loss and take-profit orders (market and limit): they wait outside the book until the mark
// price reaches their trigger, then execute with the same order index; cancel, modify, expiry,
// cancel-all and snapshots see them too. validate() runs after every tx (EngineTest::run).
#include <gtest/gtest.h>

#include "support/engine_fixture.hpp"
#include "tachyon/core/bytes.hpp"

namespace tachyon::testing {
namespace {

constexpr AccountIndex kMaker = 100, kTrader = 200;
constexpr Lots kOne = 10'000;  // 1.0000 ETH

class TriggerTest : public EngineTest {
 protected:
  void SetUp() override { market_with_maker(kMaker, {{kTrader, 100'000 * kUsdc}}); }
  void index(Ticks px) {
    b.sync_op_nonce(engine.operator_next_nonce());
    ASSERT_TRUE(run(b.set_index(0, px)).ok());
  }
  // A trigger order: IOC for the market-like types, GTT for the limit ones; waits an hour.
  Tx trigger(AccountIndex a, OrderType type, bool ask, Ticks trig, Ticks price, Lots size,
             bool reduce_only = true, uint64_t coi = 0) {
    const bool market_like = type == OrderType::kStopLoss || type == OrderType::kTakeProfit;
    Tx tx = b.limit(a, N(a), 0, ask, price, size,
                    market_like ? TimeInForce::kIoc : TimeInForce::kGoodTillTime, coi);
    tx.order.type = type;
    tx.order.trigger_price = trig;
    tx.order.reduce_only = reduce_only;
    tx.order.order_expiry_ms = b.now_ms() + 3'600'000;
    return tx;
  }
  void go_long(Lots size) {
    ASSERT_TRUE(run(b.market(kTrader, N(kTrader), 0, false, 310'000, size)).ok());
    ASSERT_EQ(pos_size(kTrader), size);
  }
  bool removed_as(OrderIndex id, RemoveReason why) const {
    for (const auto& o : sink.removed())
      if (o.order_index == id && o.reason == why) return true;
    return false;
  }
};

TEST_F(TriggerTest, a_stop_loss_waits_outside_the_book_and_sells_when_the_mark_falls_to_it) {
  go_long(kOne);
  const TxResult r = run(trigger(kTrader, OrderType::kStopLoss, true, 290'000, 270'000, 0));
  ASSERT_TRUE(r.ok());
  const Order* o = engine.order(r.order_index);
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->pending, 1);
  EXPECT_EQ(level_price(false, 0), 299'000);  // not in the book
  EXPECT_EQ(engine.market(0)->pending_orders, 1u);
  index(289'000);  // mark = median(index, bid, ask) = the 2990.00 bid: not yet
  EXPECT_NE(engine.order(r.order_index), nullptr);
  index(295'000);
  ASSERT_TRUE(run(b.cancel(kMaker, N(kMaker), 0, kFirstOrderIndex)).ok());  // the 2990.00 bid
  EXPECT_NE(engine.order(r.order_index), nullptr);  // mark 2950.00: still above the trigger
  sink.clear();
  index(289'000);  // mark 2890.00 <= 2900.00: fires, sells 1 ETH into the 2800.00 bid
  EXPECT_EQ(engine.order(r.order_index), nullptr);
  EXPECT_TRUE(removed_as(r.order_index, RemoveReason::kTriggered));
  const auto trades = sink.trades();
  ASSERT_EQ(trades.size(), 1u);
  EXPECT_EQ(trades[0].taker_order, r.order_index);  // the same order index, now live
  EXPECT_EQ(trades[0].price, 280'000);              // within the 5% protection from the mark
  EXPECT_EQ(trades[0].size, kOne);
  EXPECT_EQ(pos_size(kTrader), 0);
  EXPECT_EQ(engine.market(0)->pending_orders, 0u);
}

TEST_F(TriggerTest, a_take_profit_buy_closes_a_short_when_the_mark_falls_to_it) {
  ASSERT_TRUE(run(b.market(kTrader, N(kTrader), 0, true, 290'000, kOne)).ok());
  ASSERT_EQ(pos_size(kTrader), -kOne);
  const TxResult r = run(trigger(kTrader, OrderType::kTakeProfit, false, 295'000, 320'000, 0));
  ASSERT_TRUE(r.ok());
  index(296'000);  // mark 2990.00: the best bid is the median, above the trigger
  EXPECT_NE(engine.order(r.order_index), nullptr);
  // the bids go: the mark falls to the index
  ASSERT_TRUE(run(b.cancel_all(kMaker, N(kMaker))).ok());
  ASSERT_TRUE(run(b.limit(kMaker, N(kMaker), 0, true, 301'000, 5 * kOne)).ok());
  index(294'000);
  EXPECT_EQ(engine.order(r.order_index), nullptr);
  EXPECT_EQ(pos_size(kTrader), 0);  // bought back at 3010.00
  EXPECT_EQ(sink.trades().back().price, 301'000);
}

TEST_F(TriggerTest, a_stop_limit_rests_at_its_price_after_it_fires) {
  go_long(kOne);
  const TxResult r =
      run(trigger(kTrader, OrderType::kStopLossLimit, true, 296'000, 300'500, kOne, true, 7));
  ASSERT_TRUE(r.ok());
  index(295'000);  // mark 2990.00 <= 2960.00? no: the bid holds the mark up
  EXPECT_EQ(engine.order(r.order_index)->pending, 1);
  ASSERT_TRUE(run(b.cancel(kMaker, N(kMaker), 0, kFirstOrderIndex)).ok());  // the 2990.00 bid
  index(295'000);  // mark = index 2950.00 (bid 2800.00 < index < ask)
  const Order* o = engine.order(r.order_index);
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->pending, 0);  // fired: rests at 3005.00 (no bid that high), same index
  EXPECT_EQ(level_price(true, 0), 300'500);
  EXPECT_EQ(o->client_order_index, 7u);
  // and it is canceled like any resting order, by its client order index
  ASSERT_TRUE(run(b.cancel(kTrader, N(kTrader), 0, 7)).ok());
  EXPECT_EQ(level_price(true, 0), 301'000);
}

TEST_F(TriggerTest, waiting_orders_are_canceled_modified_and_expire_like_orders) {
  go_long(kOne);
  const TxResult a =
      run(trigger(kTrader, OrderType::kStopLoss, true, 290'000, 270'000, 0, true, 11));
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(run(b.cancel(kTrader, N(kTrader), 0, 11)).ok());
  EXPECT_TRUE(removed_as(a.order_index, RemoveReason::kCanceled));
  // modify moves the trigger (and must keep a valid one)
  const TxResult m = run(trigger(kTrader, OrderType::kStopLoss, true, 290'000, 270'000, 0));
  Tx bad = b.modify(kTrader, N(kTrader), 0, m.order_index, 0, 270'000);
  EXPECT_EQ(run(bad).reject, Reject::kInvalidTrigger);
  Tx mod = b.modify(kTrader, N(kTrader), 0, m.order_index, 0, 270'000);
  mod.modify.trigger_price = 280'000;
  ASSERT_TRUE(run(mod).ok());
  EXPECT_EQ(engine.order(m.order_index)->trigger_price, 280'000);
  ASSERT_TRUE(run(b.cancel(kMaker, N(kMaker), 0, kFirstOrderIndex)).ok());  // 2990.00 bid
  index(285'000);  // mark 2850.00: above the new trigger 2800.00
  EXPECT_NE(engine.order(m.order_index), nullptr);
  // cancel-all takes waiting orders too
  ASSERT_TRUE(run(b.cancel_all(kTrader, N(kTrader))).ok());
  EXPECT_EQ(engine.order(m.order_index), nullptr);
  // expiry
  Tx short_lived = trigger(kTrader, OrderType::kStopLoss, true, 200'000, 190'000, 0);
  short_lived.order.order_expiry_ms = b.now_ms() + 1000;
  const TxResult e = run(short_lived);
  ASSERT_TRUE(e.ok());
  b.advance_ms(2000);
  index(285'000);
  EXPECT_TRUE(removed_as(e.order_index, RemoveReason::kExpired));
  EXPECT_EQ(engine.market(0)->pending_orders, 0u);
}

TEST_F(TriggerTest, a_trigger_already_reached_fires_at_once_and_margin_is_judged_when_it_fires) {
  // mark 2990.00 >= 2950.00: a stop-loss buy with trigger 2950.00 fires in its own tx
  const TxResult r =
      run(trigger(kTrader, OrderType::kStopLoss, false, 295'000, 310'000, kOne, false));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(engine.order(r.order_index), nullptr);
  EXPECT_EQ(pos_size(kTrader), kOne);
  // far too big for the collateral: accepted while waiting, canceled when it fires
  const TxResult big =
      run(trigger(kTrader, OrderType::kTakeProfit, true, 310'000, 290'000, 1000 * kOne, false));
  ASSERT_TRUE(big.ok());
  sink.clear();
  index(315'000);  // mark 3010.00 (the ask): reaches 3100.00? no
  EXPECT_NE(engine.order(big.order_index), nullptr);
  ASSERT_TRUE(run(b.cancel(kMaker, N(kMaker), 0, kFirstOrderIndex + 2)).ok());  // 3010.00 ask
  index(315'000);  // mark = index 3150.00 >= 3100.00: fires, no margin for 1000 ETH
  EXPECT_TRUE(removed_as(big.order_index, RemoveReason::kMarginNotAllowed));
  EXPECT_EQ(pos_size(kTrader), kOne);
  // reduce-only with no position left to reduce
  ASSERT_TRUE(run(b.limit(kTrader, N(kTrader), 0, true, 299'000, kOne, TimeInForce::kIoc)).ok());
  ASSERT_EQ(pos_size(kTrader), 0);
  const TxResult ro = run(trigger(kTrader, OrderType::kTakeProfit, true, 316'000, 290'000, 0));
  ASSERT_TRUE(ro.ok());
  index(317'000);
  EXPECT_TRUE(removed_as(ro.order_index, RemoveReason::kReduceOnly));
}

TEST_F(TriggerTest, waiting_orders_survive_a_snapshot_and_fire_the_same_way) {
  go_long(2 * kOne);
  ASSERT_TRUE(run(trigger(kTrader, OrderType::kStopLoss, true, 290'000, 270'000, kOne)).ok());
  ASSERT_TRUE(
      run(trigger(kTrader, OrderType::kTakeProfitLimit, true, 305'000, 305'000, kOne, true, 3))
          .ok());
  Engine copy(small_config());
  reload_into(copy);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(copy.market(0)->pending_orders, 2u);
  const Tx pull = b.cancel(kMaker, N(kMaker), 0, kFirstOrderIndex);  // the 2990.00 bid
  ASSERT_TRUE(run(pull).ok());
  ASSERT_TRUE(copy.execute(pull, sink).ok());
  b.sync_op_nonce(engine.operator_next_nonce());
  const Tx move = b.set_index(0, 289'000);
  ASSERT_TRUE(run(move).ok());
  RecordingSink other;
  ASSERT_TRUE(copy.execute(move, other).ok());
  EXPECT_EQ(copy.state_hash(), engine.state_hash());
  EXPECT_EQ(pos_size(kTrader), kOne);  // the stop fired, the take-profit waits
}

// ---- grouped orders (tx 28) ----

Tx grouped(TxBuilder& b, AccountIndex a, int64_t nonce, Grouping g,
           std::initializer_list<CreateOrderTx> orders) {
  Tx tx = b.user(TxType::kCreateGroupedOrders, a, nonce);
  tx.grouped.grouping = g;
  tx.grouped.count = static_cast<uint8_t>(orders.size());
  int i = 0;
  for (const CreateOrderTx& o : orders) tx.grouped.orders[i++] = o;
  return tx;
}

class GroupedTest : public TriggerTest {
 protected:
  CreateOrderTx buy_limit(Ticks px, Lots size) {
    return trigger(kTrader, OrderType::kLimit, false, 0, px, size, false).order;
  }
  CreateOrderTx child(OrderType type, Ticks trig, Ticks px) {
    CreateOrderTx o = trigger(kTrader, type, true, trig, px, 0).order;
    return o;
  }
  void SetUp() override {
    TriggerTest::SetUp();
    ASSERT_TRUE(run(b.cancel(kMaker, N(kMaker), 0, kFirstOrderIndex)).ok());  // 2990.00 bid
  }
};

TEST_F(GroupedTest, oto_children_wait_for_the_primary_and_are_armed_when_it_fills) {
  CreateOrderTx primary = buy_limit(300'000, kOne);
  primary.order_expiry_ms = b.now_ms() + 3'600'000;
  primary.type = OrderType::kLimit;
  primary.trigger_price = 0;
  const TxResult r = run(grouped(b, kTrader, N(kTrader), Grouping::kOtoco,
                                 {primary, child(OrderType::kStopLoss, 290'000, 270'000),
                                  child(OrderType::kTakeProfitLimit, 310'000, 310'000)}));
  ASSERT_TRUE(r.ok()) << reject_message(r.reject);
  // the primary rests at 3000.00 (below the 3010.00 ask); the children wait for it
  EXPECT_EQ(level_price(false, 0), 300'000);
  const Order* sl = engine.order(r.order_index + 1);
  const Order* tp = engine.order(r.order_index + 2);
  ASSERT_NE(sl, nullptr);
  ASSERT_NE(tp, nullptr);
  EXPECT_EQ(sl->pending, kWaitingParent);
  EXPECT_EQ(sl->parent, r.order_index);
  EXPECT_EQ(sl->sibling, r.order_index + 2);
  EXPECT_EQ(engine.market(0)->waiting_orders, 2u);
  // the maker sells into the primary: it fills, both children now wait for their triggers
  ASSERT_TRUE(run(b.limit(kMaker, N(kMaker), 0, true, 300'000, kOne, TimeInForce::kIoc)).ok());
  EXPECT_EQ(pos_size(kTrader), kOne);
  EXPECT_EQ(engine.order(r.order_index + 1)->pending, kWaitingTrigger);
  EXPECT_EQ(engine.market(0)->pending_orders, 2u);
  EXPECT_EQ(engine.market(0)->waiting_orders, 0u);
  // the stop fires (mark 2890.00), the take-profit is canceled with it (OCO)
  sink.clear();
  index(289'000);
  EXPECT_EQ(pos_size(kTrader), 0);
  EXPECT_TRUE(removed_as(r.order_index + 1, RemoveReason::kTriggered));
  EXPECT_TRUE(removed_as(r.order_index + 2, RemoveReason::kOco));
  EXPECT_EQ(engine.market(0)->pending_orders, 0u);
}

TEST_F(GroupedTest, a_primary_canceled_without_a_fill_cancels_its_children) {
  const TxResult r =
      run(grouped(b, kTrader, N(kTrader), Grouping::kOto,
                  {buy_limit(295'000, kOne), child(OrderType::kStopLoss, 290'000, 270'000)}));
  ASSERT_TRUE(r.ok()) << reject_message(r.reject);
  sink.clear();
  ASSERT_TRUE(run(b.cancel(kTrader, N(kTrader), 0, r.order_index)).ok());
  EXPECT_TRUE(removed_as(r.order_index + 1, RemoveReason::kChild));
  EXPECT_EQ(engine.order(r.order_index + 1), nullptr);
  EXPECT_EQ(engine.market(0)->waiting_orders, 0u);
  // a primary that fills at once (IOC through the ask) arms its child in the same tx
  CreateOrderTx ioc = buy_limit(301'000, kOne);
  ioc.tif = TimeInForce::kIoc;
  ioc.order_expiry_ms = 0;
  const TxResult f = run(grouped(b, kTrader, N(kTrader), Grouping::kOto,
                                 {ioc, child(OrderType::kStopLoss, 290'000, 270'000)}));
  ASSERT_TRUE(f.ok()) << reject_message(f.reject);
  EXPECT_EQ(pos_size(kTrader), kOne);
  ASSERT_NE(engine.order(f.order_index + 1), nullptr);
  EXPECT_EQ(engine.order(f.order_index + 1)->pending, kWaitingTrigger);
}

TEST_F(GroupedTest, an_oco_pair_cancels_the_other_when_one_is_canceled_or_fires) {
  go_long(kOne);
  const TxResult r = run(grouped(b, kTrader, N(kTrader), Grouping::kOco,
                                 {child(OrderType::kStopLoss, 290'000, 270'000),
                                  child(OrderType::kTakeProfit, 310'000, 300'000)}));
  ASSERT_TRUE(r.ok()) << reject_message(r.reject);
  EXPECT_EQ(engine.market(0)->pending_orders, 2u);
  ASSERT_TRUE(run(b.cancel(kTrader, N(kTrader), 0, r.order_index + 1)).ok());
  EXPECT_TRUE(removed_as(r.order_index, RemoveReason::kOco));
  EXPECT_EQ(engine.market(0)->pending_orders, 0u);
}

TEST_F(GroupedTest, malformed_groups_are_refused_and_change_nothing) {
  const CreateOrderTx sl = child(OrderType::kStopLoss, 290'000, 270'000);
  const CreateOrderTx tp = child(OrderType::kTakeProfit, 310'000, 300'000);
  CreateOrderTx other_market = tp;
  other_market.market = 1;
  CreateOrderTx not_reduce_only = sl;
  not_reduce_only.reduce_only = 0;
  CreateOrderTx same_side = sl;
  same_side.is_ask = 0;
  const uint64_t before = engine.state_hash();
  struct Case {
    const char* what;
    Tx tx;
  };
  const Case cases[] = {
      {"grouping 4", grouped(b, kTrader, N(kTrader), static_cast<Grouping>(4), {sl, tp})},
      {"OCO of three", grouped(b, kTrader, N(kTrader), Grouping::kOco, {sl, tp, sl})},
      {"OCO of two stop-losses", grouped(b, kTrader, N(kTrader), Grouping::kOco, {sl, sl})},
      {"OCO across markets", grouped(b, kTrader, N(kTrader), Grouping::kOco, {sl, other_market})},
      {"OTO whose primary is a trigger", grouped(b, kTrader, N(kTrader), Grouping::kOto, {sl, tp})},
      {"a child that is not reduce-only", grouped(b, kTrader, N(kTrader), Grouping::kOto,
                                                  {buy_limit(295'000, kOne), not_reduce_only})},
      {"a child on the primary's side",
       grouped(b, kTrader, N(kTrader), Grouping::kOto, {buy_limit(295'000, kOne), same_side})},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(run(c.tx).reject, Reject::kInvalidGrouping) << c.what;
    EXPECT_EQ(engine.state_hash(), before) << c.what;
  }
}

TEST_F(GroupedTest, groups_survive_a_snapshot) {
  const TxResult r =
      run(grouped(b, kTrader, N(kTrader), Grouping::kOtoco,
                  {buy_limit(295'000, kOne), child(OrderType::kStopLoss, 290'000, 270'000),
                   child(OrderType::kTakeProfit, 310'000, 300'000)}));
  ASSERT_TRUE(r.ok()) << reject_message(r.reject);
  Engine copy(small_config());
  reload_into(copy);
  ASSERT_FALSE(HasFatalFailure());
  // the same fill arms the same children in both
  const Tx sell = b.limit(kMaker, N(kMaker), 0, true, 295'000, kOne, TimeInForce::kIoc);
  ASSERT_TRUE(run(sell).ok());
  RecordingSink other;
  ASSERT_TRUE(copy.execute(sell, other).ok());
  EXPECT_EQ(copy.state_hash(), engine.state_hash());
  EXPECT_EQ(copy.order(r.order_index + 1)->pending, kWaitingTrigger);
}

}  // namespace
}  // namespace tachyon::testing
