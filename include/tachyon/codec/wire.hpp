#pragma once
// Little-endian field I/O for the hand-written codecs. One field list per record, written once as
// a template over the I/O policy (Writer, Reader, Sizer), defines both directions and the size,
// so encoder and decoder can never disagree. Reader never reads past its span.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

namespace tachyon::codec {

static_assert(std::endian::native == std::endian::little, "the wire format is little-endian");

class Sizer {
 public:
  static constexpr bool kReading = false;
  template <typename T>
  constexpr void num(const T&) {
    n_ += sizeof(T);
  }
  template <size_t N>
  constexpr void bytes(const std::array<uint8_t, N>&) {
    n_ += N;
  }
  template <size_t N>
  constexpr void chars(const std::array<char, N>&) {
    n_ += N;
  }
  constexpr void pad(size_t n) { n_ += n; }
  constexpr size_t size() const { return n_; }

 private:
  size_t n_ = 0;
};

class Writer {
 public:
  static constexpr bool kReading = false;
  explicit Writer(uint8_t* out) : p_(out) {}
  template <typename T>
  void num(const T& v) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8);
    std::memcpy(p_, &v, sizeof(T));
    p_ += sizeof(T);
  }
  template <size_t N>
  void bytes(const std::array<uint8_t, N>& v) {
    std::memcpy(p_, v.data(), N);
    p_ += N;
  }
  template <size_t N>
  void chars(const std::array<char, N>& v) {
    std::memcpy(p_, v.data(), N);
    p_ += N;
  }
  void pad(size_t n) {
    std::memset(p_, 0, n);
    p_ += n;
  }
  uint8_t* pos() const { return p_; }

 private:
  uint8_t* p_;
};

class Reader {
 public:
  static constexpr bool kReading = true;
  explicit Reader(std::span<const uint8_t> in) : p_(in.data()), end_(in.data() + in.size()) {}
  template <typename T>
  void num(T& v) {
    if (!take(sizeof(T))) return;
    std::memcpy(&v, p_ - sizeof(T), sizeof(T));
  }
  template <size_t N>
  void bytes(std::array<uint8_t, N>& v) {
    if (take(N)) std::memcpy(v.data(), p_ - N, N);
  }
  template <size_t N>
  void chars(std::array<char, N>& v) {
    if (take(N)) std::memcpy(v.data(), p_ - N, N);
  }
  void pad(size_t n) { take(n); }
  bool ok() const { return ok_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }

 private:
  bool take(size_t n) {
    if (!ok_ || static_cast<size_t>(end_ - p_) < n) {
      ok_ = false;
      return false;
    }
    p_ += n;
    return true;
  }
  const uint8_t* p_;
  const uint8_t* end_;
  bool ok_ = true;
};

}  // namespace tachyon::codec
