// Disk errors, each with its outcome (docs/ARCHITECTURE.md "Storage and the simulated disk"), on
// a SimDisk with the journal's own writer thread, as the server runs it.
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "store/store_support.hpp"
#include "tachyon/store/journal.hpp"
#include "tachyon/store/sim_disk.hpp"
#include "tachyon/store/snapshot.hpp"

namespace tachyon {
namespace {

using store::SimDisk;

const char* const kDir = "/data";

std::unique_ptr<store::Journal> open_journal(SimDisk& disk, uint64_t next_seq) {
  store::JournalConfig jc;
  jc.dir = kDir;
  jc.durability = store::Durability::kFsync;
  jc.segment_bytes = 16 << 10;
  jc.disk = &disk;
  jc.space_retry_ms = 5;
  std::unique_ptr<store::Journal> j;
  EXPECT_TRUE(store::Journal::open(jc, next_seq, j).ok());
  return j;
}

// Appends n txs of the stream (executed by the replayer) and returns the last seq.
uint64_t append(testing::StreamReplayer& s, store::Journal& j, int n) {
  uint64_t last = 0;
  for (int i = 0; i < n; ++i) {
    const Tx tx = s.step();
    j.append(tx);
    last = tx.h.seq;
  }
  return last;
}

// Waits (on a condition, generously bounded) until `done` holds.
template <typename F>
bool eventually(F done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

uint64_t recovered_seq(SimDisk& disk) {
  store::RecoverOptions opt;
  opt.disk = &disk;
  std::unique_ptr<Engine> e;
  store::RecoveryReport rep;
  const Status s = store::recover(kDir, EngineConfig{}, e, rep, opt);
  EXPECT_TRUE(s.ok()) << s.message();
  return s.ok() ? e->last_seq() : 0;
}

TEST(DiskFaults, eio_on_fdatasync_stops_acknowledging_and_the_sync_is_never_retried) {
  SimDisk disk(1);
  testing::StreamReplayer stream(3);
  auto j = open_journal(disk, 1);
  const uint64_t acked = append(stream, *j, 200);
  ASSERT_TRUE(j->wait_durable(acked));
  disk.fail_next(SimDisk::Call::kSync, EIO);
  const uint64_t last = append(stream, *j, 50);
  EXPECT_FALSE(j->wait_durable(last));  // returns: failed, not acknowledged
  EXPECT_TRUE(j->failed());
  EXPECT_NE(j->failure().find("Input/output error"), std::string::npos) << j->failure();
  EXPECT_EQ(j->durable_seq(), acked);
  const uint64_t calls = disk.mutating_calls();
  append(stream, *j, 50);  // does not block, is never written
  j->close();
  EXPECT_EQ(disk.mutating_calls(), calls) << "the journal touched the disk after a failed sync";
  EXPECT_EQ(j->durable_seq(), acked);
  // The restart: recovery reads what the disk holds (at least everything acknowledged).
  disk.crash();
  EXPECT_GE(recovered_seq(disk), acked);
}

TEST(DiskFaults, a_full_disk_refuses_then_resumes_by_itself_with_nothing_torn) {
  SimDisk disk(2);
  testing::StreamReplayer stream(4);
  auto j = open_journal(disk, 1);
  const uint64_t before = append(stream, *j, 100);
  ASSERT_TRUE(j->wait_durable(before));
  disk.set_capacity(disk.used_bytes() + 3000);
  const uint64_t last = append(stream, *j, 300);
  ASSERT_TRUE(eventually([&] { return j->out_of_space(); }));
  EXPECT_FALSE(j->failed());
  EXPECT_LT(j->durable_seq(), last);
  // Nothing torn meanwhile: the segments hold whole records only.
  store::JournalScan scan;
  ASSERT_TRUE(store::replay_journal(
                  kDir, 0, [](const Tx&) {}, scan, false, disk)
                  .ok());
  EXPECT_FALSE(scan.truncated_tail) << scan.note;
  EXPECT_EQ(scan.last_seq, j->durable_seq());
  disk.set_capacity(UINT64_MAX);  // the operator made room
  ASSERT_TRUE(j->wait_durable(last));
  EXPECT_FALSE(j->out_of_space());
  EXPECT_GE(j->stats().space_waits, 1u);
  j->close();
  EXPECT_EQ(recovered_seq(disk), last);
}

TEST(DiskFaults, a_failed_snapshot_leaves_no_file_and_the_journal_keeps_every_segment) {
  SimDisk disk(3);
  testing::StreamReplayer stream(5);
  auto j = open_journal(disk, 1);
  uint64_t last = 0;
  for (int i = 0; i < 20; ++i) {  // group commits of 100 txs: segments roll between them
    last = append(stream, *j, 100);
    ASSERT_TRUE(j->wait_durable(last));
  }
  std::vector<std::string> before, after;
  ASSERT_TRUE(disk.list(kDir, before).ok());
  ASSERT_GT(before.size(), 2u);
  for (const auto call : {SimDisk::Call::kWrite, SimDisk::Call::kSync, SimDisk::Call::kRename}) {
    disk.fail_next(call, call == SimDisk::Call::kWrite ? ENOSPC : EIO);
    store::SnapshotInfo info;
    const Status s = store::write_snapshot(stream.engine(), kDir, &info, disk);
    EXPECT_FALSE(s.ok());
    EXPECT_TRUE(store::list_snapshots(kDir, disk).empty()) << "a failed snapshot left a file";
  }
  ASSERT_TRUE(disk.list(kDir, after).ok());
  EXPECT_EQ(after.size(), before.size());  // no temp file left, no segment retired
  // Trading went on meanwhile, and the next snapshot works.
  const uint64_t more = append(stream, *j, 100);
  ASSERT_TRUE(j->wait_durable(more));
  store::SnapshotInfo info;
  ASSERT_TRUE(store::write_snapshot(stream.engine(), kDir, &info, disk).ok());
  ASSERT_TRUE(store::retire_covered(*j, kDir, info.seq, 2).ok());
  j->close();
  EXPECT_EQ(recovered_seq(disk), more);
}

}  // namespace
}  // namespace tachyon
