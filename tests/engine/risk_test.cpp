// Risk lifecycle scenarios (docs/ARCHITECTURE.md "Risk lifecycle"): funding, health and the
// liquidation waterfall, the circuit breaker, the dead man's switch, determinism across runs and
// snapshots. Tables of {what, tx, expected reject} plus state checks; validate() after every tx.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "support/engine_fixture.hpp"
#include "support/risk_world.hpp"
#include "tachyon/core/bytes.hpp"

namespace tachyon::testing {
namespace {

using namespace risk;  // NOLINT: the world and its constants

// ---- funding ----

// A long 10001 lots against B (5000) and C (5001), all at 3000.00; M then quotes `bid` / `ask`.
void funding_world(World& w, Ticks bid, Ticks ask, const MarketParams& p = risk_params()) {
  w.step("ETH at 3000.00", [&] { return w.b.create_market(kEth, p, kPx); });
  fund(w, {{kA, 10'000}, {kB, 10'000}, {kC, 10'000}, {kM, 100'000}});
  w.table({
      {"B offers 5000 lots", [&] { return w.order(kB, kAsk, kPx, 5000); }, Reject::kOk},
      {"C offers 5001 lots", [&] { return w.order(kC, kAsk, kPx, 5001); }, Reject::kOk},
      {"A lifts both", [&] { return w.order(kA, kBid, kPx, 10001, kIoc); }, Reject::kOk},
      {"M bids 1 ETH", [&] { return w.order(kM, kBid, bid, kOne); }, Reject::kOk},
      {"M offers 1 ETH", [&] { return w.order(kM, kAsk, ask, kOne); }, Reject::kOk},
  });
  ASSERT_EQ(w.size(kA), 10001);
}

// A sampling tick now, one 1 ms before the next interval boundary, and the paying one at it.
// Returns the estimate the engine gave just before the payment.
int64_t pay_funding(World& w) {
  const int64_t boundary = (w.b.now_ms() / kMinute + 1) * kMinute;
  w.step("tick: first sample", [&] { return w.tick(); });
  w.clock_to(boundary - 1);
  w.step("tick 1 ms before the boundary: sample", [&] { return w.tick(); });
  const int64_t estimate = w.engine.funding_estimate(kEth);
  w.clock_to(boundary);
  w.step("tick at the boundary: payment", [&] { return w.tick(kEth); });
  return estimate;
}

TEST(RiskFunding, longs_pay_shorts_at_the_first_tick_after_the_boundary) {
  World w;
  funding_world(w, 303000, 306000);  // impact bid 3030.00, impact ask above the index
  const Market& m = w.market();
  ASSERT_EQ(m.mark_price, 303000);
  EXPECT_EQ(w.engine.premium_now(kEth), 10'000'000);  // +1% in 1e-9
  const int64_t boundary = (w.b.now_ms() / kMinute + 1) * kMinute;
  const Usdc money = w.total_collateral();
  std::map<AccountIndex, Usdc> before;
  for (AccountIndex a : {kA, kB, kC, kFee}) before[a] = w.coll(a);

  w.step("first tick: a sample only", [&] { return w.tick(); });
  EXPECT_EQ(m.premium_samples, 1);
  EXPECT_EQ(m.next_funding_ms, boundary);
  w.clock_to(boundary - 1);
  w.step("1 ms before the boundary: a sample only", [&] { return w.tick(); });
  EXPECT_EQ(m.premium_samples, 2);
  EXPECT_EQ(m.last_funding_ms, 0);
  EXPECT_EQ(w.engine.risk_stats().funding_payments, 0u);
  EXPECT_EQ(w.moved(kA, BalanceReason::kFunding), 0);
  // (1% − 0.05%: the small clamp pulls towards the 0.01% interest) / 8.
  const int64_t estimate = w.engine.funding_estimate(kEth);
  EXPECT_EQ(estimate, 1'187'500);

  w.sink.clear();
  w.clock_to(boundary);
  w.step("at the boundary: the payment", [&] { return w.tick(kEth); });
  EXPECT_EQ(m.last_funding_rate, estimate);
  EXPECT_EQ(m.last_funding_ms, boundary);
  EXPECT_EQ(m.next_funding_ms, boundary + kMinute);
  EXPECT_EQ(m.premium_samples, 0);
  EXPECT_EQ(w.engine.risk_stats().funding_payments, 1u);
  // 10001 lots × 3030.00 × 0.11875% = 3.5984848125 USDC: the payer rounds up, receivers down.
  // B: 1.7990625, C: 1.7994223125; the fee account takes the residue.
  const std::pair<AccountIndex, Usdc> paid[] = {
      {kA, -3'598'485}, {kB, 1'799'062}, {kC, 1'799'422}, {kFee, 1}};
  for (auto [a, delta] : paid) {
    EXPECT_EQ(w.moved(a, BalanceReason::kFunding), delta) << "account " << a;
    EXPECT_EQ(w.coll(a), before[a] + delta) << "account " << a;
  }
  EXPECT_EQ(w.total_collateral(), money);
  EXPECT_EQ(w.engine.account(kA)->position(kEth)->funding_paid, 3'598'485);
  std::vector<FundingUpdate> settled;
  for (const auto& u : w.sink.updates)
    if (u.type == UpdateType::kFunding && u.funding.settled) settled.push_back(u.funding);
  ASSERT_EQ(settled.size(), 1u);
  EXPECT_EQ(settled[0].last_rate, estimate);
  EXPECT_EQ(settled[0].paid, 3'598'485);
  EXPECT_EQ(settled[0].residue, 1);
  EXPECT_EQ(settled[0].mark, 303000);

  w.clock_to(boundary + 1000);
  w.step("after the payment: sampling again", [&] { return w.tick(); });
  EXPECT_EQ(m.premium_samples, 1);
  EXPECT_EQ(w.engine.risk_stats().funding_payments, 1u);
  EXPECT_EQ(w.total_collateral(), money);
}

TEST(RiskFunding, the_rate_follows_the_premium_sign_and_clamps) {
  struct Case {
    const char* what;
    Ticks bid, ask;
    int64_t premium, rate;  // 1e-9
  };
  const Case cases[] = {
      {"impact bid 1% above the index: longs pay", 303000, 306000, 10'000'000, 1'187'500},
      {"impact ask 1% below the index: shorts pay", 294000, 297000, -10'000'000, -1'187'500},
      {"impact bid 10% above: clamped to funding_clamp_big / 8", 330000, 333000, 100'000'000,
       40'000 * 1000 / 8},
      {"premium 0.02%, inside the small clamp: the interest rate", 300060, 303000, 200'000,
       100 * 1000 / 8},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    World w;
    funding_world(w, k.bid, k.ask);
    EXPECT_EQ(w.engine.premium_now(kEth), k.premium);
    const Usdc money = w.total_collateral();
    w.sink.clear();
    const int64_t estimate = pay_funding(w);
    const Market& m = w.market();
    EXPECT_EQ(m.last_funding_rate, k.rate);
    EXPECT_EQ(estimate, k.rate);
    Usdc paid = 0, received = 0;
    for (AccountIndex a : {kA, kB, kC}) {
      const __int128 amount = static_cast<__int128>(w.size(a)) * m.mark_price * k.rate;
      const Usdc got = w.moved(a, BalanceReason::kFunding);
      // Longs pay when the rate is positive, shorts when it is negative; payers round up.
      EXPECT_EQ(got, static_cast<Usdc>(amount > 0 ? -ceil_div(amount, 1'000'000'000)
                                                  : div_trunc(-amount, 1'000'000'000)))
          << "account " << a;
      EXPECT_EQ(got < 0, (k.rate > 0) == (w.size(a) > 0)) << "account " << a;
      (got < 0 ? paid : received) += got < 0 ? -got : got;
    }
    EXPECT_GT(paid, 0);
    EXPECT_EQ(w.moved(kFee, BalanceReason::kFunding), paid - received);
    EXPECT_EQ(w.total_collateral(), money);
  }
}

// ---- health and the liquidation waterfall ----

// T long 10 ETH at 3000.00 with 2,000 USDC (IMR 1,500, MMR 360, close-out 240) against S; K has
// deep pockets to bid. TAV = 2,000 + 10 × (P − 3000): pre-liquidation for P in [2834.02,
// 2947.36], partial in [2822.59, 2834.01], full below; the zero price is 2800.00.
void open_long(World& w) {
  w.step("ETH at 3000.00", [&] { return w.b.create_market(kEth, risk_params(), kPx); });
  fund(w, {{kS, 100'000}, {kT, 2'000}, {kK, 100'000}});
  w.table({
      {"S offers 10 ETH", [&] { return w.order(kS, kAsk, kPx, 10 * kOne); }, Reject::kOk},
      {"T lifts it", [&] { return w.order(kT, kBid, kPx, 10 * kOne, kIoc); }, Reject::kOk},
  });
  ASSERT_EQ(w.size(kT), 10 * kOne);
  ASSERT_EQ(w.health(kT), Health::kHealthy);
}

TEST(RiskLiquidation, pre_liquidation_then_partial_liquidation_into_the_book) {
  World w;
  open_long(w);
  const RiskStats s0 = w.engine.risk_stats();
  w.table({
      {"index 2900.00: TAV 1,000, MMR 348, IMR 1,450", [&] { return w.index(290000); },
       Reject::kOk},
      {"a bid adds risk", [&] { return w.order(kT, kBid, 280000, kOne); },
       Reject::kNotEnoughMargin},
      {"a reduce-only ask is fine", [&] { return w.reduce_only(kT, kAsk, 295000, kOne); },
       Reject::kOk},
      {"K bids 6 ETH at 2830.00", [&] { return w.order(kK, kBid, 283000, 6 * kOne); }, Reject::kOk},
      {"K bids 10 ETH at 2815.00", [&] { return w.order(kK, kBid, 281500, 10 * kOne); },
       Reject::kOk},
  });
  EXPECT_EQ(w.market().mark_price, 290000);
  EXPECT_EQ(w.health(kT), Health::kPreLiquidation);
  expect_stats(s0, w.engine, 0, 0, 0, 0);

  w.sink.clear();
  w.step("index 2830.00: TAV 300 < MMR 339.60, above close-out 226.40",
         [&] { return w.index(283000); });
  const auto events = w.risk_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event, RiskEvent::kPartialLiquidation);
  EXPECT_EQ(events[0].account, kT);
  EXPECT_EQ(events[0].tav, 300 * kUsdc);
  EXPECT_EQ(events[0].mmr, 339'600'000);
  EXPECT_EQ(w.count(RemoveReason::kLiquidation, kT), 1);  // the reduce-only ask
  int liq_orders = 0;
  for (const OrderUpdate& o : w.sink.removed()) {
    if (o.type != OrderType::kLiquidation) continue;
    ++liq_orders;
    EXPECT_EQ(o.account, kT);
    EXPECT_EQ(o.price, 280000);  // the zero price: mark − TAV / size
    EXPECT_EQ(o.tif, kIoc);
    EXPECT_EQ(o.reason, RemoveReason::kFilled);
  }
  EXPECT_EQ(liq_orders, 1);
  const auto trades = w.sink.trades();
  ASSERT_EQ(trades.size(), 2u);
  const Ticks prices[] = {283000, 281500};
  const Lots sizes[] = {6 * kOne, 4 * kOne};
  for (size_t i = 0; i < 2; ++i) {
    expect_trade(trades[i], TradeKind::kLiquidation, kK, kT, prices[i], sizes[i]);
    EXPECT_GE(trades[i].price, 280000);  // never below the zero price
    EXPECT_EQ(trades[i].taker_is_ask, 1);
  }
  // The improvement over the zero price, up to 1% of the notional, goes to the fund:
  // min(6 × 30.00, 1% × 16,980) + min(4 × 15.00, 1% × 11,260) = 169.80 + 60 USDC.
  EXPECT_EQ(w.moved(kInsurance, BalanceReason::kLiquidationFee), 229'800'000);
  EXPECT_EQ(w.moved(kT, BalanceReason::kLiquidationFee), -229'800'000);
  EXPECT_EQ(w.coll(kInsurance), 229'800'000);
  EXPECT_EQ(w.size(kT), 0);
  EXPECT_EQ(w.coll(kT), 10'200'000);  // 2,000 − 1,020 − 740 − 229.80
  const MarginInfo mi = w.engine.margin(*w.engine.account(kT));
  EXPECT_TRUE(mi.tav >= mi.mmr);
  EXPECT_EQ(w.size(kK), 10 * kOne);
  expect_stats(s0, w.engine, 1, 0, 0, 0);
  EXPECT_GT(w.engine.risk_stats().margin_checks, s0.margin_checks);
}

TEST(RiskLiquidation, full_liquidation_the_insurance_fund_takes_the_position_over) {
  World w;
  open_long(w);
  fund(w, {{kInsurance, 50'000}});
  w.step("K bids 1 ETH at 2790.00, below the zero price",
         [&] { return w.order(kK, kBid, 279000, kOne); });
  const RiskStats s0 = w.engine.risk_stats();
  w.sink.clear();
  w.step("index 2810.00: TAV 100 < close-out 224.80", [&] { return w.index(281000); });
  const auto events = w.risk_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event, RiskEvent::kFullLiquidation);
  EXPECT_EQ(events[0].tav, 100 * kUsdc);
  const auto trades = w.sink.trades();
  ASSERT_EQ(trades.size(), 1u);
  expect_trade(trades[0], TradeKind::kTakeover, kInsurance, kT, 280000, 10 * kOne);
  EXPECT_EQ(trades[0].maker_fee + trades[0].taker_fee, 0);
  EXPECT_EQ(w.size(kT), 0);
  EXPECT_EQ(w.coll(kT), 0);  // closed at its bankruptcy price
  EXPECT_EQ(w.size(kInsurance), 10 * kOne);
  EXPECT_EQ(w.coll(kInsurance), 50'000 * kUsdc);
  EXPECT_EQ(w.market().book.level_count(kBid), 1u);  // the thin book was not used
  expect_stats(s0, w.engine, 0, 1, 1, 0);
}

TEST(RiskLiquidation, without_insurance_collateral_the_position_is_deleveraged) {
  World w;
  open_long(w);
  const RiskStats s0 = w.engine.risk_stats();
  w.sink.clear();
  w.step("index 2810.00: TAV 100 < close-out, the fund is empty", [&] { return w.index(281000); });
  const auto trades = w.sink.trades();
  ASSERT_EQ(trades.size(), 1u);
  expect_trade(trades[0], TradeKind::kDeleverage, kS, kT, 280000, 10 * kOne);
  EXPECT_EQ(w.size(kT), 0);
  EXPECT_EQ(w.size(kS), 0);
  EXPECT_EQ(w.coll(kT), 0);
  EXPECT_EQ(w.coll(kS), 102'000 * kUsdc);  // closed 200.00 below its entry
  EXPECT_EQ(w.size(kInsurance), 0);
  EXPECT_EQ(w.coll(kInsurance), 0);
  expect_stats(s0, w.engine, 0, 1, 0, 1);
}

// T (2,000 USDC) buys 4 ETH from S1 at 3000.00, 3 from S2 at 2950.00 and 3 from S3 at 3200.00
// (entry 30,450); L buys S1's other 2 ETH. Then the index falls to 2860.00: T's TAV 150 is under
// its close-out requirement (228.80), the fund is empty, and the zero price is 2845.00.
// ADL scores at 2860.00 (PnL ratio × leverage): S2 4.66% × 3.78 = 0.115, S3 10.6% × 0.78 =
// 0.083, S1 4.67% × 1.08 = 0.051. Leverage alone would rank S1 before S3, the ratio alone S3
// before S1 before S2.
void adl_world(World& w) {
  w.step("ETH at 3000.00", [&] { return w.b.create_market(kEth, risk_params(), kPx); });
  fund(w, {{kT, 2'000}, {kS1, 15'000}, {kS2, 2'000}, {kS3, 10'000}, {kL, 100'000}});
  w.table({
      {"S1 offers 6 ETH", [&] { return w.order(kS1, kAsk, kPx, 6 * kOne); }, Reject::kOk},
      {"T buys 4", [&] { return w.order(kT, kBid, kPx, 4 * kOne, kIoc); }, Reject::kOk},
      {"L buys 2", [&] { return w.order(kL, kBid, kPx, 2 * kOne, kIoc); }, Reject::kOk},
      {"S2 offers 3 ETH at 2950.00", [&] { return w.order(kS2, kAsk, 295000, 3 * kOne); },
       Reject::kOk},
      {"T buys them", [&] { return w.order(kT, kBid, 295000, 3 * kOne, kIoc); }, Reject::kOk},
      {"S3 offers 3 ETH at 3200.00", [&] { return w.order(kS3, kAsk, 320000, 3 * kOne); },
       Reject::kOk},
      {"T buys them", [&] { return w.order(kT, kBid, 320000, 3 * kOne, kIoc); }, Reject::kOk},
  });
  ASSERT_EQ(w.size(kT), 10 * kOne);
  ASSERT_EQ(w.size(kS1), -6 * kOne);
  w.sink.clear();
  w.step("index 2860.00", [&] { return w.index(286000); });
}

TEST(RiskLiquidation, adl_closes_the_highest_pnl_ratio_times_leverage_first) {
  World w;
  adl_world(w);
  const auto trades = w.sink.trades();
  ASSERT_EQ(trades.size(), 3u);
  const AccountIndex makers[] = {kS2, kS3, kS1};
  const Lots sizes[] = {3 * kOne, 3 * kOne, 4 * kOne};
  for (size_t i = 0; i < 3; ++i)
    expect_trade(trades[i], TradeKind::kDeleverage, makers[i], kT, 284500, sizes[i]);
  EXPECT_EQ(w.size(kT), 0);
  EXPECT_EQ(w.coll(kT), 0);
  EXPECT_EQ(w.size(kS2), 0);
  EXPECT_EQ(w.size(kS3), 0);
  EXPECT_EQ(w.size(kS1), -2 * kOne);  // ranked last: only what was left
  EXPECT_EQ(w.size(kL), 2 * kOne);
  expect_stats(RiskStats{}, w.engine, 0, 1, 0, 3);
}

// ---- circuit breaker ----

void breaker_world(World& w) {
  w.step("ETH at 3000.00 with a breaker",
         [&] { return w.b.create_market(kEth, risk_params(1000), kPx); });
  fund(w, {{kA, 10'000}, {kB, 10'000}});
}

TEST(RiskBreaker, two_moves_in_the_window_post_only_then_halt_then_cool_down) {
  World w;
  breaker_world(w);
  const Market& m = w.market();
  w.clock_to(w.b.now_ms() + 1000);
  w.step("index +11.3% (3340.00)", [&] { return w.index(334000); });
  EXPECT_EQ(m.status(), MarketStatus::kPostOnly);
  EXPECT_EQ(m.params.status, MarketStatus::kActive);  // the operator's status is untouched
  const int64_t t1 = w.b.now_ms();
  w.table({
      {"GTT refused", [&] { return w.order(kA, kBid, 330000, kOne); }, Reject::kMarketStatus},
      {"IOC refused", [&] { return w.order(kA, kBid, 330000, kOne, kIoc); }, Reject::kMarketStatus},
      {"post-only accepted", [&] { return w.order(kA, kBid, 330000, kOne, kPostOnly); },
       Reject::kOk},
  });
  w.clock_to(t1 + 30'000);
  w.step("30 s later, index back to 3000.00 (−10.2%)", [&] { return w.index(300000); });
  EXPECT_EQ(m.status(), MarketStatus::kHalted);
  const int64_t t2 = w.b.now_ms();
  const int64_t samples = m.premium_samples;
  w.table({
      {"post-only refused", [&] { return w.order(kB, kAsk, 310000, kOne, kPostOnly); },
       Reject::kMarketStatus},
      {"a funding tick does not sample a halted market", [&] { return w.tick(); }, Reject::kOk},
  });
  EXPECT_EQ(m.premium_samples, samples);
  w.clock_to(t2 + 120'000 - 1);
  w.step("1 ms before the cool-down ends", [&] { return w.any_tx(); });
  EXPECT_EQ(m.status(), MarketStatus::kHalted);
  w.clock_to(t2 + 120'000);
  w.step("cool-down over: GTT accepted", [&] { return w.order(kB, kBid, 290000, kOne); });
  EXPECT_EQ(m.status(), MarketStatus::kActive);
  std::vector<RiskEvent> seen;
  for (const RiskUpdate& r : w.risk_events()) seen.push_back(r.event);
  EXPECT_EQ(seen, (std::vector<RiskEvent>{RiskEvent::kBreakerPostOnly, RiskEvent::kBreakerHalted,
                                          RiskEvent::kBreakerCleared}));
}

TEST(RiskBreaker, operator_halts_by_hand_and_a_resume_clears_a_tripped_breaker) {
  World w;
  breaker_world(w);
  const Market& m = w.market();
  w.table({
      {"operator halts", [&] { return w.set_status(MarketStatus::kHalted); }, Reject::kOk},
      {"GTT refused", [&] { return w.order(kA, kBid, 290000, kOne); }, Reject::kMarketStatus},
      {"post-only refused", [&] { return w.order(kA, kBid, 290000, kOne, kPostOnly); },
       Reject::kMarketStatus},
      {"status 4 does not exist", [&] { return w.set_status(static_cast<MarketStatus>(4)); },
       Reject::kInvalidMarketConfig},
      {"market 7 does not exist", [&] { return w.set_status(MarketStatus::kActive, 7); },
       Reject::kInvalidMarket},
  });
  EXPECT_EQ(m.status(), MarketStatus::kHalted);
  w.table({
      {"operator resumes", [&] { return w.set_status(MarketStatus::kActive); }, Reject::kOk},
      {"GTT accepted", [&] { return w.order(kA, kBid, 290000, kOne); }, Reject::kOk},
      {"index +12% trips the breaker", [&] { return w.index(336000); }, Reject::kOk},
  });
  EXPECT_EQ(m.status(), MarketStatus::kPostOnly);
  w.table({
      {"operator resumes before the cool-down", [&] { return w.set_status(MarketStatus::kActive); },
       Reject::kOk},
      {"GTT accepted at once", [&] { return w.order(kA, kBid, 320000, kOne); }, Reject::kOk},
  });
  EXPECT_EQ(m.breaker_level, 0);
  EXPECT_EQ(m.status(), MarketStatus::kActive);
}

TEST(RiskBreaker, moves_within_the_band_or_slower_than_the_window_do_not_trip) {
  World w;
  breaker_world(w);
  const Market& m = w.market();
  const int64_t t0 = w.b.now_ms() + 1000;
  struct Step {
    int64_t at_ms;
    Ticks index;
    MarketStatus after;
  };
  const Step steps[] = {
      {t0, 330000, MarketStatus::kActive},              // exactly +10%: inside the band
      {t0 + 61'000, 349800, MarketStatus::kActive},     // +6%: the window restarts at 3300.00
      {t0 + 122'000, 370788, MarketStatus::kActive},    // +6% again, 61 s later (+23.6% in all)
      {t0 + 152'000, 393035, MarketStatus::kPostOnly},  // +6% within 30 s: 12.4% from 3498.00
  };
  for (const Step& s : steps) {
    w.clock_to(s.at_ms);
    w.step("index " + std::to_string(s.index), [&] { return w.index(s.index); });
    EXPECT_EQ(m.mark_price, s.index);
    EXPECT_EQ(m.status(), s.after) << "index " << s.index;
  }
}

// ---- the dead man's switch ----

void dead_man_world(World& w) {
  w.step("ETH", [&] { return w.b.create_market(kEth, risk_params(), kPx); });
  fund(w, {{kA, 10'000}, {kB, 10'000}});
  w.table({
      {"A bids", [&] { return w.order(kA, kBid, 290000, kOne); }, Reject::kOk},
      {"A offers", [&] { return w.order(kA, kAsk, 310000, kOne); }, Reject::kOk},
  });
}

TEST(RiskDeadMan, scheduled_cancel_all_fires_at_the_deadline_and_renewal_moves_it) {
  World w;
  dead_man_world(w);
  const int64_t t0 = w.b.now_ms();
  const int64_t deadline = t0 + 20 * kMinute;
  w.table({
      {"deadline 10 min ahead", [&] { return w.arm(kA, t0 + 10 * kMinute); }, Reject::kOk},
      {"deadline 5 min − 1 ms ahead", [&] { return w.arm(kA, w.b.now_ms() + 5 * kMinute - 1); },
       Reject::kInvalidExpiry},
      {"deadline 15 days + 1 ms ahead",
       [&] { return w.arm(kA, w.b.now_ms() + kCancelAllMaxDelayMs + 1); }, Reject::kInvalidExpiry},
      {"renewed: 20 min ahead", [&] { return w.arm(kA, deadline); }, Reject::kOk},
  });
  EXPECT_EQ(w.engine.account(kA)->cancel_all_at_ms, deadline);
  w.clock_to(t0 + 10 * kMinute);
  w.step("the old deadline passes", [&] { return w.any_tx(); });
  w.clock_to(deadline - 1);
  w.step("1 ms before the deadline", [&] { return w.any_tx(); });
  EXPECT_EQ(w.engine.account(kA)->open_orders, 2u);
  EXPECT_EQ(w.count(RemoveReason::kScheduledCancelAll, kA), 0);
  w.clock_to(deadline);
  w.step("A's own order at the deadline: the old ones go first",
         [&] { return w.order(kA, kBid, 295000, kOne); });
  EXPECT_EQ(w.count(RemoveReason::kScheduledCancelAll, kA), 2);
  EXPECT_EQ(w.engine.account(kA)->open_orders, 1u);  // the new order rests
  EXPECT_EQ(w.engine.account(kA)->cancel_all_at_ms, 0);
}

TEST(RiskDeadMan, abort_removes_the_schedule) {
  World w;
  dead_man_world(w);
  const int64_t t0 = w.b.now_ms();
  w.table({
      {"abort with nothing scheduled", [&] { return w.disarm(kA); }, Reject::kOrderNotFound},
      {"scheduled 10 min ahead", [&] { return w.arm(kA, t0 + 10 * kMinute); }, Reject::kOk},
      {"abort with a time", [&] { return w.disarm(kA, t0 + 10 * kMinute); },
       Reject::kInvalidExpiry},
      {"abort", [&] { return w.disarm(kA); }, Reject::kOk},
      {"abort again", [&] { return w.disarm(kA); }, Reject::kOrderNotFound},
  });
  EXPECT_EQ(w.engine.account(kA)->cancel_all_at_ms, 0);
  w.clock_to(t0 + 11 * kMinute);
  w.step("past the old deadline", [&] { return w.any_tx(); });
  EXPECT_EQ(w.engine.account(kA)->open_orders, 2u);
  EXPECT_EQ(w.count(RemoveReason::kScheduledCancelAll, kA), 0);
}

// ---- determinism ----

TEST(RiskDeterminism, the_same_liquidation_twice_ends_in_the_same_state) {
  World w1, w2;
  adl_world(w1);
  adl_world(w2);
  EXPECT_EQ(w1.engine.state_hash(), w2.engine.state_hash());
  EXPECT_EQ(w1.sink.updates.size(), w2.sink.updates.size());
  EXPECT_EQ(w1.sink.trades().size(), 3u);
}

TEST(RiskDeterminism, a_snapshot_after_funding_and_a_tripped_breaker_behaves_the_same) {
  World w;
  funding_world(w, 303000, 306000, risk_params(1000));
  pay_funding(w);
  ASSERT_EQ(w.engine.risk_stats().funding_payments, 1u);
  const int64_t t0 = w.b.now_ms();
  w.table({
      {"A offers 1 ETH", [&] { return w.order(kA, kAsk, 310000, kOne); }, Reject::kOk},
      {"A's dead man's switch", [&] { return w.arm(kA, t0 + 10 * kMinute); }, Reject::kOk},
      {"M pulls its quotes", [&] { return w.b.cancel_all(kM, w.N(kM)); }, Reject::kOk},
      {"index +13% trips the breaker", [&] { return w.index(340000); }, Reject::kOk},
      {"a sample after the payment", [&] { return w.tick(); }, Reject::kOk},
  });
  ASSERT_EQ(w.market().status(), MarketStatus::kPostOnly);
  ASSERT_NE(w.market().premium_sum, 0);

  VectorSink saved;
  w.engine.save(saved);
  Engine restored(risk_config());
  ByteSource in(saved.bytes.data(), saved.bytes.size());
  const Status st = restored.load(in);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(restored.state_hash(), w.engine.state_hash());
  EXPECT_EQ(restored.validate(), "");

  // The same txs on both: a sample, then one past the cool-down, the dead man's deadline and
  // the next funding boundary (breaker cleared, A's orders canceled, funding paid).
  RecordingSink other;
  auto both = [&](const Tx& tx) {
    w.sink.clear();
    other.clear();
    const TxResult r1 = w.run(tx);
    const TxResult r2 = restored.execute(tx, other);
    EXPECT_EQ(restored.validate(), "");
    EXPECT_EQ(r1.reject, r2.reject);
    EXPECT_EQ(w.engine.state_hash(), restored.state_hash());
    // The same updates in the same order, but for kMarkPrice: the last emitted mark is not
    // state, so a restored engine repeats an unchanged mark once when a market is touched.
    auto kinds = [](const RecordingSink& s) {
      std::vector<UpdateType> out;
      for (const auto& u : s.updates)
        if (u.type != UpdateType::kMarkPrice) out.push_back(u.type);
      return out;
    };
    EXPECT_EQ(kinds(w.sink), kinds(other));
  };
  both(w.tick());
  w.clock_to(t0 + 11 * kMinute);
  both(w.tick());
  EXPECT_EQ(restored.market(kEth)->status(), MarketStatus::kActive);
  EXPECT_EQ(restored.account(kA)->open_orders, 0u);
  EXPECT_EQ(w.count(RemoveReason::kScheduledCancelAll, kA), 1);
  EXPECT_EQ(restored.market(kEth)->last_funding_ms, w.b.now_ms());
  EXPECT_EQ(w.engine.risk_stats().funding_payments, 2u);
}

}  // namespace
}  // namespace tachyon::testing
