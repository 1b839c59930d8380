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
#include "tachyon/core/histogram.hpp"
#include "tachyon/core/metrics.hpp"

namespace tachyon::obs {

// The recording primitives live in core (every module records; only the app sees obs).
using tachyon::Counter;
using tachyon::Gauge;
using tachyon::Histogram;
using tachyon::HistogramSnapshot;
using tachyon::ShardedHistogram;
using tachyon::Unit;

// Metrics by name, exposed as Prometheus text. One HELP/TYPE block per family.
class Registry final : public MetricRegistrar {
 public:
  Counter& counter(std::string name, std::string help, std::string labels = {}) override;
  Gauge& gauge(std::string name, std::string help, std::string labels = {}) override;
  // Read when rendered (jemalloc stats, ring depths, applied seq).
  void gauge_fn(std::string name, std::string help, std::string labels,
                std::function<double()> f) override;
  void counter_fn(std::string name, std::string help, std::string labels,
                  std::function<double()> f) override;
  ShardedHistogram& histogram(std::string name, std::string help, std::string labels, size_t shards,
                              Unit unit = Unit::kSeconds) override;

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
