#pragma once
// What the sequencer and apply threads record about themselves: histograms and
// flight-recorder tracks registered in the app's registrars. Every pointer may be null (tests
// and benchmarks run the pipeline bare). Each histogram has exactly one writer thread.
#include <array>
#include <cstdint>

#include "tachyon/core/metrics.hpp"
#include "tachyon/core/trace.hpp"
#include "tachyon/engine/update.hpp"

namespace tachyon::pipe {

inline constexpr size_t kUpdateTypeSlots = 32;

struct PipeMetrics {
  // apply thread
  tachyon::Histogram* apply_batch_ns = nullptr;       // drain + caches + publication, per batch
  tachyon::Histogram* apply_batch_updates = nullptr;  // updates per batch
  tachyon::Histogram* publish_ns = nullptr;           // book snapshots + read-side publication
  tachyon::Histogram* exec_to_applied_ns = nullptr;   // per tx: executed -> applied
  tachyon::Track* apply_track = nullptr;
  int64_t apply_batch_dump_ns = 0;  // a batch slower than this dumps the flight recorder
  // sequencer thread
  tachyon::Histogram* queue_ns = nullptr;    // per tx: api submit -> sequenced (ingress ring wait)
  tachyon::Histogram* execute_ns = nullptr;  // per tx: engine execution
  tachyon::Track* seq_track = nullptr;
  // Load-test detail ([obs] detail = "loadtest"): per-step timing and allocation counting on the
  // two hot threads. Off: one predictable branch per batch and per tx.
  bool detail = false;
  tachyon::Histogram* journal_append_ns = nullptr;                      // sequencer, detail
  tachyon::Histogram* commit_push_ns = nullptr;                         // sequencer, detail
  std::array<tachyon::Histogram*, kUpdateTypeSlots> apply_update_ns{};  // apply, detail, by type
  tachyon::Counter* seq_alloc_bytes = nullptr;                          // detail
  tachyon::Counter* apply_alloc_bytes = nullptr;                        // detail
  // flight-recorder event names
  uint16_t ev_execute = 0, ev_sequence = 0, ev_batch = 0, ev_publish = 0, ev_apply_depth = 0,
           ev_ingress_depth = 0, ev_route = 0;
};

// The histograms, counters and trace tracks above, registered under their Prometheus names (one
// place for the server and the benchmarks). Dump thresholds stay 0 (the caller's setting).
PipeMetrics register_pipe_metrics(MetricRegistrar& r, TraceRegistrar& rec, bool detail);

}  // namespace tachyon::pipe
