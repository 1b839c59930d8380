// Service time per tx kind on the mixed stream (no offered rate, no queueing): what each kind of
// op costs by itself, p50..p99.9, to read the constant-rate tails against. Pinned to the last CPU.
// Usage: bench_engine_service [timed_ops]   (default 1000000 after 200000 warm-up)
#include <sched.h>
#include <x86intrin.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>

#include "latency.hpp"
#include "tachyon/engine/engine.hpp"
#include "workload.hpp"

using namespace tachyon;
using namespace tachyon::bench;

namespace {
std::string kind(const Tx& tx) {
  switch (tx.h.type) {
    case TxType::kCancelOrder: return "cancel";
    case TxType::kModifyOrder: return "modify";
    case TxType::kCreateOrder:
      if (tx.order.type == OrderType::kMarket) return "market order";
      return tx.order.tif == TimeInForce::kIoc ? "IOC limit" : "place GTT limit";
    default: return "other";
  }
}
}  // namespace

int main(int argc, char** argv) {
  const uint64_t timed = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  pin_to_cpu(static_cast<int>(std::thread::hardware_concurrency()) - 1);  // when permitted
  const Tsc& tsc = Tsc::get();
  WorldSpec w;
  Scenario s = make_mixed_scenario(w, 200'000, timed);
  Engine e;
  NullSink sink;
  for (const Tx& tx : s.setup) e.execute(tx, sink);
  std::map<std::string, std::vector<uint64_t>> by_kind;
  size_t i = 0;
  for (const Tx& tx : s.ops) {
    const uint64_t t0 = Tsc::now();
    e.execute(tx, sink);
    const uint64_t t1 = Tsc::now_after();
    if (i++ >= 200'000) by_kind[kind(tx)].push_back(t1 - t0);
  }
  std::printf("| kind | ops | p50 | p90 | p99 | p99.9 | max |\n|---|---|---|---|---|---|---|\n");
  for (auto& [k, v] : by_kind) {
    std::sort(v.begin(), v.end());
    auto p = [&](double q) {
      return tsc.to_ns(v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))]);
    };
    std::printf("| %s | %zu | %.0f | %.0f | %.0f | %.0f | %.0f |\n", k.c_str(), v.size(), p(0.5),
                p(0.9), p(0.99), p(0.999), tsc.to_ns(v.back()));
  }
  std::printf("(ns of service time inside Engine::execute, rdtsc/rdtscp)\n");
  return 0;
}
