#pragma once
// The world the pipeline benchmarks start from: market 0 (ETH-like, no per-account order limit)
// and `accounts` funded accounts from index 100, executed on a fresh engine (and appended to
// `journal` when given, so recovery would see them).
#include <cmath>
#include <memory>
#include <random>
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

// bench_apply's book and order flow (bench_read_side replays the same flow): kAccounts funded
// accounts trade market 0 around kMid over a book of 2 x kLevels levels where level k holds
// 1 + (k * 7 + side) % 12 orders of 1-10 lots (~5,200 resting orders). The flow: 55% limit orders
// near the touch (their distance from the mid 1 + kLevels u^3 ticks), 35% cancels of a random
// order of ours that rested, 10% market orders sweeping 5-30 lots. Nonces may skip (as a client
// pipelining txs does): a refused tx, e.g. the cancel of an order that filled meanwhile, consumes
// none, and the account's next tx must still go.
class ApplyFlow {
 public:
  static constexpr Ticks kMid = 300000;
  static constexpr int kLevels = 400, kAccounts = 200;
  struct Mine {
    AccountIndex a;
    OrderIndex index;
  };

  ApplyFlow(testing::TxBuilder& b, uint64_t seed) : b_(b), rng_(seed) {}
  // A fresh engine (bench_world) with the book resting on it.
  std::unique_ptr<Engine> world() {
    auto engine = bench_world(b_, kAccounts);
    NullSink sink;
    uint64_t seq = engine->last_seq();
    for (int side = 0; side < 2; ++side)
      for (int k = 1; k <= kLevels; ++k)
        for (int i = 0; i < 1 + (k * 7 + side) % 12; ++i) {
          const auto a = static_cast<AccountIndex>(rng_() % kAccounts);
          Tx tx = b_.limit(100 + a, nonce_[a]++, 0, side == 1, side ? kMid + k : kMid - k,
                           1 + static_cast<Lots>(rng_() % 10));
          tx.h.seq = ++seq;
          const TxResult r = engine->execute(tx, sink);
          if (r.reject == Reject::kOk) resting_.push_back({100 + a, r.order_index});
        }
    return engine;
  }
  // The flow's next tx; `limit_account`: the account of a limit order (that may rest), else 0.
  Tx next(AccountIndex& limit_account) {
    const auto a = static_cast<AccountIndex>(rng_() % kAccounts);
    const uint64_t kind = rng_() % 100;
    const bool ask = rng_() % 2 == 1;
    Tx tx;
    limit_account = 0;
    if (kind < 55 || (kind < 90 && resting_.empty())) {
      const auto d = static_cast<Ticks>(1 + kLevels * std::pow(unit_(rng_), 3.0));
      tx = b_.limit(100 + a, nonce_[a], 0, ask, ask ? kMid + d : kMid - d,
                    1 + static_cast<Lots>(rng_() % 10));
      limit_account = 100 + a;
    } else if (kind < 90) {
      const size_t i = rng_() % resting_.size();
      const Mine m = resting_[i];
      resting_[i] = resting_.back();
      resting_.pop_back();
      tx = b_.cancel(m.a, nonce_[m.a - 100], 0, m.index);
    } else {
      tx = b_.market(100 + a, nonce_[a], 0, ask, ask ? kMid - kLevels : kMid + kLevels,
                     5 + static_cast<Lots>(rng_() % 26));
    }
    tx.h.flags |= kTxFlagSkipNonce;
    return tx;
  }
  // The tx went in (the engine or a ring took it): its account's next nonce.
  void sent(const Tx& tx) { ++nonce_[tx.h.account - 100]; }
  // A limit order that rested (a cancel of it may come).
  void rested(AccountIndex a, OrderIndex index) { resting_.push_back({a, index}); }

 private:
  testing::TxBuilder& b_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> unit_{0, 1};
  std::vector<int64_t> nonce_ = std::vector<int64_t>(kAccounts, 0);
  std::vector<Mine> resting_;
};

}  // namespace tachyon::bench
