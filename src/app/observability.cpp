#include "observability.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>

#include "tachyon/core/alloc.hpp"

namespace tachyon::app {

namespace {
obs::RecorderConfig recorder_config(const Config& c, const std::string& dir) {
  obs::RecorderConfig r;
  r.events_per_track = c.trace_events_per_thread;
  r.window_ns = int64_t{c.trace_window_ms} * 1'000'000;
  r.min_interval_ns = int64_t{c.trace_min_interval_s} * 1'000'000'000;
  r.dir = dir;
  return r;
}

// The data dir's file system: bytes free to this process (f_bavail) or in all (f_blocks); -1
// when statvfs fails.
double fs_bytes(const std::string& dir, bool free) {
  struct statvfs s {};
  if (::statvfs(dir.c_str(), &s) != 0) return -1;
  return double(free ? s.f_bavail : s.f_blocks) * double(s.f_frsize);
}

// Resident set size from /proc/self/statm (pages); -1 when unreadable.
double resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long size = 0, resident = 0;
  const int n = std::fscanf(f, "%ld %ld", &size, &resident);
  std::fclose(f);
  return n == 2 ? double(resident) * double(::sysconf(_SC_PAGESIZE)) : -1;
}
}  // namespace

Observability::Observability(const Config& c)
    : trace_dir_(c.trace_dir.empty() ? c.data_dir + "/traces" : c.trace_dir),
      recorder_(recorder_config(c, trace_dir_)) {
  obs::Registry& r = registry_;
  pipe_ = pipe::register_pipe_metrics(r, recorder_, c.obs_detail == "loadtest");
  pipe::PipeMetrics& p = pipe_;
  p.apply_batch_dump_ns = int64_t{c.dump_apply_batch_us} * 1000;
  slow_tx_dump_ns_ = int64_t{c.dump_tx_ms} * 1'000'000;
  r.gauge_fn("tachyon_obs_detail", "1 when the load-test detail is on", "",
             [d = p.detail] { return d ? 1.0 : 0.0; });
  r.gauge_fn("tachyon_jemalloc_allocated_bytes", "jemalloc stats.allocated", "",
             [] { return double(tachyon::alloc_stats().allocated); });
  r.gauge_fn("tachyon_jemalloc_active_bytes", "jemalloc stats.active", "",
             [] { return double(tachyon::alloc_stats().active); });
  r.gauge_fn("tachyon_jemalloc_resident_bytes", "jemalloc stats.resident", "",
             [] { return double(tachyon::alloc_stats().resident); });
  r.counter_fn("tachyon_trace_dumps_written", "Automatic flight-recorder dumps written", "",
               [this] { return double(recorder_.dumps_written()); });
  r.counter_fn("tachyon_trace_dumps_suppressed", "Automatic dumps skipped by the rate limit", "",
               [this] { return double(recorder_.dumps_suppressed()); });
  r.gauge_fn("tachyon_process_resident_bytes", "Resident set size of the process", "",
             [] { return resident_bytes(); });
  r.gauge_fn("tachyon_data_dir_free_bytes",
             "Bytes free for the server on the data dir's file system (journal, snapshots)", "",
             [dir = c.data_dir] { return fs_bytes(dir, true); });
  r.gauge_fn("tachyon_data_dir_size_bytes", "Size of the data dir's file system", "",
             [dir = c.data_dir] { return fs_bytes(dir, false); });
}

void Observability::attach(store::Journal* journal, pipe::Pipeline& pipeline,
                           api::ApiShared& shared) {
  obs::Registry& r = registry_;
  if (journal != nullptr) {
    journal->set_metrics(
        &r.histogram("tachyon_journal_group_commit_txs", "Txs per journal group commit", "", 1,
                     tachyon::Unit::kCount)
             .shard(0),
        &r.histogram("tachyon_journal_group_commit",
                     "One group commit: write(2) + fdatasync per the durability setting", "", 1)
             .shard(0));
    r.gauge_fn("tachyon_journal_failed",
               "1 once a journal write or sync failed: nothing more is acknowledged", "",
               [journal] { return journal->failed() ? 1.0 : 0.0; });
    r.gauge_fn("tachyon_journal_out_of_space",
               "1 while the journal's disk is full (new txs refused, retried)", "",
               [journal] { return journal->out_of_space() ? 1.0 : 0.0; });
    r.counter_fn("tachyon_journal_space_waits", "Group commits that found the journal's disk full",
                 "", [journal] { return double(journal->stats().space_waits); });
  }
  r.gauge_fn("tachyon_applied_seq", "The last seq the apply thread applied", "",
             [&pipeline] { return double(pipeline.applied_seq()); });
  r.counter_fn("tachyon_ingress_ring_full",
               "Submits refused because a worker's ingress ring was full (busy)", "",
               [&pipeline] { return double(pipeline.stats().ring_full); });
  r.counter_fn("tachyon_read_side_accounts_refused",
               "Account views refused by a full read-side table (those accounts have no view)", "",
               [&pipeline] { return double(pipeline.read_side().accounts().refused()); });
  r.counter_fn("tachyon_apply_batches", "Apply batches since start", "",
               [&pipeline] { return double(pipeline.stats().apply_batches); });
  r.counter_fn("tachyon_book_snapshots", "Book snapshots published since start", "",
               [&pipeline] { return double(pipeline.stats().book_publications); });
  r.gauge_fn("tachyon_connections", "Open client connections", "",
             [&shared] { return double(shared.connections.load()); });
  r.gauge_fn("tachyon_ready", "1 while the server is ready (/health/ready answers 200)", "",
             [&shared] { return shared.ready.load() ? 1.0 : 0.0; });
  api::ApiMetrics& m = shared.metrics;
  for (size_t w = 0; w < m.tracks.size(); ++w)
    m.tracks[w] = &recorder_.track("api worker " + std::to_string(w));
  m.ev_dry_run = recorder_.name_id("dry_run");
  m.ev_fan_out = recorder_.name_id("ws_fan_out");
  m.ev_results = recorder_.name_id("route_results");
  m.ev_slow_tx = recorder_.name_id("slow_tx");
  m.slow_tx_dump_ns = slow_tx_dump_ns_;
  shared.metrics_text = [this] { return registry_.prometheus(); };
  shared.latency_text = [this] { return registry_.table(); };
  shared.trace_json = [this] { return recorder_.chrome_json(); };
}

}  // namespace tachyon::app
