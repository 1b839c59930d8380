#include "tachyon/pipe/probes.hpp"

#include <algorithm>
#include <ctime>

namespace tachyon::pipe {

namespace {
uint32_t u32(int64_t v) { return static_cast<uint32_t>(std::clamp<int64_t>(v, 0, UINT32_MAX)); }
}  // namespace

SequencerProbe::SequencerProbe(PipeMetrics* m)
    : m_(m),
      track_(m != nullptr ? m->seq_track : nullptr),
      detail_(m != nullptr && m->detail),
      allocated_(detail_ ? tachyon::thread_allocated_counter() : nullptr) {}

void SequencerProbe::output_times(int64_t journal_ns, int64_t commit_ns) {
  if (m_->journal_append_ns) m_->journal_append_ns->record(uint64_t(journal_ns));
  if (m_->commit_push_ns) m_->commit_push_ns->record(uint64_t(commit_ns));
}

// No clock read of its own: the result's stamp ends the engine's time.
void SequencerProbe::tx_end(const Tx& tx, int64_t t_recv_ns, int64_t exec_done_ns) {
  if (m_ == nullptr) return;
  if (allocated_ != nullptr && m_->seq_alloc_bytes != nullptr)
    m_->seq_alloc_bytes->add_single(*allocated_ - alloc0_);
  if (m_->queue_ns && t_recv_ns > 0 && tx.h.time_ns > t_recv_ns)
    m_->queue_ns->record(uint64_t(tx.h.time_ns - t_recv_ns));
  if (m_->execute_ns) m_->execute_ns->record(uint64_t(exec_done_ns - tx.h.time_ns));
  if (detail_ && track_) track_->span(m_->ev_execute, tx.h.time_ns, exec_done_ns, tx.h.seq);
}

ApplyProbe::ApplyProbe(PipeMetrics* m, std::vector<BatchSample>* samples, size_t max_samples)
    : m_(m),
      track_(m != nullptr ? m->apply_track : nullptr),
      detail_(m != nullptr && m->detail),
      allocated_(detail_ ? tachyon::thread_allocated_counter() : nullptr),
      samples_(max_samples > 0 ? samples : nullptr),
      max_samples_(max_samples) {
  if (samples_ != nullptr) samples_->reserve(max_samples);
}

// The clock only when there is work: an idle round (spinning before it parks) reads none. The
// CPU clock, a system call of ~0.5 us here, is read outside the batch's wall time.
void ApplyProbe::round_begin(bool batch_open, bool ring_nonempty) {
  d0_ = 0;
  if (!batch_open) {
    cpu0_ = samples_ != nullptr && ring_nonempty ? thread_cpu_ns() : 0;
    t0_ = ring_nonempty ? realtime_ns() : 0;
    d0_ = t0_;
    drain_ns_ = 0;
    alloc0_ = allocated_ != nullptr ? *allocated_ : 0;
  } else if (ring_nonempty) {  // more of a tx: its drain time counts
    d0_ = realtime_ns();
  }
}

void ApplyProbe::drained(size_t n, bool whole, int64_t now) {
  if (n > 0 && t0_ == 0) {  // the first update landed after the look
    t0_ = realtime_ns();
    if (samples_ != nullptr) cpu0_ = thread_cpu_ns();
  }
  if (n > 0 && d0_ != 0) drain_ns_ += (whole ? now : realtime_ns()) - d0_;
}

void ApplyProbe::batch_end(size_t n, int64_t now, int64_t t_books, int64_t t1) {
  if (samples_ != nullptr && samples_->size() < max_samples_) {
    const int64_t cpu = cpu0_ != 0 ? thread_cpu_ns() - cpu0_ : 0;
    samples_->push_back(BatchSample{u32(t1 - t0_), static_cast<uint32_t>(n), u32(cpu),
                                    u32(drain_ns_), u32(t_books - now), u32(t1 - t_books),
                                    u32(now - t0_ - drain_ns_)});
  }
  if (m_ == nullptr) return;
  // The apply time: the wall time less its waits for the rest of a tx (BatchSample).
  if (m_->apply_batch_ns) m_->apply_batch_ns->record(uint64_t(drain_ns_ + (t1 - now)));
  if (m_->apply_batch_updates) m_->apply_batch_updates->record(n);
  if (m_->publish_ns) m_->publish_ns->record(uint64_t(t1 - now));
  if (track_) {
    track_->span(m_->ev_batch, t0_, now, n);
    track_->span(m_->ev_publish, now, t1, n);
    if (m_->apply_batch_dump_ns > 0 && t1 - t0_ > m_->apply_batch_dump_ns)
      track_->recorder().request_dump(m_->ev_batch, uint64_t(t1 - t0_));
  }
  if (allocated_ != nullptr && m_->apply_alloc_bytes != nullptr)
    m_->apply_alloc_bytes->add_single(*allocated_ - alloc0_);
}

}  // namespace tachyon::pipe
