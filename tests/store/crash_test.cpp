// kill -9 the real process that runs the sequencer and the journal (tachyon-feed) at random
// points under load, many times; restart; check that every acknowledged tx is there (fsync mode)
// and that the recovered state hash equals an independent replay of the same stream.
// TACHYON_CRASH_ITERATIONS sets the count (default 20); a failure prints its iteration seed.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "store/store_support.hpp"
#include "support/child_process.hpp"

namespace tachyon::testing {
namespace {

std::vector<std::string> feed_args(const std::string& dir, uint64_t seed, uint64_t snapshot_every,
                                   uint64_t segment_bytes) {
  return {TACHYON_FEED_BIN,
          "--data-dir",
          dir,
          "--seed",
          std::to_string(seed),
          "--txs",
          "1000000000",
          "--durability",
          "fsync",
          "--snapshot-every",
          std::to_string(snapshot_every),
          "--segment-bytes",
          std::to_string(segment_bytes)};
}

// Runs the feed for `run_ms` after it has recovered, then SIGKILLs it wherever it is (mid-write,
// mid-fsync, mid-snapshot). Returns the highest acknowledged seq (all seqs up to it were acked).
uint64_t run_and_kill(const std::vector<std::string>& args, int run_ms) {
  Child c = spawn(args);
  uint64_t acked = 0, start = 0;
  std::string line;
  auto kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          kill_at - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0 || !read_line(c, line, static_cast<int>(left))) break;
    unsigned long long v = 0;
    if (std::sscanf(line.c_str(), "recovered seq %llu", &v) == 1) {
      start = v;
      kill_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(run_ms);
    }
    if (std::sscanf(line.c_str(), "ack %llu", &v) == 1) {
      EXPECT_GT(v, acked) << "acks must grow";
      acked = v;
    }
  }
  finish(c, true);
  EXPECT_GT(acked, start) << "the feed acknowledged nothing";
  return acked;
}

TEST(Crash, kill9_under_load_loses_no_acknowledged_tx_and_recovers_the_replayed_state) {
  const char* env = std::getenv("TACHYON_CRASH_ITERATIONS");
  const int iterations = env ? std::atoi(env) : 20;
  Rng rng(0xC0FFEE);
  for (int it = 0; it < iterations; ++it) {
    SCOPED_TRACE("crash iteration " + std::to_string(it));
    TempDir dir;
    const uint64_t seed = 100 + static_cast<uint64_t>(it);
    const uint64_t snapshot_every = std::array<uint64_t, 3>{0, 700, 2500}[it % 3];
    const uint64_t segment_bytes = it % 2 ? 1u << 20 : 32u << 10;
    const auto args = feed_args(dir.path(), seed, snapshot_every, segment_bytes);
    uint64_t acked = 0;
    const int kills = 1 + it % 2;  // some iterations crash twice: recover, resume, crash again
    for (int k = 0; k < kills; ++k)
      acked = std::max(acked, run_and_kill(args, 20 + static_cast<int>(rng.below(300))));

    Child rec = spawn({TACHYON_FEED_BIN, "--data-dir", dir.path(), "--recover-only"});
    std::string line;
    unsigned long long seq = 0, hash = 0;
    while (read_line(rec, line, 30000)) std::sscanf(line.c_str(), "state %llu %llx", &seq, &hash);
    const int ws = finish(rec, false);
    ASSERT_TRUE(WIFEXITED(ws) && WEXITSTATUS(ws) == 0) << "recovery failed";
    EXPECT_GE(seq, acked) << "an acknowledged tx was lost";
    StreamReplayer replay(seed);
    replay.run_to(seq);
    EXPECT_EQ(replay.engine().state_hash(), hash) << "recovered state is not the replayed state";
    std::printf("crash %2d: %d kill(s), last acked seq %llu, recovered seq %llu\n", it, kills,
                static_cast<unsigned long long>(acked), seq);
  }
}

}  // namespace
}  // namespace tachyon::testing
