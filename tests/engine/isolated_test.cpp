// Isolated margin (UpdateLeverage margin mode 1, UpdateMargin tx 29): an isolated position is its
// own margin account. Tables of {what, tx, expected reject} plus state checks; validate() (money
// conserved with allocated margin counted, no bucket left under maintenance) after every tx.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "support/risk_world.hpp"
#include "tachyon/core/bytes.hpp"

namespace tachyon::testing {
namespace {

using namespace risk;  // NOLINT: the world and its constants

constexpr Bps4 k10x = 1000;  // 10% initial margin

const Position& position(const World& w, AccountIndex a) {
  return *w.engine.account(a)->position(kEth);
}
Usdc allocated(const World& w, AccountIndex a) { return position(w, a).allocated; }

// T (10,000 USDC) isolated at 10x on ETH, long 10 ETH at 3000.00 from S; K bids deep. Without
// fees the fill moves exactly the initial margin, 10 × 3000 × 10% = 3,000 USDC, into the position.
void isolated_long(World& w) {
  w.step("ETH at 3000.00", [&] { return w.b.create_market(kEth, risk_params(), kPx); });
  fund(w, {{kS, 100'000}, {kT, 10'000}, {kK, 100'000}});
  w.table({
      {"T: ETH isolated at 10x", [&] { return w.b.leverage(kT, w.N(kT), kEth, k10x, 1); },
       Reject::kOk},
      {"S offers 10 ETH", [&] { return w.order(kS, kAsk, kPx, 10 * kOne); }, Reject::kOk},
      {"T lifts it", [&] { return w.order(kT, kBid, kPx, 10 * kOne, kIoc); }, Reject::kOk},
  });
  ASSERT_EQ(w.size(kT), 10 * kOne);
  ASSERT_EQ(position(w, kT).isolated, 1);
  ASSERT_EQ(allocated(w, kT), 3'000 * kUsdc);
  ASSERT_EQ(w.coll(kT), 7'000 * kUsdc);
}

TEST(IsolatedMargin, margin_mode_changes_only_without_position_or_orders) {
  World w;
  w.step("ETH at 3000.00", [&] { return w.b.create_market(kEth, risk_params(), kPx); });
  fund(w, {{kT, 10'000}, {kInsurance, 1'000}});
  w.table({
      {"isolated while flat", [&] { return w.b.leverage(kT, w.N(kT), kEth, k10x, 1); },
       Reject::kOk},
      {"back to cross while flat", [&] { return w.b.leverage(kT, w.N(kT), kEth, k10x, 0); },
       Reject::kOk},
      {"isolated again", [&] { return w.b.leverage(kT, w.N(kT), kEth, k10x, 1); }, Reject::kOk},
      {"a resting bid", [&] { return w.order(kT, kBid, 290000, kOne); }, Reject::kOk},
      {"cross with an open order", [&] { return w.b.leverage(kT, w.N(kT), kEth, k10x, 0); },
       Reject::kMarginModeLocked},
      {"the leverage alone may change", [&] { return w.b.leverage(kT, w.N(kT), kEth, 500, 1); },
       Reject::kOk},
      {"margin mode 2", [&] { return w.b.leverage(kT, w.N(kT), kEth, k10x, 2); },
       Reject::kUnsupportedMarginMode},
      {"the insurance fund stays cross",
       [&] { return w.b.leverage(kInsurance, w.N(kInsurance), kEth, k10x, 1); },
       Reject::kCrossOnlyAccount},
      {"margin into a flat position",
       [&] { return w.b.update_margin(kT, w.N(kT), kEth, kMarginAdd, kUsdc); },
       Reject::kNotIsolated},
  });
}

TEST(IsolatedMargin, open_orders_reserve_cross_margin_and_a_fill_moves_it_in) {
  World w;
  w.step("ETH at 3000.00", [&] { return w.b.create_market(kEth, risk_params(), kPx); });
  fund(w, {{kT, 10'000}, {kS, 100'000}});
  w.table({
      {"isolated at 10x", [&] { return w.b.leverage(kT, w.N(kT), kEth, k10x, 1); }, Reject::kOk},
      {"bid 10 ETH at 3000.00: 3,000 USDC reserved",
       [&] { return w.order(kT, kBid, kPx, 10 * kOne); }, Reject::kOk},
      {"withdraw 7,001 USDC", [&] { return w.b.withdraw(kT, w.N(kT), 7'001 * kUsdc); },
       Reject::kInsufficientCollateral},
      {"a second bid of 24 ETH needs 7,200 more", [&] { return w.order(kT, kBid, kPx, 24 * kOne); },
       Reject::kNotEnoughMargin},
      {"S sells 4 ETH into the bid", [&] { return w.order(kS, kAsk, kPx, 4 * kOne, kIoc); },
       Reject::kOk},
  });
  EXPECT_EQ(w.size(kT), 4 * kOne);
  EXPECT_EQ(allocated(w, kT), 1'200 * kUsdc);
  EXPECT_EQ(w.coll(kT), 8'800 * kUsdc);
  const MarginInfo cross = w.engine.margin(*w.engine.account(kT));
  EXPECT_EQ(cross.tav, 8'800 * kUsdc);  // the isolated position's PnL is not in it
  EXPECT_EQ(cross.imr, 1'800 * kUsdc);  // the 6 ETH still open
  EXPECT_EQ(cross.mmr, 0);
  const MarginInfo own = w.engine.isolated(position(w, kT));
  EXPECT_EQ(own.tav, 1'200 * kUsdc);
  EXPECT_EQ(own.imr, 1'200 * kUsdc);
}

TEST(IsolatedMargin, update_margin_adds_and_removes_within_initial_margin) {
  World w;
  isolated_long(w);
  w.table({
      {"add 1,000", [&] { return w.b.update_margin(kT, w.N(kT), kEth, kMarginAdd, 1'000 * kUsdc); },
       Reject::kOk},
      {"remove 2,000 would leave 2,000 < IMR 3,000",
       [&] { return w.b.update_margin(kT, w.N(kT), kEth, kMarginRemove, 2'000 * kUsdc); },
       Reject::kNotEnoughMargin},
      {"remove 1,000",
       [&] { return w.b.update_margin(kT, w.N(kT), kEth, kMarginRemove, 1'000 * kUsdc); },
       Reject::kOk},
      {"add more than the free collateral",
       [&] { return w.b.update_margin(kT, w.N(kT), kEth, kMarginAdd, 7'001 * kUsdc); },
       Reject::kInsufficientCollateral},
      {"direction 2", [&] { return w.b.update_margin(kT, w.N(kT), kEth, 2, kUsdc); },
       Reject::kInvalidMarginDirection},
      {"amount 0", [&] { return w.b.update_margin(kT, w.N(kT), kEth, kMarginAdd, 0); },
       Reject::kInvalidTransferAmount},
      {"a cross account's position",
       [&] { return w.b.update_margin(kS, w.N(kS), kEth, kMarginAdd, kUsdc); },
       Reject::kNotIsolated},
      {"no such market", [&] { return w.b.update_margin(kT, w.N(kT), 7, kMarginAdd, kUsdc); },
       Reject::kInvalidMarket},
  });
  EXPECT_EQ(allocated(w, kT), 3'000 * kUsdc);
  EXPECT_EQ(w.coll(kT), 7'000 * kUsdc);
  // A price rise: the profit stays in the position until it is closed, then all of it comes back.
  w.table({
      {"index 3100.00", [&] { return w.index(310000); }, Reject::kOk},
      {"K bids 10 ETH at 3100.00", [&] { return w.order(kK, kBid, 310000, 10 * kOne); },
       Reject::kOk},
  });
  EXPECT_EQ(w.engine.isolated(position(w, kT)).tav, 4'000 * kUsdc);
  EXPECT_EQ(w.coll(kT), 7'000 * kUsdc);
  w.step("T sells 10 ETH into it", [&] { return w.order(kT, kAsk, 310000, 10 * kOne, kIoc); });
  EXPECT_EQ(w.size(kT), 0);
  EXPECT_EQ(allocated(w, kT), 0);
  EXPECT_EQ(w.coll(kT), 11'000 * kUsdc);  // 10,000 + 10 × 100.00
  EXPECT_EQ(position(w, kT).realized_pnl, 1'000 * kUsdc);
}

// The point of isolation: a crash takes the position's margin and nothing else. Cross, T's
// 10,000 USDC would carry the 5,000 loss without any liquidation.
TEST(IsolatedMargin, liquidation_takes_only_the_allocated_margin) {
  World w;
  isolated_long(w);
  const RiskStats s0 = w.engine.risk_stats();
  w.sink.clear();
  w.step("index 2500.00: the position's TAV is 3,000 − 5,000 < 0", [&] { return w.index(250000); });
  const auto events = w.risk_events();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].event, RiskEvent::kFullLiquidation);
  EXPECT_EQ(events[0].market, kEth);  // the isolated bucket, not the account
  const auto trades = w.sink.trades();
  ASSERT_EQ(trades.size(), 1u);
  // Its bankruptcy price: 3000.00 − 3,000 / 10 ETH = 2700.00; the fund is empty, so S (the only
  // short) is deleveraged there.
  expect_trade(trades[0], TradeKind::kDeleverage, kS, kT, 270000, 10 * kOne);
  EXPECT_EQ(w.size(kT), 0);
  EXPECT_EQ(allocated(w, kT), 0);
  EXPECT_EQ(w.coll(kT), 7'000 * kUsdc);  // the cross collateral is untouched
  EXPECT_EQ(w.size(kS), 0);
  EXPECT_EQ(w.coll(kS), 103'000 * kUsdc);
  expect_stats(s0, w.engine, 0, 1, 0, 1);
}

TEST(IsolatedMargin, partial_liquidation_sells_into_the_book_and_hands_back_the_rest) {
  World w;
  isolated_long(w);
  w.step("K bids 10 ETH at 2740.00", [&] { return w.order(kK, kBid, 274000, 10 * kOne); });
  const RiskStats s0 = w.engine.risk_stats();
  w.sink.clear();
  // TAV 3,000 − 2,700 = 300 < MMR 10 × 2730 × 1.2% = 327.60, above close-out 218.40.
  w.step("index 2730.00", [&] { return w.index(273000); });
  const auto events = w.risk_events();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].event, RiskEvent::kPartialLiquidation);
  const auto trades = w.sink.trades();
  ASSERT_EQ(trades.size(), 1u);
  expect_trade(trades[0], TradeKind::kLiquidation, kK, kT, 274000, 10 * kOne);
  EXPECT_EQ(w.size(kT), 0);
  EXPECT_EQ(allocated(w, kT), 0);
  // Sold at 2740.00 against a zero price of 2700.00: 400 USDC better, 1% of 27,400 (274 USDC)
  // to the fund from the position; 3,000 − 2,600 − 274 = 126 comes back to cross collateral.
  EXPECT_EQ(w.coll(kInsurance), 274 * kUsdc);
  EXPECT_EQ(w.coll(kT), 7'126 * kUsdc);
  expect_stats(s0, w.engine, 1, 0, 0, 0);
}

TEST(IsolatedMargin, funding_is_paid_from_the_position_and_a_snapshot_keeps_it) {
  World w;
  isolated_long(w);
  w.table({
      {"K bids 1 ETH at 3030.00", [&] { return w.order(kK, kBid, 303000, kOne); }, Reject::kOk},
      {"K offers 1 ETH at 3060.00", [&] { return w.order(kK, kAsk, 306000, kOne); }, Reject::kOk},
      {"tick", [&] { return w.tick(); }, Reject::kOk},
  });
  w.clock_to((w.b.now_ms() / kMinute + 1) * kMinute);
  w.step("tick at the boundary: longs pay", [&] { return w.tick(); });
  const Position& p = position(w, kT);
  ASSERT_GT(p.funding_paid, 0);
  EXPECT_EQ(p.allocated, 3'000 * kUsdc - p.funding_paid);
  EXPECT_EQ(w.coll(kT), 7'000 * kUsdc);
  VectorSink out;
  w.engine.save(out);
  Engine copy(risk_config());
  ByteSource in(out.bytes.data(), out.bytes.size());
  ASSERT_TRUE(copy.load(in).ok());
  EXPECT_EQ(copy.state_hash(), w.engine.state_hash());
  EXPECT_EQ(copy.account(kT)->position(kEth)->allocated, p.allocated);
  EXPECT_EQ(copy.account(kT)->position(kEth)->isolated, 1);
}

// A snapshot written before isolated margin (format ENG3: positions of 80 bytes without margin
// mode or allocated margin) still loads, every position cross. The ENG3 bytes are made from
// today's snapshot of a state without isolated positions, rewriting each position record.
TEST(IsolatedMargin, a_snapshot_from_before_isolated_margin_still_loads) {
  World w;
  w.step("ETH at 3000.00", [&] { return w.b.create_market(kEth, risk_params(), kPx); });
  fund(w, {{kS, 100'000}, {kT, 10'000}});
  w.table({
      {"S offers 10 ETH", [&] { return w.order(kS, kAsk, kPx, 10 * kOne); }, Reject::kOk},
      {"T lifts 4", [&] { return w.order(kT, kBid, kPx, 4 * kOne, kIoc); }, Reject::kOk},
      {"T bids 1 more", [&] { return w.order(kT, kBid, 290000, kOne); }, Reject::kOk},
  });
  VectorSink out;
  w.engine.save(out);
  const std::vector<uint8_t>& now = out.bytes;
  struct PositionEng3 {  // the ENG3 layout
    Lots size;
    Usdc entry_notional, realized_pnl;
    Lots buy_open, sell_open;
    Bps4 imf;
    uint32_t open_orders;
    Usdc funding_paid;
    uint32_t holder_pos;
    int64_t risk_key;
    MarketId market;
  };
  static_assert(sizeof(PositionEng3) == 80 && sizeof(Position) == 80);
  std::vector<uint8_t> old;
  size_t at = 0;
  auto copy = [&](size_t n) {
    old.insert(old.end(), now.begin() + at, now.begin() + at + n);
    at += n;
  };
  auto u32_at = [&](size_t pos) {
    uint32_t v;
    std::memcpy(&v, now.data() + pos, 4);
    return v;
  };
  const uint32_t eng3 = 0x33474e45;
  old.insert(old.end(), reinterpret_cast<const uint8_t*>(&eng3),
             reinterpret_cast<const uint8_t*>(&eng3) + 4);
  at = 4;
  copy(5 * 8 + 3 * 8);  // counters, deposits, withdrawals
  uint64_t accounts;
  std::memcpy(&accounts, now.data() + at, 8);
  copy(8);
  for (uint64_t i = 0; i < accounts; ++i) {
    copy(8 + 8 + 8 + 20 + 8);  // index, master, collateral, address, dead man's switch
    const uint32_t np = u32_at(at);
    copy(4);
    for (uint32_t k = 0; k < np; ++k) {
      Position p;
      std::memcpy(&p, now.data() + at, sizeof(Position));
      at += sizeof(Position);
      ASSERT_EQ(p.isolated, 0);
      PositionEng3 o{p.size,  p.entry_notional, p.realized_pnl, p.buy_open,   p.sell_open,
                     p.imf,   p.open_orders,    p.funding_paid, p.holder_pos, p.risk_key,
                     p.market};
      const auto* b = reinterpret_cast<const uint8_t*>(&o);
      old.insert(old.end(), b, b + sizeof(o));
    }
    const uint32_t nk = u32_at(at);
    copy(4 + nk * sizeof(ApiKey));
  }
  copy(now.size() - at - 4);  // markets, books, orders
  old.insert(old.end(), reinterpret_cast<const uint8_t*>(&eng3),
             reinterpret_cast<const uint8_t*>(&eng3) + 4);
  Engine copy_engine(risk_config());
  ByteSource in(old.data(), old.size());
  const Status s = copy_engine.load(in);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(copy_engine.state_hash(), w.engine.state_hash());
  EXPECT_EQ(copy_engine.validate(), "");
  EXPECT_EQ(copy_engine.account(kT)->position(kEth)->size, 4 * kOne);
  EXPECT_EQ(copy_engine.account(kT)->position(kEth)->buy_open, kOne);
  // and the ENG3 end marker is checked like today's: a damaged one is refused
  old[old.size() - 1] ^= 1;
  Engine bad(risk_config());
  ByteSource in2(old.data(), old.size());
  EXPECT_FALSE(bad.load(in2).ok());
}

}  // namespace
}  // namespace tachyon::testing
