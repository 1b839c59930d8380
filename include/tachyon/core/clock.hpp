#pragma once
// Wall-clock time for the threads around the engine (never the engine itself: its time comes in
// the tx). Realtime, so stamps compare with a client's clock (docs/ARCHITECTURE.md "Replies and
// timestamps").
#include <time.h>

#include <chrono>
#include <cstdint>

namespace tachyon {

inline int64_t realtime_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The calling thread's CPU time (user + system); a syscall, ~0.3 µs on this VM.
inline int64_t thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace tachyon
