// kill -9 the real process that runs the sequencer and the journal (tachyon-feed) at random
// points under load, many times; restart; check that every acknowledged tx is there (fsync mode)
// and that the recovered state hash equals an independent replay of the same stream.
// TACHYON_CRASH_ITERATIONS sets the count (default 20); a failure prints its iteration seed.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "store/store_support.hpp"
#include "support/child_process.hpp"
#include "tachyon/store/commit.hpp"

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

// Runs the feed for `run_ms` after it has recovered and until it acknowledged `min_acks` txs
// past the recovered seq (an event, not a rate: a slow machine only takes longer), then SIGKILLs
// it wherever it is (mid-write, mid-fsync, mid-snapshot). Returns the highest acknowledged seq
// (all seqs up to it were acked).
uint64_t run_and_kill(const std::vector<std::string>& args, int run_ms, uint64_t min_acks = 0) {
  Child c = spawn(args);
  uint64_t acked = 0, start = 0;
  bool recovered = false;
  std::string line;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  auto kill_at = give_up;
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (recovered && now >= kill_at && acked >= start + min_acks) break;
    const auto wait_until = recovered && now < kill_at ? kill_at : give_up;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(wait_until - now).count();
    if (left <= 0 || !read_line(c, line, static_cast<int>(left))) {
      if (std::chrono::steady_clock::now() >= give_up || c.eof) break;
      continue;  // kill_at passed: go on reading acks until min_acks
    }
    unsigned long long v = 0;
    if (std::sscanf(line.c_str(), "recovered seq %llu", &v) == 1) {
      start = v;
      recovered = true;
      kill_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(run_ms);
    }
    if (std::sscanf(line.c_str(), "ack %llu", &v) == 1) {
      EXPECT_GT(v, acked) << "acks must grow";
      acked = v;
    }
  }
  finish(c, true);
  EXPECT_GT(acked, start) << "the feed acknowledged nothing";
  // A snapshot writer (the feed's fork() child) dies with the feed: none may go on writing into
  // the data dir the next run recovers from.
  const auto dir = std::find(args.begin(), args.end(), "--data-dir");
  if (dir != args.end() && dir + 1 != args.end()) {
    EXPECT_EQ(kill_survivors(*(dir + 1), 5000), 0u) << "a snapshot writer outlived the feed";
  }
  return acked;
}

TEST(Crash, kill9_under_load_loses_no_acknowledged_tx_and_recovers_the_replayed_state) {
  const char* env = std::getenv("TACHYON_CRASH_ITERATIONS");
  const int iterations = env ? std::atoi(env) : 20;
  Rng rng(0xC0FFEE);
  uint64_t from_replica_snapshot = 0;  // recoveries that started from a replica's snapshot
  for (int it = 0; it < iterations; ++it) {
    SCOPED_TRACE("crash iteration " + std::to_string(it));
    TempDir dir;
    const uint64_t seed = 100 + static_cast<uint64_t>(it);
    const uint64_t snapshot_every = std::array<uint64_t, 3>{0, 700, 2500}[it % 3];
    const uint64_t segment_bytes = it % 2 ? 1u << 20 : 32u << 10;
    auto args = feed_args(dir.path(), seed, snapshot_every, segment_bytes);
    // Snapshots by fork() or from the committer's replica, alternately (every snapshot setting
    // meets both over the 6-iteration cycle).
    const bool replica = it % 6 >= 3;
    args.insert(args.end(), {"--snapshot-from", replica ? "replica" : "fork"});
    uint64_t acked = 0;
    const int kills = 1 + it % 2;  // some iterations crash twice: recover, resume, crash again
    for (int k = 0; k < kills; ++k)
      acked = std::max(acked, run_and_kill(args, 20 + static_cast<int>(rng.below(300))));

    Child rec = spawn({TACHYON_FEED_BIN, "--data-dir", dir.path(), "--recover-only"});
    std::string line;
    unsigned long long seq = 0, hash = 0, snap = 0, r_seq = 0, r_hash = 0;
    while (read_line(rec, line, 30000)) {
      std::sscanf(line.c_str(), "state %llu %llx", &seq, &hash);
      std::sscanf(line.c_str(), "recovered seq %llu hash %llx snapshot %llu", &r_seq, &r_hash,
                  &snap);
    }
    const int ws = finish(rec, false);
    ASSERT_TRUE(WIFEXITED(ws) && WEXITSTATUS(ws) == 0) << "recovery failed";
    EXPECT_GE(seq, acked) << "an acknowledged tx was lost";
    StreamReplayer replay(seed);
    replay.run_to(seq);
    EXPECT_EQ(replay.engine().state_hash(), hash) << "recovered state is not the replayed state";
    std::printf(
        "crash %2d: %d kill(s), snapshots %-7s every %4llu, last acked seq %llu, "
        "recovered seq %llu from snapshot %llu\n",
        it, kills, replica ? "replica" : "fork", static_cast<unsigned long long>(snapshot_every),
        static_cast<unsigned long long>(acked), seq, snap);
    if (replica && snap > 0) ++from_replica_snapshot;
  }
  if (iterations >= 6) {
    EXPECT_GT(from_replica_snapshot, 0u) << "no recovery started from a replica's snapshot";
  }
}

// ---- a committer that lags at the crash ----

std::vector<std::string> lagging_feed_args(const std::string& dir, uint64_t seed, uint64_t txs,
                                           uint64_t snapshot_every, uint64_t segment_bytes,
                                           uint64_t stall_after) {
  auto a = feed_args(dir, seed, snapshot_every, segment_bytes);
  for (size_t i = 0; i + 1 < a.size(); ++i) {
    if (a[i] == "--txs") a[i + 1] = std::to_string(txs);
  }
  a.insert(a.end(), {"--block-txs", "50"});
  if (stall_after != 0) a.insert(a.end(), {"--stall-committer-after", std::to_string(stall_after)});
  return a;
}

struct FeedRun {
  int status = -1;
  unsigned long long committed_seq = 0, catch_up_txs = 0, replica_from = 0, dropped = 0,
                     done_seq = 0;
};

// Runs the feed to its end (--txs), reading what its committer reported at start.
FeedRun run_to_end(const std::vector<std::string>& args) {
  Child c = spawn(args);
  FeedRun r;
  std::string line;
  while (read_line(c, line, 60000)) {
    (void)std::sscanf(
        line.c_str(),
        "committer at seq %llu, catching up %llu txs from snapshot %llu, dropped %llu",
        &r.committed_seq, &r.catch_up_txs, &r.replica_from, &r.dropped);
    (void)std::sscanf(line.c_str(), "done %llu", &r.done_seq);
  }
  r.status = finish(c, false);
  return r;
}

// The reference: one uninterrupted pass over the whole journal of `dir` by a fresh committer
// (in `scratch`), fed as the sequencer feeds it: push every tx, seal when the block changes.
std::vector<store::BlockCommitment> commit_in_one_pass(const std::string& dir,
                                                       const std::string& scratch) {
  store::Committer c(scratch, std::make_unique<Engine>(EngineConfig{}), 1);
  EXPECT_TRUE(c.start().ok());
  uint64_t block = 0;
  int64_t time = 0;
  store::JournalScan scan;
  const Status s = store::replay_journal(
      dir, 0,
      [&](const Tx& tx) {
        if (block != 0 && tx.h.block != block) c.seal(block, time);
        block = tx.h.block;
        time = tx.h.time_ns;
        c.push(tx);
      },
      scan, /*repair=*/false);
  EXPECT_TRUE(s.ok()) << s.message();
  if (block != 0) c.seal(block, time);
  c.stop();
  std::vector<store::BlockCommitment> out;
  EXPECT_TRUE(store::read_commitments(scratch, out).ok());
  return out;
}

// The last seq in the journal of `dir`. A kill can leave txs written that were never acked (the
// feed was killed between the write and the ack line), so a run's end must lie past this too.
uint64_t journal_end(const std::string& dir) {
  uint64_t end = 0;
  store::JournalScan scan;
  (void)store::replay_journal(
      dir, 0, [&](const Tx& tx) { end = tx.h.seq; }, scan, /*repair=*/false);
  return end;
}

void expect_contiguous(const std::vector<store::BlockCommitment>& v, uint64_t last_seq) {
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().first_seq, 1u);
  for (size_t i = 1; i < v.size(); ++i) {
    EXPECT_EQ(v[i].block, v[i - 1].block + 1) << "block " << v[i].block;
    EXPECT_EQ(v[i].first_seq, v[i - 1].last_seq + 1) << "block " << v[i].block;
  }
  EXPECT_EQ(v.back().last_seq, last_seq);
}

TEST(Crash, a_committer_lagging_at_a_kill9_catches_up_to_the_commitments_of_one_pass) {
  TempDir dir, scratch;
  // The committer stalls after block 3 while the feed runs on; then SIGKILL.
  const uint64_t acked =
      run_and_kill(lagging_feed_args(dir.path(), 7, 1'000'000'000, 0, 1u << 20, 3), 300, 3500);
  std::vector<store::BlockCommitment> before;
  ASSERT_TRUE(store::read_commitments(dir.path(), before).ok());
  ASSERT_EQ(before.size(), 3u) << "the committer stalled after block 3";
  const uint64_t committed = before.empty() ? 0 : before.back().last_seq;
  ASSERT_GT(acked, committed + 1000) << "the committer must lag by many blocks at the kill";

  // Restart without the stall and run to a fixed end: the committer first commits what the
  // killed one never reached, then the new blocks. The journal may hold more than the acks read
  // before the kill: the end lies past both.
  const uint64_t end = std::max(acked, journal_end(dir.path())) + 2000;
  const FeedRun r = run_to_end(lagging_feed_args(dir.path(), 7, end, 0, 1u << 20, 0));
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
  EXPECT_EQ(r.committed_seq, committed);
  EXPECT_GE(r.catch_up_txs, acked - committed);
  EXPECT_EQ(r.done_seq, end);

  std::vector<store::BlockCommitment> after;
  ASSERT_TRUE(store::read_commitments(dir.path(), after).ok());
  expect_contiguous(after, end);
  const auto ref = commit_in_one_pass(dir.path(), scratch.path());
  ASSERT_EQ(after.size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    SCOPED_TRACE("block " + std::to_string(ref[i].block));
    EXPECT_EQ(after[i].block, ref[i].block);
    EXPECT_EQ(after[i].first_seq, ref[i].first_seq);
    EXPECT_EQ(after[i].last_seq, ref[i].last_seq);
    EXPECT_EQ(after[i].tx_count, ref[i].tx_count);
    EXPECT_EQ(after[i].sealed_time_ns, ref[i].sealed_time_ns);
    EXPECT_EQ(after[i].tx_root, ref[i].tx_root);
    EXPECT_EQ(after[i].state_root, ref[i].state_root);
    EXPECT_EQ(after[i].commitment, ref[i].commitment);
  }
  std::printf(
      "lagging committer: killed at acked seq %llu; restart caught up %llu txs (replica from "
      "snapshot %llu); %zu blocks equal one uninterrupted pass\n",
      static_cast<unsigned long long>(acked), r.catch_up_txs, r.replica_from, ref.size());
}

TEST(Crash, snapshots_keep_the_journal_a_lagging_committer_needs) {
  TempDir dir;
  // Snapshots every 700 txs and 32 KiB segments: without the committer's seq, retiring would
  // delete the journal after block 3 that the committer has not committed.
  const uint64_t acked =
      run_and_kill(lagging_feed_args(dir.path(), 8, 1'000'000'000, 700, 32u << 10, 3), 400, 3500);
  ASSERT_GT(acked, 3000u) << "several snapshots must have been taken";
  EXPECT_FALSE(store::list_snapshots(dir.path()).empty());
  std::vector<store::BlockCommitment> before;
  ASSERT_TRUE(store::read_commitments(dir.path(), before).ok());
  ASSERT_EQ(before.size(), 3u);
  const uint64_t committed = before.empty() ? 0 : before.back().last_seq;
  const uint64_t end = std::max(acked, journal_end(dir.path())) + 1000;
  const FeedRun r = run_to_end(lagging_feed_args(dir.path(), 8, end, 700, 32u << 10, 0));
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0)
      << "the restarted committer could not rebuild its replica or read the journal it needs";
  EXPECT_EQ(r.committed_seq, committed);
  std::vector<store::BlockCommitment> after;
  ASSERT_TRUE(store::read_commitments(dir.path(), after).ok());
  expect_contiguous(after, end);
  // The last state root is the root of the state the data dir recovers to.
  std::unique_ptr<Engine> e;
  store::RecoveryReport rep;
  ASSERT_TRUE(store::recover(dir.path(), EngineConfig{}, e, rep).ok());
  ASSERT_EQ(rep.last_seq, end);
  store::StateRoot root;
  root.touch_all(*e);
  EXPECT_EQ(after.back().state_root, root.compute(*e));
}

TEST(Crash, commitments_past_a_lost_journal_tail_are_removed_and_recommitted) {
  TempDir dir, scratch;
  // A whole run: 3,000 txs in blocks of 50, all committed, one journal segment.
  FeedRun r = run_to_end(lagging_feed_args(dir.path(), 9, 3000, 0, 64u << 20, 0));
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
  std::vector<store::BlockCommitment> full;
  ASSERT_TRUE(store::read_commitments(dir.path(), full).ok());
  ASSERT_EQ(full.size(), 60u);
  // The journal loses its tail (a machine crash in `write` mode): cut its only segment in half,
  // mid-record. blocks.log has commitments of txs the journal no longer has.
  std::string segment;
  for (const auto& f : std::filesystem::directory_iterator(dir.path())) {
    if (f.path().filename().string().rfind("journal-", 0) == 0) segment = f.path().string();
  }
  ASSERT_FALSE(segment.empty());
  std::filesystem::resize_file(segment, std::filesystem::file_size(segment) / 2 + 3);
  r = run_to_end(lagging_feed_args(dir.path(), 9, 4000, 0, 64u << 20, 0));
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
  EXPECT_GT(r.dropped, 0u) << "commitments past the recovered journal must go";
  std::vector<store::BlockCommitment> after;
  ASSERT_TRUE(store::read_commitments(dir.path(), after).ok());
  expect_contiguous(after, 4000);
  const auto ref = commit_in_one_pass(dir.path(), scratch.path());
  ASSERT_EQ(after.size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_EQ(after[i].commitment, ref[i].commitment) << i;
}

TEST(Crash, a_committer_whose_journal_is_gone_refuses_to_start_with_the_reason) {
  TempDir dir;
  const uint64_t acked =
      run_and_kill(lagging_feed_args(dir.path(), 10, 1'000'000'000, 700, 32u << 10, 3), 300, 3500);
  ASSERT_GT(acked, 3000u);
  // An operator deletes the oldest journal segment by hand: the engine still recovers from its
  // newest snapshot, but the committer, stalled at block 3, can no longer be rebuilt. The start
  // fails at once and says why; nothing is committed wrongly.
  std::vector<std::string> segments;
  for (const auto& f : std::filesystem::directory_iterator(dir.path())) {
    if (f.path().filename().string().rfind("journal-", 0) == 0) segments.push_back(f.path());
  }
  std::sort(segments.begin(), segments.end());
  ASSERT_GE(segments.size(), 2u);
  std::filesystem::remove(segments.front());
  const uint64_t end = std::max(acked, journal_end(dir.path())) + 100;
  Child c = spawn(lagging_feed_args(dir.path(), 10, end, 700, 32u << 10, 0),
                  /*with_stderr=*/true);
  std::string line, all;
  while (read_line(c, line, 30000)) all += line + "\n";
  const int ws = finish(c, false);
  EXPECT_TRUE(WIFEXITED(ws) && WEXITSTATUS(ws) != 0) << all;
  EXPECT_NE(all.find("segments it needs are gone"), std::string::npos) << all;
}

}  // namespace
}  // namespace tachyon::testing
