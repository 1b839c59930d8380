// TWAP orders: a good-till-time order executed in slices, one now and one every kTwapSliceMs
// while its expiry is ahead, each an IOC market order (type twap-sub) bounded by the TWAP's price.
// What a slice leaves unfilled is spread over the later slices; cancel, reduce-only, margin,
// snapshots and the shape rules. validate() runs after every tx (EngineTest::run), and it checks
// that the slice schedule holds exactly the TWAPs that wait.
#include <gtest/gtest.h>

#include "support/engine_fixture.hpp"
#include "tachyon/core/bytes.hpp"
#include "tachyon/engine/order_checks.hpp"

namespace tachyon::testing {
namespace {

constexpr AccountIndex kMaker = 100, kTrader = 200, kSmall = 300;
constexpr Lots kOne = 10'000;  // 1.0000 ETH

class TwapTest : public EngineTest {
 protected:
  void SetUp() override {
    market_with_maker(kMaker, {{kTrader, 100'000 * kUsdc}, {kSmall, 100 * kUsdc}});
  }
  Tx twap(AccountIndex a, bool ask, Ticks price, Lots size, int64_t duration_ms,
          bool reduce_only = false) {
    Tx tx = b.limit(a, N(a), 0, ask, price, size, TimeInForce::kGoodTillTime);
    tx.order.type = OrderType::kTwap;
    tx.order.order_expiry_ms = b.now_ms() + duration_ms;
    tx.order.reduce_only = reduce_only;
    return tx;
  }
  // Moves the clock: an index price tx (the same price) `ms` later.
  void after(int64_t ms) {
    b.advance_ms(ms);
    b.sync_op_nonce(engine.operator_next_nonce());
    ASSERT_TRUE(run(b.set_index(0, 300'000)).ok());
  }
  bool removed_as(OrderIndex id, RemoveReason why) const {
    for (const auto& o : sink.removed())
      if (o.order_index == id && o.reason == why) return true;
    return false;
  }
};

TEST_F(TwapTest, buys_in_equal_slices_one_now_and_one_every_30s_until_it_is_filled) {
  const int64_t t0 = b.now_ms();
  // 2.5 ETH over 150 s: slices at 0, 30, 60, 90 and 120 s, 0.5 ETH each
  const TxResult r = run(twap(kTrader, kBid, 310'000, 25'000, 150'000));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(pos_size(kTrader), 5'000);  // the first slice at once
  const Order* o = engine.order(r.order_index);
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->pending, kWaitingTwap);
  EXPECT_EQ(o->remaining, 20'000);
  EXPECT_GE(o->trigger_price, t0 + kTwapSliceMs);  // the next slice's time
  const auto trades = sink.trades();
  ASSERT_EQ(trades.size(), 1u);
  EXPECT_NE(trades[0].taker_order, r.order_index);  // a slice has its own order index
  EXPECT_EQ(trades[0].price, 301'000);
  EXPECT_EQ(level_price(kBid, 0), 299'000);  // the TWAP itself is not in the book
  after(15'000);
  EXPECT_EQ(pos_size(kTrader), 5'000) << "no slice before its time";
  for (Lots want : {10'000, 15'000, 20'000}) {
    after(15'000);
    EXPECT_EQ(pos_size(kTrader), want);
    ASSERT_NE(engine.order(r.order_index), nullptr);
    after(15'000);
  }
  sink.clear();
  after(15'000);  // 120 s: the fifth and last
  EXPECT_EQ(pos_size(kTrader), 25'000);
  EXPECT_EQ(engine.order(r.order_index), nullptr);
  EXPECT_TRUE(removed_as(r.order_index, RemoveReason::kFilled));
  after(30'000);
  EXPECT_EQ(pos_size(kTrader), 25'000);
}

TEST_F(TwapTest, what_a_slice_leaves_unfilled_is_spread_over_the_rest_and_the_last_ends_it) {
  // 3 ETH over 90 s at 3000.00 at most: slices at 0, 30 and 60 s; the asks are above it
  const TxResult r = run(twap(kTrader, kBid, 300'000, 3 * kOne, 90'000));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(pos_size(kTrader), 0);
  EXPECT_EQ(engine.order(r.order_index)->remaining, 3 * kOne);
  ASSERT_TRUE(run(b.limit(kMaker, N(kMaker), 0, kAsk, 299'500, kOne / 2)).ok());
  after(30'000);  // 1.5 ETH due (3 over two slices), 0.5 ETH to be had
  EXPECT_EQ(pos_size(kTrader), kOne / 2);
  EXPECT_EQ(engine.order(r.order_index)->remaining, 25'000);
  sink.clear();
  after(30'000);  // the last slice: 2.5 ETH due, nothing to be had, the TWAP ends
  EXPECT_EQ(pos_size(kTrader), kOne / 2);
  EXPECT_EQ(engine.order(r.order_index), nullptr);
  EXPECT_TRUE(removed_as(r.order_index, RemoveReason::kExpired));
}

TEST_F(TwapTest, a_twap_is_not_modified_and_a_canceled_one_sends_no_more_slices) {
  const TxResult r = run(twap(kTrader, kBid, 310'000, 2 * kOne, 600'000));
  ASSERT_TRUE(r.ok());
  const Lots first = pos_size(kTrader);
  EXPECT_EQ(first, 1'000);  // 2 ETH over 20 slices
  run_table({{"modify a TWAP",
              [&] { return b.modify(kTrader, N(kTrader), 0, r.order_index, kOne, 305'000); },
              Reject::kInvalidOrderType}});
  ASSERT_TRUE(run(b.cancel(kTrader, N(kTrader), 0, r.order_index)).ok());
  EXPECT_TRUE(removed_as(r.order_index, RemoveReason::kCanceled));
  after(30'000);
  after(30'000);
  EXPECT_EQ(pos_size(kTrader), first);
}

TEST_F(TwapTest, a_reduce_only_twap_ends_when_nothing_is_left_to_reduce) {
  ASSERT_TRUE(run(b.market(kTrader, N(kTrader), 0, kBid, 310'000, kOne)).ok());
  ASSERT_EQ(pos_size(kTrader), kOne);
  // sells 2 ETH over 60 s, reduce-only: the first slice closes the position
  const TxResult r = run(twap(kTrader, kAsk, 290'000, 2 * kOne, 60'000, /*reduce_only=*/true));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(pos_size(kTrader), 0);
  ASSERT_NE(engine.order(r.order_index), nullptr);
  after(30'000);
  EXPECT_EQ(pos_size(kTrader), 0) << "a reduce-only slice never opens a short";
  EXPECT_EQ(engine.order(r.order_index), nullptr);
  EXPECT_TRUE(removed_as(r.order_index, RemoveReason::kReduceOnly));
}

TEST_F(TwapTest, the_first_slice_needs_margin_and_a_later_one_without_it_ends_the_twap) {
  // 100 USDC at 5% initial margin: about 2,000 USDC of notional. A first slice of 1 ETH
  // (3,010 USDC) is refused at once.
  const uint64_t before = engine.state_hash();
  EXPECT_EQ(run(twap(kSmall, kBid, 310'000, 2 * kOne, 60'000)).reject, Reject::kNotEnoughMargin);
  EXPECT_EQ(engine.state_hash(), before);
  // 1 ETH in ten slices of 0.1 ETH: each fits alone, the seventh not on top of the first six
  const TxResult r = run(twap(kSmall, kBid, 310'000, kOne, 10 * kTwapSliceMs));
  ASSERT_TRUE(r.ok()) << reject_message(r.reject);
  for (int i = 0; i < 10 && engine.order(r.order_index) != nullptr; ++i) after(kTwapSliceMs);
  EXPECT_EQ(engine.order(r.order_index), nullptr);
  EXPECT_TRUE(removed_as(r.order_index, RemoveReason::kMarginNotAllowed));
  EXPECT_EQ(pos_size(kSmall), 6 * kOne / 10);
}

TEST_F(TwapTest, shape_rules_refuse_with_their_codes_and_change_nothing) {
  run_table({
      {"TWAP as IOC",
       [&] {
         Tx tx = twap(kTrader, kBid, 310'000, kOne, 60'000);
         tx.order.tif = TimeInForce::kIoc;
         tx.order.order_expiry_ms = 0;
         return tx;
       },
       Reject::kInvalidTimeInForce},
      {"TWAP post-only",
       [&] {
         Tx tx = twap(kTrader, kBid, 310'000, kOne, 60'000);
         tx.order.tif = TimeInForce::kPostOnly;
         return tx;
       },
       Reject::kInvalidTimeInForce},
      {"TWAP already expired",
       [&] {
         Tx tx = twap(kTrader, kBid, 310'000, kOne, 60'000);
         tx.order.order_expiry_ms = b.now_ms() - 1;
         return tx;
       },
       Reject::kInvalidExpiry},
      {"TWAP with a trigger",
       [&] {
         Tx tx = twap(kTrader, kBid, 310'000, kOne, 60'000);
         tx.order.trigger_price = 300'000;
         return tx;
       },
       Reject::kInvalidTrigger},
      {"TWAP of nothing, reduce-only",
       [&] { return twap(kTrader, kAsk, 290'000, 0, 60'000, true); }, Reject::kInvalidBaseAmount},
      {"TWAP far through the mark", [&] { return twap(kTrader, kBid, 400'000, kOne, 60'000); },
       Reject::kPriceBandFatFinger},
  });
}

TEST_F(TwapTest, a_waiting_twap_survives_a_snapshot_and_slices_the_same_way) {
  const TxResult r = run(twap(kTrader, kBid, 310'000, 2 * kOne, 120'000));
  ASSERT_TRUE(r.ok());
  Engine copy(small_config());
  reload_into(copy);
  ASSERT_FALSE(HasFatalFailure());
  RecordingSink other;
  for (int i = 0; i < 4; ++i) {
    b.advance_ms(kTwapSliceMs);
    b.sync_op_nonce(engine.operator_next_nonce());
    const Tx tick = b.set_index(0, 300'000);
    ASSERT_TRUE(run(tick).ok());
    ASSERT_TRUE(copy.execute(tick, other).ok());
    EXPECT_EQ(copy.state_hash(), engine.state_hash()) << "slice " << i + 2;
  }
  EXPECT_EQ(pos_size(kTrader), 2 * kOne);
  EXPECT_EQ(copy.account(kTrader)->position(0)->size, 2 * kOne);
  EXPECT_EQ(copy.order(r.order_index), nullptr);
}

}  // namespace
}  // namespace tachyon::testing
