#pragma once
// The write-ahead journal (command sourcing): every accepted input tx, with its seq, block and
// time, is appended before its result is acknowledged. Segmented files, one CRC-32C per record,
// group commit: one write(2) (+ fdatasync) covers every record that arrived while the previous one
// ran, on the journal's writer thread or on a thread that calls flush() (GroupCommit).
// The appender stages records and hands them over in batches (stage, hand_off): one lock and at
// most one wake-up per batch.
//
// Segment file "journal-<first seq, 20 digits>.wal":
//   header (24 bytes): magic "TCHYJRNL", u64 first seq, u32 version, u32 crc32c of the 20 bytes
//   before it; then
//   version 1: records: u32 payload length, u32 crc32c(payload), payload = one codec Tx record
//     (which carries seq, block and time);
//   version 2 (JournalConfig::preallocate): groups, one per group commit: a group header (24
//     bytes: magic "TGRP", u32 length of its records, u64 first seq, u32 crc32c of its records,
//     u32 crc32c of the 20 bytes before it), its records as in version 1, zeros up to a multiple
//     of 8; then zeros to the end of the file (a preallocated segment is created at full size).
//
// Preallocation (docs/ARCHITECTURE.md "Storage and the simulated disk"): a helper thread keeps a
// spare segment file, zero-filled and synced, ready for the next roll. A group commit into it
// overwrites allocated blocks, so its fdatasync writes the data and no size change, and waits
// once instead of twice. Overwrites can reach the media in any order, so recovery tells a torn
// last group (no whole group after it: it was never acknowledged) from corruption (a whole group
// after the damage) by the groups' checksums.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tachyon/core/histogram.hpp"
#include "tachyon/core/status.hpp"
#include "tachyon/engine/tx.hpp"
#include "tachyon/store/disk.hpp"

namespace tachyon::store {

enum class Durability : uint8_t {
  kFsync,       // acknowledged after write(2) + fdatasync
  kWrite,       // acknowledged after write(2): survives a process crash, not a power cut
  kNone,        // acknowledged at once; written in the background (tests, benchmarks)
  kReplicated,  // acknowledged after write(2) + fdatasync here and the replicator's ack (a
                // quorum of the JetStream stream's replicas): survives the loss of this machine
};
// Whether the journal fdatasyncs its group commits under `d`.
inline bool syncs(Durability d) { return d == Durability::kFsync || d == Durability::kReplicated; }
Status parse_durability(const std::string& s, Durability& out);
const char* durability_name(Durability d);

class Journal;

// Where a replicated journal sends each group commit (docs/ARCHITECTURE.md "Cluster"): the
// cluster module's JetStream publisher.
class Replicator {
 public:
  virtual ~Replicator() = default;
  // The thread that runs the group commit: the frames of seqs [first, last], exactly as written to
  // the segment, sent after write(2) and before fdatasync (the two overlap). The replicator copies
  // them, and later calls journal.replicated(last) once they are stored, in seq order, or
  // journal.replication_failed(why) when they never will be. May block while its queue is full.
  virtual void send(Journal& journal, uint64_t first, uint64_t last, const uint8_t* frames,
                    size_t n) = 0;
};

// Which thread runs the group commits.
enum class GroupCommit : uint8_t {
  kWriterThread,  // the journal's own writer thread
  kFlusher,       // another thread calls flush() (the pipeline's apply thread, between its
                  // batches: one thread fewer on the path); hand_off waits for room
  kAppender,      // the appending thread itself calls flush() (the deterministic simulation)
};

struct JournalConfig {
  std::string dir;
  Durability durability = Durability::kFsync;
  uint64_t segment_bytes = 64ull << 20;
  size_t max_pending_bytes = 8u << 20;  // back-pressure bound of the append buffer
  Disk* disk = &posix_disk();
  GroupCommit group_commit = GroupCommit::kWriterThread;
  int space_retry_ms = 100;          // out of space: how often the writer tries again
  Replicator* replicator = nullptr;  // required by kReplicated, unused otherwise
  // Preallocated segments in version 2 (above); only with a durability that syncs. open() makes
  // a new journal's first spare itself, kAppender each one when it needs it. A roll that finds no
  // spare ready (a disk that was full) starts a segment that grows, as in version 1.
  bool preallocate = false;
};

inline constexpr size_t kSegmentHeaderSize = 24;
inline constexpr size_t kFrameHeaderSize = 8;
inline constexpr size_t kGroupHeaderSize = 24;

// What a scan of the journal found.
struct JournalScan {
  uint64_t first_seq = 0;  // 0 when empty
  uint64_t last_seq = 0;
  uint64_t records = 0;
  uint64_t segments = 0;
  bool truncated_tail = false;
  std::string note;  // what was truncated, and why
};

// The first seq of the oldest journal segment in `dir` (from its name); 0 when there is none.
uint64_t first_journal_seq(const std::string& dir, Disk& disk = posix_disk());

// Reads every record in seq order and calls `apply` for those with seq > after_seq.
// A torn tail is truncated (repair) and reported: what a power cut during a group commit leaves
// at the end of the last segment, zeros, a cut record, or a last page whose sectors are partly
// old (so an intact record may follow the damaged one within that page; neither was
// acknowledged); in a version 2 segment, a damaged last group with no whole group after it.
// Damage anywhere else stops with an error: replaying past a hole would build a state nobody
// acknowledged.
Status replay_journal(const std::string& dir, uint64_t after_seq,
                      const std::function<void(const Tx&)>& apply, JournalScan& scan,
                      bool repair = true, Disk& disk = posix_disk());

class Journal {
 public:
  // Opens for appending after recovery: continues the last segment, or starts one at next_seq.
  static Status open(const JournalConfig& cfg, uint64_t next_seq, std::unique_ptr<Journal>& out);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // The appending thread (the sequencer). Seqs must be consecutive. stage() encodes a record
  // into the appender's own buffer; hand_off() passes what was staged to the group commit (one
  // lock, one wake-up), and blocks only when max_pending_bytes are waiting (not kAppender).
  void stage(const Tx& tx);
  void hand_off();
  void append(const Tx& tx) {
    stage(tx);
    hand_off();
  }
  // kFlusher and kAppender: the group commit, by the one thread that runs them. Writes and syncs
  // what was handed off. The same outcomes as the writer's: ok, out of space (the records stay
  // buffered for the next flush), or failed for good.
  Status flush();
  // One group commit only (a flusher that has other work between commits).
  Status flush_once();
  // kFlusher: the calling thread runs the group commits from now on. Called before its first
  // hand-off when the same thread also appends: hand_off then never waits for room only it could
  // make.
  void claim_group_commit() {
    flusher_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  }
  int space_retry_ms() const { return cfg_.space_retry_ms; }
  // Records handed off and not yet written (any thread; a flusher's cheap check before flush()).
  bool flush_pending() const {
    return handed_seq_.load(std::memory_order_acquire) >
           written_seq_.load(std::memory_order_acquire);
  }
  GroupCommit group_commit() const { return cfg_.group_commit; }
  // Highest seq acknowledged under the durability setting (any thread).
  uint64_t durable_seq() const { return durable_seq_.load(std::memory_order_acquire); }
  // Waits until durable_seq() >= seq; false if the journal failed (then durable_seq stops).
  bool wait_durable(uint64_t seq);
  // kReplicated, the replicator's thread: seqs through `seq` are stored by the replicas.
  void replicated(uint64_t seq);
  // A follower taking over (its owner thread, between appends: nothing is appended meanwhile):
  // from the next group commit on, every commit goes to `r`, and with `wait_for_replicas` is
  // acknowledged only once r stored it. What is journaled so far came from the stream.
  void replicate_from_now(Replicator* r, bool wait_for_replicas);
  // kReplicated, the replicator's thread: what was sent will never be stored (this node was
  // fenced off: another primary writes the stream). The journal fails for good with `why`.
  void replication_failed(const std::string& why);
  // Called on the committing thread after each group commit with the new durable seq. May be set
  // at any time (the writer picks it up under the lock at its next commit).
  void set_on_durable(std::function<void(uint64_t)> cb) {
    std::lock_guard lk(mu_);
    on_durable_ = std::move(cb);
  }
  // Group-commit metrics, recorded by the committing thread (set before the first append; null:
  // off): records per commit and the commit's write(2) + fdatasync time.
  void set_metrics(tachyon::Histogram* group_records, tachyon::Histogram* commit_ns) {
    std::lock_guard lk(mu_);
    m_group_records_ = group_records;
    m_commit_ns_ = commit_ns;
  }
  // Hands off what was staged (the appender, or any thread once it stopped appending), flushes
  // everything and stops the writer thread.
  void close();
  // Deletes segments wholly covered by a snapshot at `seq`.
  Status drop_segments_through(uint64_t seq);
  // Failed for good: a write or a sync failed (EIO...). Nothing more is acknowledged, and the
  // same file is never synced again: the kernel may have dropped the pages that failed, and a
  // second fsync that "succeeds" would prove nothing. Recovery from a restart is the way on.
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  const std::string& failure() const { return failure_; }
  // The disk is full: what is buffered waits, and is written once space returns (nothing torn:
  // a partial write is cut off). New work should be refused meanwhile.
  bool out_of_space() const { return out_of_space_.load(std::memory_order_acquire); }
  Disk& disk() const { return *cfg_.disk; }

  struct Stats {
    uint64_t commits = 0;
    uint64_t records = 0;
    uint64_t bytes = 0;
    uint64_t space_waits = 0;  // group commits that found the disk full
    uint64_t spares_used = 0;  // segments started preallocated
  };
  Stats stats() const;

 private:
  explicit Journal(const JournalConfig& cfg) : cfg_(cfg) {}
  enum class Commit : uint8_t { kDone, kIdle, kNoSpace, kFailed };
  void writer_loop();
  Commit commit_once(bool wait_for_work);
  bool take_pending(bool wait_for_work);
  Status write_group();
  void committed(int64_t started_ns);
  // Under mu_: durable_seq_ moves to min(synced, replicated); true when it moved.
  bool advance_durable_locked();
  void fail(const Status& s);
  Status roll_segment(uint64_t first_seq);
  Status continue_segment(const std::string& path, bool& goes_on);
  bool take_spare(const std::string& path);
  Status make_spare();
  void spare_loop();
  std::string spare_path() const { return cfg_.dir + "/journal-spare.tmp"; }
  void frame_group();

  JournalConfig cfg_;
  int fd_ = -1;                // the last segment's (committing thread), -1 between segments
  uint64_t segment_size_ = 0;  // its bytes, all written in whole records (or groups)
  uint64_t next_seq_ = 1;
  std::vector<uint8_t> staged_;  // the appender's
  uint64_t staged_first_ = 0, staged_last_ = 0;
  // The last seq handed off (released by hand_off) and the last one written by a group commit
  // (released after it): flush_pending() compares them without the lock.
  std::atomic<uint64_t> handed_seq_{0}, written_seq_{0};
  // The thread that last ran flush_once (relaxed: hand_off compares it with its own id only).
  std::atomic<std::thread::id> flusher_{};
  std::vector<uint8_t> pending_;  // guarded by mu_
  std::vector<uint8_t> writing_;  // the committing thread's; kept across an out-of-space retry
  uint64_t pending_first_ = 0, pending_last_ = 0;  // guarded by mu_
  uint64_t writing_first_ = 0, writing_last_ = 0;
  size_t writing_records_ = 0;  // version 2: the bytes of writing_'s records (after its header)
  mutable std::mutex mu_;
  std::condition_variable work_cv_, space_cv_, durable_cv_;
  bool stop_ = false;
  std::atomic<uint64_t> durable_seq_{0};
  uint64_t synced_seq_ = 0, replicated_seq_ = 0;  // guarded by mu_
  bool waits_for_replicas_ = false;               // guarded by mu_
  // Set at open, or once by replicate_from_now (release: the writer acquires it per commit).
  std::atomic<Replicator*> replicator_{nullptr};
  std::atomic<bool> failed_{false};
  std::atomic<bool> out_of_space_{false};
  std::string failure_;
  std::function<void(uint64_t)> on_durable_;
  tachyon::Histogram* m_group_records_ = nullptr;
  tachyon::Histogram* m_commit_ns_ = nullptr;
  Stats stats_;
  std::thread writer_;
  // The spare segment (preallocate, but for kAppender): spare_thread_ makes it while
  // !spare_ready_; the committing thread takes it (renames it) under spare_mu_.
  // (Atomics: make_spare looks at spare_stop_ between chunks without the lock; relaxed, the lock
  // orders what they guard.)
  std::mutex spare_mu_;
  std::condition_variable spare_cv_;
  bool spare_ready_ = false;
  std::atomic<bool> spare_stop_{false};
  std::thread spare_thread_;
};

}  // namespace tachyon::store
