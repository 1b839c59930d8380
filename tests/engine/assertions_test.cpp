// The engine's assertions (TACHYON_ASSERT: preconditions and postconditions on its mutating paths)
// are on in every build type, this one included, and a seeded stream that reaches every checked
// path (fills, rests, reductions, removals, transfers, withdrawals, deposits, isolated margin,
// liquidations) runs through them without tripping one.
#include <gtest/gtest.h>

#include <map>

#include "support/random_stream.hpp"
#include "tachyon/core/assert.hpp"
#include "tachyon/engine/engine.hpp"
#include "tachyon/engine/order_book.hpp"

namespace tachyon::testing {
namespace {

TEST(AssertionsDeathTest, are_on_in_this_build_type) {
  int broken = 3;
  EXPECT_DEATH(TACHYON_ASSERT(broken == 2, "a broken invariant"),
               "assertion failed: broken == 2 \\(a broken invariant\\)");
}

// The check behind the engine's "book crossed after a matching" assertion.
TEST(Assertions, a_crossed_book_is_seen_at_its_two_best_levels) {
  OrderPool pool(8);
  OrderBook book;
  auto add = [&](bool is_ask, Ticks price) {
    const uint32_t s = pool.alloc();
    Order& o = pool[s];
    o = Order{};
    o.is_ask = is_ask;
    o.price = price;
    o.remaining = o.initial = 1;
    book.add(pool, s);
    return s;
  };
  EXPECT_FALSE(book.crossed());  // both sides empty
  add(false, 100);
  EXPECT_FALSE(book.crossed());  // one side empty
  add(true, 102);
  add(false, 99);
  EXPECT_FALSE(book.crossed());  // 100 < 102
  const uint32_t touching = add(true, 100);
  EXPECT_TRUE(book.crossed());  // best ask at the best bid
  book.remove(pool, touching);
  EXPECT_FALSE(book.crossed());
  add(true, 98);
  EXPECT_TRUE(book.crossed());  // best ask below the best bid
}

// What a stream did, by the engine's own account: accepted txs by type, trades by kind.
struct Tally final : UpdateSink {
  void on_update(const StateUpdate& u) override {
    if (u.type == UpdateType::kTrade) ++trades[u.trade.kind];
    if (u.type == UpdateType::kOrderReduced) ++reduced;
  }
  std::map<TradeKind, uint64_t> trades;
  uint64_t reduced = 0;
};

// Volatile oracle prices (jumps) and high leverage put accounts under maintenance margin, so the
// stream reaches the liquidation fills, takeovers and deleveraging as well as the ordinary paths.
// validate() agrees along the way. (Funding payments are checked by risk_sim_test's stream.)
TEST(Assertions, a_volatile_seeded_stream_reaches_every_checked_path_and_trips_none) {
  std::map<TxType, uint64_t> ok;
  Tally tally;
  uint64_t liquidations = 0;
  for (uint64_t seed : {1u, 2u, 3u}) {
    StreamConfig sc;
    sc.accounts = 40;
    sc.markets = 2;
    sc.jump_percent = 5;
    sc.jump_bps = 1500;
    sc.insurance_deposit_usdc = 1'000'000;
    Engine e;
    RandomStream stream(seed, sc);
    stream.set_oracle(&e);
    auto run = [&](const Tx& tx) {
      const TxResult r = e.execute(tx, tally);
      stream.on_result(tx, r);
      if (r.ok()) ++ok[tx.h.type];
    };
    for (const Tx& tx : stream.genesis()) run(tx);
    for (int i = 0; i < 40'000; ++i) {
      run(stream.next());
      if (i % 5'000 == 0) {
        ASSERT_EQ(e.validate(), "") << "seed " << seed << ", tx " << i;
      }
    }
    ASSERT_EQ(e.validate(), "") << "seed " << seed;
    liquidations += e.risk_stats().partial_liquidations + e.risk_stats().full_liquidations;
  }
  // Each checked path was taken: a fill (book and conservation checks), a resting order, a
  // partial fill or size cut (reduce_resting), a cancel (unrest), and every money movement.
  EXPECT_GT(tally.trades[TradeKind::kTrade], 1'000u);
  EXPECT_GT(tally.reduced, 100u);
  EXPECT_GT(ok[TxType::kCreateOrder], 1'000u);
  EXPECT_GT(ok[TxType::kCancelOrder], 100u);
  EXPECT_GT(ok[TxType::kModifyOrder], 100u);
  EXPECT_GT(ok[TxType::kTransfer], 10u);
  EXPECT_GT(ok[TxType::kWithdraw], 10u);
  EXPECT_GT(ok[TxType::kDeposit], 10u);
  EXPECT_GT(ok[TxType::kUpdateMargin], 10u);
  EXPECT_GT(liquidations, 0u);
  EXPECT_GT(tally.trades[TradeKind::kLiquidation], 0u);
  // position transfers outside the book (move_position: its own conservation check)
  EXPECT_GT(tally.trades[TradeKind::kTakeover] + tally.trades[TradeKind::kDeleverage], 0u);
}

}  // namespace
}  // namespace tachyon::testing
