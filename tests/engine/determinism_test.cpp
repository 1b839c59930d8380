// Determinism: the same tx stream gives the same state hash, twice in one process and in two
// separate processes (the tachyon-replay tool), and a known stream gives a pinned hash.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "support/random_stream.hpp"

namespace tachyon::testing {
namespace {

uint64_t run_stream(uint64_t seed, int txs) {
  Engine e;
  NullSink sink;
  RandomStream stream(seed);
  stream.set_oracle(&e);
  for (const Tx& tx : stream.genesis()) stream.on_result(tx, e.execute(tx, sink));
  for (int i = 0; i < txs; ++i) {
    const Tx tx = stream.next();
    stream.on_result(tx, e.execute(tx, sink));
  }
  EXPECT_EQ(e.validate(), "");
  return e.state_hash();
}

TEST(Determinism, same_stream_twice_gives_the_same_state_hash) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    EXPECT_EQ(run_stream(seed, 20'000), run_stream(seed, 20'000)) << "seed " << seed;
  }
}

TEST(Determinism, different_streams_give_different_state_hashes) {
  EXPECT_NE(run_stream(1, 5'000), run_stream(2, 5'000));
}

TEST(Determinism, a_second_process_computes_the_same_state_hash) {
  const uint64_t here = run_stream(7, 20'000);
  const std::string cmd = std::string(TACHYON_REPLAY_BIN) +
                          " --seed 7 --txs 20000 --accounts 12 --markets 2 --hash-only";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[64] = {};
  ASSERT_NE(std::fgets(buf, sizeof(buf), p), nullptr);
  ASSERT_EQ(pclose(p), 0);
  EXPECT_EQ(std::stoull(buf, nullptr, 16), here);
}

}  // namespace
}  // namespace tachyon::testing
