#pragma once
// Which api workers the apply thread wakes after a round (docs/ARCHITECTURE.md "Waking the api
// workers"). A worker with results routed to it is woken at once. A worker whose subscribers need
// what was published is woken at most once per push interval: its fan-out then carries every
// publish since its last wake, whatever woke it. A worker with nothing to push from a publish (no
// subscription, no forwarded tx waiting for its seq) is not woken for one at all.
//
// Owner: the apply thread (the one pipeline thread when there is one), except want_publishes,
// which each worker calls for itself. Workers are bits of a mask: indices 0..63.
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace tachyon::pipe {

class WorkerWakes {
 public:
  static constexpr uint32_t kMaxWorkers = 64;

  // Every worker starts wanting publishes: a Front user that never says otherwise gets each one.
  WorkerWakes(uint32_t workers, int64_t interval_ns)
      : n_(workers < kMaxWorkers ? workers : kMaxWorkers),
        interval_ns_(interval_ns),
        last_wake_ns_(n_, std::numeric_limits<int64_t>::min() / 2),
        wants_(std::make_unique<std::atomic<bool>[]>(n_)) {
    for (uint32_t w = 0; w < n_; ++w) wants_[w].store(true, std::memory_order_relaxed);
  }

  // Worker w, for itself. seq_cst, with the apply thread's load in published(): a worker that
  // starts wanting publishes and then reads the views (a new subscriber's snapshot), against an
  // apply thread that publishes and then reads the flag. At least one sees the other: the
  // snapshot holds the publish, or the worker is woken for it.
  void want_publishes(uint32_t w, bool yes) {
    if (w < n_) wants_[w].store(yes, std::memory_order_seq_cst);
  }

  // The apply thread. A publish: every worker that wants publishes has one to push.
  void published() {
    for (uint32_t w = 0; w < n_; ++w)
      if (wants_[w].load(std::memory_order_seq_cst)) pending_ |= bit(w);
  }
  // Results were routed to worker w: it is woken at once.
  void routed(uint32_t w) {
    if (w < n_) now_ |= bit(w);
  }
  bool waiting() const { return (now_ | pending_) != 0; }

  // The workers to wake at `now_ns`; they are then no longer waiting. A wake pushes every publish
  // so far, so it also serves the worker's pending one.
  uint64_t take(int64_t now_ns) {
    uint64_t wake = now_;
    for (uint64_t rest = pending_ & ~now_; rest != 0; rest &= rest - 1) {
      const auto w = static_cast<uint32_t>(__builtin_ctzll(rest));
      if (now_ns - last_wake_ns_[w] >= interval_ns_) wake |= bit(w);
    }
    for (uint64_t rest = wake; rest != 0; rest &= rest - 1)
      last_wake_ns_[static_cast<uint32_t>(__builtin_ctzll(rest))] = now_ns;
    pending_ &= ~wake;
    now_ = 0;
    return wake;
  }

  // How long until the next deferred wake is due (0: now); -1 when none is waiting.
  int64_t due_in_ns(int64_t now_ns) const {
    if (now_ != 0) return 0;
    int64_t due = -1;
    for (uint64_t rest = pending_; rest != 0; rest &= rest - 1) {
      const auto w = static_cast<uint32_t>(__builtin_ctzll(rest));
      const int64_t left = last_wake_ns_[w] + interval_ns_ - now_ns;
      const int64_t d = left > 0 ? left : 0;
      if (due < 0 || d < due) due = d;
    }
    return due;
  }

 private:
  static uint64_t bit(uint32_t w) { return uint64_t{1} << w; }

  const uint32_t n_;
  const int64_t interval_ns_;
  uint64_t now_ = 0;      // results routed: wake at once
  uint64_t pending_ = 0;  // a publish to push, paced
  std::vector<int64_t> last_wake_ns_;
  std::unique_ptr<std::atomic<bool>[]> wants_;
};

}  // namespace tachyon::pipe
