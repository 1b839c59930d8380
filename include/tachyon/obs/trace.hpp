#pragma once
// The flight recorder: an always-on ring of the most recent trace events per thread (spans
// around the hot path's main functions, tx stages, batch boundaries, ring depths). A thread
// appends to its own Track (a BroadcastLog: one writer, no lock, no allocation); a dump reads
// every track's last `window` of events and writes Chrome trace-event JSON (chrome://tracing,
// ui.perfetto.dev). A span longer than its threshold asks for a dump; the recorder's dumper
// thread writes it, at most once per `min_interval`, so a storm of slow events costs one file.
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tachyon/core/broadcast_log.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/core/trace.hpp"

namespace tachyon::obs {

// The recording side (tracks, spans) lives in core: every module records; only the app sees obs.
using tachyon::Span;
using tachyon::TraceEvent;
using tachyon::Track;

struct RecorderConfig {
  size_t events_per_track = 1 << 17;  // ~3 MiB per thread: seconds of a busy hot thread
  int64_t window_ns = 5'000'000'000;  // what a dump covers
  int64_t min_interval_ns = 10'000'000'000;
  std::string dir;  // automatic dumps go here; empty: automatic dumps off
  size_t keep_files = 20;
};

class FlightRecorder final : public TraceRegistrar {
 public:
  explicit FlightRecorder(RecorderConfig cfg = {});
  ~FlightRecorder();
  FlightRecorder(const FlightRecorder&) = delete;
  FlightRecorder& operator=(const FlightRecorder&) = delete;

  // Start-up (takes a lock): a thread's track, an event name's id.
  Track& track(std::string thread_name) override;
  uint16_t name_id(std::string_view name) override;

  // Any thread, lock-free: ask for an automatic dump (a span went over its threshold). The
  // dumper thread writes it unless one was written less than min_interval ago.
  void request_dump(uint16_t reason, uint64_t value_ns) override {
    reason_.store(reason, std::memory_order_relaxed);
    reason_value_.store(value_ns, std::memory_order_relaxed);
    dump_requested_.store(true, std::memory_order_release);
  }
  // The events of the last window as Chrome trace JSON (on demand: admin /admin/trace).
  std::string chrome_json(int64_t now_ns = realtime_ns()) const;
  // Starts the thread that writes automatic dumps into cfg.dir (no-op when dir is empty).
  void start_dumper();
  void stop_dumper();
  // The files written by automatic dumps, oldest first.
  std::vector<std::string> dumps() const;
  uint64_t dumps_written() const { return dumps_written_.load(std::memory_order_relaxed); }
  // Waits until `n` automatic dumps were written in total, or the timeout passed.
  bool wait_dumps(uint64_t n, std::chrono::milliseconds timeout);
  uint64_t dumps_suppressed() const { return dumps_suppressed_.load(std::memory_order_relaxed); }

 private:
  void dumper_loop();
  RecorderConfig cfg_;
  mutable std::mutex mu_;
  std::deque<std::unique_ptr<Track>> tracks_;
  std::vector<std::string> names_;
  std::atomic<bool> dump_requested_{false};
  std::atomic<uint16_t> reason_{0};
  std::atomic<uint64_t> reason_value_{0};
  std::atomic<uint64_t> dumps_written_{0}, dumps_suppressed_{0};
  std::vector<std::string> files_;
  int64_t last_dump_ns_ = 0;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  std::condition_variable dumped_cv_;
  bool stopping_ = false;
  std::thread dumper_;
};

}  // namespace tachyon::obs
