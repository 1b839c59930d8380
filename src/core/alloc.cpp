#include "tachyon/core/alloc.hpp"

#include <sys/mman.h>

#include <cstddef>
#include <string>

#ifdef TACHYON_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

namespace tachyon {

AllocStats alloc_stats() {
  AllocStats s;
#ifdef TACHYON_HAVE_JEMALLOC
  uint64_t epoch = 1;
  size_t len = sizeof(epoch);
  if (mallctl("epoch", &epoch, &len, &epoch, len) != 0) return s;  // refresh the cached stats
  auto read = [](const char* name, uint64_t& out) {
    size_t v = 0;
    size_t l = sizeof(v);
    if (mallctl(name, &v, &l, nullptr, 0) != 0) return false;
    out = v;
    return true;
  };
  s.available = read("stats.allocated", s.allocated) && read("stats.active", s.active) &&
                read("stats.resident", s.resident) && read("stats.mapped", s.mapped);
#endif
  return s;
}

const uint64_t* thread_allocated_counter() {
#ifdef TACHYON_HAVE_JEMALLOC
  uint64_t* p = nullptr;
  size_t len = sizeof(p);
  if (mallctl("thread.allocatedp", &p, &len, nullptr, 0) == 0) return p;
#endif
  return nullptr;
}

#ifdef TACHYON_HAVE_JEMALLOC
namespace {

extent_hooks_t* g_default_hooks = nullptr;

void* dontfork_alloc(extent_hooks_t*, void* new_addr, size_t size, size_t alignment, bool* zero,
                     bool* commit, unsigned arena_ind) {
  void* p =
      g_default_hooks->alloc(g_default_hooks, new_addr, size, alignment, zero, commit, arena_ind);
  if (p != nullptr) {
    (void)::madvise(p, size, MADV_DONTFORK);
    (void)::madvise(p, size, MADV_NOHUGEPAGE);  // many small objects: huge pages waste memory
  }
  return p;
}

extent_hooks_t g_dontfork_hooks;

unsigned create_dontfork_arena() {
  size_t len = sizeof(g_default_hooks);
  if (mallctl("arena.0.extent_hooks", &g_default_hooks, &len, nullptr, 0) != 0 ||
      g_default_hooks == nullptr)
    return 0;
  g_dontfork_hooks = *g_default_hooks;
  g_dontfork_hooks.alloc = dontfork_alloc;
  // Created with the default hooks first: the arena's own metadata (its first base block, with
  // the mutexes jemalloc's fork handlers reset in the child) must stay in the child.
  unsigned arena = 0;
  len = sizeof(arena);
  if (mallctl("arenas.create", &arena, &len, nullptr, 0) != 0) return 0;
  extent_hooks_t* hooks = &g_dontfork_hooks;
  const std::string name = "arena." + std::to_string(arena) + ".extent_hooks";
  if (mallctl(name.c_str(), nullptr, nullptr, &hooks, sizeof(hooks)) != 0) return 0;
  return arena;
}

void flush_thread_cache() { (void)mallctl("thread.tcache.flush", nullptr, nullptr, nullptr, 0); }

}  // namespace
#endif

unsigned dontfork_arena() {
#ifdef TACHYON_HAVE_JEMALLOC
  static const unsigned arena = create_dontfork_arena();
  return arena;
#else
  return 0;
#endif
}

ArenaScope::ArenaScope(unsigned arena) {
#ifdef TACHYON_HAVE_JEMALLOC
  if (arena == 0) return;
  size_t len = sizeof(previous_);
  flush_thread_cache();
  if (mallctl("thread.arena", &previous_, &len, &arena, sizeof(arena)) == 0) bound_ = true;
#else
  (void)arena;
#endif
}

void ArenaScope::restore() {
#ifdef TACHYON_HAVE_JEMALLOC
  if (!bound_) return;
  bound_ = false;
  flush_thread_cache();
  (void)mallctl("thread.arena", nullptr, nullptr, &previous_, sizeof(previous_));
#endif
}

void disable_thread_cache() {
#ifdef TACHYON_HAVE_JEMALLOC
  bool off = false;
  flush_thread_cache();
  (void)mallctl("thread.tcache.enabled", nullptr, nullptr, &off, sizeof(off));
#endif
}

}  // namespace tachyon
