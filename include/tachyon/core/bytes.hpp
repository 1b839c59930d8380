#pragma once
// Byte streams for serialising state without the engine knowing about files.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace tachyon {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void put(const void* data, size_t n) = 0;
  template <typename T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put(&v, sizeof(T));
  }
};

// Reads from memory; every read is bounds-checked and a short read sets failed().
class ByteSource {
 public:
  ByteSource(const uint8_t* data, size_t n) : p_(data), end_(data + n), avail_(end_) {}
  // Bytes that become readable as they are checked (a snapshot verified a chunk at a time while it
  // is decoded): `ready` counts how many of the n, from the start, may be read; a read past them
  // waits until they grow, and fails once `ready` is kNotReady (what was to be read is bad).
  static constexpr size_t kNotReady = SIZE_MAX;
  ByteSource(const uint8_t* data, size_t n, const std::atomic<size_t>* ready)
      : p_(data), end_(data + n), avail_(data), base_(data), ready_(ready) {}
  bool get(void* out, size_t n) {
    if (failed_ || (static_cast<size_t>(avail_ - p_) < n && !wait_for(n))) {
      failed_ = true;
      std::memset(out, 0, n);
      return false;
    }
    std::memcpy(out, p_, n);
    p_ += n;
    return true;
  }
  template <typename T>
  T pod() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    get(&v, sizeof(T));
    return v;
  }
  bool failed() const { return failed_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }  // to the end, ready or not
  const uint8_t* cursor() const { return p_; }                         // the next byte get() reads

 private:
  // Until n more bytes are ready (true), or they never will be (false).
  bool wait_for(size_t n) {
    if (ready_ == nullptr || static_cast<size_t>(end_ - p_) < n) return false;
    for (;;) {
      const size_t r = ready_->load(std::memory_order_acquire);
      if (r == kNotReady) return false;
      avail_ = base_ + std::min(r, static_cast<size_t>(end_ - base_));
      if (static_cast<size_t>(avail_ - p_) >= n) return true;
      std::this_thread::yield();
    }
  }
  const uint8_t* p_;
  const uint8_t* end_;
  const uint8_t* avail_;  // reads up to here need no wait
  const uint8_t* base_ = nullptr;
  const std::atomic<size_t>* ready_ = nullptr;
  bool failed_ = false;
};

class VectorSink final : public ByteSink {
 public:
  void put(const void* data, size_t n) override {
    const auto* p = static_cast<const uint8_t*>(data);
    bytes.insert(bytes.end(), p, p + n);
  }
  std::vector<uint8_t> bytes;
};

}  // namespace tachyon
