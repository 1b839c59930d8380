#pragma once
// The world the pipeline benchmarks start from: market 0 (ETH-like, no per-account order limit)
// and `accounts` funded accounts from index 100, executed on a fresh engine (and appended to
// `journal` when given, so recovery would see them).
#include <memory>
#include <vector>

#include "support/tx_builder.hpp"
#include "tachyon/engine/engine.hpp"
#include "tachyon/store/journal.hpp"

namespace tachyon::bench {

inline std::unique_ptr<Engine> bench_world(testing::TxBuilder& b, int accounts,
                                           store::Journal* journal = nullptr) {
  auto engine = std::make_unique<Engine>();
  NullSink sink;
  MarketParams p = testing::demo_market_params();
  p.max_orders_per_account = 1 << 20;
  std::vector<Tx> genesis = {b.create_market(0, p, 300000)};
  for (AccountIndex a = 100; a < 100 + static_cast<AccountIndex>(accounts); ++a)
    genesis.push_back(b.deposit(a, 1'000'000'000 * kUsdcScale));
  uint64_t seq = 0;
  for (Tx& tx : genesis) {
    tx.h.seq = ++seq;
    engine->execute(tx, sink);
    if (journal != nullptr) journal->append(tx);
  }
  return engine;
}

}  // namespace tachyon::bench
