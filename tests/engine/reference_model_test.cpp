// The fast engine against the naive reference (tests/support/reference_engine.*), driven by the
// same seeded random streams. After every tx: same verdict, same order index, same fills, same
// canonical state digest, and every engine invariant (validate()). A failure prints its seed;
// rerun one seed with TACHYON_SEED=<seed> (an advanced_orders seed with TACHYON_ADV_SEED=<seed>,
// TACHYON_ADV_VOLATILE=1 for the volatile ones: every third from 5002). TACHYON_REF_TXS sets the
// total tx count (default 1M; four fifths plain streams, one fifth advanced_orders streams).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "support/random_stream.hpp"
#include "support/reference_engine.hpp"

namespace tachyon::testing {
namespace {

class TradeSink final : public UpdateSink {
 public:
  void on_update(const StateUpdate& u) override {
    if (u.type == UpdateType::kTrade) {
      const TradeUpdate& t = u.trade;
      fills.push_back(RefFill{t.maker_order, t.taker_order, t.maker, t.taker, t.price, t.size,
                              t.maker_fee, t.taker_fee});
    }
    if (u.type == UpdateType::kPosition) isolated_updates += u.position.margin_mode;
    if (u.type == UpdateType::kOrderRemoved) {
      triggers_fired += u.order.reason == RemoveReason::kTriggered;
      twap_slices += u.order.type == OrderType::kTwapSub;
      children_armed += u.order.reason == RemoveReason::kArmed;
    }
    if (u.type == UpdateType::kFunding && u.funding.settled) {
      ++funding_settlements;
      funding_paid += u.funding.paid > 0;
    }
    if (u.type == UpdateType::kRisk)  // a liquidation of one isolated position names its market
      isolated_liquidations +=
          u.risk.market != kAllMarkets && (u.risk.event == RiskEvent::kPartialLiquidation ||
                                           u.risk.event == RiskEvent::kFullLiquidation);
  }
  std::vector<RefFill> fills;
  uint64_t isolated_updates = 0, isolated_liquidations = 0;
  uint64_t triggers_fired = 0, twap_slices = 0, children_armed = 0;
  uint64_t funding_settlements = 0, funding_paid = 0;  // payments, those that moved money
};

int64_t env_or(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoll(v) : fallback;
}

struct RunStats {
  uint64_t txs = 0, accepted = 0, fills = 0;
  uint64_t partial = 0, full = 0, takeovers = 0, deleverages = 0;
  uint64_t margin_moves = 0;  // accepted UpdateMargin txs
  uint64_t isolated_updates = 0, isolated_liquidations = 0;
  // advanced_orders streams: accepted txs of each new type, and what they set off
  uint64_t trigger_orders = 0, grouped = 0, twaps = 0, trigger_modifies = 0;
  uint64_t funding_ticks = 0, status_changes = 0, halts = 0;
  uint64_t triggers_fired = 0, twap_slices = 0, children_armed = 0;
  uint64_t funding_settlements = 0, funding_paid = 0;
};

bool is_trigger_order(const Tx& tx) {
  return tx.h.type == TxType::kCreateOrder &&
         (tx.order.type == OrderType::kStopLoss || tx.order.type == OrderType::kStopLossLimit ||
          tx.order.type == OrderType::kTakeProfit || tx.order.type == OrderType::kTakeProfitLimit);
}

// Runs one seeded stream through both implementations; false (with a message) on divergence.
::testing::AssertionResult run_seed(uint64_t seed, int64_t txs, RunStats& stats,
                                    bool volatile_prices = false, bool advanced = false) {
  EngineConfig cfg;
  if (advanced) cfg.funding_interval_ms = 60'000;  // payments within a seed's stream time
  cfg.max_orders = 600;                            // small enough that a full pool happens
  cfg.expected_accounts = 64;
  cfg.levels_per_side = 64;
  Engine fast(cfg);
  ReferenceEngine ref(cfg);
  StreamConfig sc;
  sc.accounts = 6 + static_cast<int>(seed % 10);
  sc.markets = 1 + static_cast<int>(seed % 3);
  if (volatile_prices) {  // the liquidation waterfall, often: jumps, a funded insurance fund
    sc.index_move_bps = 150;
    sc.jump_percent = 10;
    sc.jump_bps = 1500;
    sc.insurance_deposit_usdc = seed % 2 == 0 ? 0 : 20'000;
  }
  sc.advanced_orders = advanced;
  RandomStream stream(seed, sc);
  stream.set_oracle(&fast);
  TradeSink sink;
  std::vector<RefFill> ref_fills;
  auto step = [&](const Tx& tx, int64_t i) -> ::testing::AssertionResult {
    sink.fills.clear();
    ref_fills.clear();
    const TxResult a = fast.execute(tx, sink);
    const TxResult b = ref.execute(tx, ref_fills);
    stream.on_result(tx, a);
    ++stats.txs;
    stats.accepted += a.ok();
    stats.fills += sink.fills.size();
    stats.margin_moves += a.ok() && tx.h.type == TxType::kUpdateMargin;
    if (a.ok()) {
      stats.trigger_orders += is_trigger_order(tx);
      stats.grouped += tx.h.type == TxType::kCreateGroupedOrders;
      stats.twaps += tx.h.type == TxType::kCreateOrder && tx.order.type == OrderType::kTwap;
      stats.trigger_modifies += tx.h.type == TxType::kModifyOrder && tx.modify.trigger_price != 0;
      stats.funding_ticks += tx.h.type == TxType::kFundingTick;
      stats.status_changes += tx.h.type == TxType::kSetMarketStatus;
      stats.halts +=
          tx.h.type == TxType::kSetMarketStatus && tx.market_status.status == MarketStatus::kHalted;
    }
    auto where = [&] {
      return "seed " + std::to_string(seed) + " step " + std::to_string(i) + " tx type " +
             std::to_string(int(tx.h.type)) +
             (tx.h.type == TxType::kCreateOrder
                  ? " order type " + std::to_string(int(tx.order.type)) + " tif " +
                        std::to_string(int(tx.order.tif)) + " ro " +
                        std::to_string(int(tx.order.reduce_only)) + " account " +
                        std::to_string(tx.h.account)
                  : std::string()) +
             ": ";
    };
    if (a.reject != b.reject)
      return ::testing::AssertionFailure() << where() << "engine says " << reject_code(a.reject)
                                           << ", reference says " << reject_code(b.reject);
    if (a.order_index != b.order_index)
      return ::testing::AssertionFailure() << where() << "order index differs";
    if (sink.fills != ref_fills)
      return ::testing::AssertionFailure()
             << where() << "fills differ: engine " << sink.fills.size() << ", reference "
             << ref_fills.size();
    if (std::string bad = fast.validate(); !bad.empty())
      return ::testing::AssertionFailure() << where() << "invariant broken: " << bad;
    if (canonical_digest(fast) != ref.digest())
      return ::testing::AssertionFailure() << where() << "state differs from the reference";
    return ::testing::AssertionSuccess();
  };
  struct Count {  // the liquidations this seed saw, added to the stats however it ends
    RunStats& s;
    const Engine& e;
    const TradeSink& sink;
    ~Count() {
      s.isolated_updates += sink.isolated_updates;
      s.isolated_liquidations += sink.isolated_liquidations;
      s.triggers_fired += sink.triggers_fired;
      s.twap_slices += sink.twap_slices;
      s.children_armed += sink.children_armed;
      s.funding_settlements += sink.funding_settlements;
      s.funding_paid += sink.funding_paid;
      s.partial += e.risk_stats().partial_liquidations;
      s.full += e.risk_stats().full_liquidations;
      s.takeovers += e.risk_stats().takeovers;
      s.deleverages += e.risk_stats().deleverages;
    }
  } count{stats, fast, sink};
  int64_t i = 0;
  for (const Tx& tx : stream.genesis()) {
    if (auto r = step(tx, i++); !r) return r;
  }
  for (; i < txs; ++i) {
    if (auto r = step(stream.next(), i); !r) return r;
  }
  if (fast.risk_stats().funding_payments != ref.funding_payments())
    return ::testing::AssertionFailure()
           << "seed " << seed << ": engine made " << fast.risk_stats().funding_payments
           << " funding payments, the reference " << ref.funding_payments();
  return ::testing::AssertionSuccess();
}

TEST(ReferenceModel, engine_matches_the_naive_reference_on_seeded_random_streams) {
  // A fifth of the budget goes to the advanced_orders streams (the test below).
  const int64_t total = env_or("TACHYON_REF_TXS", 1'000'000) * 4 / 5;
  const int64_t per_seed = 10'000;
  const int64_t only = env_or("TACHYON_SEED", -1);
  RunStats stats;
  if (only >= 0) {
    ASSERT_TRUE(run_seed(static_cast<uint64_t>(only), per_seed, stats));
  } else {
    for (int64_t s = 0; s * per_seed < total; ++s) {
      ASSERT_TRUE(run_seed(static_cast<uint64_t>(s), per_seed, stats));
    }
  }
  std::printf(
      "reference model: %llu txs, %llu accepted, %llu fills; liquidations: %llu partial, %llu "
      "full, %llu takeovers, %llu ADL fills\n",
      static_cast<unsigned long long>(stats.txs), static_cast<unsigned long long>(stats.accepted),
      static_cast<unsigned long long>(stats.fills), static_cast<unsigned long long>(stats.partial),
      static_cast<unsigned long long>(stats.full), static_cast<unsigned long long>(stats.takeovers),
      static_cast<unsigned long long>(stats.deleverages));
  // The stream must exercise the book, not just bounce off rejects.
  EXPECT_GT(stats.accepted * 2, stats.txs);
  EXPECT_GT(stats.fills * 20, stats.txs);
}

// Orders in waiting and the operator's market txs (StreamConfig::advanced_orders): stop-loss /
// take-profit orders (fired by the mark), grouped orders (OTO, OCO, OTOCO), TWAPs (slices every
// 30 s of tx time), funding ticks (payments every minute here) and market halts / resumes, each
// against the reference's own model of them. A fifth of TACHYON_REF_TXS.
TEST(ReferenceModel, advanced_orders_match_the_naive_reference) {
  const int64_t total = env_or("TACHYON_REF_TXS", 1'000'000) / 5;
  const int64_t per_seed = 10'000;
  const int64_t only = env_or("TACHYON_ADV_SEED", -1);
  RunStats stats;
  if (only >= 0) {
    ASSERT_TRUE(run_seed(static_cast<uint64_t>(only), per_seed, stats,
                         env_or("TACHYON_ADV_VOLATILE", 0) != 0, true));
  } else {
    // every third seed with volatile prices: stops and liquidations in the same risk pass
    for (int64_t s = 0; s * per_seed < std::max<int64_t>(total, per_seed); ++s) {
      ASSERT_TRUE(run_seed(static_cast<uint64_t>(5000 + s), per_seed, stats, s % 3 == 2, true));
    }
  }
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf(
      "advanced: %llu txs, %llu accepted, %llu fills; accepted: %llu trigger orders, %llu trigger "
      "modifies, %llu grouped, %llu TWAPs, %llu funding ticks, %llu status changes (%llu halts); "
      "%llu triggers fired, %llu children armed, %llu TWAP slices, %llu funding payments (%llu "
      "moving money); liquidations: %llu partial, %llu full\n",
      u(stats.txs), u(stats.accepted), u(stats.fills), u(stats.trigger_orders),
      u(stats.trigger_modifies), u(stats.grouped), u(stats.twaps), u(stats.funding_ticks),
      u(stats.status_changes), u(stats.halts), u(stats.triggers_fired), u(stats.children_armed),
      u(stats.twap_slices), u(stats.funding_settlements), u(stats.funding_paid), u(stats.partial),
      u(stats.full));
  EXPECT_GT(stats.trigger_orders, 0u);
  EXPECT_GT(stats.trigger_modifies, 0u);
  EXPECT_GT(stats.grouped, 0u);
  EXPECT_GT(stats.twaps, 0u);
  EXPECT_GT(stats.funding_ticks, 0u);
  EXPECT_GT(stats.halts, 0u);
  EXPECT_GT(stats.triggers_fired, 0u);
  EXPECT_GT(stats.children_armed, 0u);
  EXPECT_GT(stats.twap_slices, 0u);
  EXPECT_GT(stats.funding_paid, 0u);
  EXPECT_GT(stats.fills * 20, stats.txs);
}

// Small cases with volatile prices: every liquidation, takeover and deleverage the engine does
// (found through its index) must be the one the naive reference does (scanning every account).
TEST(ReferenceModel, liquidations_match_the_naive_reference_under_volatile_prices) {
  const int64_t total = env_or("TACHYON_REF_RISK_TXS", 300'000);
  const int64_t per_seed = 5'000;
  RunStats stats;
  for (int64_t s = 0; s * per_seed < total; ++s) {
    ASSERT_TRUE(run_seed(static_cast<uint64_t>(1000 + s), per_seed, stats, true));
  }
  std::printf(
      "volatile: %llu txs, %llu fills; %llu partial, %llu full, %llu takeovers, %llu ADL; "
      "isolated: %llu margin moves, %llu position updates, %llu liquidations\n",
      static_cast<unsigned long long>(stats.txs), static_cast<unsigned long long>(stats.fills),
      static_cast<unsigned long long>(stats.partial), static_cast<unsigned long long>(stats.full),
      static_cast<unsigned long long>(stats.takeovers),
      static_cast<unsigned long long>(stats.deleverages),
      static_cast<unsigned long long>(stats.margin_moves),
      static_cast<unsigned long long>(stats.isolated_updates),
      static_cast<unsigned long long>(stats.isolated_liquidations));
  EXPECT_GT(stats.partial, 10u);
  EXPECT_GT(stats.full, 10u);
  EXPECT_GT(stats.takeovers, 0u);
  EXPECT_GT(stats.deleverages, 0u);
  EXPECT_GT(stats.margin_moves, 0u);
  EXPECT_GT(stats.isolated_liquidations, 0u);
}

}  // namespace
}  // namespace tachyon::testing
