// Global operator new/delete replacement that counts calls and bytes (see alloc_counter.hpp).
#include "alloc_counter.hpp"

#include <execinfo.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <new>

extern "C" void tachyon_bench_alloc_trap(size_t n);

namespace tachyon::bench {
namespace {

std::atomic<uint64_t> g_allocs{0};
std::atomic<uint64_t> g_frees{0};
std::atomic<uint64_t> g_bytes{0};
std::atomic<int64_t> g_live{0};
std::atomic<bool> g_track_live{false};
std::atomic<int> g_trap_left{0};
thread_local bool t_in_trap = false;

// Load + store instead of fetch_add: no lock prefix; the hot paths are single-threaded.
template <typename T>
inline void bump(std::atomic<T>& a, T by) {
  a.store(a.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

inline void* counted_alloc(size_t n, size_t align) {
  if (n == 0) n = 1;
  void* p = align <= alignof(std::max_align_t)
                ? std::malloc(n)
                : std::aligned_alloc(align, (n + align - 1) / align * align);
  if (p == nullptr) return nullptr;
  bump(g_allocs, uint64_t{1});
  bump(g_bytes, static_cast<uint64_t>(n));
  if (g_track_live.load(std::memory_order_relaxed)) {
    bump(g_live, static_cast<int64_t>(malloc_usable_size(p)));
  }
  if (g_trap_left.load(std::memory_order_relaxed) > 0) tachyon_bench_alloc_trap(n);
  return p;
}

inline void counted_free(void* p) {
  if (p == nullptr) return;
  bump(g_frees, uint64_t{1});
  if (g_track_live.load(std::memory_order_relaxed)) {
    bump(g_live, -static_cast<int64_t>(malloc_usable_size(p)));
  }
  std::free(p);
}

inline void* alloc_or_throw(size_t n, size_t align) {
  void* p = counted_alloc(n, align);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

AllocStats alloc_stats() {
  return AllocStats{
      g_allocs.load(std::memory_order_relaxed), g_frees.load(std::memory_order_relaxed),
      g_bytes.load(std::memory_order_relaxed), g_live.load(std::memory_order_relaxed)};
}
uint64_t alloc_count() { return g_allocs.load(std::memory_order_relaxed); }
void set_track_live_bytes(bool on) { g_track_live.store(on, std::memory_order_relaxed); }
void arm_alloc_trap(int limit) { g_trap_left.store(limit, std::memory_order_relaxed); }
void disarm_alloc_trap() { g_trap_left.store(0, std::memory_order_relaxed); }

}  // namespace tachyon::bench

// Called on an allocation while the trap is armed: prints a backtrace, and `break
// tachyon_bench_alloc_trap` stops there in gdb.
extern "C" [[gnu::noinline]] void tachyon_bench_alloc_trap(size_t n) {
  if (tachyon::bench::t_in_trap) return;
  tachyon::bench::t_in_trap = true;
  const int left = tachyon::bench::g_trap_left.load(std::memory_order_relaxed);
  if (left > 0) {
    tachyon::bench::g_trap_left.store(left - 1, std::memory_order_relaxed);
    void* frames[32];
    const int depth = backtrace(frames, 32);
    std::fprintf(stderr, "alloc trap: operator new(%zu) in steady state, backtrace:\n", n);
    std::fflush(stderr);
    backtrace_symbols_fd(frames, depth, STDERR_FILENO);  // does not allocate
  }
  tachyon::bench::t_in_trap = false;
}

// The replacements: every form of operator new and delete forwards to the counted functions.
namespace tb = tachyon::bench;

void* operator new(size_t n) { return tb::alloc_or_throw(n, 0); }
void* operator new[](size_t n) { return tb::alloc_or_throw(n, 0); }
void* operator new(size_t n, std::align_val_t a) {
  return tb::alloc_or_throw(n, static_cast<size_t>(a));
}
void* operator new[](size_t n, std::align_val_t a) {
  return tb::alloc_or_throw(n, static_cast<size_t>(a));
}
void* operator new(size_t n, const std::nothrow_t&) noexcept { return tb::counted_alloc(n, 0); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return tb::counted_alloc(n, 0); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return tb::counted_alloc(n, static_cast<size_t>(a));
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return tb::counted_alloc(n, static_cast<size_t>(a));
}

void operator delete(void* p) noexcept { tb::counted_free(p); }
void operator delete[](void* p) noexcept { tb::counted_free(p); }
void operator delete(void* p, size_t) noexcept { tb::counted_free(p); }
void operator delete[](void* p, size_t) noexcept { tb::counted_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { tb::counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { tb::counted_free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { tb::counted_free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { tb::counted_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { tb::counted_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { tb::counted_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  tb::counted_free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  tb::counted_free(p);
}
