// Engine benchmarks, results in docs/PERFORMANCE.md:
//  1. Google Benchmark ns/op of place / cancel / market-take / mixed on a realistic book, for the
//     full engine, the engine's book alone, the naive std::map reference book, and both engine
//     variants again with their tables sized to the working set (books.hpp);
//  2. per-op latency percentiles at a constant offered rate, with the no-op floor in the same run;
//  3. throughput of the same mixed stream on every contestant, as ratios to the std::map book;
//  4. heap allocations per op (global operator new is replaced: alloc_counter.cpp).
//
// Flags (before Google Benchmark's own): --latency_ops=N (constant-rate ops per contestant,
// default 2000000, 0 skips; env TACHYON_BENCH_LATENCY_OPS), --rate=OPS_PER_SEC (default 1e6),
// --cpu=N (pin to this CPU, default the last one, -1 = no pinning), --skip_gbench (only parts
// 2-4), --gbench_only (only part 1), --near_ticks=N and --far_ticks=M (half of the placements
// land within N ticks of the mid, the other half within M; defaults 20 and 200).
//
// Profiling only the timed segments: TACHYON_PERF_CTL=ctl_fifo,ack_fifo makes the Google
// Benchmark loops send "enable"/"disable" to `perf record -D -1 --control fifo:ctl,ack`.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "alloc_counter.hpp"
#include "books.hpp"
#include "latency.hpp"
#include "workload.hpp"

namespace tachyon::bench {
namespace {

struct Options {
  uint64_t latency_ops = 2'000'000;
  double rate = 1e6;
  int cpu = -2;  // -2: the last CPU
  WorldSpec world;
  bool skip_gbench = false;
  bool gbench_only = false;
};
Options g_opt;

constexpr uint64_t kMixedWarmupOps = 200'000;
constexpr int kBatch = 256;     // place / cancel batch: the book grows or shrinks by ~6%
constexpr int kTakeBatch = 64;  // market orders per batch: ~3% of a side's liquidity
constexpr int kBatches = 512;
constexpr int kTakeBatches = 2048;

// ---- perf control (see the header comment) ----

int g_perf_ctl = -1;
int g_perf_ack = -1;

void open_perf_control() {
  const char* env = std::getenv("TACHYON_PERF_CTL");
  if (env == nullptr) return;
  const std::string v = env;
  const size_t comma = v.find(',');
  if (comma == std::string::npos) return;
  g_perf_ctl = ::open(v.substr(0, comma).c_str(), O_WRONLY);
  g_perf_ack = ::open(v.substr(comma + 1).c_str(), O_RDONLY);
}

void perf_command(const char* cmd) {
  if (g_perf_ctl < 0) return;
  if (::write(g_perf_ctl, cmd, std::strlen(cmd)) < 0) return;
  char ack[16];
  if (g_perf_ack >= 0 && ::read(g_perf_ack, ack, sizeof(ack)) < 0) return;
}

// ---- scenarios, generated once in main() ----

struct Scenarios {
  Scenario place, cancel, take, mixed;
};
std::unique_ptr<Scenarios> g_sc;

const Scenario& place_sc() { return g_sc->place; }
const Scenario& cancel_sc() { return g_sc->cancel; }
const Scenario& take_sc() { return g_sc->take; }
const Scenario& mixed_sc() { return g_sc->mixed; }

// Replays a scenario on a contestant: untimed segments run here, timed ones are handed out;
// at the end of the stream the contestant is rebuilt from the setup and the stream starts over.
template <typename C>
class Driver {
 public:
  explicit Driver(const Scenario& s) : s_(s) { rebuild(); }
  C& book() { return *c_; }
  uint64_t rejects() const { return rejects_; }
  void next_timed(uint32_t& begin, uint32_t& end) {
    for (;;) {
      if (seg_ == s_.segments.size()) rebuild();
      const Segment& g = s_.segments[seg_++];
      if (g.timed) {
        begin = g.begin;
        end = g.end;
        return;
      }
      for (uint32_t i = g.begin; i < g.end; ++i) rejects_ += !c_->execute(s_.ops[i]);
    }
  }

 private:
  void rebuild() {
    c_.reset();
    c_ = std::make_unique<C>();
    for (const Tx& tx : s_.setup) rejects_ += !c_->execute(tx);
    seg_ = 0;
  }
  const Scenario& s_;
  std::unique_ptr<C> c_;
  size_t seg_ = 0;
  uint64_t rejects_ = 0;
};

// One benchmark iteration = one tx of a timed segment. Time is taken with the TSC around each
// timed segment (manual time), so refills between segments cost nothing to the figure.
template <typename C>
void bm_scenario(benchmark::State& state, const Scenario& (*get)()) {
  const Scenario& s = get();
  Driver<C> d(s);
  uint32_t pos = 0;
  uint32_t end = 0;
  d.next_timed(pos, end);
  uint64_t ticks = 0, allocs = 0, rejects = 0;
  perf_command("enable\n");
  uint64_t a0 = alloc_count();
  uint64_t t0 = Tsc::now();
  for (auto _ : state) {
    if (pos == end) [[unlikely]] {
      ticks += Tsc::now_after() - t0;
      allocs += alloc_count() - a0;
      perf_command("disable\n");
      state.PauseTiming();
      d.next_timed(pos, end);
      state.ResumeTiming();
      perf_command("enable\n");
      a0 = alloc_count();
      t0 = Tsc::now();
    }
    rejects += !d.book().execute(s.ops[pos++]);
  }
  ticks += Tsc::now_after() - t0;
  allocs += alloc_count() - a0;
  perf_command("disable\n");
  const auto n = static_cast<double>(state.iterations());
  state.SetIterationTime(Tsc::get().to_ns(ticks) * 1e-9);
  state.SetItemsProcessed(state.iterations());
  state.counters["allocs_per_op"] = benchmark::Counter(static_cast<double>(allocs) / n);
  if (rejects + d.rejects() != 0) state.SkipWithError("a tx of the stream was refused");
}

template <typename C>
void register_all() {
  const std::string c = C::kName;
  struct Entry {
    const char* name;
    const Scenario& (*get)();
  };
  for (const Entry& e : {Entry{"place", place_sc}, Entry{"cancel", cancel_sc},
                         Entry{"market_take", take_sc}, Entry{"mixed", mixed_sc}}) {
    benchmark::RegisterBenchmark((std::string(e.name) + "/" + c).c_str(), bm_scenario<C>, e.get)
        ->UseManualTime()
        ->Unit(benchmark::kNanosecond);
  }
}

// What building one StateUpdate costs (the engine emits ~3 per mixed op, ~23 per market take).
void bm_update(benchmark::State& state, bool memset_ctor) {
  NullSink null;
  UpdateSink* volatile sink = &null;  // opaque: no devirtualization, no folding
  int64_t i = 0;
  for (auto _ : state) {
    if (memset_ctor) {
      emit_update_memset_ctor(*sink, i, static_cast<uint64_t>(i));
    } else {
      emit_update_vector_zero(*sink, i, static_cast<uint64_t>(i));
    }
    ++i;
  }
}

// Keeps each run's ns/op for the ratio table printed after Google Benchmark's own.
class Collector : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      // Single runs, or the median when --benchmark_repetitions asks for aggregates.
      if (r.error_occurred) continue;
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median") continue;
      ns_[r.run_name.function_name] = r.GetAdjustedRealTime();
      allocs_[r.run_name.function_name] =
          r.counters.count("allocs_per_op") ? r.counters.at("allocs_per_op").value : -1;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void print_ratios() const {
    std::printf(
        "\n## ns/op by scenario (Google Benchmark, manual TSC time)\n\n"
        "| scenario | engine | engine_book | std_map_book | std_map time / engine_book time | "
        "std_map time / engine time | engine allocs/op | std_map allocs/op |\n"
        "|---|---|---|---|---|---|---|---|\n");
    auto num = [](double v, const char* fmt) {
      char b[32];
      if (v < 0) return std::string("-");
      std::snprintf(b, sizeof(b), fmt, v);
      return std::string(b);
    };
    for (const char* sc : {"place", "cancel", "market_take", "mixed"}) {
      const double e = get(sc, EngineRunner::kName), b = get(sc, EngineBook::kName),
                   r = get(sc, StdMapBook::kName);
      if (e < 0 && b < 0 && r < 0) continue;
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", sc, num(e, "%.1f").c_str(),
                  num(b, "%.1f").c_str(), num(r, "%.1f").c_str(),
                  num(b > 0 && r > 0 ? r / b : -1, "%.2fx").c_str(),
                  num(e > 0 && r > 0 ? r / e : -1, "%.2fx").c_str(),
                  num(get_allocs(sc, EngineRunner::kName), "%.3g").c_str(),
                  num(get_allocs(sc, StdMapBook::kName), "%.3g").c_str());
    }
  }

 private:
  double get(const char* sc, const char* who) const {
    auto it = ns_.find(std::string(sc) + "/" + who);
    return it == ns_.end() ? -1 : it->second;
  }
  double get_allocs(const char* sc, const char* who) const {
    auto it = allocs_.find(std::string(sc) + "/" + who);
    return it == allocs_.end() ? -1 : it->second;
  }
  std::map<std::string, double> ns_;
  std::map<std::string, double> allocs_;
};

// ---- full-speed throughput of the mixed stream (the baseline ratio) ----

struct Throughput {
  double ns_per_op = 0;
  double allocs_per_op = 0;
};

template <typename C>
Throughput full_speed(const Scenario& s, int reps) {
  Throughput best{1e18, 0};
  for (int rep = 0; rep < reps; ++rep) {
    auto c = std::make_unique<C>();
    for (const Tx& tx : s.setup) c->execute(tx);
    uint64_t ticks = 0, allocs = 0, n = 0;
    for (const Segment& g : s.segments) {
      if (!g.timed) {
        for (uint32_t i = g.begin; i < g.end; ++i) c->execute(s.ops[i]);
        continue;
      }
      const uint64_t a0 = alloc_count();
      const uint64_t t0 = Tsc::now();
      for (uint32_t i = g.begin; i < g.end; ++i) c->execute(s.ops[i]);
      ticks += Tsc::now_after() - t0;
      allocs += alloc_count() - a0;
      n += g.end - g.begin;
    }
    const double ns = Tsc::get().to_ns(ticks) / static_cast<double>(n);
    if (ns < best.ns_per_op) best = {ns, static_cast<double>(allocs) / static_cast<double>(n)};
  }
  return best;
}

void print_throughput(const Scenario& s) {
  const Throughput e = full_speed<EngineRunner>(s, 3);
  const Throughput b = full_speed<EngineBook>(s, 3);
  const Throughput r = full_speed<StdMapBook>(s, 3);
  const Throughput ec = full_speed<CompactEngineRunner>(s, 3);
  const Throughput bc = full_speed<CompactEngineBook>(s, 3);
  std::printf(
      "\n## Throughput, mixed stream at full speed (%llu timed txs after %llu warm-up, best of "
      "3)\n\n"
      "| contestant | ns/op | Mops/s | std_map_book time / its time | allocs/op |\n"
      "|---|---|---|---|---|\n",
      static_cast<unsigned long long>(s.timed_ops),
      static_cast<unsigned long long>(kMixedWarmupOps));
  auto row = [&](const char* name, const Throughput& t) {
    std::printf("| %s | %.1f | %.2f | %.2fx | %.3g |\n", name, t.ns_per_op, 1e3 / t.ns_per_op,
                r.ns_per_op / t.ns_per_op, t.allocs_per_op);
  };
  row("engine (accounts, margin, updates)", e);
  row("engine_book (matching only)", b);
  row("std_map_book (reference)", r);
  row("engine, EngineConfig sized to the working set", ec);
  row("engine_book, hash map sized to the working set", bc);
}

// ---- allocation profile of the engine over the mixed stream ----

void print_alloc_profile(const Scenario& s) {
  std::printf(
      "\n## Engine heap allocations along the mixed stream\n\n"
      "| phase | txs | allocations | per tx |\n|---|---|---|---|\n");
  uint64_t a0 = alloc_count();
  auto c = std::make_unique<EngineRunner>();
  std::printf("| Engine construction (EngineConfig{}) | - | %llu | - |\n",
              static_cast<unsigned long long>(alloc_count() - a0));
  auto phase = [&](const char* name, const Tx* txs, size_t n) {
    const uint64_t before = alloc_count();
    for (size_t i = 0; i < n; ++i) c->execute(txs[i]);
    const uint64_t k = alloc_count() - before;
    std::printf("| %s | %zu | %llu | %.3g |\n", name, n, static_cast<unsigned long long>(k),
                n ? static_cast<double>(k) / static_cast<double>(n) : 0.0);
    return k;
  };
  phase("setup: market, deposits, initial book", s.setup.data(), s.setup.size());
  const size_t w = s.segments.front().timed ? 0 : s.segments.front().end;
  const size_t first = std::min<size_t>(w, 1000);
  phase("first 1000 stream txs", s.ops.data(), first);
  phase("rest of the warm-up", s.ops.data() + first, w - first);
  const uint64_t steady = phase("steady state (timed part)", s.ops.data() + w, s.ops.size() - w);
  if (steady == 0) return;
  // Find out who allocates: rerun with the trap armed on the steady-state part.
  std::printf("\nsteady-state allocations found; backtraces of the first ones on stderr:\n");
  c = std::make_unique<EngineRunner>();
  for (const Tx& tx : s.setup) c->execute(tx);
  for (size_t i = 0; i < w; ++i) c->execute(s.ops[i]);
  arm_alloc_trap(3);
  for (size_t i = w; i < s.ops.size(); ++i) c->execute(s.ops[i]);
  disarm_alloc_trap();
}

// ---- constant offered rate ----

template <typename C>
LatencyStats latency_of(const Scenario& s, const char* name, uint64_t n,
                        std::vector<uint64_t>& ticks) {
  auto c = std::make_unique<C>();
  for (const Tx& tx : s.setup) c->execute(tx);
  const Segment& warm = s.segments.front();
  const uint32_t from = warm.timed ? 0 : warm.end;
  for (uint32_t i = 0; i < from; ++i) c->execute(s.ops[i]);
  n = std::min<uint64_t>(n, s.ops.size() - from);
  C& book = *c;
  return run_constant_rate(
      name, s.ops.data() + from, n, g_opt.rate, [&book](const Tx& tx) { book.execute(tx); }, ticks);
}

void print_latency(const Scenario& s) {
  std::vector<uint64_t> ticks;
  std::vector<LatencyStats> rows;
  const uint64_t n = g_opt.latency_ops;
  auto floor = [&](const char* name) {
    rows.push_back(run_constant_rate(
        name, s.ops.data(), std::min<uint64_t>(n, s.ops.size()), g_opt.rate,
        [](const Tx& tx) { asm volatile(""
                                        :
                                        : "r"(&tx)
                                        : "memory"); }, ticks));
  };
  floor("floor: no-op in place of execute");
  rows.push_back(latency_of<EngineRunner>(s, "engine: Engine::execute", n, ticks));
  rows.push_back(latency_of<CompactEngineRunner>(s, "engine, EngineConfig sized to the working set",
                                                 n, ticks));
  rows.push_back(latency_of<EngineBook>(s, "engine_book: matching only", n, ticks));
  rows.push_back(latency_of<StdMapBook>(s, "std_map_book: reference", n, ticks));
  floor("floor again (drift check)");
  std::printf("\n## Latency at a constant offered rate (mixed stream, CPU %d)\n\n%s", pinned_cpu(),
              format_latency_table(rows, g_opt.rate).c_str());
}

// ---- command line ----

bool take_flag(const char* arg, const char* name, const char** value) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0) return false;
  if (arg[n] == '=') {
    *value = arg + n + 1;
    return true;
  }
  if (arg[n] == '\0') {
    *value = "";
    return true;
  }
  return false;
}

void parse_own_flags(int& argc, char** argv) {
  if (const char* env = std::getenv("TACHYON_BENCH_LATENCY_OPS")) {
    g_opt.latency_ops = std::strtoull(env, nullptr, 10);
  }
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const char* v = nullptr;
    if (take_flag(argv[i], "--latency_ops", &v)) {
      g_opt.latency_ops = static_cast<uint64_t>(std::strtod(v, nullptr));
    } else if (take_flag(argv[i], "--rate", &v)) {
      g_opt.rate = std::strtod(v, nullptr);
    } else if (take_flag(argv[i], "--cpu", &v)) {
      g_opt.cpu = std::atoi(v);
    } else if (take_flag(argv[i], "--near_ticks", &v)) {
      g_opt.world.near_ticks = std::max(1, std::atoi(v));
    } else if (take_flag(argv[i], "--far_ticks", &v)) {
      g_opt.world.far_ticks = std::max(1, std::atoi(v));
    } else if (take_flag(argv[i], "--skip_gbench", &v)) {
      g_opt.skip_gbench = true;
    } else if (take_flag(argv[i], "--gbench_only", &v)) {
      g_opt.gbench_only = true;
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  argv[argc] = nullptr;
  if (g_opt.rate <= 0) g_opt.rate = 1e6;
}

void generate_scenarios() {
  const WorldSpec& w = g_opt.world;
  g_sc = std::make_unique<Scenarios>();
  g_sc->place = make_place_scenario(w, kBatches, kBatch);
  g_sc->cancel = make_cancel_scenario(w, kBatches, kBatch);
  g_sc->take = make_take_scenario(w, kTakeBatches, kTakeBatch);
  g_sc->mixed =
      make_mixed_scenario(w, kMixedWarmupOps, std::max<uint64_t>(g_opt.latency_ops, 1'000'000));
  std::printf(
      "## Workload (1 market, %d accounts, ~%d resting orders, mid %lld ticks; placements: half "
      "within %d ticks of the mid, half within %d)\n\n",
      w.accounts, w.resting_orders, static_cast<long long>(w.mid), w.near_ticks, w.far_ticks);
  for (const Scenario* s : {&g_sc->place, &g_sc->cancel, &g_sc->take, &g_sc->mixed}) {
    const std::string err = verify_books(*s);
    std::printf("- %s\n  books cross-check: %s\n", describe(*s).c_str(),
                err.empty() ? "engine, engine_book and std_map_book agree" : err.c_str());
    if (!err.empty()) std::exit(1);
  }
  std::fflush(stdout);
}

}  // namespace
}  // namespace tachyon::bench

int main(int argc, char** argv) {
  using namespace tachyon::bench;
  parse_own_flags(argc, argv);
  open_perf_control();
  const int ncpu = static_cast<int>(std::thread::hardware_concurrency());
  const int cpu = g_opt.cpu == -2 ? std::max(ncpu - 1, 0) : g_opt.cpu;
  const bool pinned = cpu >= 0 && pin_to_cpu(cpu);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::printf("# bench_engine: TSC %.3f GHz, %s, sizeof(Tx) = %zu\n\n", Tsc::get().ticks_per_ns,
              pinned ? ("pinned to CPU " + std::to_string(cpu)).c_str()
                     : "not pinned (pthread_setaffinity_np refused or --cpu=-1)",
              sizeof(tachyon::Tx));
  generate_scenarios();
  if (!g_opt.skip_gbench) {
    register_all<EngineRunner>();
    register_all<EngineBook>();
    register_all<StdMapBook>();
    register_all<CompactEngineRunner>();
    register_all<CompactEngineBook>();
    benchmark::RegisterBenchmark("state_update/memset_ctor", bm_update, true);
    benchmark::RegisterBenchmark("state_update/vector_zero", bm_update, false);
    Collector collector;
    benchmark::RunSpecifiedBenchmarks(&collector);
    collector.print_ratios();
  }
  if (!g_opt.gbench_only) {
    print_alloc_profile(g_sc->mixed);
    print_throughput(g_sc->mixed);
    if (g_opt.latency_ops > 0) print_latency(g_sc->mixed);
  }
  benchmark::Shutdown();
  return 0;
}
