// A randomized market simulation: thousands of accounts trading two markets at up to the
// maximum leverage against volatile oracle prices (random walk plus jumps), with funding ticks,
// leverage and margin mode changes, isolated margin moved in and out, withdrawals, transfers and
// dead man's switches. After every tx:
//   - money is conserved to the micro-USDC: Σ collateral + Σ isolated margin − Σ cost basis over
//     every account (fee account and insurance fund included), kept from the engine's own update
//     stream, equals deposits − withdrawals;
//   - open interest is balanced: Σ longs = Σ shorts = the market's open interest;
//   - every account the tx touched is at or above maintenance margin once the risk pass is done,
//     its cross margin and each isolated position's own (so none is left below close-out), and
//     the insurance fund's account value is not negative;
//   - no book is crossed.
// Every 50k txs and at the end the engine's full validate() runs, a snapshot round trip
// reproduces the state hash, and two runs of the same seed end with the same state hash.
// TACHYON_SIM_TXS sets the length (default 2M; 200k under sanitizers); TACHYON_SIM_SEED the seed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "support/rng.hpp"
#include "support/tx_builder.hpp"
#include "tachyon/core/bytes.hpp"
#include "tachyon/engine/engine.hpp"

namespace tachyon::testing {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int64_t kDefaultTxs = 200'000;
#else
constexpr int64_t kDefaultTxs = 2'000'000;
#endif

// Maintenance margin from the documented rule (docs/ARCHITECTURE.md "Margin"), independently of
// the engine's margin code: with notional = |size| * mark * quote multiplier, a bucket is below
// maintenance when it holds a position and its value (collateral, or an isolated position's
// allocated margin, plus size * mark * multiplier - entry notional) is under
// Σ ceil(notional * MMF / 10^4). Cross positions share the account's collateral; each isolated
// one stands alone.
struct CrossMargin {
  __int128 value = 0, mmr = 0;
  bool isolated_below = false;
};

CrossMargin cross_margin(const Engine& e, const Account& a) {
  auto ceil_frac = [](__int128 v, int64_t f) { return (v * f + 9'999) / 10'000; };
  CrossMargin out;
  out.value = a.collateral;
  for (const Position& p : a.positions) {
    const Market& m = *e.market(p.market);
    const __int128 unit = static_cast<__int128>(m.mark_price) * m.quote_multiplier;
    const __int128 value = static_cast<__int128>(p.size) * unit - p.entry_notional;
    const __int128 mmr = ceil_frac((p.size < 0 ? -p.size : p.size) * unit, m.params.mmf);
    if (p.isolated) {
      out.isolated_below |= p.size != 0 && mmr > 0 && p.allocated + value < mmr;
      continue;
    }
    out.value += value;
    out.mmr += mmr;
  }
  return out;
}

bool below_maintenance(const Engine& e, const Account& a) {
  const CrossMargin c = cross_margin(e, a);
  return c.isolated_below || (c.mmr > 0 && c.value < c.mmr);
}

int64_t env_or(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoll(v) : fallback;
}

// Mirrors money and positions from the update stream, and records what each tx touched.
class MirrorSink final : public UpdateSink {
 public:
  void on_update(const StateUpdate& u) override {
    switch (u.type) {
      case UpdateType::kBalance: {
        Usdc& c = collateral[u.balance.account];
        money += u.balance.collateral - c;
        c = u.balance.collateral;
        touched.push_back(u.balance.account);
        break;
      }
      case UpdateType::kPosition: {
        const auto key = std::make_pair(u.position.account, u.position.market);
        auto& [size, entry] = positions[key];
        money -= u.position.entry_notional - entry;
        Usdc& alloc = allocated[key];
        money += u.position.allocated - alloc;
        alloc = u.position.allocated;
        isolated_updates += u.position.margin_mode;
        Lots& longs = long_sum[u.position.market];
        Lots& shorts = short_sum[u.position.market];
        (size > 0 ? longs : shorts) -= size > 0 ? size : -size;
        size = u.position.size;
        entry = u.position.entry_notional;
        (size > 0 ? longs : shorts) += size > 0 ? size : -size;
        touched.push_back(u.position.account);
        break;
      }
      case UpdateType::kTrade: ++trades[static_cast<int>(u.trade.kind)]; break;
      case UpdateType::kRisk:  // a liquidation of one isolated position names its market
        isolated_liquidations +=
            u.risk.market != kAllMarkets && (u.risk.event == RiskEvent::kPartialLiquidation ||
                                             u.risk.event == RiskEvent::kFullLiquidation);
        break;
      case UpdateType::kOrderAdded:
      case UpdateType::kOrderReduced:
      case UpdateType::kOrderRemoved:
        books.push_back(u.order.market);
        if (u.type == UpdateType::kOrderRemoved && u.order.reason == RemoveReason::kTriggered)
          ++triggered;
        if (u.type == UpdateType::kOrderRemoved && u.order.type == OrderType::kTwapSub)
          ++twap_slices;
        break;
      default: break;
    }
  }
  __int128 money = 0;  // Σ collateral − Σ entry notional
  std::map<AccountIndex, Usdc> collateral;
  std::map<std::pair<AccountIndex, MarketId>, std::pair<Lots, Usdc>> positions;
  std::map<std::pair<AccountIndex, MarketId>, Usdc> allocated;
  uint64_t isolated_updates = 0;  // position updates of isolated positions
  uint64_t isolated_liquidations = 0;
  std::map<MarketId, Lots> long_sum, short_sum;
  std::vector<AccountIndex> touched;
  std::vector<MarketId> books;
  uint64_t trades[4] = {0, 0, 0, 0};
  uint64_t triggered = 0;
  uint64_t twap_slices = 0;
};

struct SimResult {
  uint64_t hash = 0;
  uint64_t txs = 0, accepted = 0;
  RiskStats risk;
  uint64_t trades[4] = {0, 0, 0, 0};
  int64_t funding_payments = 0;
  uint64_t triggered = 0;
  uint64_t twap_slices = 0;
  uint64_t isolated_updates = 0, isolated_liquidations = 0;
  std::string failure;
};

constexpr int kAccounts = 3000;
constexpr int kMakers = 300;  // the first accounts quote both sides
constexpr AccountIndex kFirst = 1000;

SimResult run_sim(uint64_t seed, int64_t txs) {
  SimResult res;
  EngineConfig cfg;
  cfg.max_orders = 1 << 18;
  cfg.expected_accounts = 4096;
  cfg.levels_per_side = 1024;
  cfg.funding_interval_ms = 60'000;
  cfg.impact_notional = 20'000'000'000;  // 20k USDC
  Engine e(cfg);
  MirrorSink sink;
  TxBuilder b;
  Rng rng(seed);
  std::vector<Ticks> index;
  auto fail = [&](const std::string& what, int64_t i) {
    res.failure = "seed " + std::to_string(seed) + " tx " + std::to_string(i) + ": " + what;
    return res;
  };
  auto run = [&](const Tx& tx) {
    sink.touched.clear();
    sink.books.clear();
    const TxResult r = e.execute(tx, sink);
    ++res.txs;
    res.accepted += r.ok();
    return r;
  };
  auto nonce = [&](AccountIndex a) { return e.account(a)->key(0)->next_nonce; };
  // genesis: two markets with a circuit breaker, a funded insurance fund, funded traders
  for (int m = 0; m < 2; ++m) {
    MarketParams p = m == 0 ? demo_market_params("ETH", 4, 2) : demo_market_params("BTC", 5, 1);
    p.funding_clamp_small = 500;
    p.funding_clamp_big = 40'000;
    p.interest_rate = 100;
    p.breaker_band = 3000;  // 30% within 30 s: post-only, then halted, 60 s cool-down
    p.breaker_window_s = 30;
    p.breaker_cooldown_s = 60;
    index.push_back(m == 0 ? 300'000 : 600'000);
    b.sync_op_nonce(e.operator_next_nonce());
    run(b.create_market(static_cast<MarketId>(m), p, index.back()));
  }
  b.sync_op_nonce(e.operator_next_nonce());
  run(b.deposit(1, 2'000'000'000'000, false));  // insurance fund: 2M USDC
  for (int i = 0; i < kAccounts; ++i) {
    b.sync_op_nonce(e.operator_next_nonce());
    const Usdc amount =
        (i < kMakers ? rng.range(200'000, 2'000'000) : rng.range(100, 20'000)) * int64_t{1'000'000};
    run(b.deposit(kFirst + static_cast<AccountIndex>(i), amount));
  }
  auto pick_market = [&] { return static_cast<MarketId>(rng.below(2)); };
  auto tick = [&](MarketId m) { return m == 0 ? Ticks{50} : Ticks{10}; };
  for (int64_t i = 0; i < txs; ++i) {
    b.advance_ms(rng.range(1, 60));
    b.sync_op_nonce(e.operator_next_nonce());
    const uint64_t roll = rng.below(1000);
    const MarketId m = pick_market();
    const Market& mk = *e.market(m);
    const Ticks mark = mk.mark_price;
    Tx tx;
    if (roll < 300) {  // a maker quotes around the index
      const AccountIndex a = kFirst + static_cast<AccountIndex>(rng.below(kMakers));
      const bool ask = rng.chance(50);
      const Ticks off = tick(m) * rng.range(1, 40);
      const Ticks px = ask ? index[m] + off : std::max<Ticks>(tick(m), index[m] - off);
      tx = b.limit(a, nonce(a), m, ask, px, m == 0 ? rng.range(10, 20'000) : rng.range(10, 5'000),
                   rng.chance(30) ? TimeInForce::kPostOnly : TimeInForce::kGoodTillTime);
    } else if (roll < 520) {  // a taker trades at up to the maximum leverage
      const AccountIndex a =
          kFirst + kMakers + static_cast<AccountIndex>(rng.below(kAccounts - kMakers));
      const Account* acc = e.account(a);
      const __int128 tav = e.margin(*acc).tav;
      const int64_t lev = rng.range(1, 50);
      const __int128 unit = mk.notional(1, std::max<Ticks>(mark, 1));
      const Lots size = static_cast<Lots>(std::clamp<__int128>(
          tav > 0 ? tav * lev * rng.range(50, 100) / 100 / unit : 1, 1, 1'000'000));
      const bool ask = rng.chance(50);
      tx = b.market(a, nonce(a), m, ask, ask ? mark * 95 / 100 : mark * 105 / 100, size);
    } else if (roll < 560 && rng.chance(25)) {  // a TWAP: slices every 30 s for 1 to 10 minutes
      const AccountIndex a = kFirst + static_cast<AccountIndex>(rng.below(kAccounts));
      const Position* p = e.account(a)->position(m);
      const bool reduce = p != nullptr && p->size != 0 && rng.chance(40);
      const bool ask = reduce ? p->size > 0 : rng.chance(50);
      tx = b.limit(a, nonce(a), m, ask, ask ? mark * 96 / 100 : mark * 104 / 100,
                   m == 0 ? rng.range(10, 20'000) : rng.range(10, 5'000));
      tx.order.type = OrderType::kTwap;
      tx.order.reduce_only = reduce;
      tx.order.order_expiry_ms = b.now_ms() + rng.range(60'000, 600'000);
    } else if (roll < 560) {  // a stop-loss or take-profit (market or limit) on a position
      const AccountIndex a = kFirst + static_cast<AccountIndex>(rng.below(kAccounts));
      const Position* p = e.account(a)->position(m);
      const bool ask = p != nullptr ? p->size > 0 : rng.chance(50);
      const bool stop = rng.chance(50), limit = rng.chance(40);
      const Ticks trig =
          std::max<Ticks>(1, mark + (stop == ask ? -1 : 1) * mark * rng.range(1, 300) / 10'000);
      tx = b.limit(a, nonce(a), m, ask, ask ? trig * 97 / 100 : trig * 103 / 100, 0,
                   limit ? TimeInForce::kGoodTillTime : TimeInForce::kIoc);
      tx.order.type = stop ? (limit ? OrderType::kStopLossLimit : OrderType::kStopLoss)
                           : (limit ? OrderType::kTakeProfitLimit : OrderType::kTakeProfit);
      tx.order.trigger_price = trig;
      tx.order.reduce_only = 1;
      tx.order.order_expiry_ms = b.now_ms() + rng.range(10'000, 600'000);
      if (rng.chance(30)) {  // or an OTOCO: a limit order with a stop-loss and a take-profit
        const bool buy = rng.chance(50);
        const CreateOrderTx protect = tx.order;
        Tx g = b.user(TxType::kCreateGroupedOrders, a, nonce(a));
        g.grouped.grouping = Grouping::kOtoco;
        g.grouped.count = 3;
        CreateOrderTx& p0 = g.grouped.orders[0];
        p0 = protect;
        p0.type = OrderType::kLimit;
        p0.trigger_price = 0;
        p0.reduce_only = 0;
        p0.is_ask = !buy;
        p0.tif = TimeInForce::kGoodTillTime;
        p0.price = buy ? mark + tick(m) * rng.range(-5, 5) : mark - tick(m) * rng.range(-5, 5);
        p0.base_amount = rng.range(10, 2'000);
        for (int k = 1; k <= 2; ++k) {
          CreateOrderTx& ch = g.grouped.orders[k];
          ch = protect;
          ch.is_ask = buy;
          const bool sl = k == 1;
          ch.type = sl ? OrderType::kStopLoss : OrderType::kTakeProfit;
          ch.tif = TimeInForce::kIoc;
          ch.base_amount = 0;
          ch.trigger_price = std::max<Ticks>(
              1, mark + ((sl == buy) ? -1 : 1) * mark * rng.range(50, 400) / 10'000);
          ch.price = buy ? ch.trigger_price * 97 / 100 : ch.trigger_price * 103 / 100;
        }
        tx = g;
      }
    } else if (roll < 600) {  // somebody closes (reduce-only market order)
      const AccountIndex a = kFirst + static_cast<AccountIndex>(rng.below(kAccounts));
      const Position* p = e.account(a)->position(m);
      const bool ask = p != nullptr && p->size > 0;
      tx = b.market(a, nonce(a), m, ask, ask ? mark * 95 / 100 : mark * 105 / 100, 0);
      tx.order.reduce_only = 1;
    } else if (roll < 720) {  // a maker cancels everything in one market
      const AccountIndex a = kFirst + static_cast<AccountIndex>(rng.below(kMakers));
      tx = b.cancel_all(a, nonce(a), m);
    } else if (roll < 830) {  // the oracle: a random walk with jumps
      const int64_t bps = rng.chance(1) ? 1200 : 40;
      index[m] = std::max<Ticks>(1000, index[m] + index[m] * rng.range(-bps, bps) / 10'000);
      tx = b.set_index(m, index[m]);
    } else if (roll < 870) {  // the server's funding clock
      tx = b.op(TxType::kFundingTick);
      tx.h.nonce = 0;
      tx.h.flags = kTxFlagInternal;
      tx.funding.market = kAllMarkets;
    } else if (roll < 910) {
      const AccountIndex a = kFirst + static_cast<AccountIndex>(rng.below(kAccounts));
      // the margin mode flips now and then (refused while a position or order is open there)
      const Position* p = e.account(a)->position(m);
      const uint8_t mode = (p != nullptr && p->isolated) != rng.chance(40);
      tx = b.leverage(a, nonce(a), m, static_cast<Bps4>(rng.range(200, 2000)), mode);
    } else if (roll < 940) {
      const AccountIndex a = kFirst + static_cast<AccountIndex>(rng.below(kAccounts));
      const Position* p = e.account(a)->position(m);
      if (p != nullptr && p->isolated && rng.chance(70)) {  // isolated margin in or out
        tx = b.update_margin(a, nonce(a), m, rng.chance(50) ? kMarginAdd : kMarginRemove,
                             rng.range(1, 2'000) * 1'000'000);
      } else {
        tx = b.withdraw(a, nonce(a), rng.range(1, 2'000) * 1'000'000);
      }
    } else if (roll < 970) {
      const AccountIndex a = kFirst + static_cast<AccountIndex>(rng.below(kAccounts));
      const AccountIndex to = kFirst + static_cast<AccountIndex>(rng.below(kAccounts));
      tx = b.transfer(a, nonce(a), to, rng.range(1, 2'000) * 1'000'000, rng.range(0, 3));
    } else if (roll < 985) {  // a maker's dead man's switch: set, renew or abort
      const AccountIndex a = kFirst + static_cast<AccountIndex>(rng.below(kMakers));
      tx = b.cancel_all(a, nonce(a));
      tx.cancel_all.tif = rng.chance(70) ? kCancelAllScheduled : kCancelAllAbort;
      tx.cancel_all.time_ms =
          tx.cancel_all.tif == kCancelAllScheduled ? b.now_ms() + rng.range(300'000, 900'000) : 0;
    } else {
      const AccountIndex a = kFirst + static_cast<AccountIndex>(rng.below(kAccounts));
      tx = b.deposit(a, rng.range(100, 5'000) * 1'000'000);
    }
    run(tx);
    // money, to the micro-USDC
    if (sink.money != static_cast<__int128>(e.total_deposits()) - e.total_withdrawals())
      return fail("money not conserved", i);
    // open interest
    for (MarketId q = 0; q < 2; ++q) {
      if (sink.long_sum[q] != sink.short_sum[q] || sink.long_sum[q] != e.market(q)->open_interest)
        return fail("open interest unbalanced in market " + std::to_string(q), i);
    }
    // every touched account is above maintenance margin (computed here, not by the engine's
    // margin code), the fund's value is not negative
    for (AccountIndex a : sink.touched) {
      if (below_maintenance(e, *e.account(a)))
        return fail("account " + std::to_string(a) + " left under maintenance margin", i);
    }
    if (const CrossMargin ins = cross_margin(e, *e.account(1)); ins.value < 0) {
      std::string pos;
      for (const Position& p : e.account(1)->positions)
        pos += " m" + std::to_string(p.market) + " size " + std::to_string(p.size);
      return fail("insurance fund value negative: " + std::to_string(int64_t(ins.value)) + " mmr " +
                      std::to_string(int64_t(ins.mmr)) + " collateral " +
                      std::to_string(e.account(1)->collateral) + pos + " (tx type " +
                      std::to_string(int(tx.h.type)) + ", deficits paid " +
                      std::to_string(e.risk_stats().deficit_covered) + ")",
                  i);
    }
    for (MarketId q : sink.books) {
      const Level* bid = e.market(q)->book.best(false);
      const Level* ask = e.market(q)->book.best(true);
      if (bid && ask && bid->price >= ask->price) return fail("crossed book", i);
    }
    if ((i + 1) % 50'000 == 0 || i + 1 == txs) {
      if (std::string bad = e.validate(); !bad.empty()) return fail(bad, i);
      VectorSink out;
      e.save(out);
      Engine copy(cfg);
      ByteSource in(out.bytes.data(), out.bytes.size());
      if (Status s = copy.load(in); !s.ok()) return fail("snapshot: " + s.message(), i);
      if (copy.state_hash() != e.state_hash()) return fail("snapshot round trip hash", i);
    }
  }
  res.hash = e.state_hash();
  res.risk = e.risk_stats();
  for (int k = 0; k < 4; ++k) res.trades[k] = sink.trades[k];
  res.triggered = sink.triggered;
  res.twap_slices = sink.twap_slices;
  res.isolated_updates = sink.isolated_updates;
  res.isolated_liquidations = sink.isolated_liquidations;
  return res;
}

TEST(RiskSimulation, volatile_markets_keep_money_open_interest_and_margin_invariants) {
  const int64_t txs = env_or("TACHYON_SIM_TXS", kDefaultTxs);
  const uint64_t seed = static_cast<uint64_t>(env_or("TACHYON_SIM_SEED", 7));
  const SimResult a = run_sim(seed, txs);
  ASSERT_TRUE(a.failure.empty()) << a.failure;
  std::printf(
      "simulation: %llu txs (%llu accepted); trades %llu, liquidation fills %llu, takeovers %llu, "
      "ADL %llu; %llu partial / %llu full liquidations, %llu funding payments, deficit covered "
      "%lld micro-USDC, %llu margin checks, %llu stop/take-profit orders fired, %llu TWAP slices\n",
      (unsigned long long)a.txs, (unsigned long long)a.accepted, (unsigned long long)a.trades[0],
      (unsigned long long)a.trades[1], (unsigned long long)a.trades[2],
      (unsigned long long)a.trades[3], (unsigned long long)a.risk.partial_liquidations,
      (unsigned long long)a.risk.full_liquidations, (unsigned long long)a.risk.funding_payments,
      (long long)a.risk.deficit_covered, (unsigned long long)a.risk.margin_checks,
      (unsigned long long)a.triggered, (unsigned long long)a.twap_slices);
  std::printf("simulation: %llu isolated position updates, %llu isolated liquidations\n",
              (unsigned long long)a.isolated_updates, (unsigned long long)a.isolated_liquidations);
  // The simulation must reach every part of the waterfall, or it proves nothing.
  EXPECT_GT(a.trades[1], 0u) << "no liquidation fill";
  EXPECT_GT(a.risk.full_liquidations, 0u);
  EXPECT_GT(a.trades[2] + a.trades[3], 0u) << "no takeover or deleverage";
  EXPECT_GT(a.risk.funding_payments, 0u);
  EXPECT_GT(a.triggered, 0u);
  EXPECT_GT(a.twap_slices, 0u);
  EXPECT_GT(a.isolated_updates, 0u);
  EXPECT_GT(a.isolated_liquidations, 0u);
  // deterministic: the same seed gives the same state
  const SimResult b = run_sim(seed, txs);
  ASSERT_TRUE(b.failure.empty()) << b.failure;
  EXPECT_EQ(a.hash, b.hash);
}

}  // namespace
}  // namespace tachyon::testing
