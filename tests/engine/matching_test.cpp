// Scenario tables for matching, positions, fees, self-trade prevention, reduce-only, expiry,
// modify and the mark price.
#include <algorithm>
#include <map>

#include "support/engine_fixture.hpp"

namespace tachyon::testing {
namespace {

constexpr AccountIndex kAlice = 100, kBob = 200, kCarol = 300, kDave = 400;
constexpr MarketId kEth = 0;
constexpr Ticks kPx = 300000;  // 3000.00
constexpr Lots kOne = 10000;   // 1.0000 ETH
constexpr RemoveReason kNone = static_cast<RemoveReason>(255);

class Matching : public EngineTest {
 protected:
  void SetUp() override {
    run_table({
        {"ETH at 3000.00, taker fee 0.03%",
         [&] { return b.create_market(kEth, demo_market_params(), kPx); }, Reject::kOk},
        {"alice 100k", [&] { return b.deposit(kAlice, 100'000 * kUsdc); }, Reject::kOk},
        {"bob 100k", [&] { return b.deposit(kBob, 100'000 * kUsdc); }, Reject::kOk},
        {"carol 100k", [&] { return b.deposit(kCarol, 100'000 * kUsdc); }, Reject::kOk},
        {"dave 100k", [&] { return b.deposit(kDave, 100'000 * kUsdc); }, Reject::kOk},
    });
  }
  Tx stp(Tx t, StpMode m) {
    t.order.stp = m;
    return t;
  }
  RemoveReason last_removal_of(OrderIndex id) const {
    RemoveReason r = kNone;
    for (const auto& o : sink.removed())
      if (o.order_index == id) r = o.reason;
    return r;
  }
};

TEST_F(Matching, fills_in_price_then_time_priority_at_the_makers_price) {
  run_table({
      {"alice asks 1 @ 3001", [&] { return b.limit(kAlice, N(kAlice), kEth, kAsk, 300100, kOne); },
       Reject::kOk},
      {"carol asks 1 @ 3001 (later)",
       [&] { return b.limit(kCarol, N(kCarol), kEth, kAsk, 300100, kOne); }, Reject::kOk},
      {"alice asks 1 @ 3000", [&] { return b.limit(kAlice, N(kAlice), kEth, kAsk, 300000, kOne); },
       Reject::kOk},
      {"bob buys 2.5 @ 3001 IOC",
       [&] { return b.limit(kBob, N(kBob), kEth, kBid, 300100, 25000, TimeInForce::kIoc); },
       Reject::kOk},
  });
  auto t = sink.trades();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].price, 300000);
  EXPECT_EQ(t[0].size, kOne);
  EXPECT_EQ(t[0].maker, kAlice);
  EXPECT_EQ(t[1].price, 300100);
  EXPECT_EQ(t[1].size, kOne);
  EXPECT_EQ(t[1].maker, kAlice);
  EXPECT_EQ(t[2].price, 300100);
  EXPECT_EQ(t[2].size, kOne / 2);
  EXPECT_EQ(t[2].maker, kCarol);
  EXPECT_EQ(t[0].taker_fee, 900'000);  // 0.03% of 3000 USDC
  EXPECT_EQ(t[0].maker_fee, 0);
  EXPECT_EQ(pos_size(kBob), 25000);
  EXPECT_EQ(pos(kBob)->entry_notional, 7'501'500'000);  // 3000 + 3001 + 1500.5 USDC
  EXPECT_EQ(pos_size(kAlice), -20000);
  EXPECT_EQ(pos_size(kCarol), -5000);
  EXPECT_EQ(engine.market(kEth)->open_interest, 25000);
  EXPECT_EQ(engine.market(kEth)->last_trade_price, 300100);
  EXPECT_EQ(level_price(kAsk, 0), 300100);
  EXPECT_EQ(level_size(kAsk, 0), kOne / 2);
  Usdc fees = 0;
  for (auto& x : t) fees += x.taker_fee;
  EXPECT_EQ(collateral(engine.config().fee_account), fees);
  EXPECT_EQ(collateral(kBob), 100'000 * kUsdc - fees);
}

// A sweep's taker and the fee account get one position update and one balance update each, after
// the fills and with the values after the last one; each maker gets its own at its fill.
TEST_F(Matching, a_sweep_emits_the_takers_and_the_fee_accounts_updates_once_with_the_final_values) {
  run_table({
      {"alice asks 1 @ 3000", [&] { return b.limit(kAlice, N(kAlice), kEth, kAsk, 300000, kOne); },
       Reject::kOk},
      {"carol asks 1 @ 3001", [&] { return b.limit(kCarol, N(kCarol), kEth, kAsk, 300100, kOne); },
       Reject::kOk},
      {"dave asks 1 @ 3002", [&] { return b.limit(kDave, N(kDave), kEth, kAsk, 300200, kOne); },
       Reject::kOk},
  });
  sink.clear();
  run_table(
      {{"bob buys 3 @ 3002 IOC",
        [&] { return b.limit(kBob, N(kBob), kEth, kBid, 300200, 3 * kOne, TimeInForce::kIoc); },
        Reject::kOk}});
  const AccountIndex fee_account = engine.config().fee_account;
  std::map<AccountIndex, int> positions, balances;
  size_t last_trade = 0, first_bob = SIZE_MAX;
  Usdc taker_fees = 0;
  for (size_t i = 0; i < sink.updates.size(); ++i) {
    const StateUpdate& u = sink.updates[i];
    if (u.type == UpdateType::kTrade) {
      last_trade = i;
      taker_fees += u.trade.taker_fee;
    } else if (u.type == UpdateType::kPosition) {
      ++positions[u.position.account];
      if (u.position.account == kBob) {
        first_bob = std::min(first_bob, i);
        EXPECT_EQ(u.position.size, 3 * kOne);
        EXPECT_EQ(u.position.entry_notional, pos(kBob)->entry_notional);
      }
    } else if (u.type == UpdateType::kBalance) {
      ++balances[u.balance.account];
      if (u.balance.account == kBob) {
        first_bob = std::min(first_bob, i);
        EXPECT_EQ(u.balance.reason, BalanceReason::kTrade);
        EXPECT_EQ(u.balance.collateral, collateral(kBob));
        EXPECT_EQ(u.balance.delta, -taker_fees);
      } else if (u.balance.account == fee_account) {
        EXPECT_EQ(u.balance.reason, BalanceReason::kFee);
        EXPECT_EQ(u.balance.collateral, collateral(fee_account));
        EXPECT_EQ(u.balance.delta, taker_fees);
      }
    }
  }
  EXPECT_EQ(sink.trades().size(), 3u);
  EXPECT_GT(taker_fees, 0);
  EXPECT_EQ(positions[kBob], 1);
  EXPECT_EQ(balances[kBob], 1);
  EXPECT_EQ(balances[fee_account], 1);
  EXPECT_GT(first_bob, last_trade);  // after the last fill
  for (AccountIndex maker : {kAlice, kCarol, kDave}) {
    EXPECT_EQ(positions[maker], 1) << maker;
    EXPECT_EQ(balances[maker], 1) << maker;
  }
}

TEST_F(Matching, realized_pnl_on_reduce_and_flip) {
  run_table({
      {"alice asks 1 @ 3000", [&] { return b.limit(kAlice, N(kAlice), kEth, kAsk, kPx, kOne); },
       Reject::kOk},
      {"bob takes it: bob long 1, alice short 1",
       [&] { return b.limit(kBob, N(kBob), kEth, kBid, kPx, kOne, TimeInForce::kIoc); },
       Reject::kOk},
      {"carol asks 2 @ 3100",
       [&] { return b.limit(kCarol, N(kCarol), kEth, kAsk, 310000, 2 * kOne); }, Reject::kOk},
      {"alice buys 2 @ 3100: closes 1 (-100), opens long 1",
       [&] { return b.limit(kAlice, N(kAlice), kEth, kBid, 310000, 2 * kOne, TimeInForce::kIoc); },
       Reject::kOk},
  });
  EXPECT_EQ(pos_size(kAlice), kOne);
  EXPECT_EQ(pos(kAlice)->entry_notional, 3'100'000'000);
  EXPECT_EQ(pos(kAlice)->realized_pnl, -100 * kUsdc);
  EXPECT_EQ(collateral(kAlice), 100'000 * kUsdc - 100 * kUsdc - 1'860'000);  // pnl, 0.03% of 6200
  EXPECT_EQ(engine.market(kEth)->open_interest, 2 * kOne);  // bob 1 + alice 1 long; carol -2
}

TEST_F(Matching, post_only_ioc_and_market_protection_end_orders_with_their_reason) {
  run_table({
      {"alice asks 1 @ 3000", [&] { return b.limit(kAlice, N(kAlice), kEth, kAsk, 300000, kOne); },
       Reject::kOk},
      {"alice asks 1 @ 3200", [&] { return b.limit(kAlice, N(kAlice), kEth, kAsk, 320000, kOne); },
       Reject::kOk},
      {"bob post-only bid @ 3000 would cross: canceled, tx executed",
       [&] { return b.limit(kBob, N(kBob), kEth, kBid, 300000, kOne, TimeInForce::kPostOnly); },
       Reject::kOk},
  });
  EXPECT_EQ(last_removal_of(last.order_index), RemoveReason::kPostOnly);
  EXPECT_EQ(sink.trades().size(), 0u);
  run_table({
      {"bob market-buys 2 with worst price 4000: protection 5% stops at 3150",
       [&] { return b.market(kBob, N(kBob), kEth, kBid, 400000, 2 * kOne); }, Reject::kOk},
  });
  EXPECT_EQ(last_removal_of(last.order_index), RemoveReason::kMarketProtection);
  EXPECT_EQ(pos_size(kBob), kOne);
  run_table({
      {"bob IOC bids 2 @ 3200: fills 1, rest canceled",
       [&] { return b.limit(kBob, N(kBob), kEth, kBid, 320000, 2 * kOne, TimeInForce::kIoc); },
       Reject::kOk},
  });
  EXPECT_EQ(last_removal_of(last.order_index), RemoveReason::kIocRemainder);
  EXPECT_EQ(pos_size(kBob), 2 * kOne);
  EXPECT_EQ(engine.market(kEth)->book.level_count(kAsk), 0u);
  EXPECT_EQ(engine.market(kEth)->book.level_count(kBid), 0u);
}

TEST_F(Matching, self_trade_prevention_follows_the_takers_setting) {
  run_table({
      {"alice asks 1 @ 3000 (maker A)",
       [&] { return b.limit(kAlice, N(kAlice), kEth, kAsk, kPx, kOne); }, Reject::kOk},
      {"alice bids 1 @ 3000, expire-maker: A canceled, bid rests",
       [&] { return b.limit(kAlice, N(kAlice), kEth, kBid, kPx, kOne); }, Reject::kOk},
  });
  EXPECT_EQ(last_removal_of(kFirstOrderIndex), RemoveReason::kSelfTrade);
  EXPECT_EQ(level_size(kBid, 0), kOne);
  EXPECT_EQ(sink.trades().size(), 0u);
  run_table({
      {"alice asks 1 @ 3000, expire-taker: taker canceled, bid stays",
       [&] {
         return stp(b.limit(kAlice, N(kAlice), kEth, kAsk, kPx, kOne), StpMode::kExpireTaker);
       },
       Reject::kOk},
  });
  EXPECT_EQ(last_removal_of(last.order_index), RemoveReason::kSelfTrade);
  EXPECT_EQ(level_size(kBid, 0), kOne);
  run_table({
      {"alice asks 0.4 @ 3000, decrement: bid shrinks to 0.6, no trade",
       [&] { return stp(b.limit(kAlice, N(kAlice), kEth, kAsk, kPx, 4000), StpMode::kDecrement); },
       Reject::kOk},
  });
  EXPECT_EQ(level_size(kBid, 0), 6000);
  run_table({
      {"alice asks 1 @ 3000, expire-both: both gone",
       [&] { return stp(b.limit(kAlice, N(kAlice), kEth, kAsk, kPx, kOne), StpMode::kExpireBoth); },
       Reject::kOk},
  });
  EXPECT_EQ(engine.market(kEth)->book.level_count(kBid), 0u);
  EXPECT_EQ(engine.market(kEth)->book.level_count(kAsk), 0u);
  EXPECT_EQ(sink.trades().size(), 0u);
  EXPECT_EQ(pos_size(kAlice), 0);
}

TEST_F(Matching, reduce_only_is_clipped_to_the_position_and_never_flips_it) {
  run_table({
      {"carol asks 2 @ 3000", [&] { return b.limit(kCarol, N(kCarol), kEth, kAsk, kPx, 2 * kOne); },
       Reject::kOk},
      {"bob buys 2: long 2",
       [&] { return b.limit(kBob, N(kBob), kEth, kBid, kPx, 2 * kOne, TimeInForce::kIoc); },
       Reject::kOk},
      {"bob reduce-only bid increases: refused",
       [&] {
         auto t = b.limit(kBob, N(kBob), kEth, kBid, kPx, kOne);
         t.order.reduce_only = 1;
         return t;
       },
       Reject::kReduceOnlyIncreasesPosition},
      {"bob reduce-only ask 5 @ 3010: clipped to 2",
       [&] {
         auto t = b.limit(kBob, N(kBob), kEth, kAsk, 301000, 5 * kOne);
         t.order.reduce_only = 1;
         return t;
       },
       Reject::kOk},
      {"bob reduce-only ask size 0 = whole position",
       [&] {
         auto t = b.limit(kBob, N(kBob), kEth, kAsk, 302000, 0);
         t.order.reduce_only = 1;
         return t;
       },
       Reject::kOk},
  });
  EXPECT_EQ(level_size(kAsk, 0), 2 * kOne);
  EXPECT_EQ(level_size(kAsk, 1), 2 * kOne);
  run_table({
      {"dave buys 3 up to 3020: 2 from the first, the second is canceled-reduce-only",
       [&] { return b.limit(kDave, N(kDave), kEth, kBid, 302000, 3 * kOne, TimeInForce::kIoc); },
       Reject::kOk},
  });
  EXPECT_EQ(pos_size(kBob), 0);
  EXPECT_EQ(pos_size(kDave), 2 * kOne);
  EXPECT_EQ(engine.market(kEth)->book.level_count(kAsk), 0u);
  EXPECT_EQ(last_removal_of(kFirstOrderIndex + 3), RemoveReason::kReduceOnly);
}

TEST_F(Matching, good_till_time_orders_expire_on_the_first_tx_after_their_expiry) {
  run_table({
      {"alice bids 1 @ 2990 until now+1s",
       [&] {
         auto t = b.limit(kAlice, N(kAlice), kEth, kBid, 299000, kOne);
         t.order.order_expiry_ms = b.now_ms() + 1000;
         return t;
       },
       Reject::kOk},
  });
  b.advance_ms(999);
  run_table({{"index tick at +0.999s", [&] { return b.set_index(kEth, kPx); }, Reject::kOk}});
  EXPECT_EQ(level_size(kBid, 0), kOne);
  b.advance_ms(1);
  run_table({{"index tick at +1s", [&] { return b.set_index(kEth, kPx); }, Reject::kOk}});
  EXPECT_EQ(engine.market(kEth)->book.level_count(kBid), 0u);
  EXPECT_EQ(last_removal_of(kFirstOrderIndex), RemoveReason::kExpired);
}

TEST_F(Matching, modify_keeps_priority_only_when_the_size_goes_down) {
  run_table({
      {"alice bids 1 @ 2990 (A)",
       [&] {
         return b.limit(kAlice, N(kAlice), kEth, kBid, 299000, kOne, TimeInForce::kGoodTillTime, 1);
       },
       Reject::kOk},
      {"carol bids 1 @ 2990 (C)",
       [&] { return b.limit(kCarol, N(kCarol), kEth, kBid, 299000, kOne); }, Reject::kOk},
      {"alice shrinks A to 0.5: keeps its place",
       [&] { return b.modify(kAlice, N(kAlice), kEth, 1, 5000, 299000); }, Reject::kOk},
      {"modify of a missing order",
       [&] { return b.modify(kAlice, N(kAlice), kEth, 77, 5000, 299000); }, Reject::kOrderNotFound},
      {"modify to size 0", [&] { return b.modify(kAlice, N(kAlice), kEth, 1, 0, 299000); },
       Reject::kInvalidBaseAmount},
      {"modify to price 0", [&] { return b.modify(kAlice, N(kAlice), kEth, 1, 5000, 0); },
       Reject::kInvalidPrice},
      {"modify with a trigger",
       [&] {
         auto t = b.modify(kAlice, N(kAlice), kEth, 1, 5000, 299000);
         t.modify.trigger_price = 1;
         return t;
       },
       Reject::kInvalidTrigger},
      {"modify beyond the band", [&] { return b.modify(kAlice, N(kAlice), kEth, 1, 5000, 340000); },
       Reject::kPriceBandFatFinger},
      {"modify to 1000 ETH: not enough margin",
       [&] { return b.modify(kAlice, N(kAlice), kEth, 1, 1000 * kOne, 299000); },
       Reject::kNotEnoughMargin},
      {"dave sells 0.5 @ 2990: fills A first",
       [&] { return b.limit(kDave, N(kDave), kEth, kAsk, 299000, 5000, TimeInForce::kIoc); },
       Reject::kOk},
  });
  ASSERT_EQ(sink.trades().size(), 1u);
  EXPECT_EQ(sink.trades()[0].maker, kAlice);
  run_table({
      {"carol grows C to 2: goes behind",
       [&] { return b.modify(kCarol, N(kCarol), kEth, kFirstOrderIndex + 1, 2 * kOne, 299000); },
       Reject::kOk},
      {"alice bids 1 @ 2990 again (A2)",
       [&] { return b.limit(kAlice, N(kAlice), kEth, kBid, 299000, kOne); }, Reject::kOk},
      {"carol moves C to 2995: now first by price",
       [&] { return b.modify(kCarol, N(kCarol), kEth, kFirstOrderIndex + 1, 2 * kOne, 299500); },
       Reject::kOk},
      {"alice moves A2 to 3005 crossing nothing (no asks)",
       [&] { return b.modify(kAlice, N(kAlice), kEth, kFirstOrderIndex + 3, kOne, 300500); },
       Reject::kOk},
      {"dave sells 3 @ 2990",
       [&] { return b.limit(kDave, N(kDave), kEth, kAsk, 299000, 3 * kOne, TimeInForce::kIoc); },
       Reject::kOk},
  });
  auto t = sink.trades();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[1].maker, kAlice);
  EXPECT_EQ(t[1].price, 300500);
  EXPECT_EQ(t[2].maker, kCarol);
  EXPECT_EQ(t[2].price, 299500);
  EXPECT_EQ(t[2].size, 2 * kOne);
}

TEST_F(Matching, mark_price_is_the_median_of_index_best_bid_and_best_ask) {
  run_table({
      {"alice bids 2990", [&] { return b.limit(kAlice, N(kAlice), kEth, kBid, 299000, kOne); },
       Reject::kOk},
  });
  EXPECT_EQ(engine.market(kEth)->mark_price, kPx);  // one side empty: the index
  run_table({
      {"bob asks 3010", [&] { return b.limit(kBob, N(kBob), kEth, kAsk, 301000, kOne); },
       Reject::kOk},
  });
  EXPECT_EQ(engine.market(kEth)->mark_price, kPx);  // median(3000, 2990, 3010)
  run_table({{"index 3050", [&] { return b.set_index(kEth, 305000); }, Reject::kOk}});
  EXPECT_EQ(engine.market(kEth)->mark_price, 301000);  // median(3050, 2990, 3010)
  run_table({{"index 2900", [&] { return b.set_index(kEth, 290000); }, Reject::kOk}});
  EXPECT_EQ(engine.market(kEth)->mark_price, 299000);
}

}  // namespace
}  // namespace tachyon::testing
