// Memory of the engine at scale: 1M accounts and 100 markets × 10k resting
// orders. Bytes are measured three ways: live heap bytes counted in the replaced operator new
// (malloc_usable_size of each block), glibc's mallinfo2(), and the resident set (/proc/self/statm:
// pages actually touched). Results in docs/PERFORMANCE.md.
//
// Usage: bench_engine_memory [accounts=1000000] [markets=100] [orders_per_market=10000]
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "alloc_counter.hpp"
#include "support/tx_builder.hpp"
#include "tachyon/engine/engine.hpp"
#include "workload.hpp"

namespace tachyon::bench {
namespace {

struct Mem {
  int64_t live = 0;      // counted in operator new
  int64_t mallinfo = 0;  // uordblks + hblkhd
  int64_t rss = 0;
};

Mem mem_now() {
  Mem m;
  m.live = alloc_stats().live_bytes;
  const struct mallinfo2 mi = mallinfo2();
  m.mallinfo = static_cast<int64_t>(mi.uordblks + mi.hblkhd);
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  m.rss = static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE);
  return m;
}

double mib(int64_t b) { return static_cast<double>(b) / (1024.0 * 1024.0); }

void row(const char* what, const Mem& a, const Mem& b, uint64_t per, const char* per_what) {
  const double n = static_cast<double>(per);
  std::printf(
      "| %s | %.1f | %.1f | %.1f | %s |\n", what, mib(b.live - a.live),
      mib(b.mallinfo - a.mallinfo), mib(b.rss - a.rss),
      per ? (std::to_string(static_cast<long long>((b.live - a.live) / n)) + " B heap, " +
             std::to_string(static_cast<long long>((b.rss - a.rss) / n)) + " B RSS per " + per_what)
                .c_str()
          : "");
}

// What one reserved entry of each engine hash map costs, measured on identical containers.
template <typename Map>
double bytes_per_reserved(size_t n) {
  const int64_t before = alloc_stats().live_bytes;
  auto m = std::make_unique<Map>();
  m->reserve(n);
  const int64_t b = alloc_stats().live_bytes - before;
  return static_cast<double>(b) / static_cast<double>(n);
}

struct CoiKeyLike {
  AccountIndex account;
  uint64_t coi;
  bool operator==(const CoiKeyLike&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const CoiKeyLike& k) {
    return H::combine(std::move(h), k.account, k.coi);
  }
};

void print_sizes(size_t orders, size_t accounts) {
  // The engine's OrderIndexMap: a ring of 2 cells (uint32) per pool slot; its overflow map is
  // empty in steady state. The client-order-index map is reserved for min(pool, 16384) and grows
  // with the live client order indices: counted here as if every order carried one.
  const double order_map = 2.0 * sizeof(uint32_t);
  const double coi_map = bytes_per_reserved<absl::flat_hash_map<CoiKeyLike, uint32_t>>(orders);
  const double acct_map = bytes_per_reserved<absl::flat_hash_map<AccountIndex, uint32_t>>(accounts);
  std::printf("## Sizes\n\n| item | bytes |\n|---|---|\n");
  std::printf("| sizeof(Order) (pool slot) | %zu |\n", sizeof(Order));
  std::printf("| free list + expiry heap entry per pool slot | %zu |\n", 2 * sizeof(uint32_t));
  std::printf("| order index map (OrderIndexMap ring, 2 cells) per reserved order | %.1f |\n",
              order_map);
  std::printf(
      "| client order index map (flat_hash_map<CoiKey, uint32_t>) per live order with one | %.1f "
      "|\n",
      coi_map);
  std::printf("| **per order slot, reserved up front** | **%.0f** |\n",
              sizeof(Order) + 8 + order_map + coi_map);
  std::printf("| sizeof(Account) (2 inline Positions, 1 inline ApiKey) | %zu |\n", sizeof(Account));
  std::printf("| sizeof(Position) / sizeof(ApiKey) | %zu / %zu |\n", sizeof(Position),
              sizeof(ApiKey));
  std::printf(
      "| account map (flat_hash_map<AccountIndex, uint32_t>) per reserved account | %.1f |\n",
      acct_map);
  std::printf("| **per account, reserved up front** | **%.0f** |\n", sizeof(Account) + acct_map);
  std::printf("| sizeof(Level) | %zu |\n", sizeof(Level));
  std::printf("| sizeof(Market) (inline in Engine, 255 of them) | %zu |\n", sizeof(Market));
  std::printf("| sizeof(Engine) | %zu |\n\n", sizeof(Engine));
}

}  // namespace
}  // namespace tachyon::bench

int main(int argc, char** argv) {
  using namespace tachyon;
  using namespace tachyon::bench;
  set_track_live_bytes(true);
  const uint64_t n_accounts = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  const int n_markets = argc > 2 ? std::atoi(argv[2]) : 100;
  const uint64_t per_market = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 10'000;
  const uint64_t n_orders = per_market * static_cast<uint64_t>(n_markets);
  auto pow2_at_least = [](uint64_t v) {
    uint32_t p = 1;
    while (p < v) p <<= 1;
    return p;
  };
  const EngineConfig cfg{.max_orders = pow2_at_least(n_orders),
                         .expected_accounts = pow2_at_least(n_accounts + 2)};
  std::printf(
      "# bench_engine_memory: %llu accounts, %d markets x %llu resting orders; "
      "EngineConfig{.max_orders = %u, .expected_accounts = %u}\n\n",
      static_cast<unsigned long long>(n_accounts), n_markets,
      static_cast<unsigned long long>(per_market), cfg.max_orders, cfg.expected_accounts);
  print_sizes(cfg.max_orders, cfg.expected_accounts);

  using clock = std::chrono::steady_clock;
  std::printf(
      "## Engine at scale\n\n| step | heap MiB (counted) | heap MiB (mallinfo2) | RSS MiB | "
      "note |\n|---|---|---|---|---|\n");
  const Mem m0 = mem_now();
  auto engine = std::make_unique<Engine>(cfg);
  NullSink sink;
  testing::TxBuilder b;
  const Mem m1 = mem_now();
  row("Engine(cfg): pool, maps, accounts reserved", m0, m1, 0, "");

  auto t0 = clock::now();
  for (uint64_t i = 0; i < n_accounts; ++i) {
    if (!engine->execute(b.deposit(kFirstTrader + i, 10'000 * kUsdcScale), sink).ok()) return 1;
  }
  const double dep_ns = std::chrono::duration<double, std::nano>(clock::now() - t0).count();
  const Mem m2 = mem_now();
  row("deposits: accounts created", m1, m2, n_accounts, "account");

  for (int m = 0; m < n_markets; ++m) {
    char sym[16];
    std::snprintf(sym, sizeof(sym), "M%d", m);
    const Tx tx =
        b.create_market(static_cast<MarketId>(m), testing::demo_market_params(sym), 100'000 + m);
    if (!engine->execute(tx, sink).ok()) return 1;
  }
  const Mem m3 = mem_now();
  row("markets created (book levels reserved)", m2, m3, static_cast<uint64_t>(n_markets), "market");

  std::vector<int64_t> nonce(n_accounts, 0);
  Rng rng(7);
  t0 = clock::now();
  for (int m = 0; m < n_markets; ++m) {
    const Ticks mid = 100'000 + m;
    for (uint64_t i = 0; i < per_market; ++i) {
      const uint64_t a = rng.below(n_accounts);
      const bool is_ask = i % 2 == 1;
      const Ticks off = rng.range(1, 500);
      const Tx tx = b.limit(kFirstTrader + a, nonce[a], static_cast<MarketId>(m), is_ask,
                            is_ask ? mid + off : mid - off, rng.range(1, 20));
      if (!engine->execute(tx, sink).ok()) {
        std::fprintf(stderr, "order refused\n");
        return 1;
      }
      ++nonce[a];
    }
  }
  const double ord_ns = std::chrono::duration<double, std::nano>(clock::now() - t0).count();
  const Mem m4 = mem_now();
  row("resting orders placed", m3, m4, n_orders, "order");
  row("**total engine**", m0, m4, 0, "");
  uint64_t spilled = 0;
  for (const Account& a : engine->accounts()) spilled += a.positions.size() > 2;
  std::printf(
      "\n%u resting orders; %llu accounts have a Position entry (open orders) in more than 2 "
      "markets: their Position vector left the inline storage for the heap. Setup speed, not a "
      "benchmark: %.0f ns per deposit, %.0f ns per order.\n",
      engine->orders().live_count(), static_cast<unsigned long long>(spilled),
      dep_ns / static_cast<double>(n_accounts), ord_ns / static_cast<double>(n_orders));
  const double total_gib = static_cast<double>(m4.rss - m0.rss) / (1024.0 * 1024.0 * 1024.0);
  const double heap_gib = static_cast<double>(m4.live - m0.live) / (1024.0 * 1024.0 * 1024.0);
  std::printf("total: %.2f GiB of heap reserved, %.2f GiB resident: %.1f%% / %.1f%% of 24 GiB\n",
              heap_gib, total_gib, 100.0 * heap_gib / 24.0, 100.0 * total_gib / 24.0);
  return 0;
}
