#pragma once
// Byte streams for serialising state without the engine knowing about files.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
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
  ByteSource(const uint8_t* data, size_t n) : p_(data), end_(data + n) {}
  bool get(void* out, size_t n) {
    if (failed_ || static_cast<size_t>(end_ - p_) < n) {
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
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  const uint8_t* cursor() const { return p_; }  // the next byte get() reads

 private:
  const uint8_t* p_;
  const uint8_t* end_;
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
