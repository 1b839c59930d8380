#pragma once
// An allocator for the engine's big, long-lived arrays (order pool, accounts, index ring): large
// blocks are mmap'd 2 MiB-aligned and advised MADV_HUGEPAGE. Fewer page-table entries make the
// fork() of a copy-on-write snapshot cheaper (the kernel copies page tables, not pages) and cut
// TLB misses. Small blocks use the ordinary allocator.
//
// Huge pages can be deferred, per thread (the server's main thread while it starts, the committer's
// while it builds its replica): where a host hands out memory it reclaimed from the guest slowly,
// the first touch of a huge page costs many times that of 512 small ones (this VM: 0.3 GB/s
// against 2 GB/s; 16 GB/s for huge pages it used recently), and a start touches ~1.3 GB. Blocks a
// deferring thread makes get no advice, so they fault in with what the system gives memory nobody
// advised (4 KiB pages, or multi-size THP folios such as 64 KiB where enabled:
// docs/PERFORMANCE.md), and are advised MADV_HUGEPAGE when that thread calls
// promote_deferred_huge_pages(), for khugepaged to collapse in the background. A block may be
// freed on another thread meanwhile (the engine moves to the sequencer): the list is shared.
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

namespace tachyon {

namespace huge_pages {
inline thread_local bool t_deferring = false;
struct Deferred {
  uintptr_t p;
  size_t len;
  std::thread::id maker;
};
inline std::mutex g_mu;
inline std::vector<Deferred> g_deferred;  // still mapped, not yet advised

inline void note(uintptr_t p, size_t len) {
  const std::lock_guard lk(g_mu);
  g_deferred.push_back(Deferred{p, len, std::this_thread::get_id()});
}
inline void forget(uintptr_t p) {
  const std::lock_guard lk(g_mu);
  std::erase_if(g_deferred, [p](const Deferred& d) { return d.p == p; });
}
}  // namespace huge_pages

// The big blocks this thread makes from now on get no page-size advice, until it calls
// promote_deferred_huge_pages().
inline void defer_huge_pages() { huge_pages::t_deferring = true; }

// Ends this thread's deferral: the blocks it made meanwhile (those still mapped) are advised
// MADV_HUGEPAGE. Returns their bytes.
inline size_t promote_deferred_huge_pages() {
  huge_pages::t_deferring = false;
  const std::lock_guard lk(huge_pages::g_mu);
  const std::thread::id me = std::this_thread::get_id();
  size_t bytes = 0;
  std::erase_if(huge_pages::g_deferred, [&](const huge_pages::Deferred& d) {
    if (d.maker != me) return false;
    (void)::madvise(reinterpret_cast<void*>(d.p), d.len, MADV_HUGEPAGE);
    bytes += d.len;
    return true;
  });
  return bytes;
}

// Set on a thread whose big blocks a fork() child never needs (the block committer's replica
// engine): they are mapped MADV_DONTFORK, so a snapshot's fork does not copy their page tables.
inline thread_local bool t_big_blocks_outside_fork = false;

template <typename T>
class HugePageAllocator {
 public:
  using value_type = T;
  static constexpr size_t kHuge = size_t{2} << 20;
  static constexpr size_t kThreshold = size_t{4} << 20;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kThreshold) return std::allocator<T>().allocate(n);
    const size_t len = round_up(bytes);
    void* raw =
        ::mmap(nullptr, len + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const uintptr_t base = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = (base + kHuge - 1) & ~(kHuge - 1);
    if (aligned > base) ::munmap(raw, aligned - base);
    const uintptr_t end = base + len + kHuge;
    if (end > aligned + len)
      ::munmap(reinterpret_cast<void*>(aligned + len), end - (aligned + len));
    if (huge_pages::t_deferring) {
      huge_pages::note(aligned, len);  // no advice: the system's setting (small pages, or mTHP)
    } else {
      (void)::madvise(reinterpret_cast<void*>(aligned), len, MADV_HUGEPAGE);  // a hint: may be off
    }
    if (t_big_blocks_outside_fork)
      (void)::madvise(reinterpret_cast<void*>(aligned), len, MADV_DONTFORK);
    return reinterpret_cast<T*>(aligned);
  }
  void deallocate(T* p, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kThreshold) return std::allocator<T>().deallocate(p, n);
    huge_pages::forget(reinterpret_cast<uintptr_t>(p));
    ::munmap(p, round_up(bytes));
  }
  // Default-initialise (no zeroing) on resize(): big blocks come zeroed from mmap, and the
  // containers that use this allocator write every element before reading it.
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }

 private:
  static size_t round_up(size_t b) { return (b + kHuge - 1) & ~(kHuge - 1); }
};

// Faults in fresh pages of [begin, end) from the back, 2 MiB at a time, until it reaches what the
// owner has already filled (`filled` bytes from begin, advanced by the owner). Run on a helper
// thread while the owner fills the array from the front: on a VM, zeroing fresh memory is a third
// of loading a big snapshot, and this takes it off the loading thread. MADV_POPULATE_WRITE
// (Linux 5.14) writes nothing a reader can see; on an older kernel it fails and this does nothing.
inline void prefault_from_back(const void* begin, const void* end,
                               const std::atomic<size_t>& filled) {
#ifndef MADV_POPULATE_WRITE
  constexpr int MADV_POPULATE_WRITE = 23;
#endif
  constexpr uintptr_t kChunk = uintptr_t{2} << 20;
  const uintptr_t b = reinterpret_cast<uintptr_t>(begin);
  uintptr_t hi = reinterpret_cast<uintptr_t>(end) & ~(kChunk - 1);
  while (hi >= b + 2 * kChunk) {
    const uintptr_t lo = hi - kChunk;
    if (b + filled.load(std::memory_order_relaxed) + kChunk >= lo) return;  // met the owner
    if (::madvise(reinterpret_cast<void*>(lo), kChunk, MADV_POPULATE_WRITE) != 0) return;
    hi = lo;
  }
}

}  // namespace tachyon
