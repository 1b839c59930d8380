#pragma once
// A stable 64-bit hasher for state_hash(): fed with explicit integers in a defined order, so the
// result is the same on every run and every machine (no per-process seeds, no memory layout).
#include <cstdint>
#include <string_view>

namespace tachyon {

class StableHasher {
 public:
  void add(uint64_t v) { h_ = (h_ ^ mix(v + kGolden * ++n_)) * kPrime; }
  void add_i(int64_t v) { add(static_cast<uint64_t>(v)); }
  void add(std::string_view s) {
    add(s.size());
    for (unsigned char c : s) add(c);
  }
  uint64_t digest() const { return mix(h_ ^ n_); }

  static uint64_t mix(uint64_t x) {  // splitmix64 finaliser
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
  }

 private:
  static constexpr uint64_t kPrime = 0x100000001b3ULL;
  static constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;
  uint64_t h_ = 0xcbf29ce484222325ULL;
  uint64_t n_ = 0;
};

}  // namespace tachyon
