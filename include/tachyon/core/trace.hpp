#pragma once
// The recording side of the flight recorder, for every module: a thread appends trace events
// (spans around the hot path's main functions, tx stages, batch boundaries, ring depths) to its
// own Track (a BroadcastLog: one writer, no lock, no allocation). TraceRegistrar hands out tracks
// and event-name ids at start-up and takes dump requests; module obs implements it
// (obs::FlightRecorder: dumps as Chrome trace-event JSON).
#include <cstdint>
#include <string>
#include <string_view>

#include "tachyon/core/broadcast_log.hpp"
#include "tachyon/core/clock.hpp"

namespace tachyon {

struct TraceEvent {
  int64_t ts_ns;    // realtime start
  uint32_t dur_ns;  // spans; 0 for instants and counters
  uint16_t name;    // TraceRegistrar::name_id
  uint8_t kind;     // 'X' span, 'i' instant, 'C' counter
  uint8_t pad;
  uint64_t arg;  // seq, batch size, ring depth...
};
static_assert(sizeof(TraceEvent) == 24);

class Track;

class TraceRegistrar {
 public:
  virtual ~TraceRegistrar() = default;
  // Start-up (may lock): a thread's track, an event name's id.
  virtual Track& track(std::string thread_name) = 0;
  virtual uint16_t name_id(std::string_view name) = 0;
  // Any thread, lock-free: a span went over its threshold; write out the recent events.
  virtual void request_dump(uint16_t reason, uint64_t value_ns) = 0;
};

class Track {
 public:
  Track(TraceRegistrar* r, std::string name, size_t capacity_pow2)
      : rec_(r), name_(std::move(name)), log_(capacity_pow2) {}
  // The owning thread only.
  void span(uint16_t name, int64_t start_ns, int64_t end_ns, uint64_t arg = 0) {
    const int64_t d = end_ns - start_ns;
    log_.append(TraceEvent{start_ns,
                           d < 0            ? 0u
                           : d > UINT32_MAX ? UINT32_MAX
                                            : uint32_t(d),
                           name, 'X', 0, arg});
  }
  void instant(uint16_t name, int64_t ts_ns, uint64_t arg = 0) {
    log_.append(TraceEvent{ts_ns, 0, name, 'i', 0, arg});
  }
  void counter(uint16_t name, int64_t ts_ns, uint64_t value) {
    log_.append(TraceEvent{ts_ns, 0, name, 'C', 0, value});
  }
  TraceRegistrar& recorder() { return *rec_; }
  const std::string& name() const { return name_; }
  const BroadcastLog<TraceEvent>& log() const { return log_; }

 private:
  TraceRegistrar* rec_;
  std::string name_;
  BroadcastLog<TraceEvent> log_;
};

// A span from construction to destruction on `track` (nullptr: records nothing). With a
// threshold, a span longer than it asks the recorder for a dump.
class Span {
 public:
  Span(Track* t, uint16_t name, uint64_t arg = 0, int64_t threshold_ns = 0)
      : t_(t), name_(name), threshold_(threshold_ns), arg_(arg), start_(t ? realtime_ns() : 0) {}
  ~Span() {
    if (t_ == nullptr) return;
    const int64_t end = realtime_ns();
    t_->span(name_, start_, end, arg_);
    if (threshold_ > 0 && end - start_ > threshold_) {
      t_->recorder().request_dump(name_, static_cast<uint64_t>(end - start_));
    }
  }
  void set_arg(uint64_t a) { arg_ = a; }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

 private:
  Track* t_;
  uint16_t name_;
  int64_t threshold_;
  uint64_t arg_;
  int64_t start_;
};

}  // namespace tachyon
