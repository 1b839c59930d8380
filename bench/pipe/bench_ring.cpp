// SPSC ring benchmark: tachyon's SpscRing against boost::lockfree::spsc_queue in the same run.
//  1. throughput: the producer pushes as fast as it can, the consumer drains (items/s);
//  2. one-way hop latency at a constant offered rate (1M items/s): the producer stamps each item
//     with the TSC when it pushes it, the consumer subtracts from the TSC when it takes it.
// Producer pinned to CPU 0, consumer to CPU 1 (when permitted). Usage: bench_ring [items]
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <boost/lockfree/spsc_queue.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "tachyon/pipe/spsc_ring.hpp"

namespace {

struct Item {
  uint64_t seq;
  uint64_t stamp;
};

bool pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

double tsc_per_ns() {
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t c0 = __rdtsc();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(200)) {
  }
  const uint64_t c1 = __rdtsc();
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  return (c1 - c0) / ns;
}

constexpr size_t kCapacity = 4096;

struct Tachyon {
  static constexpr const char* kName = "tachyon SpscRing";
  tachyon::pipe::SpscRing<Item> q{kCapacity};
  bool push(const Item& it) { return q.try_push(it); }
  template <typename F>
  size_t pop_some(F&& f) {
    return q.drain(f, 256);
  }
};

struct Boost {
  static constexpr const char* kName = "boost::lockfree::spsc_queue";
  boost::lockfree::spsc_queue<Item, boost::lockfree::capacity<kCapacity>> q;
  bool push(const Item& it) { return q.push(it); }
  template <typename F>
  size_t pop_some(F&& f) {
    return q.consume_all(f);
  }
};

template <typename Q>
double throughput(uint64_t n) {
  auto q = std::make_unique<Q>();
  std::atomic<bool> go{false};
  uint64_t sum = 0;
  std::thread consumer([&] {
    pin(1);
    while (!go.load()) {
    }
    uint64_t got = 0;
    while (got < n) got += q->pop_some([&](const Item& it) { sum += it.seq; });
  });
  pin(0);
  go.store(true);
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t s = 1; s <= n; ++s) {
    while (!q->push(Item{s, 0})) _mm_pause();
  }
  consumer.join();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (sum != n * (n + 1) / 2) std::printf("checksum mismatch!\n");
  return n / secs;
}

struct Pct {
  double p50, p99, p999, p9999, max;
  long consumer_preempted = 0;  // involuntary context switches of the consumer thread in the run
};

long involuntary_switches() {
  rusage u{};
  ::getrusage(RUSAGE_THREAD, &u);
  return u.ru_nivcsw;
}

template <typename Q>
Pct hop_latency(uint64_t n, double rate, double per_ns) {
  auto q = std::make_unique<Q>();
  std::vector<uint64_t> lat(n, 0);
  std::atomic<bool> go{false};
  long preempted = 0;
  std::thread consumer([&] {
    pin(1);
    while (!go.load()) {
    }
    const long before = involuntary_switches();
    uint64_t got = 0;
    while (got < n) {
      got += q->pop_some([&](const Item& it) {
        unsigned aux;
        lat[it.seq] = __rdtscp(&aux) - it.stamp;
      });
    }
    preempted = involuntary_switches() - before;
  });
  pin(0);
  go.store(true);
  const double period = per_ns * 1e9 / rate;
  const uint64_t t0 = __rdtsc() + static_cast<uint64_t>(per_ns * 1e6);
  for (uint64_t s = 0; s < n; ++s) {
    const uint64_t due = t0 + static_cast<uint64_t>(s * period);
    while (__rdtsc() < due) _mm_pause();
    while (!q->push(Item{s, __rdtsc()})) _mm_pause();
  }
  consumer.join();
  std::sort(lat.begin(), lat.end());
  auto at = [&](double f) { return lat[std::min(n - 1, static_cast<uint64_t>(f * n))] / per_ns; };
  return {at(0.5), at(0.99), at(0.999), at(0.9999), lat.back() / per_ns, preempted};
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 50'000'000;
  const uint64_t m = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 2'000'000;  // hop items
  const double per_ns = tsc_per_ns();
  std::printf("## SPSC ring: throughput (%llu items of 16 B, producer CPU 0, consumer CPU 1)\n\n",
              static_cast<unsigned long long>(n));
  std::printf("| ring | items/s | ratio |\n|---|---|---|\n");
  const double b = throughput<Boost>(n), t = throughput<Tachyon>(n);
  const double b2 = throughput<Boost>(n), t2 = throughput<Tachyon>(n);  // twice, interleaved
  std::printf("| %s | %.1fM (%.1fM) | 1.00x |\n", Boost::kName, std::max(b, b2) / 1e6,
              std::min(b, b2) / 1e6);
  std::printf("| %s | %.1fM (%.1fM) | %.2fx |\n", Tachyon::kName, std::max(t, t2) / 1e6,
              std::min(t, t2) / 1e6, std::max(t, t2) / std::max(b, b2));
  std::printf("(best of two runs, the other in parentheses)\n\n");
  if (m == 0) return 0;
  std::printf("## One-way hop latency at 1M items/s (%llu items; ns)\n\n",
              static_cast<unsigned long long>(m));
  std::printf(
      "| ring | p50 | p99 | p99.9 | p99.99 | max | consumer preempted (times) |\n"
      "|---|---|---|---|---|---|---|\n");
  for (int rep = 0; rep < 2; ++rep) {
    const Pct pb = hop_latency<Boost>(m, 1e6, per_ns);
    const Pct pt = hop_latency<Tachyon>(m, 1e6, per_ns);
    std::printf("| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %ld |\n", Boost::kName, pb.p50, pb.p99,
                pb.p999, pb.p9999, pb.max, pb.consumer_preempted);
    std::printf("| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %ld |\n", Tachyon::kName, pt.p50, pt.p99,
                pt.p999, pt.p9999, pt.max, pt.consumer_preempted);
  }
  return 0;
}
