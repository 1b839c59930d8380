// Global operator new/delete replacement that counts calls and bytes (see alloc_counter.hpp).
#include "alloc_counter.hpp"

#include <dirent.h>
#include <execinfo.h>
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

extern "C" void tachyon_bench_alloc_trap(size_t n);

namespace tachyon::bench {
namespace {

std::atomic<uint64_t> g_allocs{0};
std::atomic<uint64_t> g_frees{0};
std::atomic<uint64_t> g_bytes{0};
std::atomic<int64_t> g_live{0};
std::atomic<bool> g_track_live{false};
std::atomic<int> g_trap_left{0};
char g_trap_thread[16] = {};  // set before the trap is armed; empty: every thread
thread_local bool t_in_trap = false;

// One slot per thread that ever allocated, claimed on its first allocation and keyed by its
// kernel tid; threads past the table's size share the last slot (never named, so never read).
struct ThreadSlot {
  std::atomic<pid_t> tid{0};
  std::atomic<uint64_t> allocs{0};
};
constexpr int kSlots = 256;
ThreadSlot g_slots[kSlots + 1];
std::atomic<int> g_slots_used{0};
thread_local ThreadSlot* t_slot = nullptr;

inline ThreadSlot* this_thread_slot() {
  if (t_slot == nullptr) {
    const int i = g_slots_used.fetch_add(1, std::memory_order_relaxed);
    t_slot = &g_slots[i < kSlots ? i : kSlots];
    if (i < kSlots) t_slot->tid.store(gettid(), std::memory_order_relaxed);
  }
  return t_slot;
}

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
  bump(this_thread_slot()->allocs, uint64_t{1});
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

std::optional<uint64_t> alloc_count_of_thread(std::string_view name) {
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return std::nullopt;
  std::optional<uint64_t> sum;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string path = std::string("/proc/self/task/") + e->d_name + "/comm";
    char comm[32] = {};
    FILE* f = std::fopen(path.c_str(), "r");
    if (f == nullptr) continue;  // the thread ended meanwhile
    const bool read = std::fgets(comm, sizeof comm, f) != nullptr;
    std::fclose(f);
    comm[std::strcspn(comm, "\n")] = '\0';
    if (!read || name != comm) continue;
    const pid_t tid = static_cast<pid_t>(std::atoi(e->d_name));
    uint64_t n = 0;
    const int used = std::min(g_slots_used.load(std::memory_order_relaxed), kSlots);
    for (int i = 0; i < used; ++i) {
      if (g_slots[i].tid.load(std::memory_order_relaxed) == tid) {
        n += g_slots[i].allocs.load(std::memory_order_relaxed);
      }
    }
    sum = sum.value_or(0) + n;
  }
  closedir(d);
  return sum;
}
void set_track_live_bytes(bool on) { g_track_live.store(on, std::memory_order_relaxed); }
void arm_alloc_trap(int limit, const char* thread) {
  std::snprintf(g_trap_thread, sizeof g_trap_thread, "%s", thread != nullptr ? thread : "");
  g_trap_left.store(limit, std::memory_order_release);
}
void disarm_alloc_trap() { g_trap_left.store(0, std::memory_order_relaxed); }

}  // namespace tachyon::bench

// Called on an allocation while the trap is armed: prints a backtrace, and `break
// tachyon_bench_alloc_trap` stops there in gdb.
extern "C" [[gnu::noinline]] void tachyon_bench_alloc_trap(size_t n) {
  if (tachyon::bench::t_in_trap) return;
  if (tachyon::bench::g_trap_thread[0] != '\0') {
    char self[16] = {};
    (void)pthread_getname_np(pthread_self(), self, sizeof self);
    if (std::strcmp(self, tachyon::bench::g_trap_thread) != 0) return;
  }
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
