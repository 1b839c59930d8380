#pragma once
// Allocator statistics from jemalloc (the server links it; sanitizer builds do not): the process
// totals that mallctl reports, the analog of GC pressure, and a per-thread counter of bytes
// allocated that the hot threads read for free (jemalloc keeps it thread-local anyway).
#include <cstdint>

namespace tachyon {

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

// A jemalloc arena whose memory fork() leaves out of the child (MADV_DONTFORK, and no huge pages,
// on every extent it maps). The read side lives there: a copy-on-write snapshot forks the whole
// server, the child touches only the engine, and copying the page tables of gigabytes of read
// side made the sequencer's pause tens of milliseconds. Created on first use; 0 without jemalloc.
unsigned dontfork_arena();

// While alive, the calling thread allocates from `arena` (0: no change). The thread cache is
// flushed on both edges, so that it hands out no object of the other arena.
class ArenaScope {
 public:
  explicit ArenaScope(unsigned arena);
  ~ArenaScope() { restore(); }
  ArenaScope(const ArenaScope&) = delete;
  ArenaScope& operator=(const ArenaScope&) = delete;
  void restore();

 private:
  unsigned previous_ = 0;
  bool bound_ = false;
};

// Turns the calling thread's cache off: what it frees goes back to its arena at once. For the
// sequencer: an object of the read side's arena that it frees must never be handed back to the
// engine (a snapshot's child could not read it).
void disable_thread_cache();

}  // namespace tachyon
