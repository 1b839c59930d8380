#pragma once
// A stable 64-bit hasher for state_hash(): fed with explicit integers in a defined order, so the
// result is the same on every run and every machine (no per-process seeds, no memory layout).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace tachyon {

class StableHasher {
 public:
  // One multiply per word (a 128-bit multiply folded to 64 bits, as wyhash does); the position
  // enters through n_, so reordered fields hash differently.
  void add(uint64_t v) {
    const unsigned __int128 m = static_cast<unsigned __int128>(h_ ^ v) * (kGolden + 2 * ++n_);
    h_ = static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
  }
  void add_i(int64_t v) { add(static_cast<uint64_t>(v)); }
  // Fixed-size byte arrays (keys, addresses), 8 bytes per word.
  void add_bytes(const uint8_t* p, size_t n) {
    add(n);
    for (size_t i = 0; i < n; i += 8) {
      uint64_t w = 0;
      std::memcpy(&w, p + i, n - i < 8 ? n - i : 8);
      add(w);
    }
  }
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
  static constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;
  uint64_t h_ = 0xcbf29ce484222325ULL;
  uint64_t n_ = 0;
};

}  // namespace tachyon
