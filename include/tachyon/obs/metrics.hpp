#pragma once
// Counters, gauges and histograms by name, rendered as Prometheus text exposition (version
// 0.0.4) and as a human-readable percentile table. Metrics are registered at start-up (the
// registry takes a lock then); recording goes straight to the returned object, never through
// the registry. Names follow Prometheus conventions: `_total` counters, `_seconds` histograms
// (recorded in ns, exposed in seconds), `_bytes` sizes.
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "tachyon/core/broadcast_log.hpp"
#include "tachyon/obs/histogram.hpp"

namespace tachyon::obs {

class alignas(kFalseSharingRange) Counter {
 public:
  void add(uint64_t d = 1) { v_.fetch_add(d, std::memory_order_relaxed); }
  // One writer thread only: no locked instruction.
  void add_single(uint64_t d = 1) {
    v_.store(v_.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
  }
  uint64_t value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

class alignas(kFalseSharingRange) Gauge {
 public:
  void set(int64_t v) { v_.store(v, std::memory_order_relaxed); }
  int64_t value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> v_{0};
};

enum class Unit : uint8_t { kSeconds, kCount, kBytes };

class Registry {
 public:
  // `name` without a suffix the kind implies; `labels` like `type="create_order",worker="0"` (may
  // be empty). The same name with other labels forms one family (one HELP/TYPE block).
  Counter& counter(std::string name, std::string help, std::string labels = {});
  Gauge& gauge(std::string name, std::string help, std::string labels = {});
  // A gauge read from a function when rendered (jemalloc stats, ring depths, applied seq).
  void gauge_fn(std::string name, std::string help, std::string labels, std::function<double()> f);
  // A counter kept elsewhere (a component's own atomic), read when rendered.
  void counter_fn(std::string name, std::string help, std::string labels,
                  std::function<double()> f);
  // Recorded in ns (kSeconds), plain counts or bytes; `shards` writer threads.
  ShardedHistogram& histogram(std::string name, std::string help, std::string labels, size_t shards,
                              Unit unit = Unit::kSeconds);

  // Prometheus text exposition of everything.
  std::string prometheus() const;
  // One line per histogram with data: count, p50, p90, p99, p99.9, p99.99, max (µs for times).
  std::string table() const;
  // Every histogram's merged snapshot, by "name{labels}".
  std::vector<std::pair<std::string, HistogramSnapshot>> histograms() const;

 private:
  enum class Kind : uint8_t { kCounter, kCounterFn, kGauge, kGaugeFn, kHistogram };
  struct Entry {
    Kind kind;
    std::string name, help, labels;
    Unit unit = Unit::kSeconds;
    Counter* counter = nullptr;
    Gauge* gauge = nullptr;
    std::function<double()> fn;
    ShardedHistogram* hist = nullptr;
  };
  Entry& add(Kind k, std::string name, std::string help, std::string labels);

  mutable std::mutex mu_;
  std::deque<Entry> entries_;
  std::deque<Counter> counters_;
  std::deque<Gauge> gauges_;
  std::deque<std::unique_ptr<ShardedHistogram>> hists_;
};

// Prometheus `le` bounds for time histograms (seconds): 1-2-5 steps from 1 µs to 10 s.
const std::vector<double>& time_bounds_s();

}  // namespace tachyon::obs
