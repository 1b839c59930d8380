#pragma once
// The sequencer's one output port (docs/ARCHITECTURE.md "Durability and visibility"): where an
// executed tx goes after the engine (the journal, then the block committer), and the durability
// rule the results follow: a tx's result leaves for its client only once durable_seq() covers it.
// Either part may be absent (tests and benchmarks without durability): without a journal every
// tx counts as durable at once; without a committer no blocks are made.
//
// Owner: the sequencer thread (write, seal). durable_seq, wait_durable: any thread.
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
      if (journal_ != nullptr) journal_->append(tx);
      if (committer_ != nullptr) committer_->push(tx);
      return;
    }
    const int64_t t1 = realtime_ns();
    if (journal_ != nullptr) journal_->append(tx);
    const int64_t t2 = realtime_ns();
    if (committer_ != nullptr) committer_->push(tx);
    probe.output_times(t2 - t1, realtime_ns() - t2);
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

 private:
  ThreadOwner owner_{"sequencer"};
  store::Journal* journal_;
  store::Committer* committer_;
};

}  // namespace tachyon::pipe
