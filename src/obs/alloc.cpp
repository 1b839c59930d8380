#include "tachyon/obs/alloc.hpp"

#include <cstddef>

#ifdef TACHYON_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

namespace tachyon::obs {

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

}  // namespace tachyon::obs
