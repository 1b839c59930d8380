// Ed25519 signature checks in the same run (ratios in docs/PERFORMANCE.md):
//   - libsodium: crypto_sign_verify_detached, the reference;
//   - tables: ed25519::verify for a key already in the thread's cache (the steady state of a
//     trading key);
//   - first_use: a key the cache does not hold, i.e. libsodium's check plus building the key's
//     tables (the keys cycle through a pool larger than the cache).
// Run: build/release/bench/bench_verify
#include <benchmark/benchmark.h>
#include <sodium.h>

#include <string>
#include <vector>

#include "tachyon/api/crypto.hpp"
#include "tachyon/api/ed25519.hpp"

using namespace tachyon;

namespace {

struct Signed {
  api::PublicKey pk;
  api::Signature sig;
  std::string message;
};

// n keys, each with a signature over a ~100-byte message (a create_order's canonical record).
std::vector<Signed> make_pool(size_t n) {
  api::crypto_init();
  std::vector<Signed> pool(n);
  for (size_t i = 0; i < n; ++i) {
    Signed& s = pool[i];
    api::SecretKey sk;
    api::keygen(s.pk, sk);
    s.message =
        "tachyon: a signed body of about a hundred bytes, as the canonical record of a "
        "create_order " +
        std::to_string(i);
    crypto_sign_detached(s.sig.data(), nullptr, reinterpret_cast<const uint8_t*>(s.message.data()),
                         s.message.size(), sk.data());
  }
  return pool;
}

void BM_libsodium(benchmark::State& state) {
  const Signed s = make_pool(1)[0];
  for (auto _ : state) {
    benchmark::DoNotOptimize(api::ed25519::verify_reference(s.message, s.sig, s.pk));
  }
}
BENCHMARK(BM_libsodium);

void BM_tables(benchmark::State& state) {
  const Signed s = make_pool(1)[0];
  if (!api::ed25519::verify(s.message, s.sig, s.pk)) state.SkipWithError("did not verify");
  for (auto _ : state) benchmark::DoNotOptimize(api::ed25519::verify(s.message, s.sig, s.pk));
}
BENCHMARK(BM_tables);

void BM_first_use(benchmark::State& state) {
  // Twice the cache: a key is always evicted before it comes round again, once the slots fill.
  static const std::vector<Signed> pool = make_pool(2 * api::ed25519::kCacheSlots);
  size_t i = 0;
  for (auto _ : state) {
    const Signed& s = pool[i++ % pool.size()];
    benchmark::DoNotOptimize(api::ed25519::verify(s.message, s.sig, s.pk));
  }
  const auto st = api::ed25519::cache_totals();
  state.counters["builds"] = double(st.builds);
}
BENCHMARK(BM_first_use);

}  // namespace

BENCHMARK_MAIN();
