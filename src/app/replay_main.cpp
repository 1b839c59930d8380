// tachyon-replay: drives the engine alone (no journal, no network) with the seeded random tx
// stream of random_stream.hpp, the one the tests and the server's demo load use, and prints the
// verdicts by reject code and the final state hash (the same seed gives the same hash).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <map>

#include "random_stream.hpp"
#include "tachyon/engine/engine.hpp"

using namespace tachyon;

int main(int argc, char** argv) {
  CLI::App app{"tachyon-replay: run a seeded tx stream through the engine"};
  uint64_t seed = 1;
  int64_t txs = 1'000'000;
  int accounts = 64;
  int markets = 2;
  int64_t validate_every = 0;
  bool hash_only = false;
  app.add_option("--seed", seed, "stream seed");
  app.add_option("--txs", txs, "transactions after genesis")->check(CLI::NonNegativeNumber);
  app.add_option("--accounts", accounts, "funded accounts")->check(CLI::Range(1, 100000));
  app.add_option("--markets", markets, "markets")->check(CLI::Range(1, 254));
  app.add_option("--validate-every", validate_every, "run validate() every N txs (0 = at the end)");
  app.add_flag("--hash-only", hash_only, "print only the state hash (hex)");
  CLI11_PARSE(app, argc, argv);

  app::StreamConfig sc;
  sc.accounts = accounts;
  sc.markets = markets;
  Engine engine;
  app::RandomStream stream(seed, sc);
  stream.set_oracle(&engine);
  NullSink sink;
  std::map<uint32_t, uint64_t> verdicts;
  const auto t0 = std::chrono::steady_clock::now();
  auto run = [&](const Tx& tx, int64_t i) {
    const TxResult r = engine.execute(tx, sink);
    stream.on_result(tx, r);
    ++verdicts[reject_code(r.reject)];
    if (validate_every > 0 && i % validate_every == 0) {
      if (std::string bad = engine.validate(); !bad.empty()) {
        std::fprintf(stderr, "invariant broken after tx %lld: %s\n", static_cast<long long>(i),
                     bad.c_str());
        std::exit(2);
      }
    }
  };
  int64_t i = 0;
  for (const Tx& tx : stream.genesis()) run(tx, i++);
  for (int64_t k = 0; k < txs; ++k) run(stream.next(), i++);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (std::string bad = engine.validate(); !bad.empty()) {
    std::fprintf(stderr, "invariant broken at the end: %s\n", bad.c_str());
    return 2;
  }
  if (hash_only) {
    std::printf("%016llx\n", static_cast<unsigned long long>(engine.state_hash()));
    return 0;
  }
  std::printf("tachyon-replay: seed %llu, %lld txs in %.3f s (%.0f tx/s incl. generation)\n",
              static_cast<unsigned long long>(seed), static_cast<long long>(i), secs, i / secs);
  std::printf("resting orders: %u, accounts: %zu\n", engine.orders().live_count(),
              engine.accounts().size());
  for (const auto& [code, n] : verdicts) {
    std::printf("  %5u %-55s %llu\n", code,
                std::string(reject_message(static_cast<Reject>(code))).c_str(),
                static_cast<unsigned long long>(n));
  }
  std::printf("state hash: %016llx (invariants hold)\n",
              static_cast<unsigned long long>(engine.state_hash()));
  return 0;
}
