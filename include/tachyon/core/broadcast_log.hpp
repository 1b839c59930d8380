#pragma once
// BroadcastLog<T>: one writer appends records to a ring; any number of readers tail it at their
// own pace without writing shared lines. A reader that fell more than the capacity behind learns
// it (read() fails for an overwritten position) and resynchronises instead.
// Every shared word is an atomic, so the protocol is visible to TSan as written. Used by the read
// side (update log, trade and book-delta history) and by the flight recorder (obs).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "tachyon/core/assert.hpp"

namespace tachyon {

// Two cache lines: adjacent-line prefetch would otherwise couple neighbours.
inline constexpr size_t kFalseSharingRange = 128;

template <typename T>
class BroadcastLog {
  static_assert(std::is_trivially_copyable_v<T>);
  static constexpr size_t kWords = (sizeof(T) + 7) / 8;
  struct Slot {
    std::atomic<uint64_t> stamp{0};  // position + 1 once written, 0 while being written
    std::atomic<uint64_t> words[kWords];
  };

 public:
  explicit BroadcastLog(size_t capacity_pow2) : slots_(capacity_pow2), mask_(capacity_pow2 - 1) {
    TACHYON_ASSERT((capacity_pow2 & mask_) == 0, "BroadcastLog capacity must be a power of 2");
  }
  size_t capacity() const { return slots_.size(); }

  // Writer.
  void append(const T& v) {
    const uint64_t pos = head_.load(std::memory_order_relaxed);
    Slot& s = slots_[pos & mask_];
    // No fences (TSan does not model them): each word is a release store, so a reader whose
    // acquire load sees a new word also sees the stamp cleared before it.
    s.stamp.store(0, std::memory_order_relaxed);
    // Each word loaded straight from `v` (a copy through a zeroed buffer on the stack was ~40 more
    // instructions per append, callgrind); a T whose size is not a multiple of 8 pads the last.
    const auto* bytes = reinterpret_cast<const unsigned char*>(&v);
    for (size_t i = 0; i < sizeof(T) / 8; ++i) {
      uint64_t w;
      std::memcpy(&w, bytes + 8 * i, 8);
      s.words[i].store(w, std::memory_order_release);
    }
    if constexpr (sizeof(T) % 8 != 0) {
      uint64_t w = 0;
      std::memcpy(&w, bytes + sizeof(T) / 8 * 8, sizeof(T) % 8);
      s.words[kWords - 1].store(w, std::memory_order_release);
    }
    s.stamp.store(pos + 1, std::memory_order_release);
    head_.store(pos + 1, std::memory_order_release);
  }

  // Writer: the next `n` slots pulled into this core's cache for writing (an idle writer keeps
  // them warm).
  void prefetch_next(size_t n) const {
    const uint64_t pos = head_.load(std::memory_order_relaxed);
    for (size_t i = 0; i < n; ++i) {
      const char* p = reinterpret_cast<const char*>(&slots_[(pos + i) & mask_]);
      for (size_t b = 0; b < sizeof(Slot); b += 64) __builtin_prefetch(p + b, 1, 3);
    }
  }

  // Readers: positions [0, head()) were written; read(pos) fails once pos was overwritten.
  uint64_t head() const { return head_.load(std::memory_order_acquire); }
  bool read(uint64_t pos, T& out) const {
    const Slot& s = slots_[pos & mask_];
    if (s.stamp.load(std::memory_order_acquire) != pos + 1) return false;
    uint64_t w[kWords];
    for (size_t i = 0; i < kWords; ++i) w[i] = s.words[i].load(std::memory_order_acquire);
    if (s.stamp.load(std::memory_order_relaxed) != pos + 1) return false;
    std::memcpy(&out, w, sizeof(T));
    return true;
  }

 private:
  std::vector<Slot> slots_;
  size_t mask_;
  alignas(kFalseSharingRange) std::atomic<uint64_t> head_{0};
};

}  // namespace tachyon
