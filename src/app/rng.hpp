#pragma once
// A seeded, edge-biased generator (splitmix64): deterministic on every platform (no std
// distributions), so a seed names the same stream everywhere. Behind the random tx stream, the
// tests' generators and the benchmarks' workloads (which name it testing::Rng).
#include <algorithm>
#include <cstdint>

namespace tachyon::app {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL) {}
  uint64_t next() {  // splitmix64
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n == 0 ? 0 : next() % n; }
  int64_t range(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(below(hi - lo + 1)); }
  bool chance(int percent) { return below(100) < static_cast<uint64_t>(percent); }
  // Favours 1, small values, 2^k ± 1 and the maximum.
  int64_t edgy(int64_t max) {
    switch (below(8)) {
      case 0: return 1;
      case 1: return max;
      case 2: {
        int k = static_cast<int>(below(40));
        int64_t v = (int64_t{1} << k) + range(-1, 1);
        return std::clamp<int64_t>(v, 1, max);
      }
      default: return range(1, max);
    }
  }

 private:
  uint64_t s_;
};

}  // namespace tachyon::app
