#pragma once
// The server's instruments, wired in one place: the metrics registry (admin /metrics and
// /admin/latency), the flight recorder (one track per hot thread and api worker; automatic dumps
// into the trace directory), the pipeline's and journal's histograms, and gauges read on demand
// (jemalloc, rings, applied seq, connections).
#include <memory>
#include <string>

#include "config.hpp"
#include "tachyon/api/worker.hpp"
#include "tachyon/obs/metrics.hpp"
#include "tachyon/obs/trace.hpp"
#include "tachyon/pipe/pipe_metrics.hpp"
#include "tachyon/pipe/pipeline.hpp"
#include "tachyon/store/journal.hpp"

namespace tachyon::app {

class Observability {
 public:
  explicit Observability(const Config& c);
  obs::Registry& registry() { return registry_; }
  obs::FlightRecorder& recorder() { return recorder_; }
  // Before the pipeline is made: its metrics go into its config.
  pipe::PipeMetrics* pipe_metrics() { return &pipe_; }
  // Once the journal, pipeline and api exist (before they start).
  void attach(store::Journal* journal, pipe::Pipeline& pipeline, api::ApiShared& shared);
  void start() { recorder_.start_dumper(); }
  void stop() { recorder_.stop_dumper(); }
  const std::string& trace_dir() const { return trace_dir_; }

 private:
  std::string trace_dir_;
  int64_t slow_tx_dump_ns_ = 0;
  obs::Registry registry_;
  obs::FlightRecorder recorder_;
  pipe::PipeMetrics pipe_;
};

}  // namespace tachyon::app
