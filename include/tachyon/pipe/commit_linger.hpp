#pragma once
// Whether the one pipeline thread holds a group commit back for more txs (docs/ARCHITECTURE.md
// "Threads on a small machine"): a commit's fdatasync costs the same for one tx as for many, and
// so does the thread's wake-up, so while txs arrive faster than one per two lingers the thread
// sleeps out the linger after a round that sequenced something, sequences what came meanwhile,
// and then commits them all at once. Slower than that (an EWMA of the gaps between txs), it never
// waits: a quiet exchange answers as fast as without it.
//
// Owner: the pipeline thread.
#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace tachyon::pipe {

class CommitLinger {
 public:
  // Hosted on an api worker, a round that sequenced this many txs holds its commit without a
  // sleep: one pass over the sockets already brought a group, so the worker is busy and a sleep
  // would only take from its time; its next pass, at once, brings what came meanwhile, and the
  // round after it commits both (at once when that pass brought nothing).
  static constexpr size_t kHostedGroup = 4;

  explicit CommitLinger(int64_t linger_ns) : linger_ns_(linger_ns) {}

  // A round sequenced `txs` txs, the first at `first_ns`. The gaps between txs: the first's since
  // the last tx before it, then 0 for each other (they queued together).
  void sequenced(size_t txs, int64_t first_ns) {
    if (txs == 0) return;
    if (last_ns_ != 0) add_gap(std::max<int64_t>(first_ns - last_ns_, 0));
    if (gap_ns_ >= 0)
      for (size_t i = 1; i < std::min<size_t>(txs, 64); ++i) add_gap(0);
    last_ns_ = first_ns;
  }
  // Hold the next commit back for linger_ns(): the mean gap is under two lingers, so a tx comes
  // within the linger at least 39% of the time (Poisson arrivals; 63% at one linger's gap). A
  // hold costs the sleep's context switch; one that catches a tx saves that tx's wake-up and a
  // commit's fdatasync (two switches here): worth it from a chance of about a third.
  bool hold() const { return linger_ns_ > 0 && gap_ns_ >= 0 && gap_ns_ < 2 * linger_ns_; }
  int64_t linger_ns() const { return linger_ns_; }
  int64_t mean_gap_ns() const { return gap_ns_; }

 private:
  void add_gap(int64_t gap) { gap_ns_ = gap_ns_ < 0 ? gap : gap_ns_ + (gap - gap_ns_) / 8; }

  const int64_t linger_ns_;
  int64_t last_ns_ = 0;  // the last round's first tx (0: none yet)
  int64_t gap_ns_ = -1;  // the mean gap; -1 until the first one
};

}  // namespace tachyon::pipe
