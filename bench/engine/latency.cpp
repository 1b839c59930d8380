// TSC calibration, pinning and percentile summaries for the constant-rate harness.
#include "latency.hpp"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <cstdio>

namespace tachyon::bench {

namespace {
int64_t mono_raw_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

const Tsc& Tsc::get() {
  static const Tsc tsc = [] {
    const int64_t n0 = mono_raw_ns();
    const uint64_t c0 = now();
    while (mono_raw_ns() - n0 < 200'000'000) {
    }
    const int64_t n1 = mono_raw_ns();
    const uint64_t c1 = now();
    Tsc t;
    t.ticks_per_ns = static_cast<double>(c1 - c0) / static_cast<double>(n1 - n0);
    return t;
  }();
  return tsc;
}

bool pin_to_cpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

int pinned_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) != 0) return -1;
  if (CPU_COUNT(&set) != 1) return -1;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) return c;
  }
  return -1;
}

void summarize(std::vector<uint64_t>& ticks, LatencyStats& out) {
  const Tsc& tsc = Tsc::get();
  out.ops = ticks.size();
  if (ticks.empty()) return;
  long double sum = 0;
  const auto over = static_cast<uint64_t>(tsc.ticks_per_ns * 10'000);
  for (uint64_t t : ticks) {
    sum += t;
    out.over_10us += t > over;
  }
  std::sort(ticks.begin(), ticks.end());
  auto pct = [&](double q) {
    const auto i =
        std::min(ticks.size() - 1, static_cast<size_t>(q * static_cast<double>(ticks.size())));
    return tsc.to_ns(ticks[i]);
  };
  out.mean_ns = static_cast<double>(sum / ticks.size()) / tsc.ticks_per_ns;
  out.p50_ns = pct(0.50);
  out.p90_ns = pct(0.90);
  out.p99_ns = pct(0.99);
  out.p999_ns = pct(0.999);
  out.p9999_ns = pct(0.9999);
  out.max_ns = tsc.to_ns(ticks.back());
}

std::string format_latency_table(const std::vector<LatencyStats>& rows, double ops_per_sec) {
  std::string s;
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "| what (%.2g ops/s offered, 1 core) | ops | mean | p50 | p90 | p99 | p99.9 | "
                "p99.99 | max | >10 µs | behind | service | busy | allocs/op |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
                ops_per_sec);
  s += buf;
  auto us = [](double ns) {
    char b[32];
    std::snprintf(b, sizeof(b), ns < 10'000 ? "%.3f" : "%.1f", ns / 1000.0);
    return std::string(b);
  };
  for (const LatencyStats& r : rows) {
    std::snprintf(
        buf, sizeof(buf),
        "| %s | %llu | %s | %s | %s | %s | %s | %s | %s | %llu | %.2f%% | %s | %.1f%% | %.3g |\n",
        r.name.c_str(), static_cast<unsigned long long>(r.ops), us(r.mean_ns).c_str(),
        us(r.p50_ns).c_str(), us(r.p90_ns).c_str(), us(r.p99_ns).c_str(), us(r.p999_ns).c_str(),
        us(r.p9999_ns).c_str(), us(r.max_ns).c_str(), static_cast<unsigned long long>(r.over_10us),
        100.0 * static_cast<double>(r.behind) / static_cast<double>(std::max<uint64_t>(r.ops, 1)),
        us(r.service_ns).c_str(), r.busy_pct, r.allocs_per_op);
    s += buf;
  }
  s += "(latencies in µs: completion − scheduled time; \"behind\" = share of ops already due when "
       "reached; \"service\" = mean time inside the op, issue to completion; \"busy\" = "
       "service time / wall time)\n";
  return s;
}

}  // namespace tachyon::bench
