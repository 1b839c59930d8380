#pragma once
// Blocks and commitments, the decoupled proof analog. The sequencer seals a block every N ms or
// M txs; a committer thread, never on the hot path, replays the block's txs on its own replica of
// the engine and computes for each block:
//   tx_root    = hash chain over the block's tx hashes (BLAKE2b-256; tx_hash is BLAKE2b-320 of
//                the tx's canonical bytes, the 80-hex-character hash of docs/ARCHITECTURE.md
//                "Signatures");
//   state_root = BLAKE2b-256(accounts Merkle root || markets Merkle root || engine counters),
//                the Merkle trees kept incrementally: only leaves a block touched are rehashed;
//   commitment = BLAKE2b-256(previous commitment || block || seq range || tx_root || state_root).
// Commitments are appended to "blocks.log" beside the journal (one CRC'd record each). The
// sequencer hands txs over through an unbounded queue, a block at a time (one lock and one wake-up
// per block, not per tx): a slow or stalled committer falls behind,
// it never makes trading wait. Commitments are derived from the journal, so a committer that
// lagged at a crash catches up at the next start (open_committer): on its own thread, while the
// server already trades, its replica is rebuilt at the last committed seq and the journal after
// it is committed block by block, before the blocks of new txs.
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tachyon/codec/tx_hash.hpp"
#include "tachyon/core/status.hpp"
#include "tachyon/engine/engine.hpp"
#include "tachyon/store/snapshot.hpp"

namespace tachyon::store {

class Journal;

// The tx hash and the commitment record live in codec (the api names txs too).
using codec::BlockCommitment;
using codec::canonical_tx_bytes;
using codec::Hash32;
using codec::to_hex;
using codec::tx_hash;
using codec::TxHash;

// An incremental Merkle tree over fixed-position leaves (grows by doubling).
class MerkleTree {
 public:
  void set_leaf(size_t i, const Hash32& h);
  Hash32 root();

 private:
  void grow(size_t leaves);
  size_t cap_ = 0;             // leaves, a power of two
  std::vector<Hash32> nodes_;  // 1-based heap layout, leaves at [cap_, 2 cap_)
  std::vector<size_t> dirty_;
};

// The state root of an engine, kept up to date leaf by leaf.
class StateRoot {
 public:
  void touch_account(AccountIndex a) { touched_accounts_.push_back(a); }
  void touch_market(MarketId m) { touched_markets_.push_back(m); }
  void touch_all(const Engine& e);
  Hash32 compute(const Engine& e);

 private:
  MerkleTree accounts_, markets_;
  std::vector<AccountIndex> touched_accounts_;
  std::vector<MarketId> touched_markets_;
};

// Reads blocks.log; a torn last record is ignored (it is rewritten).
Status read_commitments(const std::string& dir, std::vector<BlockCommitment>& out);

struct CommitterStart {
  uint64_t committed_seq = 0;    // the last seq of the newest commitment found
  uint64_t replica_from = 0;     // the snapshot its replica starts from (0: the empty state)
  uint64_t catch_up_txs = 0;     // journal txs it lagged behind, committed first
  uint64_t dropped_commits = 0;  // commitments past the recovered journal (a lost tail), removed
  // Not 0: blocks.log was empty and the journal does not reach back to seq 1 (a data dir restored
  // from a snapshot): the commitment chain starts after this seq.
  uint64_t chain_starts_at = 0;
};

class Committer {
 public:
  // `replica` must hold the same state as the sequencer's engine at `next_seq - 1`.
  Committer(std::string dir, std::unique_ptr<Engine> replica, uint32_t chain_id);
  // The replica is made on the committer's thread, then the journal txs after its seq up to
  // `catch_up_through` are committed first, as the blocks the sequencer stamped them with
  // (sealed at their last tx's time). A failure stops the committer: see failure().
  using ReplicaFn = std::function<Status(std::unique_ptr<Engine>&)>;
  // `outside_fork`: the committer's memory (its replica above all) goes where a fork() child
  // does not get it (tachyon::dontfork_arena, t_big_blocks_outside_fork); see PipelineConfig's
  // read_side_outside_fork for when that is safe.
  Committer(std::string dir, ReplicaFn make_replica, uint64_t catch_up_through, uint32_t chain_id,
            bool outside_fork = false);
  ~Committer();
  Status start();
  // The pushing thread (the sequencer): never blocks on the committer's progress. Pushed txs wait
  // in the pusher's own staging vector; a seal, or kStageLimit staged txs, hands them over.
  void push(const Tx& tx);
  void seal(uint64_t block, int64_t time_ns);
  // The pushing thread: hands over what it staged (a follower's open block at its end).
  void hand_off();
  // Drains what was pushed, then returns (the pushing thread, or any thread once it stopped
  // pushing: what it staged is handed over first).
  void stop();
  void set_paused(bool paused);  // tests: a stalled committer
  uint64_t committed_block() const;
  BlockCommitment last() const;
  size_t backlog() const;
  // The replica is built and the catch-up done (seconds it took, from the start of prepare).
  bool prepared() const { return prepared_.load(std::memory_order_acquire); }
  double prepare_seconds() const { return prepare_seconds_; }
  // Set when the replica could not be made or the catch-up could not read the journal; the
  // committer then commits nothing more (the server stops: commitments must not have holes).
  std::string failure() const;
  // Readers (the api): commitments of blocks >= from_block, oldest first, at most `limit`, from
  // the last kRecent blocks kept in memory (blocks.log has them all). Never blocks the sequencer.
  static constexpr size_t kRecent = 4096;
  static constexpr size_t kQueueReserve = size_t{1} << 16;  // txs the hand-off holds unallocated
  static constexpr size_t kStageLimit = 1024;               // staged txs handed over unsealed
  std::vector<BlockCommitment> recent(uint64_t from_block, size_t limit) const;
  uint64_t recent_height() const;  // the newest committed block (0: none)
  // The last seq of the newest commitment that covers only seqs <= max_seq (0: none known). With
  // max_seq = the journal's durable seq, this commitment survives any crash: the committer runs
  // ahead of durability, and commitments past the recovered journal are dropped at the next
  // start (open_committer). Journal retention keeps what rebuilding from it needs.
  uint64_t committed_through(uint64_t max_seq) const;

  // Snapshots from the replica: the sequencer never stops for them (no fork, no copy on its
  // thread). At the next block boundary (every tx it applied is in a committed block), and once
  // `journal` (may be null) is durable through the replica's seq, so that a snapshot never covers
  // a tx the journal could still lose, the committer's thread writes the replica as
  // snapshot-<seq>.snap (write_snapshot). Any thread; false while one is requested or its result
  // has not been polled. The replica is the sequencer's state at that seq: the same txs, executed
  // by the same deterministic engine (the state roots rest on it too).
  bool request_snapshot(Journal* journal);
  bool snapshot_busy() const;
  // Non-blocking: true once a requested snapshot is finished, with its verdict, what was written
  // and how long the write took (the committer's commitments waited that long).
  bool poll_snapshot(Status& result, SnapshotInfo& info, double* seconds = nullptr);
  // The last seq the replica executed (any thread).
  uint64_t applied_seq() const { return applied_seq_.load(std::memory_order_acquire); }

 private:
  struct Item {
    bool seal;
    uint64_t block;
    int64_t time_ns;
    Tx tx;
  };
  void run();
  Status prepare();  // committer thread: make the replica, catch up
  void apply(const Item& it);
  void commit_block(uint64_t block, int64_t time_ns);
  void maybe_snapshot();  // committer thread, at a block boundary

  std::string dir_;
  std::unique_ptr<Engine> replica_;
  ReplicaFn make_replica_;
  uint64_t catch_up_through_ = 0;
  bool outside_fork_ = false;
  std::string failure_;  // under mu_
  uint32_t chain_id_;
  StateRoot state_;
  mutable std::mutex mu_;
  mutable std::mutex recent_mu_;  // committer thread and readers only
  std::deque<BlockCommitment> recent_;
  std::condition_variable cv_;
  // Filled by the sequencer, swapped out whole by the committer: the two vectors trade places
  // and keep their capacity, so the hand-off stops allocating once they have grown.
  std::vector<Item> queue_;
  std::vector<Item> staged_;             // the pushing thread's
  std::atomic<size_t> staged_count_{0};  // staged_.size() for backlog() (relaxed: a statistic)
  bool stop_ = false, paused_ = false;
  BlockCommitment last_;
  uint64_t block_first_seq_ = 0;
  uint32_t block_txs_ = 0;
  uint64_t open_block_ = 0;   // the block of the txs since the last commitment
  int64_t open_time_ns_ = 0;  // the last one's time
  Hash32 chain_{};
  int fd_ = -1;
  std::thread thread_;
  std::atomic<bool> prepared_{false};
  std::atomic<uint64_t> applied_seq_{0};
  double prepare_seconds_ = 0;  // written before prepared_
  // Replica snapshots (under mu_).
  Journal* snap_journal_ = nullptr;
  bool snap_requested_ = false, snap_done_ = false;
  Status snap_result_;
  SnapshotInfo snap_info_;
  double snap_seconds_ = 0;
};

// Starts the committer of a data dir whose engine was recovered at `recovered_seq`: a replica at
// the last committed seq (newest snapshot at or below it + journal), then catch-up through
// `recovered_seq`, both on the committer's thread. Commitments past `recovered_seq` (the journal
// lost a tail they had seen) are removed from blocks.log first. Fails at once, with the reason, if
// the journal it needs is gone. `start_paused`: nothing happens on the committer's thread, not even
// the replica, until set_paused(false) (a server starts it once it is ready: the replica's load
// would take a core from the start-up).
Status open_committer(const std::string& dir, const EngineConfig& cfg, uint32_t chain_id,
                      uint64_t recovered_seq, std::unique_ptr<Committer>& out,
                      CommitterStart& report, bool outside_fork = false, bool start_paused = false);

}  // namespace tachyon::store
