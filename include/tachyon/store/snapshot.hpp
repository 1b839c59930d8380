#pragma once
// Snapshots: the whole engine state at a seq, with a checksum, in "snapshot-<seq>.snap".
// Taken without stopping the sequencer for long: fork() gives the child a copy-on-write image of
// the engine, the child writes the file and exits, the parent only pays for the fork itself.
//
// File: header (48 bytes): magic "TCHYSNAP", u32 version, u32 0, u64 seq, u64 state hash,
// u64 body length, u32 crc32c(body), u32 crc32c(first 44 header bytes); body = Engine::save().
#include <sys/types.h>
#include <functional>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tachyon/core/status.hpp"
#include "tachyon/engine/engine.hpp"
#include "tachyon/store/disk.hpp"
#include "tachyon/store/journal.hpp"

namespace tachyon::store {

inline constexpr size_t kSnapshotHeaderSize = 48;

struct SnapshotInfo {
  uint64_t seq = 0;
  uint64_t state_hash = 0;
  uint64_t bytes = 0;
  std::string path;
  // load_snapshot: mapping the file (MAP_POPULATE reads it in, unless the memory is locked on
  // fault), then reading and checking it, beside the decode for version 2 (before it for 1).
  double read_seconds = 0;
  double verify_seconds = 0;
};

std::string snapshot_path(const std::string& dir, uint64_t seq);
// Existing snapshot files, newest first (not yet verified).
std::vector<SnapshotInfo> list_snapshots(const std::string& dir, Disk& disk = posix_disk());
// Writes synchronously (the forked child, shutdown, tools).
Status write_snapshot(const Engine& e, const std::string& dir, SnapshotInfo* out = nullptr,
                      Disk& disk = posix_disk());
// Verifies both checksums, loads into a fresh engine, and checks the stored state hash.
// `check_hash` false: the state hash is not recomputed (the caller checks it against
// info.state_hash itself, e.g. on another thread while it does other work).
// `saved` (optional): where each account lies in the file (SavedAccounts), which then keeps the
// file mapped.
Status load_snapshot(const std::string& path, Engine& fresh, SnapshotInfo& info,
                     bool check_hash = true, std::shared_ptr<const SavedAccounts>* saved = nullptr,
                     Disk& disk = posix_disk());
// Keeps the newest `keep` snapshots, and the one at `also_keep` if it is not 0.
Status prune_snapshots(const std::string& dir, size_t keep, uint64_t also_keep = 0,
                       Disk& disk = posix_disk());

class ForkSnapshotter {
 public:
  ~ForkSnapshotter();
  // Forks; the child writes the snapshot of `e` and exits. pause_ns = time the caller was stopped.
  // The child is killed if the thread that called start() exits first (PR_SET_PDEATHSIG): wait()
  // from that thread before it ends, and a crash of the process never leaves an orphan writer.
  Status start(const Engine& e, const std::string& dir, int64_t* pause_ns = nullptr);
  bool busy() const { return child_ > 0; }
  // Seq of the snapshot started last, and of the last one written successfully (0: none yet).
  uint64_t seq() const { return seq_; }
  uint64_t last_written() const { return last_written_; }
  // Non-blocking: true once the child has finished, with its verdict in `result`.
  bool poll(Status& result);
  Status wait();

 private:
  Status reap(int wstatus);
  pid_t child_ = -1;
  std::string dir_, made_dir_;
  std::unique_ptr<uint8_t[]> buf_;  // the child's write buffer, made once
  uint64_t seq_ = 0;
  uint64_t last_written_ = 0;
};

// Once a snapshot at `seq` is on disk: delete the journal segments it covers and keep only the
// newest `keep` snapshots. The block committer may lag behind the sequencer (`committed_seq`: the
// last seq of its newest commitment); after a crash it restarts from the newest snapshot at or
// below that seq and replays the journal from there, so that snapshot and the journal after it
// are kept too.
Status retire_covered(Journal& journal, const std::string& dir, uint64_t seq, size_t keep,
                      uint64_t committed_seq = UINT64_MAX);

struct RecoveryReport {
  bool from_snapshot = false;
  uint64_t snapshot_seq = 0;
  uint64_t replayed = 0;  // journal txs executed after the snapshot
  uint64_t last_seq = 0;  // the engine's last seq after recovery (0: empty)
  double seconds = 0;
  // Of those, the snapshot that loaded: mapping its file, reading and checking it (beside the
  // decode, version 2), the rest (the engine made, the decode's end).
  double snapshot_read_seconds = 0, snapshot_verify_seconds = 0, snapshot_decode_seconds = 0;
  // With `defer_hash_check` and no journal tx to replay: the loaded snapshot's state hash was not
  // recomputed; the caller must check engine.state_hash() == snapshot_hash before using it.
  bool hash_check_pending = false;
  uint64_t snapshot_hash = 0;
  JournalScan journal;
  std::vector<std::string> skipped_snapshots;  // invalid ones, with the reason
};

using ReplayedFn = std::function<void(const Tx&, const TxResult&)>;

// What a recovery may do besides rebuilding the engine.
struct RecoverOptions {
  // Sees every journal tx executed after the snapshot, with the engine's verdict.
  ReplayedFn replayed{};
  // Stops there: the state at that seq, from the newest snapshot at or below it.
  uint64_t until_seq = UINT64_MAX;
  // Receives the state updates of the replayed txs.
  UpdateSink* updates = nullptr;
  // Sees the engine the journal is replayed into, before the first tx (a sink that reads it
  // while the engine emits).
  std::function<void(const Engine&)> before_replay{};
  // false: a torn journal tail is not truncated (the journal may be live: the committer's
  // replica reads it while the server appends).
  bool repair = true;
  // The newest snapshot's state hash is checked only before the first journal tx is replayed,
  // and left to the caller when none is (hash_check_pending); a snapshot that fails that check
  // then stops the recovery instead of being skipped.
  bool defer_hash_check = false;
  // Receives the accounts of the snapshot loaded (the read side's account base).
  std::shared_ptr<const SavedAccounts>* saved_accounts = nullptr;
  Disk* disk = &posix_disk();
};

// Newest valid snapshot + journal replay. `out` is a new engine built with `cfg`.
Status recover(const std::string& dir, const EngineConfig& cfg, std::unique_ptr<Engine>& out,
               RecoveryReport& report, const RecoverOptions& opt = {});

}  // namespace tachyon::store
