// Read side: the cost of reading the current BookSnapshot's best bid/ask while a writer thread
// publishes a new snapshot every 5 µs (200k/s), with 1 and 2 reader threads, for:
//   - Published<T> (atomic raw pointer + epoch-based reclamation, what tachyon uses),
//   - std::atomic<std::shared_ptr<T>> (libstdc++ 12: a spin-lock bit on every load),
//   - a per-reader cached shared_ptr refreshed under a mutex when a version counter moves.
// Usage: bench_published [seconds per row]   (default 1)
#include <pthread.h>
#include <x86intrin.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tachyon/pipe/book_snapshot.hpp"
#include "tachyon/pipe/published.hpp"

using namespace tachyon;
using namespace tachyon::pipe;
using Clock = std::chrono::steady_clock;

namespace {

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

std::unique_ptr<BookSnapshot> make(uint64_t n) {
  auto s = std::make_unique<BookSnapshot>();
  s->nonce = n;
  for (int i = 0; i < 10; ++i) {
    s->bids.push_worse({300000 - i, static_cast<Lots>(n + i), 1});
    s->asks.push_worse({300001 + i, static_cast<Lots>(n + i), 1});
  }
  return s;
}

struct Ebr {
  static constexpr const char* kName = "Published (atomic T* + epochs)";
  Published<BookSnapshot> p{8, make(0)};
  void publish(uint64_t n) { p.publish(make(n)); }
  struct R {
    Published<BookSnapshot>::Reader r;
    Lots read() {
      return r.read(
          [](const BookSnapshot* s) { return s->bids.front().size + s->asks.front().size; });
    }
  };
  R reader() { return R{p.reader()}; }
};

struct AtomicShared {
  static constexpr const char* kName = "std::atomic<std::shared_ptr>";
  std::atomic<std::shared_ptr<const BookSnapshot>> p{std::shared_ptr<const BookSnapshot>(make(0))};
  void publish(uint64_t n) { p.store(std::shared_ptr<const BookSnapshot>(make(n))); }
  struct R {
    AtomicShared* a;
    Lots read() {
      const auto s = a->p.load();
      return s->bids.front().size + s->asks.front().size;
    }
  };
  R reader() { return R{this}; }
};

struct CachedShared {
  static constexpr const char* kName = "per-reader shared_ptr + version";
  std::mutex mu;
  std::shared_ptr<const BookSnapshot> master{make(0)};
  alignas(128) std::atomic<uint64_t> version{0};
  void publish(uint64_t n) {
    std::shared_ptr<const BookSnapshot> next(make(n));
    {
      std::lock_guard lk(mu);
      master.swap(next);
    }
    version.fetch_add(1, std::memory_order_release);
  }
  struct R {
    CachedShared* c;
    uint64_t seen = UINT64_MAX;
    std::shared_ptr<const BookSnapshot> mine;
    Lots read() {
      const uint64_t v = c->version.load(std::memory_order_acquire);
      if (v != seen) {
        std::lock_guard lk(c->mu);
        mine = c->master;
        seen = v;
      }
      return mine->bids.front().size + mine->asks.front().size;
    }
  };
  R reader() { return R{this, UINT64_MAX, nullptr}; }
};

template <typename S>
void row(int readers, double secs) {
  S s;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> total_reads{0}, published{0};
  std::atomic<uint64_t> sink{0};
  std::thread writer([&] {
    pin(0);
    const double per_ns = 2.1;  // only paces the writer; the figures below use steady_clock
    uint64_t n = 1, next = __rdtsc();
    while (!stop.load(std::memory_order_relaxed)) {
      while (__rdtsc() < next) _mm_pause();
      next += static_cast<uint64_t>(5000 * per_ns);
      s.publish(n++);
    }
    published.store(n - 1);
  });
  std::vector<std::thread> rs;
  for (int i = 0; i < readers; ++i) {
    rs.emplace_back([&, i] {
      if (readers == 1) pin(1);
      (void)i;
      auto r = s.reader();
      uint64_t n = 0;
      Lots acc = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        for (int k = 0; k < 256; ++k) acc += r.read();
        n += 256;
      }
      total_reads.fetch_add(n);
      sink.fetch_add(static_cast<uint64_t>(acc));
    });
  }
  const auto t0 = Clock::now();
  while (Clock::now() - t0 < std::chrono::duration<double>(secs)) std::this_thread::yield();
  stop.store(true);
  for (auto& t : rs) t.join();
  writer.join();
  const double el = std::chrono::duration<double>(Clock::now() - t0).count();
  const double per_reader = total_reads.load() / static_cast<double>(readers) / el;
  std::printf("| %s | %d | %.1f | %.1fM | %.0fk |\n", S::kName, readers, 1e9 / per_reader,
              per_reader / 1e6, published.load() / el / 1e3);
}

}  // namespace

int main(int argc, char** argv) {
  const double secs = argc > 1 ? std::atof(argv[1]) : 1.0;
  std::printf("| scheme | readers | ns per read | reads/s per reader | snapshots published/s |\n");
  std::printf("|---|---|---|---|---|\n");
  for (int readers : {1, 2}) {
    row<Ebr>(readers, secs);
    row<AtomicShared>(readers, secs);
    row<CachedShared>(readers, secs);
  }
  std::printf(
      "(writer pinned to CPU 0; one reader pinned to CPU 1; two readers unpinned on 2 vCPUs)\n");
  return 0;
}
