#pragma once
// Constant offered rate harness (docs/ARCHITECTURE.md "Code shape"): op i is due at t0 + i / rate;
// the loop busy-waits until then (or issues at once when behind) and records completion − due time,
// so a stall is charged to every op queued behind it (no coordinated omission).
#include <x86intrin.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "tachyon/engine/tx.hpp"

namespace tachyon::bench {

// The invariant TSC, calibrated against CLOCK_MONOTONIC_RAW.
struct Tsc {
  double ticks_per_ns = 1.0;
  static const Tsc& get();  // calibrates once (~200 ms)
  static uint64_t now() { return __rdtsc(); }
  // Waits for the preceding instructions to finish before reading: a completion stamp.
  static uint64_t now_after() {
    unsigned aux = 0;
    return __rdtscp(&aux);
  }
  double to_ns(uint64_t ticks) const { return static_cast<double>(ticks) / ticks_per_ns; }
};

// Pins the calling thread to `cpu`; false (and errno untouched by callers) when not permitted.
bool pin_to_cpu(int cpu);
// The CPU the calling thread may run on when it is pinned to exactly one, else -1.
int pinned_cpu();

struct LatencyStats {
  std::string name;
  uint64_t ops = 0;
  double mean_ns = 0, p50_ns = 0, p90_ns = 0, p99_ns = 0, p999_ns = 0, p9999_ns = 0, max_ns = 0;
  uint64_t over_10us = 0;  // samples above 10 µs
  uint64_t behind = 0;     // ops that were already due when the loop reached them
  double allocs_per_op = 0;
  double busy_pct = 0;    // time in exec() / wall time of the run
  double service_ns = 0;  // mean time in exec(), issue to completion (no queueing)
};

// Fills the percentiles from raw latencies in TSC ticks (sorts `ticks`).
void summarize(std::vector<uint64_t>& ticks, LatencyStats& out);

template <typename Exec>
LatencyStats run_constant_rate(const char* name, const Tx* ops, size_t n, double ops_per_sec,
                               Exec&& exec, std::vector<uint64_t>& ticks) {
  const Tsc& tsc = Tsc::get();
  const double period = tsc.ticks_per_ns * 1e9 / ops_per_sec;
  ticks.assign(n, 0);  // touched before the run: no page faults inside it
  LatencyStats s;
  s.name = name;
  uint64_t behind = 0;
  uint64_t busy = 0;
  const uint64_t a0 = alloc_count();
  const uint64_t t0 = Tsc::now() + static_cast<uint64_t>(tsc.ticks_per_ns * 100'000);  // +100 µs
  for (size_t i = 0; i < n; ++i) {
    const uint64_t due = t0 + static_cast<uint64_t>(static_cast<double>(i) * period);
    uint64_t start = Tsc::now();
    if (start >= due) {
      ++behind;
    } else {
      do {
        _mm_pause();
        start = Tsc::now();
      } while (start < due);
    }
    exec(ops[i]);
    const uint64_t done = Tsc::now_after();
    ticks[i] = done - due;
    busy += done - start;
  }
  const uint64_t t1 = Tsc::now();
  s.allocs_per_op = static_cast<double>(alloc_count() - a0) / static_cast<double>(n);
  s.behind = behind;
  s.busy_pct = 100.0 * static_cast<double>(busy) / static_cast<double>(t1 - t0);
  s.service_ns = tsc.to_ns(busy) / static_cast<double>(n);
  summarize(ticks, s);
  return s;
}

std::string format_latency_table(const std::vector<LatencyStats>& rows, double ops_per_sec);

}  // namespace tachyon::bench
