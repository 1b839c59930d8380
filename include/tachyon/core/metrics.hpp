#pragma once
// The recording side of metrics, for every module: counters, gauges and (histogram.hpp) latency
// histograms are plain objects that the hot threads write without locks, and MetricRegistrar is
// where a module asks for them by name at start-up. Module obs implements the registrar with
// Prometheus exposition (obs::Registry); LocalRegistrar keeps them without exposing them (tests,
// benchmarks, a component run bare). Recording never goes through a registrar.
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "tachyon/core/broadcast_log.hpp"
#include "tachyon/core/histogram.hpp"

namespace tachyon {

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

// Names follow Prometheus conventions: `name` without a suffix the kind implies; `labels` like
// `type="create_order",worker="0"` (may be empty). The same name with other labels forms one
// family. Start-up only (implementations may lock); the returned objects live as long as the
// registrar.
class MetricRegistrar {
 public:
  virtual ~MetricRegistrar() = default;
  virtual Counter& counter(std::string name, std::string help, std::string labels = {}) = 0;
  virtual Gauge& gauge(std::string name, std::string help, std::string labels = {}) = 0;
  // A gauge read from a function when exposed (ring depths, applied seq).
  virtual void gauge_fn(std::string name, std::string help, std::string labels,
                        std::function<double()> f) = 0;
  // A counter kept elsewhere (a component's own atomic), read when exposed.
  virtual void counter_fn(std::string name, std::string help, std::string labels,
                          std::function<double()> f) = 0;
  // Recorded in ns (kSeconds), plain counts or bytes; `shards` writer threads.
  virtual ShardedHistogram& histogram(std::string name, std::string help, std::string labels,
                                      size_t shards, Unit unit = Unit::kSeconds) = 0;
};

// Keeps what is registered, exposes nothing.
class LocalRegistrar final : public MetricRegistrar {
 public:
  Counter& counter(std::string, std::string, std::string = {}) override {
    std::lock_guard g(mu_);
    return counters_.emplace_back();
  }
  Gauge& gauge(std::string, std::string, std::string = {}) override {
    std::lock_guard g(mu_);
    return gauges_.emplace_back();
  }
  void gauge_fn(std::string, std::string, std::string, std::function<double()>) override {}
  void counter_fn(std::string, std::string, std::string, std::function<double()>) override {}
  ShardedHistogram& histogram(std::string, std::string, std::string, size_t shards,
                              Unit = Unit::kSeconds) override {
    std::lock_guard g(mu_);
    return *hists_.emplace_back(std::make_unique<ShardedHistogram>(shards));
  }

 private:
  std::mutex mu_;
  std::deque<Counter> counters_;
  std::deque<Gauge> gauges_;
  std::deque<std::unique_ptr<ShardedHistogram>> hists_;
};

}  // namespace tachyon
