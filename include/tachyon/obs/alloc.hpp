#pragma once
// Allocator statistics from jemalloc (the server links it; sanitizer builds do not): the process
// totals that mallctl reports, the analog of GC pressure, and a per-thread counter of bytes
// allocated that the hot threads read for free (jemalloc keeps it thread-local anyway).
#include <cstdint>

namespace tachyon::obs {

struct AllocStats {
  bool available = false;  // false: not linked with jemalloc
  uint64_t allocated = 0;  // bytes in live allocations
  uint64_t active = 0;     // bytes in active pages
  uint64_t resident = 0;   // bytes in physically resident pages
  uint64_t mapped = 0;
};
AllocStats alloc_stats();

// The calling thread's running total of bytes allocated, or nullptr without jemalloc. Read the
// pointee before and after a piece of work to see what it allocated.
const uint64_t* thread_allocated_counter();

}  // namespace tachyon::obs
