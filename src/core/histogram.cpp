#include "tachyon/core/histogram.hpp"

#include <cmath>

namespace tachyon {

void HistogramSnapshot::merge(const HistogramSnapshot& o) {
  for (size_t i = 0; i < kBuckets; ++i) counts[i] += o.counts[i];
  count += o.count;
  sum += o.sum;
  max = std::max(max, o.max);
}

uint64_t HistogramSnapshot::quantile(double q) const {
  // The bucket counts are the truth (count may be a value ahead of them while a writer records).
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  if (total == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * double(total))));
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += counts[i];
    if (seen >= rank) return std::min(bucket_high(i), max);
  }
  return max;
}

uint64_t HistogramSnapshot::count_at_most(uint64_t v) const {
  uint64_t n = 0;
  for (size_t i = 0; i < kBuckets && bucket_high(i) <= v; ++i) n += counts[i];
  return n;
}

void Histogram::add_to(HistogramSnapshot& s) const {
  for (size_t i = 0; i < kBuckets; ++i) s.counts[i] += counts_[i].load(std::memory_order_relaxed);
  s.count += count_.load(std::memory_order_relaxed);
  s.sum += sum_.load(std::memory_order_relaxed);
  s.max = std::max(s.max, max_.load(std::memory_order_relaxed));
}

}  // namespace tachyon
