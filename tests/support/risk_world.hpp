#pragma once
// The risk tests' world: one engine with fee-free ETH (funding clamps, breaker settings), its tx
// builder and a recording sink, with helpers for orders, prices, funding ticks and the checks
// the risk scenarios make (tests/engine/risk_test.cpp, tests/engine/isolated_test.cpp).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "support/engine_fixture.hpp"

namespace tachyon::testing::risk {

inline constexpr MarketId kEth = 0;
inline constexpr Ticks kPx = 300000;  // 3000.00
inline constexpr Lots kOne = 10000;   // 1.0000 ETH
inline constexpr AccountIndex kFee = 0;
inline constexpr AccountIndex kInsurance = 1;
inline constexpr AccountIndex kA = 100, kB = 200, kC = 300,
                              kM = 400;                      // funding: long, shorts, maker
inline constexpr AccountIndex kT = 100, kS = 200, kK = 400;  // liquidation: trader, short, bidder
inline constexpr AccountIndex kS1 = 201, kS2 = 202, kS3 = 203,
                              kL = 300;  // ADL shorts, another long
inline constexpr int64_t kMinute = 60'000;
inline constexpr TimeInForce kGtt = TimeInForce::kGoodTillTime;
inline constexpr TimeInForce kIoc = TimeInForce::kIoc;
inline constexpr TimeInForce kPostOnly = TimeInForce::kPostOnly;

// ETH without trading fees (exact PnL arithmetic); funding clamps 0.05% (small) and 4% (big),
// interest 0.01% per period; the circuit breaker (band 0: off) has a 60 s window, 120 s cool-down.
inline MarketParams risk_params(Bps4 breaker_band = 0) {
  MarketParams p = demo_market_params();
  p.taker_fee_ppm = 0;
  p.funding_clamp_small = 500;
  p.funding_clamp_big = 40'000;
  p.interest_rate = 100;
  p.breaker_band = breaker_band;
  p.breaker_window_s = 60;
  p.breaker_cooldown_s = 120;
  return p;
}

inline EngineConfig risk_config() {
  EngineConfig c;
  c.max_orders = 4096;
  c.expected_accounts = 64;
  c.levels_per_side = 64;
  c.funding_interval_ms = kMinute;
  c.impact_notional = 100 * kUsdc;  // a 1 ETH quote is deep enough
  return c;
}

// One engine, its tx builder and a recording sink.
class World {
 public:
  World() : engine(risk_config()) {}

  TxResult run(const Tx& tx) {
    const TxResult r = engine.execute(tx, sink);
    EXPECT_EQ(engine.validate(), "") << "after tx seq " << tx.h.seq;
    return r;
  }
  void step(std::string what, std::function<Tx()> make) {
    table({{std::move(what), std::move(make), Reject::kOk}});
  }
  void table(const std::vector<Row>& rows) {
    run_rows(engine, b, rows, [this](const Tx& tx) { return run(tx); });
  }

  int64_t N(AccountIndex a) const { return engine.account(a)->key(0)->next_nonce; }
  Tx order(AccountIndex a, bool is_ask, Ticks px, Lots q, TimeInForce tif = kGtt) {
    return b.limit(a, N(a), kEth, is_ask, px, q, tif);
  }
  Tx reduce_only(AccountIndex a, bool is_ask, Ticks px, Lots q) {
    Tx t = order(a, is_ask, px, q);
    t.order.reduce_only = 1;
    return t;
  }
  Tx index(Ticks px) { return b.set_index(kEth, px); }
  Tx any_tx() { return b.deposit(kB, kUsdc, false); }  // someone else's tx: time moves on
  Tx tick(MarketId m = kAllMarkets) {
    Tx t = b.user(TxType::kFundingTick, 0, 0);
    t.h.flags = kTxFlagInternal;
    t.funding.market = m;
    return t;
  }
  Tx set_status(MarketStatus s, MarketId m = kEth) {
    Tx t = b.op(TxType::kSetMarketStatus);
    t.market_status.market = m;
    t.market_status.status = s;
    return t;
  }
  // The dead man's switch: arm (or renew) it for `at_ms`, or abort it.
  Tx arm(AccountIndex a, int64_t at_ms) { return dead_man(a, kCancelAllScheduled, at_ms); }
  Tx disarm(AccountIndex a, int64_t time_ms = 0) { return dead_man(a, kCancelAllAbort, time_ms); }
  Tx dead_man(AccountIndex a, uint8_t tif, int64_t time_ms) {
    Tx t = b.cancel_all(a, N(a));
    t.cancel_all.tif = tif;
    t.cancel_all.time_ms = time_ms;
    return t;
  }
  // The next tx is stamped at `ms` (plus a few µs).
  void clock_to(int64_t ms) { b.advance_ms(ms - b.now_ms()); }

  const Market& market() const { return *engine.market(kEth); }
  Usdc coll(AccountIndex a) const { return engine.account(a)->collateral; }
  Lots size(AccountIndex a) const {
    const Position* p = engine.account(a)->position(kEth);
    return p ? p->size : 0;
  }
  Health health(AccountIndex a) const { return health_of(engine.margin(*engine.account(a))); }
  Usdc total_collateral() const {
    Usdc s = 0;
    for (const Account& a : engine.accounts()) s += a.collateral;
    return s;
  }
  // Σ balance deltas of one reason for one account, in the recorded updates.
  Usdc moved(AccountIndex a, BalanceReason why) const {
    Usdc s = 0;
    for (const auto& u : sink.updates)
      if (u.type == UpdateType::kBalance && u.balance.account == a && u.balance.reason == why)
        s += u.balance.delta;
    return s;
  }
  std::vector<RiskUpdate> risk_events() const {
    std::vector<RiskUpdate> out;
    for (const auto& u : sink.updates)
      if (u.type == UpdateType::kRisk) out.push_back(u.risk);
    return out;
  }
  int count(RemoveReason why, AccountIndex a) const {
    int n = 0;
    for (const OrderUpdate& o : sink.removed()) n += o.reason == why && o.account == a;
    return n;
  }

  Engine engine;
  TxBuilder b;
  RecordingSink sink;
};

inline void expect_trade(const TradeUpdate& t, TradeKind kind, AccountIndex maker,
                         AccountIndex taker, Ticks price, Lots size) {
  EXPECT_EQ(t.kind, kind);
  EXPECT_EQ(t.maker, maker);
  EXPECT_EQ(t.taker, taker);
  EXPECT_EQ(t.price, price);
  EXPECT_EQ(t.size, size);
}

// What the risk counters moved by since s0.
inline void expect_stats(const RiskStats& s0, const Engine& e, uint64_t partial, uint64_t full,
                         uint64_t takeovers, uint64_t deleverages) {
  const RiskStats& s = e.risk_stats();
  EXPECT_EQ(s.partial_liquidations - s0.partial_liquidations, partial);
  EXPECT_EQ(s.full_liquidations - s0.full_liquidations, full);
  EXPECT_EQ(s.takeovers - s0.takeovers, takeovers);
  EXPECT_EQ(s.deleverages - s0.deleverages, deleverages);
}

inline void fund(World& w, const std::vector<std::pair<AccountIndex, Usdc>>& deposits) {
  std::vector<Row> rows;
  for (auto [a, usdc] : deposits)
    rows.push_back({"deposit to " + std::to_string(a),
                    [&w, a, usdc] { return w.b.deposit(a, usdc * kUsdc); }, Reject::kOk});
  w.table(rows);
}

}  // namespace tachyon::testing::risk
