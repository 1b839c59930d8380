#pragma once
// Which thread owns an object, checked (docs/ARCHITECTURE.md "Threads"). An owner-only method
// starts with TACHYON_OWNER_ONLY(owner): in a checking build (Debug, or any sanitizer build,
// where TACHYON_CHECK_OWNERS is defined) it aborts with both thread names when another thread
// calls it; otherwise it compiles to nothing.
//
// Ownership is claimed by the first owner-only call after construction or release(): objects are
// built on one thread and handed to their owner before it starts (the pipeline builds its read
// model on the app thread, then the apply thread takes it). release() hands it on again.
#include <atomic>
#include <cstdio>
#include <thread>

#include "tachyon/core/assert.hpp"

#if !defined(NDEBUG) && !defined(TACHYON_CHECK_OWNERS)
#define TACHYON_CHECK_OWNERS 1
#endif

namespace tachyon {

class ThreadOwner {
 public:
  explicit ThreadOwner(const char* role) : role_(role) {}
  const char* role() const { return role_; }

#ifdef TACHYON_CHECK_OWNERS
  void check(const char* what) const {
    const std::thread::id me = std::this_thread::get_id();
    std::thread::id none{};
    // The first caller claims; relaxed is enough: the hand-off that made the object visible to
    // this thread (a thread start, a ring) already ordered everything before it.
    if (owner_.compare_exchange_strong(none, me, std::memory_order_relaxed)) return;
    if (none == me) return;
    std::fprintf(stderr, "tachyon: %s is owned by the %s thread, called from another thread\n",
                 what, role_);
    TACHYON_ASSERT(false, "owner-only method called off its owner thread");
  }
  void release() { owner_.store(std::thread::id{}, std::memory_order_relaxed); }

 private:
  mutable std::atomic<std::thread::id> owner_{};
#else
  void check(const char*) const {}
  void release() {}

 private:
#endif
  const char* role_;
};

}  // namespace tachyon

#define TACHYON_OWNER_ONLY(owner) (owner).check(__func__)
