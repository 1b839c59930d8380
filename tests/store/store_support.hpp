#pragma once
// Helpers for store tests: temporary directories and the seeded stream run into a journal.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/random_stream.hpp"
#include "support/temp_dir.hpp"
#include "tachyon/store/journal.hpp"
#include "tachyon/store/snapshot.hpp"

namespace tachyon::testing {

// The same stream tachyon-feed runs: genesis, then next(), seq i = the i-th tx.
class StreamReplayer {
 public:
  explicit StreamReplayer(uint64_t seed, int accounts = 12, int markets = 2)
      : stream_(seed, config(accounts, markets)) {
    stream_.set_oracle(&engine_);
    genesis_ = stream_.genesis();
  }
  Tx next() {
    Tx tx = gi_ < genesis_.size() ? genesis_[gi_++] : stream_.next();
    if (block_txs_ != 0) tx.h.block = (tx.h.seq - 1) / block_txs_ + 1;
    return tx;
  }
  // Stamps blocks of `n` txs (the stream's own blocks are one tx each), as a sequencer sealing
  // every n txs would.
  void set_block_txs(uint64_t n) { block_txs_ = n; }
  Tx step() {
    const Tx tx = next();
    stream_.on_result(tx, engine_.execute(tx, sink_));
    return tx;
  }
  void run_to(uint64_t seq) {
    while (engine_.last_seq() < seq) step();
  }
  Engine& engine() { return engine_; }

 private:
  static StreamConfig config(int accounts, int markets) {
    StreamConfig c;
    c.accounts = accounts;
    c.markets = markets;
    return c;
  }
  Engine engine_;
  NullSink sink_;
  RandomStream stream_;
  std::vector<Tx> genesis_;
  size_t gi_ = 0;
  uint64_t block_txs_ = 0;
};

}  // namespace tachyon::testing
