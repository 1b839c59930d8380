#pragma once
// The instrumentation of the two hot loops, each behind one object the loop calls in one line
// per step (docs/ARCHITECTURE.md "Threads"). Three tiers, chosen when the pipeline is built:
//   - no metrics (tests, benchmarks run bare): every call is a predictable branch on a null;
//   - metrics: per-tx and per-batch histograms and flight-recorder spans (the server);
//   - detail ([obs] detail = "loadtest"): per step and per update timing, allocations counted.
// Batch samples (bench_apply's apply time by batch size) are a fourth, benchmark-only, sink of
// ApplyProbe: each published batch's phases into a vector reserved up front.
#include <cstdint>
#include <vector>

#include "tachyon/core/alloc.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/engine/update.hpp"
#include "tachyon/pipe/pipe_metrics.hpp"

namespace tachyon::pipe {

// One published batch of the apply thread: its apply time (drain, read-model updates and
// publication) in ns, its updates, the apply thread's CPU time in it (CLOCK_THREAD_CPUTIME_ID:
// the wall time less what preemption took), and the wall time of its three phases: draining the
// ring into the caches, publishing the changed books, publishing the views. A batch ends only
// once its last tx is whole: wait_ns is the time it waited (ring empty) for the rest of a tx the
// sequencer was still executing, part of ns and not of drain_ns.
struct BatchSample {
  uint32_t ns;
  uint32_t updates;
  uint32_t cpu_ns;
  uint32_t drain_ns = 0, books_ns = 0, read_ns = 0;
  uint32_t wait_ns = 0;
};

// Owner: the sequencer thread.
class SequencerProbe {
 public:
  explicit SequencerProbe(PipeMetrics* m);
  bool detail() const { return detail_; }
  void tx_begin() {
    if (allocated_ != nullptr) alloc0_ = *allocated_;
  }
  // Detail only: the output port's two steps.
  void output_times(int64_t journal_ns, int64_t commit_ns);
  // The tx's queue wait and engine time; `exec_done_ns`: when its result left the engine.
  void tx_end(const Tx& tx, int64_t t_recv_ns, int64_t exec_done_ns);
  // A drain round that took `work` txs, the first at `round_start`; `apply_depth` is read only
  // with the detail (a cache miss: the consumer's line).
  template <typename Depth>
  void round_end(size_t work, int64_t round_start, Depth&& apply_depth) {
    if (track_ == nullptr || work == 0) return;
    const int64_t now = realtime_ns();
    if (!detail_) {
      track_->span(m_->ev_sequence, round_start, now, work);
    } else {
      track_->counter(m_->ev_apply_depth, now, apply_depth());
    }
  }

 private:
  PipeMetrics* m_;
  tachyon::Track* track_;
  bool detail_;
  const uint64_t* allocated_;
  uint64_t alloc0_ = 0;
};

// Owner: the apply thread.
class ApplyProbe {
 public:
  // `samples`: where batch samples go, reserved up front; null or `max_samples` 0: none.
  ApplyProbe(PipeMetrics* m, std::vector<BatchSample>* samples, size_t max_samples);
  bool detail() const { return detail_; }
  bool sampling() const { return samples_ != nullptr; }
  // A round starts: `batch_open` when a batch is in progress, `ring_nonempty` as last seen.
  void round_begin(bool batch_open, bool ring_nonempty);
  // Detail only: one update applied by `apply` (returns what it returns).
  template <typename F>
  bool timed_update(UpdateType type, F&& apply) {
    const int64_t a = realtime_ns();
    const bool more = apply();
    tachyon::Histogram* h = m_->apply_update_ns[static_cast<size_t>(type) % kUpdateTypeSlots];
    if (h != nullptr) h->record(uint64_t(realtime_ns() - a));
    return more;
  }
  // The round drained `n` updates; `whole`: the batch is complete and `now` was read for it.
  void drained(size_t n, bool whole, int64_t now);
  // Per tx of the batch, once published at `t_applied`.
  void result_applied(int64_t t_exec_ns, int64_t t_applied) {
    if (m_ != nullptr && m_->exec_to_applied_ns && t_applied > t_exec_ns)
      m_->exec_to_applied_ns->record(uint64_t(t_applied - t_exec_ns));
  }
  // The batch of `n` updates was published: from `now` on, the books done at `t_books` (only
  // when sampling), everything at `t1`.
  void batch_end(size_t n, int64_t now, int64_t t_books, int64_t t1);
  // Routing results to the workers: f() routes and returns how many.
  template <typename F>
  size_t route(F&& f) {
    const int64_t r0 = track_ != nullptr ? realtime_ns() : 0;
    const size_t routed = f();
    if (routed > 0 && track_ != nullptr) track_->span(m_->ev_route, r0, realtime_ns(), routed);
    return routed;
  }

 private:
  PipeMetrics* m_;
  tachyon::Track* track_;
  bool detail_;
  const uint64_t* allocated_;
  std::vector<BatchSample>* samples_;
  size_t max_samples_;
  // The batch in progress, over as many drain rounds as its last tx takes.
  int64_t t0_ = 0, cpu0_ = 0;
  int64_t drain_ns_ = 0;  // in the rounds that took updates (not waiting for the rest of a tx)
  int64_t d0_ = 0;        // this round's drain started (0: the ring looked empty)
  uint64_t alloc0_ = 0;
};

}  // namespace tachyon::pipe
