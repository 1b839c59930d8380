#pragma once
// Counts heap allocations of the whole process by replacing the global operator new/delete
// (alloc_counter.cpp). Benchmarks read the counter around the code they time: the engine must
// not allocate per operation in steady state (docs/ARCHITECTURE.md "Code shape"). Single-threaded
// use: the counters are relaxed loads and stores, not read-modify-writes, so counting costs no
// locked instruction on the reference book's allocating path.
#include <cstdint>

namespace tachyon::bench {

struct AllocStats {
  uint64_t allocs = 0;           // calls to any operator new
  uint64_t frees = 0;            // calls to any operator delete with a non-null pointer
  uint64_t bytes_requested = 0;  // Σ sizes asked of operator new
  int64_t live_bytes = 0;        // Σ malloc_usable_size of live blocks (only while tracking)
};

AllocStats alloc_stats();
uint64_t alloc_count();

// Live-byte tracking costs a malloc_usable_size() per call: off unless a measurement wants it.
void set_track_live_bytes(bool on);

// While armed, every allocation prints a backtrace of its caller to stderr (the first `limit`
// ones), to find who allocates in steady state without a debugger.
void arm_alloc_trap(int limit);
void disarm_alloc_trap();

}  // namespace tachyon::bench
