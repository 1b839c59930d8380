#pragma once
// The sequencer's one output port (docs/ARCHITECTURE.md "Durability and visibility"): where an
// executed tx goes after the engine (the journal, then the block committer), and the durability
// rule the results follow: a tx's result leaves for its client only once durable_seq() covers it.
// Either part may be absent (tests and benchmarks without durability): without a journal every
// tx counts as durable at once; without a committer no blocks are made.
//
// The sequencer stages each tx (write) and hands a drain round's txs over at its end (end_round:
// one lock and at most one wake-up per round); the committer takes a block's at its seal. When
// the journal's group commits are the apply thread's (GroupCommit::kFlusher), the apply thread
// runs them (commit_group) between its batches: the path has no journal thread to wake.
//
// Owner: the sequencer thread (write, end_round, seal, finish); the apply thread (commit_group).
// durable_seq, covers, wait_durable, group_due: any thread.
#include <algorithm>
#include <cstdint>
#include <functional>

#include "tachyon/core/clock.hpp"
#include "tachyon/core/thread_owner.hpp"
#include "tachyon/engine/tx.hpp"
#include "tachyon/pipe/probes.hpp"
#include "tachyon/store/commit.hpp"
#include "tachyon/store/journal.hpp"

namespace tachyon::pipe {

class TxOutput {
 public:
  TxOutput(store::Journal* journal, store::Committer* committer)
      : journal_(journal), committer_(committer) {}

  // Sequencer thread: one executed tx (seq, block and time stamped), timed with the detail.
  void write(const Tx& tx, SequencerProbe& probe) {
    TACHYON_OWNER_ONLY(owner_);
    if (!probe.detail()) {
      if (journal_ != nullptr) journal_->stage(tx);
      if (committer_ != nullptr) committer_->push(tx);
      return;
    }
    const int64_t t1 = realtime_ns();
    if (journal_ != nullptr) journal_->stage(tx);
    const int64_t t2 = realtime_ns();
    if (committer_ != nullptr) committer_->push(tx);
    probe.output_times(t2 - t1, realtime_ns() - t2);
  }
  // Sequencer thread, after each drain round: the round's txs go to the group commit. True when
  // the apply thread should be woken for them: they are durable already (no journal, or
  // durability "none"), or the apply thread runs the group commits.
  bool end_round(uint64_t last_seq) {
    TACHYON_OWNER_ONLY(owner_);
    if (journal_ == nullptr) return true;
    journal_->hand_off();
    return covers(last_seq) || flusher();
  }
  // Sequencer thread, at its end: what is staged goes (a follower's open block to the committer).
  void finish() {
    TACHYON_OWNER_ONLY(owner_);
    if (journal_ != nullptr) journal_->hand_off();
    if (committer_ != nullptr) committer_->hand_off();
  }
  // Apply thread, GroupCommit::kFlusher: one group commit of what was handed off, unless the disk
  // was full less than the journal's space_retry_ms ago. True when one was written.
  bool commit_group() {
    TACHYON_OWNER_ONLY(flusher_owner_);
    if (!group_due() || (journal_->out_of_space() && realtime_ns() < space_retry_ns_)) return false;
    const Status s = journal_->flush_once();
    if (journal_->out_of_space())
      space_retry_ns_ = realtime_ns() + int64_t{journal_->space_retry_ms()} * 1'000'000;
    return s.ok();
  }
  // A group commit waits for the disk to have room (the flusher's: it takes no more txs meanwhile
  // when it also sequences them).
  bool waiting_for_space() const { return group_due() && journal_->out_of_space(); }
  // The apply thread (or the one pipeline thread), before its first round: it runs the group
  // commits (GroupCommit::kFlusher).
  void claim_group_commit() {
    if (flusher()) journal_->claim_group_commit();
  }
  // Records wait for commit_group (false without a flusher, or once the journal failed).
  bool group_due() const { return flusher() && !journal_->failed() && journal_->flush_pending(); }
  // How long a flusher with a group due may sleep: until the disk is tried again (0: not full).
  long group_retry_us() const {
    if (!group_due() || !journal_->out_of_space()) return 0;
    return static_cast<long>(std::max<int64_t>(space_retry_ns_ - realtime_ns(), 0) / 1000) + 1;
  }
  bool flusher() const {
    return journal_ != nullptr && journal_->group_commit() == store::GroupCommit::kFlusher;
  }
  // Sequencer thread: block `block` ends, at `time_ns`.
  void seal(uint64_t block, int64_t time_ns) {
    TACHYON_OWNER_ONLY(owner_);
    if (committer_ != nullptr) committer_->seal(block, time_ns);
  }
  uint64_t durable_seq() const {
    return journal_ != nullptr ? journal_->durable_seq() : UINT64_MAX;
  }
  bool covers(uint64_t seq) const { return journal_ == nullptr || seq <= journal_->durable_seq(); }
  // The journal failed for good: nothing more becomes durable (any thread).
  bool failed() const { return journal_ != nullptr && journal_->failed(); }
  // Blocks until `seq` is durable (false: the journal failed).
  bool wait_durable(uint64_t seq) { return journal_ == nullptr || journal_->wait_durable(seq); }
  // Before the threads start: f runs on the journal's writer thread after each group commit.
  void set_on_durable(std::function<void(uint64_t)> f) {
    if (journal_ != nullptr) journal_->set_on_durable(std::move(f));
  }
  ThreadOwner& owner() { return owner_; }
  ThreadOwner& flusher_owner() { return flusher_owner_; }

 private:
  ThreadOwner owner_{"sequencer"};
  ThreadOwner flusher_owner_{"apply"};
  int64_t space_retry_ns_ = 0;  // the flusher's
  store::Journal* journal_;
  store::Committer* committer_;
};

}  // namespace tachyon::pipe
