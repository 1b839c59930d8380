#pragma once
// Wall-clock time for the threads around the engine (never the engine itself: its time comes in
// the tx). Realtime, so stamps compare with a client's clock (docs/ARCHITECTURE.md "Replies and
// timestamps").
#include <chrono>
#include <cstdint>

namespace tachyon {

inline int64_t realtime_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace tachyon
