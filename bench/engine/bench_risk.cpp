// The liquidation index (src/engine/risk.cpp) and the liquidation waterfall at scale: the execute
// cost of a mark-price update with 10k / 100k open positions, against a naive risk pass that
// looks at every account after each update (the cost the index avoids), and of liquidation
// cascades: one large index drop, then the same drop in steps. Per-tx latency percentiles and
// risk_stats() deltas (margin checks, liquidations, takeovers, ADL fills) are reported as
// counters; a summary with the index / naive ratios follows the Google Benchmark table.
//
// The worlds: one ETH-like market (4 size, 2 price decimals, index 3000.00, MMF 1.2%, IMF 2%),
// traders opened in pairs at the index (one rests, the other takes it: half long, half short),
// 0.2 to 2 ETH each, leverage uniform in 2x..40x (collateral = notional / leverage + the taker
// fee), so distances to liquidation range from ~1.3% to ~48%. The mark worlds have an empty book
// after setup (mark = index); the cascade worlds also hold a ladder of maker bids from 5% to 15%
// under the index. The rows marked isolated hold every trader's position in isolated margin (its
// own bucket, keyed in the index on its own distance). Setup and warm-up are never timed (manual
// time: only execute(), plus the scan for the naive variant). Usage: bench_risk [Google Benchmark
// flags]; TACHYON_BENCH_RISK_SLOW=1 adds the ADL cascade at 100k traders (one tx of several
// minutes: ADL is O(holders) per deleveraged position).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/rng.hpp"
#include "support/tx_builder.hpp"
#include "tachyon/engine/engine.hpp"

namespace tachyon::bench {
namespace {

using testing::Rng;
using testing::TxBuilder;

constexpr MarketId kM = 0;
constexpr Ticks kP0 = 300'000;  // 3000.00; quote multiplier 1: notional = lots × ticks
constexpr AccountIndex kInsurance = 1;
constexpr AccountIndex kFirstMaker = 500;  // cascade worlds: the deep bids
constexpr int kMakers = 16;
constexpr AccountIndex kFirstTrader = 1000;
constexpr int64_t kPpm = 1'000'000;
constexpr int64_t kWalkBandPpm = 6'000;           // the mark walks reflect at ±0.6% of kP0
constexpr int64_t kDriftOne = 1'000'000'000'000;  // Market::drift units (1e-12)
constexpr int kBidLevels = 1'500;                 // cascade ladder: 5% .. 15% under kP0
constexpr Ticks kTopBid = kP0 * 95 / 100;
constexpr Ticks kBidStep = 20;                        // ticks between levels
constexpr Usdc kDeepFund = 100'000'000 * kUsdcScale;  // takes over all the book cannot
constexpr Usdc kEmptyFund = 1 * kUsdcScale;           // takes over nothing: ADL

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Counts what the engine emits: updates, trades by kind, and the accounts that entered
// liquidation (while `record` is on).
class CountingSink final : public UpdateSink {
 public:
  void on_update(const StateUpdate& u) override {
    ++updates;
    if (u.type == UpdateType::kTrade) {
      ++trades[static_cast<int>(u.trade.kind) & 3];
    } else if (record && u.type == UpdateType::kRisk &&
               (u.risk.event == RiskEvent::kPartialLiquidation ||
                u.risk.event == RiskEvent::kFullLiquidation)) {
      liquidated.push_back(u.risk.account);
    }
  }
  uint64_t updates = 0;
  uint64_t trades[4] = {0, 0, 0, 0};
  bool record = false;
  std::vector<AccountIndex> liquidated;
};

MarketParams bench_params() {
  MarketParams p = testing::demo_market_params("ETH", 4, 2);
  p.default_imf = 200;  // 50x allowed: traders open at 2x..40x without an UpdateLeverage tx
  p.min_imf = 200;
  p.price_band = 2500;  // the cascade ladder rests up to 15% under the mark
  p.max_orders = 1u << 21;
  return p;
}

struct World {
  std::unique_ptr<Engine> e;
  TxBuilder b;
  CountingSink sink;
  Rng rng{0x5eed};
  int traders = 0;
  Ticks index = kP0;
  Lots long_lots = 0;  // Σ of the traders' long sizes

  TxResult run(const Tx& tx) { return e->execute(tx, sink); }
  void must(const Tx& tx, const char* what) {
    const TxResult r = run(tx);
    if (!r.ok()) {
      std::fprintf(stderr, "bench_risk setup: %s refused (reject %d)\n", what,
                   static_cast<int>(r.reject));
      std::abort();
    }
  }
  int64_t nonce(AccountIndex a) const { return e->account(a)->key(0)->next_nonce; }
  Tx set_index(Ticks px) {
    b.sync_op_nonce(e->operator_next_nonce());
    index = px;
    return b.set_index(kM, px);
  }
  // One step of the random walk: uniform in ±step_ppm of the index, reflected at ±0.6% of kP0
  // so that (almost) nobody reaches maintenance margin however long the walk runs.
  Tx walk(int64_t step_ppm) {
    Ticks d = index * rng.range(-step_ppm, step_ppm) / kPpm;
    if (d == 0) d = 1;
    Ticks next = index + d;
    if (std::abs(next - kP0) * kPpm > kP0 * kWalkBandPpm) next = index - d;
    return set_index(next);
  }
  int64_t drift() const { return e->market(kM)->drift; }
};

// `n` traders opened in pairs at kP0; with `bids`, the makers' ladder under the index. With
// `isolated`, every trader's position is isolated at its leverage (UpdateLeverage margin mode 1):
// the fill moves the same equity into the position that a cross account would hold.
std::unique_ptr<World> build_world(int n, bool bids, Usdc insurance, bool isolated = false) {
  auto w = std::make_unique<World>();
  EngineConfig cfg;
  cfg.max_orders = 1u << 21;
  cfg.expected_accounts = static_cast<uint32_t>(n) + 1000;
  w->e = std::make_unique<Engine>(cfg);
  w->must(w->b.create_market(kM, bench_params(), kP0), "create market");
  w->must(w->b.deposit(kInsurance, insurance, false), "insurance deposit");
  for (int k = 0; k + 1 < n; k += 2) {
    const AccountIndex maker = kFirstTrader + static_cast<AccountIndex>(k);
    const AccountIndex taker = maker + 1;
    const bool maker_long = (k / 2) % 2 == 0;
    const Lots size = w->rng.range(2'000, 20'000);
    const Usdc notional = size * kP0;
    for (AccountIndex a : {maker, taker}) {
      const int64_t lev_x100 = w->rng.range(200, 4'000);
      const Usdc fee = notional * bench_params().taker_fee_ppm / kPpm + 1;
      w->must(w->b.deposit(a, notional * 100 / lev_x100 + fee), "trader deposit");
      if (isolated)
        w->must(w->b.leverage(
                    a, w->nonce(a), kM,
                    static_cast<Bps4>(std::clamp<int64_t>(1'000'000 / lev_x100, 200, 10'000)), 1),
                "isolated margin mode");
    }
    w->must(w->b.limit(maker, w->nonce(maker), kM, !maker_long, kP0, size), "maker order");
    w->must(w->b.limit(taker, w->nonce(taker), kM, maker_long, kP0, size, TimeInForce::kIoc),
            "taker order");
    w->long_lots += size;
    w->traders += 2;
  }
  const Market& m = *w->e->market(kM);
  if (m.open_interest != w->long_lots || m.holders.size() != static_cast<size_t>(w->traders) ||
      m.book.best(false) != nullptr || m.book.best(true) != nullptr) {
    std::fprintf(stderr, "bench_risk setup: positions not opened as planned\n");
    std::abort();
  }
  if (bids) {
    for (int i = 0; i < kMakers; ++i)
      w->must(w->b.deposit(kFirstMaker + i, int64_t{1} << 52), "maker deposit");
    // The whole ladder holds 1.5x the traders' long size. A liquidation IOC sells only down to
    // the account's zero price (above the mark for a bankrupt long), so after a gap only part of
    // the ladder is within reach.
    const Lots per_level = std::max<Lots>(1, w->long_lots * 3 / 2 / kBidLevels);
    for (int j = 0; j < kBidLevels; ++j) {
      const AccountIndex mk = kFirstMaker + static_cast<AccountIndex>(j % kMakers);
      w->must(w->b.limit(mk, w->nonce(mk), kM, false, kTopBid - j * kBidStep, per_level),
              "maker bid");
    }
  }
  return w;
}

// ---- latency summaries ----

struct Pcts {
  double mean = 0, p50 = 0, p99 = 0, p999 = 0, max = 0;
  uint64_t n = 0;
};

Pcts pcts(std::vector<int64_t> v) {
  Pcts s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  long double sum = 0;
  for (int64_t x : v) sum += x;
  auto q = [&](double p) {
    return static_cast<double>(
        v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))]);
  };
  s.mean = static_cast<double>(sum / v.size());
  s.p50 = q(0.50);
  s.p99 = q(0.99);
  s.p999 = q(0.999);
  s.max = static_cast<double>(v.back());
  return s;
}

void set_latency_counters(benchmark::State& state, const Pcts& p, const char* prefix = "") {
  const std::string pre = prefix;
  state.counters[pre + "p50_ns"] = p.p50;
  state.counters[pre + "p99_ns"] = p.p99;
  state.counters[pre + "p99.9_ns"] = p.p999;
  state.counters[pre + "max_ns"] = p.max;
}

// What the summary prints after the table.
struct MarkRow {
  Pcts tx, scan;
  double checks_per_tx = 0;
};
std::map<std::string, MarkRow> g_mark;

std::string mark_key(bool naive, int n, int64_t step_ppm, bool isolated) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s/%d/%lld/%d", naive ? "naive" : "index", n,
                static_cast<long long>(step_ppm), isolated ? 1 : 0);
  return buf;
}
std::vector<std::string> g_cascade;  // preformatted summary lines

// ---- 1 and 2: mark updates, through the index and with a naive scan ----

std::map<int, std::unique_ptr<World>> g_mark_worlds;  // by accounts × 2 + isolated, shared

World& mark_world(int n, bool isolated) {
  auto& w = g_mark_worlds[n * 2 + (isolated ? 1 : 0)];
  if (!w) w = build_world(n, false, 1'000'000 * kUsdcScale, isolated);
  return *w;
}

// Walks (untimed) until the drift grew by 50%: the index's largest distance is 25%, so every
// account has been handed back and re-keyed at least once, as in a long-running engine.
void warm_up(World& w, int64_t step_ppm) {
  const int64_t target = w.drift() + kDriftOne / 2;
  while (w.drift() < target) w.run(w.walk(step_ppm));
}

void BM_MarkUpdate(benchmark::State& state, int n, int64_t step_ppm, bool naive, bool isolated) {
  World& w = mark_world(n, isolated);
  warm_up(w, step_ppm);
  const Engine& e = *w.e;
  std::vector<int64_t> tx_ns, scan_ns;
  tx_ns.reserve(static_cast<size_t>(state.max_iterations));
  scan_ns.reserve(static_cast<size_t>(state.max_iterations));
  const RiskStats r0 = e.risk_stats();
  const uint64_t u0 = w.sink.updates;
  uint64_t under = 0;
  for (auto _ : state) {
    const Tx tx = w.walk(step_ppm);
    const int64_t t0 = now_ns();
    w.run(tx);
    const int64_t t1 = now_ns();
    if (naive) {  // what a risk pass without the index would do: every account's margin
      for (const Account& a : e.accounts()) under += e.below_maintenance(a);
      benchmark::DoNotOptimize(under);
      scan_ns.push_back(now_ns() - t1);
    }
    const int64_t t2 = now_ns();
    tx_ns.push_back(t2 - t0);
    state.SetIterationTime(static_cast<double>(t2 - t0) * 1e-9);
  }
  const RiskStats& r1 = e.risk_stats();
  const double txs = static_cast<double>(tx_ns.size());
  MarkRow row;
  row.tx = pcts(tx_ns);
  row.scan = pcts(scan_ns);
  row.checks_per_tx = static_cast<double>(r1.margin_checks - r0.margin_checks) / txs;
  set_latency_counters(state, row.tx);
  state.counters["checks/tx"] = row.checks_per_tx;
  state.counters["accounts"] = static_cast<double>(e.accounts().size());
  state.counters["liquidations"] =
      static_cast<double>(r1.partial_liquidations + r1.full_liquidations - r0.partial_liquidations -
                          r0.full_liquidations);
  state.counters["updates/tx"] = static_cast<double>(w.sink.updates - u0) / txs;
  if (naive) {
    state.counters["scan_p50_ns"] = row.scan.p50;
    state.counters["under_mm/scan"] = static_cast<double>(under) / txs;
  }
  g_mark[mark_key(naive, n, step_ppm, isolated)] = row;
}

// ---- 3: liquidation cascades ----

struct Totals {
  RiskStats r;
  uint64_t trades[4];
  Usdc insurance;
};

Totals totals(const World& w) {
  return Totals{w.e->risk_stats(),
                {w.sink.trades[0], w.sink.trades[1], w.sink.trades[2], w.sink.trades[3]},
                w.e->account(kInsurance)->collateral};
}

// Sets the cascade counters from the deltas since `t0`; returns the distinct accounts liquidated.
uint64_t cascade_counters(benchmark::State& state, World& w, const Totals& t0, int64_t total_ns) {
  const Totals t1 = totals(w);
  std::vector<AccountIndex>& liq = w.sink.liquidated;
  std::sort(liq.begin(), liq.end());
  liq.erase(std::unique(liq.begin(), liq.end()), liq.end());
  const auto d = [](uint64_t a, uint64_t b) { return static_cast<double>(a - b); };
  state.counters["liquidated"] = static_cast<double>(liq.size());
  state.counters["partial"] = d(t1.r.partial_liquidations, t0.r.partial_liquidations);
  state.counters["full"] = d(t1.r.full_liquidations, t0.r.full_liquidations);
  state.counters["book_fills"] = d(t1.trades[1], t0.trades[1]);
  state.counters["takeovers"] = d(t1.r.takeovers, t0.r.takeovers);
  state.counters["adl_fills"] = d(t1.r.deleverages, t0.r.deleverages);
  state.counters["margin_checks"] = d(t1.r.margin_checks, t0.r.margin_checks);
  state.counters["ns/liquidated"] =
      liq.empty() ? 0.0 : static_cast<double>(total_ns) / static_cast<double>(liq.size());
  state.counters["deficit_usdc"] =
      static_cast<double>(t1.r.deficit_covered - t0.r.deficit_covered) / kUsdcScale;
  state.counters["accounts"] = static_cast<double>(w.e->accounts().size());
  // Untimed: the engine's own invariant check after the cascade.
  const std::string bad = w.e->validate();
  if (!bad.empty()) std::fprintf(stderr, "bench_risk: validate() after cascade: %s\n", bad.c_str());
  state.counters["valid"] = bad.empty() ? 1 : 0;
  return liq.size();
}

// `steps` SetIndexPrice txs, each lowering the index by step_ppm of kP0 (one step: a single
// drop). `fund`: the insurance fund's deposit; a deep fund takes over what the book cannot, an
// empty one leaves it to ADL.
void BM_LiquidationCascade(benchmark::State& state, int n, int steps, int64_t step_ppm, Usdc fund,
                           bool isolated) {
  g_mark_worlds.clear();  // not needed any more: free them before building this world
  auto w = build_world(n, true, fund, isolated);
  w->sink.liquidated.reserve(static_cast<size_t>(n));
  const Totals t0 = totals(*w);
  std::vector<int64_t> ns;
  int64_t sum = 0;
  for (auto _ : state) {
    for (int i = 1; i <= steps; ++i) {
      const Tx tx = w->set_index(kP0 - kP0 * step_ppm * i / kPpm);
      w->sink.record = true;
      const int64_t t = now_ns();
      w->run(tx);
      ns.push_back(now_ns() - t);
      w->sink.record = false;
      sum += ns.back();
    }
    state.SetIterationTime(static_cast<double>(sum) * 1e-9);
  }
  const Pcts p = pcts(ns);
  set_latency_counters(state, p);
  state.counters["total_ms"] = static_cast<double>(sum) / 1e6;
  const uint64_t liq = cascade_counters(state, *w, t0, sum);
  char buf[320];
  std::snprintf(
      buf, sizeof(buf),
      "| %d%s | %s | %d x %.1f%% | %.1f | %.1f | %.1f | %llu | %.0f | %.0f | %.0f | %.0f | "
      "%.1f |",
      n, isolated ? " isolated" : "", fund >= kDeepFund ? "deep" : "empty", steps,
      static_cast<double>(step_ppm) / 1e4, p.p50 / 1e6, p.p99 / 1e6, sum / 1e6,
      static_cast<unsigned long long>(liq), state.counters["book_fills"].value,
      state.counters["takeovers"].value, state.counters["adl_fills"].value,
      state.counters["margin_checks"].value, state.counters["ns/liquidated"].value / 1e3);
  g_cascade.push_back(buf);
}

// ---- registration and the summary ----

struct MarkCase {
  int n;
  int64_t step_ppm;
  int index_iters, naive_iters;
  bool isolated = false;  // every trader's position isolated
};
const MarkCase kMarkCases[] = {
    {10'000, 500, 5'000, 2'000},  {100'000, 500, 3'000, 500},       {10'000, 5'000, 3'000, 1'000},
    {100'000, 5'000, 1'000, 300}, {100'000, 500, 3'000, 500, true},
};

void register_all() {
  for (bool naive : {false, true}) {
    for (const MarkCase& c : kMarkCases) {
      const std::string name =
          std::string(naive ? "BM_MarkUpdate_NaiveScan/" : "BM_MarkUpdate_Positions/") +
          std::to_string(c.n) + "/walk_bp:" + std::to_string(c.step_ppm / 100) +
          (c.isolated ? "/isolated" : "");
      benchmark::RegisterBenchmark(name.c_str(), BM_MarkUpdate, c.n, c.step_ppm, naive, c.isolated)
          ->Iterations(naive ? c.naive_iters : c.index_iters)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
  struct CascadeCase {
    const char* name;
    int n, steps;
    int64_t step_ppm;
    Usdc fund;
    bool isolated = false;
  };
  std::vector<CascadeCase> cascades = {
      {"BM_LiquidationCascade/100000/drop:8%", 100'000, 1, 80'000, kDeepFund},
      {"BM_LiquidationCascade/100000/steps:20x0.4%", 100'000, 20, 4'000, kDeepFund},
      {"BM_LiquidationCascade_ADL/10000/drop:8%", 10'000, 1, 80'000, kEmptyFund},
      {"BM_LiquidationCascade_ADL/30000/drop:8%", 30'000, 1, 80'000, kEmptyFund},
      {"BM_LiquidationCascade/100000/drop:8%/isolated", 100'000, 1, 80'000, kDeepFund, true},
  };
  // ADL costs O(holders) per deleveraged position: at 100k traders this one tx takes minutes.
  if (const char* slow = std::getenv("TACHYON_BENCH_RISK_SLOW"); slow && *slow == '1')
    cascades.push_back(
        {"BM_LiquidationCascade_ADL/100000/drop:8%", 100'000, 1, 80'000, kEmptyFund});
  for (const CascadeCase& c : cascades) {
    benchmark::RegisterBenchmark(c.name, BM_LiquidationCascade, c.n, c.steps, c.step_ppm, c.fund,
                                 c.isolated)
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

void print_summary() {
  std::printf(
      "\n## SetIndexPrice per tx: liquidation index vs naive scan of every account (µs)\n\n");
  std::printf(
      "| accounts | walk | index mean | p50 | p99 | checks/tx | naive mean | p50 | p99 | "
      "scan alone p50 | naive/index mean | p50 | p99 | scan alone/index p50 |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const MarkCase& c : kMarkCases) {
    auto ix = g_mark.find(mark_key(false, c.n, c.step_ppm, c.isolated));
    auto nv = g_mark.find(mark_key(true, c.n, c.step_ppm, c.isolated));
    if (ix == g_mark.end() || nv == g_mark.end()) continue;
    const Pcts& a = ix->second.tx;
    const Pcts& b = nv->second.tx;
    std::printf(
        "| %d%s | ±%.2f%% | %.1f | %.1f | %.1f | %.0f | %.1f | %.1f | %.1f | %.1f | %.1fx | "
        "%.1fx | %.1fx | %.2fx |\n",
        c.n, c.isolated ? " isolated" : "", static_cast<double>(c.step_ppm) / 1e4, a.mean / 1e3,
        a.p50 / 1e3, a.p99 / 1e3, ix->second.checks_per_tx, b.mean / 1e3, b.p50 / 1e3, b.p99 / 1e3,
        nv->second.scan.p50 / 1e3, b.mean / a.mean, b.p50 / a.p50, b.p99 / a.p99,
        nv->second.scan.p50 / a.p50);
  }
  std::printf(
      "(naive = the same tx, index included, then margin() of every account; \"scan alone\" = "
      "that scan without the tx: what an engine without the index would add per tx)\n");
  if (g_cascade.empty()) return;
  std::printf("\n## Liquidation cascades (ms per SetIndexPrice tx)\n\n");
  std::printf(
      "| traders | insurance fund | index drops | p50 | p99 | total | accounts liquidated | "
      "book fills | takeovers | ADL fills | margin checks | µs per liquidated account |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& s : g_cascade) std::printf("%s\n", s.c_str());
}

}  // namespace
}  // namespace tachyon::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  tachyon::bench::register_all();
  benchmark::RunSpecifiedBenchmarks();
  tachyon::bench::print_summary();
  // The mark worlds (left when a filter skipped the cascades, which free them) go before the
  // statics their engines' allocators use are destroyed: freed at exit they crashed it.
  tachyon::bench::g_mark_worlds.clear();
  benchmark::Shutdown();
  return 0;
}
