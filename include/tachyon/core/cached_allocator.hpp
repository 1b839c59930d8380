#pragma once
// Node recycling for node-based containers that churn on one thread (the apply thread's order
// lists, the engine's liquidation index on the sequencer thread): steady state allocates nothing.
#include <cstddef>
#include <new>
#include <vector>

namespace tachyon {

// Keeps freed blocks per size on the thread that frees them and hands them out again, so a
// node-based container churning on one thread (the apply thread's order lists, the engine's
// liquidation index) stops calling the heap once it has grown. Cached blocks are returned to the
// heap when the thread ends.
class BlockCache {
 public:
  static void* get(size_t bytes) {
    auto& lists = pools().lists;
    for (auto& l : lists) {
      if (l.bytes == bytes && !l.free.empty()) {
        void* p = l.free.back();
        l.free.pop_back();
        return p;
      }
    }
    return ::operator new(bytes);
  }
  static void put(void* p, size_t bytes) {
    auto& lists = pools().lists;
    for (auto& l : lists) {
      if (l.bytes == bytes) {
        l.free.push_back(p);
        return;
      }
    }
    lists.push_back(List{bytes, {p}});
  }

 private:
  struct List {
    size_t bytes;
    std::vector<void*> free;
  };
  struct Pools {
    std::vector<List> lists;
    ~Pools() {
      for (auto& l : lists)
        for (void* p : l.free) ::operator delete(p);
    }
  };
  static Pools& pools() {
    thread_local Pools p;
    return p;
  }
};

template <typename T>
struct CachedAllocator {
  using value_type = T;
  CachedAllocator() = default;
  template <typename U>
  CachedAllocator(const CachedAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(BlockCache::get(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { BlockCache::put(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const CachedAllocator<U>&) const {
    return true;
  }
};

}  // namespace tachyon
