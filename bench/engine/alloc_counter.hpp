#pragma once
// Counts heap allocations of the whole process, and of each thread, by replacing the global
// operator new/delete (alloc_counter.cpp). Benchmarks read the counter around the code they time:
// the engine must not allocate per operation in steady state (docs/ARCHITECTURE.md "Code shape").
// Single-threaded use: the counters are relaxed loads and stores, not read-modify-writes, so
// counting costs no locked instruction on the reference book's allocating path.
#include <cstdint>
#include <optional>
#include <string_view>

namespace tachyon::bench {

struct AllocStats {
  uint64_t allocs = 0;           // calls to any operator new
  uint64_t frees = 0;            // calls to any operator delete with a non-null pointer
  uint64_t bytes_requested = 0;  // Σ sizes asked of operator new
  int64_t live_bytes = 0;        // Σ malloc_usable_size of live blocks (only while tracking)
};

AllocStats alloc_stats();
uint64_t alloc_count();

// Allocations made so far by the live threads named `name` (pthread_setname_np, as top -H shows
// them), or nullopt when no live thread has that name. Each thread's count lives in its own slot,
// so a pipeline's sequencer and apply threads can be told apart from the thread that feeds them.
std::optional<uint64_t> alloc_count_of_thread(std::string_view name);

// Live-byte tracking costs a malloc_usable_size() per call: off unless a measurement wants it.
void set_track_live_bytes(bool on);

// While armed, every allocation prints a backtrace of its caller to stderr (the first `limit`
// ones), to find who allocates in steady state without a debugger. With `thread`, only the
// allocations of threads of that name count.
void arm_alloc_trap(int limit, const char* thread = nullptr);
void disarm_alloc_trap();

}  // namespace tachyon::bench
