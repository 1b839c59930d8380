#pragma once
// TACHYON_ASSERT: always on. A broken invariant is a bug, never a trader's error: log and abort.
#include <cstdio>
#include <cstdlib>

namespace tachyon::detail {
[[noreturn]] inline void assert_fail(const char* expr, const char* file, int line,
                                     const char* msg) {
  std::fprintf(stderr, "tachyon: assertion failed: %s (%s) at %s:%d\n", expr, msg, file, line);
  std::fflush(stderr);
  std::abort();
}
}  // namespace tachyon::detail

#define TACHYON_ASSERT(expr, msg)                                       \
  do {                                                                  \
    if (__builtin_expect(!(expr), 0))                                   \
      ::tachyon::detail::assert_fail(#expr, __FILE__, __LINE__, (msg)); \
  } while (0)
