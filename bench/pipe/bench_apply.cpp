// The apply thread's time per batch (drain the apply ring, update the read side, publish the
// changed book snapshots, markets and accounts) at a target of 20k and 200k updates/s, over a
// book of realistic depth, through the real pipeline.
//
// Each row starts a fresh pipeline (no journal, spin_then_park) on market 0 with 200 funded
// accounts and a book of 2 x 400 price levels holding 1-12 orders each (~5,200 resting orders).
// One thread then submits, at a constant rate, a flow where most orders rest near the touch:
// 55% limit orders (their distance from the mid skewed towards it: 1 + 400 u^3 ticks), 35%
// cancels of a random order of ours that rested, 10% market orders that sweep 5-30 lots (one to
// a few levels). The tx rate of each row is the target over the updates per tx measured in a
// warm-up row; the table shows the rate of updates the apply thread really saw, the time per batch
// and the apply thread's CPU time in it. A batch is published only once its last tx is whole, so
// its wall time (first update seen -> published) includes waiting for the rest of a tx the
// sequencer is still executing; the apply time is the wall time less those waits. The first
// quarter of each row is its warm-up (a fresh pipeline makes each account's state on first
// use): the batch times, the allocations (the whole process's, per update) and the times to
// publication count only what follows it; "p99 with the warm-up" counts every batch. The last
// table groups the production rows' batches by their number of updates (size_table).
//
// Usage: bench_apply [seconds per row] [--by-type] [--warm-only]   (default 3)
// --caps 0,16,32 [--repeat N]: the production rows with each batch cap
// (PipelineConfig::apply_batch_updates; 0: none), alternating, N times each.
// --warm-rounds N: the warming rows warm every N idle rounds (PipelineConfig::keep_warm_rounds).
// --warm-only: only the rows of the production mode (the apply thread spinning and warming).
// --repeat N: those rows N times each, alternating, summarised (the p99's spread across rows).
// TACHYON_ALLOC_TRAP=1: a backtrace of each of the first 40 allocations after a row's warm-up.
// --by-type: one row (20k updates/s, the apply thread spinning on CPU 1) with each update's apply
// time by update type (two clock reads around each: the pipeline's load-test detail), to see
// which kind of update the time goes to.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include "../engine/alloc_counter.hpp"
#include "bench_world.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/core/histogram.hpp"
#include "tachyon/pipe/pipeline.hpp"
#include "tachyon/pipe/placement.hpp"

using namespace tachyon;

namespace {

constexpr int kLevels = bench::ApplyFlow::kLevels;

struct Row {
  double tx_rate = 0, updates_per_s = 0, updates_per_tx = 0, updates_per_batch = 0;
  size_t batches = 0;
  double p50 = 0, p99 = 0, p9999 = 0, max = 0, allocs_per_update = 0;
  double p99_all = 0;                              // every batch, the warm-up included
  double cpu_p50 = 0, cpu_p99 = 0, cpu_p9999 = 0;  // the apply thread's CPU time per batch
  uint64_t busy = 0, refused = 0;
  std::map<int, uint64_t> refused_by;  // Lighter code -> txs
  // The batch's phases (drain into the caches, publish the books, publish the read side):
  // p50 and p99 of each, and their means over the batches at or above the total's p99.
  double phase_p50[3] = {}, phase_p99[3] = {}, phase_slow[3] = {};
  double slow_updates = 0;  // mean updates per batch in the slowest 1%
  // Per tx after the warm-up: the engine finished it -> the apply thread had published its
  // updates (µs). Unlike the batch time this includes waiting for the apply thread, e.g. while
  // it was busy warming its caches.
  double published_p50 = 0, published_p99 = 0, published_mean = 0;
  double wall_p50 = 0, wall_p99 = 0;  // first update seen -> published, waits included
  std::string by_size;                // table rows: apply time by batch size (size_table)
};

// The batches after the warm-up by their number of updates: how many, how many of the slowest
// 1%, the apply time's median and p90, its median per update, and the phases' medians (µs). The
// apply time grows with the batch's size, so the p99 is where the size distribution's tail
// meets the cost per update.
std::string size_table(std::span<const pipe::BatchSample> samples, uint32_t slow) {
  static constexpr uint32_t kEdges[] = {1, 10, 20, 40, 60, 80, 100, UINT32_MAX};
  std::string out;
  for (size_t b = 0; b + 1 < std::size(kEdges); ++b) {
    std::vector<uint32_t> t, per, ph[3];
    size_t in_slow = 0;
    for (const auto& s : samples) {
      if (s.updates < kEdges[b] || s.updates >= kEdges[b + 1]) continue;
      const uint32_t v = s.ns - std::min(s.ns, s.wait_ns);
      t.push_back(v);
      per.push_back(v / s.updates);
      ph[0].push_back(s.drain_ns);
      ph[1].push_back(s.books_ns);
      ph[2].push_back(s.read_ns);
      in_slow += v >= slow;
    }
    if (t.empty()) continue;
    auto q = [](std::vector<uint32_t>& v, double f) {
      std::sort(v.begin(), v.end());
      return v[std::min(v.size() - 1, static_cast<size_t>(f * v.size()))];
    };
    char line[200];
    const std::string range = kEdges[b + 1] == UINT32_MAX ? std::to_string(kEdges[b]) + "+"
                                                          : std::to_string(kEdges[b]) + "-" +
                                                                std::to_string(kEdges[b + 1] - 1);
    std::snprintf(line, sizeof line, "%s | %zu | %zu | %.2f | %.2f | %u | %.2f / %.2f / %.2f |\n",
                  range.c_str(), t.size(), in_slow, q(t, 0.5) / 1e3, q(t, 0.9) / 1e3, q(per, 0.5),
                  q(ph[0], 0.5) / 1e3, q(ph[1], 0.5) / 1e3, q(ph[2], 0.5) / 1e3);
    out += line;
  }
  return out;
}

// PipelineConfig::apply_batch_updates of the rows (--caps).
uint32_t g_batch_cap = 0;
// PipelineConfig::keep_warm_rounds of the warming rows (--warm-rounds; 0: the default).
uint32_t g_warm_rounds = 0;

// Per update type, with --by-type (the pipeline's load-test detail histograms).
std::array<Histogram, pipe::kUpdateTypeSlots>* g_by_type = nullptr;

Row run(double tx_rate, double seconds, uint64_t seed, bool generator_sleeps, bool apply_spins,
        bool keep_warm = true) {
  testing::TxBuilder b(realtime_ns());
  bench::ApplyFlow flow(b, seed);
  auto engine = flow.world();
  pipe::PipelineConfig pc;
  pc.workers = 1;
  pc.batch_samples = 1 << 22;
  pc.apply_batch_updates = g_batch_cap;
  if (apply_spins) {  // the production mode: a busy-polling apply thread on a core of its own
    pc.apply_wait = pipe::WaitStrategy::kSpin;
    pc.apply_core = 1;
    pc.sequencer_core = 0;
    if (g_warm_rounds > 0) pc.keep_warm_rounds = g_warm_rounds;
    pc.keep_warm_rounds = keep_warm ? pc.keep_warm_rounds : 0;
  }
  // In the production mode the generator (the api workers' part) keeps off the apply thread's
  // core, as the server keeps its other threads off the hot cores (pipe::keep_off_cores): it
  // shares CPU 0 with the sequencer. Restored after the row.
  cpu_set_t saved_cpus;
  CPU_ZERO(&saved_cpus);
  const bool restore_cpus = ::sched_getaffinity(0, sizeof saved_cpus, &saved_cpus) == 0;
  if (apply_spins) {
    std::string report;
    if (!pipe::keep_off_cores({pc.apply_core}, report))
      std::fprintf(stderr, "generator placement: %s\n", report.c_str());
  }
  pipe::PipeMetrics pm;
  if (g_by_type != nullptr) {
    pm.detail = true;
    for (size_t t = 0; t < pipe::kUpdateTypeSlots; ++t) pm.apply_update_ns[t] = &(*g_by_type)[t];
    pc.metrics = &pm;
  }
  pipe::Pipeline pl(pc, std::move(engine), nullptr, nullptr);
  pl.start();
  // What each submitted tx was, by cookie, to keep the orders that rested.
  std::vector<AccountIndex> limit_of;  // cookie -> account of a limit order, or 0
  const auto n = static_cast<uint64_t>(tx_rate * seconds);
  limit_of.reserve(n + 1);
  const auto gap = static_cast<int64_t>(1e9 / tx_rate);
  const int64_t t0 = realtime_ns() + 1'000'000;
  uint64_t sent = 0, got = 0, busy = 0, refused = 0, allocs_at = 0, got_at = 0;
  std::vector<uint32_t> published;  // ns per tx, after the warm-up
  published.reserve(n);
  std::map<int, uint64_t> refused_by;
  while (got < sent || sent < n) {
    const int64_t due = t0 + static_cast<int64_t>(sent) * gap;
    if (sent < n && realtime_ns() >= due) {
      AccountIndex limit_account = 0;
      const Tx tx = flow.next(limit_account);
      if (pl.submit(0, tx, sent, due)) {
        flow.sent(tx);
        limit_of.push_back(limit_account);
        ++sent;
      } else {
        ++busy;
      }
    }
    got += pl.poll_results(0, [&](const pipe::Result& r) {
      if (got_at != 0)
        published.push_back(static_cast<uint32_t>(
            std::clamp<int64_t>(r.t_applied_ns - r.t_exec_ns, 0, UINT32_MAX)));
      if (r.reject != Reject::kOk) {
        ++refused;
        ++refused_by[static_cast<int>(r.reject)];
      } else if (limit_of[r.cookie] != 0 && r.order_index != 0) {
        flow.rested(limit_of[r.cookie], r.order_index);  // it may have filled: a cancel of it
      }                                                  // is then refused
    });
    if (got_at == 0 && got >= n / 4) {  // the first quarter is warm-up
      got_at = got;
      allocs_at = tachyon::bench::alloc_count();
      if (std::getenv("TACHYON_ALLOC_TRAP") != nullptr) tachyon::bench::arm_alloc_trap(40);
    }
    if (generator_sleeps) {  // until the next tx is due (or a while, for the last results)
      const int64_t until =
          sent < n ? t0 + static_cast<int64_t>(sent) * gap : realtime_ns() + 20'000;
      const timespec ts{static_cast<time_t>(until / 1'000'000'000), until % 1'000'000'000};
      if (until > realtime_ns()) ::clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr);
    }
  }
  const uint64_t allocs = tachyon::bench::alloc_count() - allocs_at;
  const double elapsed = (realtime_ns() - t0) / 1e9;
  pl.stop();
  if (restore_cpus) ::sched_setaffinity(0, sizeof saved_cpus, &saved_cpus);
  Row row;
  row.tx_rate = tx_rate;
  row.busy = busy;
  row.refused = refused;
  row.refused_by = refused_by;
  // ns: the time applying (the batch's wall time less its waits for the rest of a tx the
  // sequencer was still executing); wall: from the first update seen to published. Like the
  // allocations and the times to publication, only the batches after the row's first quarter,
  // the warm-up: a fresh pipeline's first batches make each account's state, trade log and
  // order tree on first use (p99_all: every batch).
  std::vector<uint32_t> ns, cpu, wall, all;
  uint64_t updates = 0, updates_after_warm = 0;
  const std::vector<pipe::BatchSample> every = pl.batch_samples();
  const std::span<const pipe::BatchSample> samples(every.data() + every.size() / 4,
                                                   every.size() - every.size() / 4);
  for (const auto& s : every) {
    all.push_back(s.ns - std::min(s.ns, s.wait_ns));
    updates += s.updates;
  }
  for (const auto& s : samples) {
    ns.push_back(s.ns - std::min(s.ns, s.wait_ns));
    wall.push_back(s.ns);
    cpu.push_back(s.cpu_ns);
    updates_after_warm += s.updates;
  }
  std::sort(all.begin(), all.end());
  std::sort(ns.begin(), ns.end());
  std::sort(cpu.begin(), cpu.end());
  std::sort(wall.begin(), wall.end());
  auto pct = [](const std::vector<uint32_t>& v, double q) {
    return v.empty() ? 0.0 : v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))] / 1e3;
  };
  {
    const uint32_t slow = ns.empty() ? 0 : static_cast<uint32_t>(pct(ns, 0.99) * 1e3);
    std::vector<uint32_t> phase[3];
    double slow_sum[3] = {};
    size_t slow_n = 0;
    for (const auto& s : samples) {
      const uint32_t v[3] = {s.drain_ns, s.books_ns, s.read_ns};
      for (int k = 0; k < 3; ++k) phase[k].push_back(v[k]);
      if (s.ns - std::min(s.ns, s.wait_ns) >= slow) {
        ++slow_n;
        row.slow_updates += s.updates;
        for (int k = 0; k < 3; ++k) slow_sum[k] += v[k];
      }
    }
    for (int k = 0; k < 3; ++k) {
      std::sort(phase[k].begin(), phase[k].end());
      row.phase_p50[k] = pct(phase[k], 0.5);
      row.phase_p99[k] = pct(phase[k], 0.99);
      row.phase_slow[k] = slow_n == 0 ? 0 : slow_sum[k] / slow_n / 1e3;
    }
    if (slow_n > 0) row.slow_updates /= static_cast<double>(slow_n);
    row.by_size = size_table(samples, slow);
  }
  auto at = [&](double q) { return pct(ns, q); };
  row.cpu_p50 = pct(cpu, 0.5);
  row.cpu_p99 = pct(cpu, 0.99);
  row.cpu_p9999 = pct(cpu, 0.9999);
  row.batches = ns.size();
  row.updates_per_s = static_cast<double>(updates) / elapsed;
  row.updates_per_tx = sent == 0 ? 0 : static_cast<double>(updates) / static_cast<double>(sent);
  row.updates_per_batch =
      ns.empty() ? 0 : static_cast<double>(updates_after_warm) / static_cast<double>(ns.size());
  row.p50 = at(0.5);
  row.p99 = at(0.99);
  row.p99_all = pct(all, 0.99);
  row.p9999 = at(0.9999);
  row.max = ns.empty() ? 0 : ns.back() / 1e3;
  row.wall_p50 = pct(wall, 0.5);
  row.wall_p99 = pct(wall, 0.99);
  std::sort(published.begin(), published.end());
  row.published_p50 = pct(published, 0.5);
  row.published_p99 = pct(published, 0.99);
  double pub_sum = 0;
  for (uint32_t v : published) pub_sum += v;
  row.published_mean =
      published.empty() ? 0 : pub_sum / static_cast<double>(published.size()) / 1e3;
  row.allocs_per_update =
      updates_after_warm == 0 ? 0 : static_cast<double>(allocs) / updates_after_warm;
  return row;
}

// Summaries over the rows of one setting (--caps, --repeat).
std::vector<double> column(const std::vector<Row>& rs, double Row::*field) {
  std::vector<double> v;
  for (const Row& r : rs) v.push_back(r.*field);
  return v;
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
int rows_under_10us(const std::vector<Row>& rs) {
  return static_cast<int>(
      std::count_if(rs.begin(), rs.end(), [](const Row& r) { return r.p99 < 10.0; }));
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3.0;
  bool by_type = false, warm_only = false;
  int repeat = 0;
  std::vector<uint32_t> caps;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--by-type") {
      by_type = true;
    } else if (std::string(argv[i]) == "--warm-only") {
      warm_only = true;
    } else if (std::string(argv[i]) == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (std::string(argv[i]) == "--warm-rounds" && i + 1 < argc) {
      g_warm_rounds = static_cast<uint32_t>(std::atoi(argv[++i]));
    } else if (std::string(argv[i]) == "--caps" && i + 1 < argc) {
      std::string list = argv[++i];
      for (size_t at = 0; at <= list.size();) {
        const size_t comma = std::min(list.find(',', at), list.size());
        caps.push_back(static_cast<uint32_t>(std::stoul(list.substr(at, comma - at))));
        at = comma + 1;
      }
    } else {
      char* end = nullptr;
      seconds = std::strtod(argv[i], &end);
      if (end == argv[i] || *end != '\0' || !(seconds > 0)) {
        std::fprintf(stderr,
                     "bench_apply: unknown argument '%s'\nusage: bench_apply [seconds per row] "
                     "[--warm-only] [--repeat N] [--caps a,b,...] [--warm-rounds N] "
                     "[--by-type]\n",
                     argv[i]);
        return 2;
      }
    }
  }
  // Warm-up: how many updates a tx of this flow makes.
  ::prctl(PR_SET_TIMERSLACK, 1UL);  // a sleeping generator wakes when its next tx is due
  const Row warm = run(10'000, 1.0, 1, false, false);
  if (!caps.empty()) {
    // The production rows with each batch cap (PipelineConfig::apply_batch_updates), `repeat`
    // times, the caps alternating within each target: the batch time against the time from the
    // engine to the published snapshot, which a cap trades.
    std::map<std::pair<double, uint32_t>, std::vector<Row>> rows;
    for (int k = 0; k < std::max(repeat, 1); ++k)
      for (double target : {20'000.0, 200'000.0})
        for (uint32_t cap : caps) {
          g_batch_cap = cap;
          rows[{target, cap}].push_back(
              run(target / warm.updates_per_tx, seconds, 2, true, true, true));
        }
    std::printf(
        "## Batch caps, apply thread spinning on CPU 1 and keeping warm, %d rows of %.0f s each "
        "(medians of the rows; µs)\n\n| target updates/s | cap (updates) | updates per batch | "
        "apply p50 | apply p99 | p99 min-max | rows with p99 < 10 µs | batch wall p99 | executed "
        "-> published p50 | p99 | mean |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
        std::max(repeat, 1), seconds);
    for (auto& [key, rs] : rows) {
      const std::vector<double> p99 = column(rs, &Row::p99);
      std::printf(
          "| %.0f | %s | %.2f | %.2f | %.2f | %.2f-%.2f | %d of %zu | %.2f | %.2f | %.2f | %.2f "
          "|\n",
          key.first, key.second == 0 ? "none" : std::to_string(key.second).c_str(),
          median(column(rs, &Row::updates_per_batch)), median(column(rs, &Row::p50)), median(p99),
          *std::min_element(p99.begin(), p99.end()), *std::max_element(p99.begin(), p99.end()),
          rows_under_10us(rs), rs.size(), median(column(rs, &Row::wall_p99)),
          median(column(rs, &Row::published_p50)), median(column(rs, &Row::published_p99)),
          median(column(rs, &Row::published_mean)));
    }
    return 0;
  }
  if (repeat > 0) {
    // The production rows `repeat` times, 20k and 200k alternating: the spread of the p99 from
    // row to row on this machine, which one run cannot show.
    std::map<double, std::vector<Row>> rows;
    for (int k = 0; k < repeat; ++k)
      for (double target : {20'000.0, 200'000.0})
        rows[target].push_back(run(target / warm.updates_per_tx, seconds, 2, true, true, true));
    std::printf(
        "## Apply time per batch (µs), apply thread spinning on CPU 1 and keeping warm, %d rows "
        "of %.0f s each\n\n| target updates/s | rows | p50 (median of the rows) | p99: min | "
        "median | max | rows with p99 < 10 µs | batch wall p99 (median) | executed -> published "
        "p50 (median) | each row's p99 | p99 with the warm-up (median) "
        "|\n|---|---|---|---|---|---|---|---|---|---|---|\n",
        repeat, seconds);
    for (auto& [target, rs] : rows) {
      const std::vector<double> p99 = column(rs, &Row::p99);
      std::string each;
      for (double v : p99) {
        char b[16];
        std::snprintf(b, sizeof b, "%s%.2f", each.empty() ? "" : " ", v);
        each += b;
      }
      std::printf("| %.0f | %zu | %.2f | %.2f | %.2f | %.2f | %d | %.2f | %.2f | %s | %.2f |\n",
                  target, rs.size(), median(column(rs, &Row::p50)),
                  *std::min_element(p99.begin(), p99.end()), median(p99),
                  *std::max_element(p99.begin(), p99.end()), rows_under_10us(rs),
                  median(column(rs, &Row::wall_p99)), median(column(rs, &Row::published_p50)),
                  each.c_str(), median(column(rs, &Row::p99_all)));
    }
    return 0;
  }
  if (by_type) {
    static std::array<Histogram, pipe::kUpdateTypeSlots> hist;
    g_by_type = &hist;
    const Row r = run(20'000 / warm.updates_per_tx, seconds, 2, true, true);
    std::printf("## Apply time per update by type (ns), 20k updates/s, apply spins on CPU 1\n\n");
    std::printf(
        "batch: apply p50 %.2f µs, p99 %.2f µs (wall, waits for the rest of a tx included: p50 "
        "%.2f, p99 %.2f), %.2f updates per batch\n\n",
        r.p50, r.p99, r.wall_p50, r.wall_p99, r.updates_per_batch);
    static const char* const kNames[] = {
        "",        "tx_result", "order_added", "order_reduced", "order_removed",
        "trade",   "position",  "balance",     "mark_price",    "market",
        "account", "api_key",   "funding",     "risk"};
    std::printf(
        "| update | count | share of the time | mean | p50 | p99 |\n|---|---|---|---|---|---|\n");
    uint64_t total = 0;
    for (const auto& h : hist) total += h.snapshot().sum;
    for (size_t t = 1; t < std::size(kNames); ++t) {
      const HistogramSnapshot s = hist[t].snapshot();
      if (s.count == 0) continue;
      std::printf("| %s | %llu | %.1f%% | %.0f | %llu | %llu |\n", kNames[t],
                  static_cast<unsigned long long>(s.count), 100.0 * s.sum / total,
                  static_cast<double>(s.sum) / s.count,
                  static_cast<unsigned long long>(s.quantile(0.5)),
                  static_cast<unsigned long long>(s.quantile(0.99)));
    }
    return 0;
  }
  std::printf("## Apply time per batch over a book of 2 x %d levels (µs)\n\n", kLevels);
  std::printf("warm-up: %.2f updates per tx at %.0f tx/s\n\n", warm.updates_per_tx, warm.tx_rate);
  std::printf(
      "| target updates/s | generator | tx/s offered | updates/s applied | updates per batch | "
      "batches | apply p50 | p99 | p99.99 | max | wall p50 | wall p99 | CPU p50 | CPU p99 | CPU "
      "p99.99 | executed -> published p50 | p99 | refused txs | busy | allocs per update "
      "|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::string notes, phases, sizes;
  // The generator either spins until its next tx is due (taking one of this machine's two vCPUs
  // from the pipeline's threads) or sleeps until then; in the third mode it sleeps and the apply
  // thread busy-polls, pinned to CPU 1 (the sequencer to CPU 0, with the generator), keeping its
  // caches warm while idle (PipelineConfig::keep_warm_rounds) or not. The modes alternate, same
  // target and seed.
  struct Mode {
    bool sleeps, apply_spins, keep_warm;
    const char* name;
  };
  for (double target : {20'000.0, 200'000.0})
    for (const Mode mode : {Mode{false, false, false, "spins"}, Mode{true, false, false, "sleeps"},
                            Mode{true, true, false, "sleeps; apply spins on CPU 1"},
                            Mode{true, true, true, "sleeps; apply spins on CPU 1, keeps warm"}}) {
      if (warm_only && !mode.keep_warm) continue;
      const char* const gen = mode.name;
      const Row r = run(target / warm.updates_per_tx, seconds, 2, mode.sleeps, mode.apply_spins,
                        mode.keep_warm);
      static const char* const kPhase[3] = {"drain into the caches", "publish the books",
                                            "publish the read side"};
      for (int k = 0; k < 3; ++k) {
        char pl[160];
        std::snprintf(pl, sizeof pl, "| %.0f | %s | %s | %.2f | %.2f | %.2f |\n", target, gen,
                      kPhase[k], r.phase_p50[k], r.phase_p99[k], r.phase_slow[k]);
        phases.append(pl);
      }
      char line[96];
      std::snprintf(line, sizeof line,
                    "refused at %.0f updates/s, generator %s (code: txs):", target, gen);
      notes.append(line);
      for (const auto& [code, count] : r.refused_by) {
        std::snprintf(line, sizeof line, " %d: %llu", code, static_cast<unsigned long long>(count));
        notes.append(line);
      }
      std::snprintf(line, sizeof line,
                    "; updates per batch in the slowest 1%%: %.1f; p99 with the warm-up: %.2f",
                    r.slow_updates, r.p99_all);
      notes.append(line);
      notes.push_back('\n');
      for (size_t at = 0; mode.keep_warm && at < r.by_size.size();) {  // "| target | " each
        const size_t end = r.by_size.find('\n', at) + 1;
        std::snprintf(line, sizeof line, "| %.0f | ", target);
        sizes += line + r.by_size.substr(at, end - at);
        at = end;
      }
      std::printf(
          "| %.0f | %s | %.0f | %.0f | %.2f | %zu | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f "
          "| %.2f | %.2f | %.2f | %.2f | %llu | %llu | %.4f |\n",
          target, gen, r.tx_rate, r.updates_per_s, r.updates_per_batch, r.batches, r.p50, r.p99,
          r.p9999, r.max, r.wall_p50, r.wall_p99, r.cpu_p50, r.cpu_p99, r.cpu_p9999,
          r.published_p50, r.published_p99, static_cast<unsigned long long>(r.refused),
          static_cast<unsigned long long>(r.busy), r.allocs_per_update);
    }
  std::printf("\n%s", notes.c_str());
  std::printf(
      "\nPhases of a batch (µs): p50, p99, and the mean over the batches at or above the "
      "total's p99\n\n| target updates/s | generator | phase | p50 | p99 | mean in the slowest 1%% "
      "|\n"
      "|---|---|---|---|---|---|\n%s",
      phases.c_str());
  std::printf(
      "\nApply time by batch size, apply thread spinning on CPU 1 and keeping warm: batches, how "
      "many of the slowest 1%%, the apply time's median and p90 (µs), its median per update (ns), "
      "the phases' medians (drain / books / read side, µs)\n\n| target updates/s | updates in "
      "the batch | batches | in the slowest 1%% | p50 | p90 | ns per update | phases "
      "|\n|---|---|---|---|---|---|---|---|\n%s",
      sizes.c_str());
  return 0;
}
