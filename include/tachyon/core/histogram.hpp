#pragma once
// Log-linear latency histograms (HdrHistogram's layout): values below 64 have a bucket each;
// above, every power of two is split into 32 equal buckets, so a bucket's width is at most 1/32
// (3.1%) of its value. Fixed memory (kBuckets counters, ~11 KiB), values up to 2^48 ns (78 h);
// larger values land in the last bucket and still count in max.
//
// Histogram has one writer: record() is a relaxed load + store of the bucket (no locked
// instruction on the hot threads). Readers (the /metrics renderer, any thread) take a Snapshot
// with relaxed loads; a snapshot taken while the writer records may be one value behind, never
// torn. ShardedHistogram gives each writer thread its own shard and merges them when read.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "tachyon/core/broadcast_log.hpp"

namespace tachyon {

inline constexpr int kSubBits = 5;
inline constexpr uint64_t kSub = uint64_t{1} << kSubBits;  // buckets per power of two
inline constexpr int kMaxExp = 47;                         // values < 2^48
inline constexpr size_t kBuckets = (kMaxExp - kSubBits) * kSub + 2 * kSub;

constexpr size_t bucket_of(uint64_t v) {
  if (v < 2 * kSub) return static_cast<size_t>(v);
  const int e = 63 - std::countl_zero(v);
  if (e > kMaxExp) return kBuckets - 1;
  return static_cast<size_t>(e - kSubBits) * kSub + static_cast<size_t>(v >> (e - kSubBits));
}
// The smallest and the largest value that land in bucket i.
constexpr uint64_t bucket_low(size_t i) {
  if (i < 2 * kSub) return i;
  const int e = static_cast<int>(i / kSub) + kSubBits - 1;
  return (i % kSub + kSub) << (e - kSubBits);
}
constexpr uint64_t bucket_high(size_t i) {
  return i + 1 < kBuckets ? bucket_low(i + 1) - 1 : UINT64_MAX;
}
static_assert(bucket_of(63) == 63 && bucket_of(64) == 64 && bucket_of(65) == 64);
static_assert(bucket_low(bucket_of(1000)) <= 1000 && bucket_high(bucket_of(1000)) >= 1000);
static_assert(bucket_of((uint64_t{1} << 48) - 1) == kBuckets - 1);

// A plain copy of one or more histograms, for reading.
struct HistogramSnapshot {
  std::vector<uint64_t> counts = std::vector<uint64_t>(kBuckets, 0);
  uint64_t count = 0;
  uint64_t sum = 0;
  uint64_t max = 0;

  void merge(const HistogramSnapshot& o);
  // The value at quantile q in [0, 1]: the upper edge of the bucket holding it (never above max);
  // 0 when empty.
  uint64_t quantile(double q) const;
  // How many values are <= v, counting whole buckets whose upper edge is <= v.
  uint64_t count_at_most(uint64_t v) const;
};

class Histogram {
 public:
  // One writer thread.
  void record(uint64_t v) {
    bump(counts_[bucket_of(v)], 1);
    bump(count_, 1);
    bump(sum_, v);
    if (v > max_.load(std::memory_order_relaxed)) max_.store(v, std::memory_order_relaxed);
  }
  // Any thread; a locked add (for the rare paths that have no shard of their own).
  void record_shared(uint64_t v) {
    counts_[bucket_of(v)].fetch_add(1, std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(v, std::memory_order_relaxed);
    uint64_t m = max_.load(std::memory_order_relaxed);
    while (v > m && !max_.compare_exchange_weak(m, v, std::memory_order_relaxed)) {
    }
  }
  void add_to(HistogramSnapshot& s) const;
  HistogramSnapshot snapshot() const {
    HistogramSnapshot s;
    add_to(s);
    return s;
  }
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  static void bump(std::atomic<uint64_t>& a, uint64_t d) {
    a.store(a.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
  }
  std::array<std::atomic<uint64_t>, kBuckets> counts_{};
  alignas(kFalseSharingRange) std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_{0};
  std::atomic<uint64_t> max_{0};
};

class ShardedHistogram {
 public:
  explicit ShardedHistogram(size_t shards) {
    for (size_t i = 0; i < shards; ++i) shards_.push_back(std::make_unique<Histogram>());
  }
  // The writer of shard `i` only.
  void record(size_t i, uint64_t v) { shards_[i]->record(v); }
  Histogram& shard(size_t i) { return *shards_[i]; }
  size_t shards() const { return shards_.size(); }
  HistogramSnapshot snapshot() const {
    HistogramSnapshot s;
    for (const auto& h : shards_) h->add_to(s);
    return s;
  }

 private:
  std::vector<std::unique_ptr<Histogram>> shards_;
};

}  // namespace tachyon
