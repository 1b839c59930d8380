#pragma once
// A bounded lock-free single-producer single-consumer ring of fixed-size slots (rigtorp's
// SPSCQueue and Aeron's ring buffer are the models). Indices grow without wrapping (64 bits);
// a slot is index & mask. The producer's index, the consumer's index and each side's cached copy
// of the other's index live on cache lines of their own (128 bytes apart: adjacent-line prefetch
// would otherwise couple them), so in steady state each side reads only its own lines and
// touches the other's only when its cached copy says the ring looks full or empty.
// Thread ownership: try_push / free_slots on the producer thread, try_pop / drain on the consumer.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>

#include "tachyon/core/assert.hpp"
#include "tachyon/core/broadcast_log.hpp"

namespace tachyon::pipe {

template <typename T>
class SpscRing {
  static_assert(std::is_trivially_copyable_v<T>, "ring slots are copied with plain stores");

 public:
  // capacity is rounded up to a power of two.
  explicit SpscRing(size_t capacity) {
    size_t c = 2;
    while (c < capacity) c <<= 1;
    cap_ = c;
    mask_ = c - 1;
    slots_ = std::make_unique<T[]>(c);
    layout_checks();
  }
  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  size_t capacity() const { return cap_; }

  // Producer. False when full: the caller decides (an api worker answers "busy").
  bool try_push(const T& v) {
    const uint64_t t = tail_.load(std::memory_order_relaxed);
    if (t - cached_head_ >= cap_) {
      cached_head_ = head_.load(std::memory_order_acquire);
      if (t - cached_head_ >= cap_) return false;
    }
    slots_[t & mask_] = v;
    tail_.store(t + 1, std::memory_order_release);
    return true;
  }

  // Consumer: one item, or false when empty.
  bool try_pop(T& out) {
    const uint64_t h = head_.load(std::memory_order_relaxed);
    if (h == cached_tail_) {
      cached_tail_ = tail_.load(std::memory_order_acquire);
      if (h == cached_tail_) return false;
    }
    out = slots_[h & mask_];
    head_.store(h + 1, std::memory_order_release);
    return true;
  }

  // Consumer: hands up to `limit` items to f(const T&) in order and frees their slots in one
  // store. Returns how many.
  template <typename F>
  size_t drain(F&& f, size_t limit) {
    return drain_until(
        [&f](const T& v) {
          f(v);
          return true;
        },
        limit);
  }

  // Consumer: as drain, but stops after the first item for which f(const T&) returns false
  // (that item is taken). Returns how many were taken.
  template <typename F>
  size_t drain_until(F&& f, size_t limit) {
    return drain_while([](const T&) { return true; }, f, limit);
  }

  // Consumer: as drain_until, but an item for which admit(const T&) is false stops the drain
  // before it, and stays in the ring.
  template <typename A, typename F>
  size_t drain_while(A&& admit, F&& f, size_t limit) {
    const uint64_t h = head_.load(std::memory_order_relaxed);
    const uint64_t avail = available(h);
    const size_t n = avail < limit ? static_cast<size_t>(avail) : limit;
    size_t i = 0;
    while (i < n) {
      const T& v = slots_[(h + i) & mask_];
      if (!admit(v)) break;
      ++i;
      if (!f(v)) break;
    }
    if (i > 0) head_.store(h + i, std::memory_order_release);
    return i;
  }

  // Consumer: the oldest item, left in the ring; nullptr when it is empty.
  const T* peek() {
    const uint64_t h = head_.load(std::memory_order_relaxed);
    return available(h) > 0 ? &slots_[h & mask_] : nullptr;
  }

  // Either side; a snapshot that may be stale by the time it is read.
  size_t size_approx() const {
    return static_cast<size_t>(tail_.load(std::memory_order_acquire) -
                               head_.load(std::memory_order_acquire));
  }

 private:
  // Consumer: how many items follow head `h`; reads the producer's tail only when the cached
  // one is used up (acquire: the items up to it are written).
  uint64_t available(uint64_t h) {
    if (h == cached_tail_) cached_tail_ = tail_.load(std::memory_order_acquire);
    return cached_tail_ - h;
  }

  alignas(kFalseSharingRange) std::atomic<uint64_t> head_{0};  // consumer writes
  alignas(kFalseSharingRange) uint64_t cached_tail_ = 0;       // consumer's copy of tail_
  alignas(kFalseSharingRange) std::atomic<uint64_t> tail_{0};  // producer writes
  alignas(kFalseSharingRange) uint64_t cached_head_ = 0;       // producer's copy of head_
  alignas(kFalseSharingRange) size_t cap_ = 0;                 // read-only after construction
  size_t mask_ = 0;
  std::unique_ptr<T[]> slots_;

  static void layout_checks();
};

// The four hot fields each on a line of their own (checked when the ring is instantiated).
template <typename T>
void SpscRing<T>::layout_checks() {
  static_assert(offsetof(SpscRing, cached_tail_) - offsetof(SpscRing, head_) >= kFalseSharingRange);
  static_assert(offsetof(SpscRing, tail_) - offsetof(SpscRing, cached_tail_) >= kFalseSharingRange);
  static_assert(offsetof(SpscRing, cached_head_) - offsetof(SpscRing, tail_) >= kFalseSharingRange);
  static_assert(offsetof(SpscRing, cap_) - offsetof(SpscRing, cached_head_) >= kFalseSharingRange);
  static_assert(alignof(SpscRing) >= kFalseSharingRange);
}

}  // namespace tachyon::pipe
