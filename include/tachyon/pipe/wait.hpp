#pragma once
// How a busy thread waits when it found no work (docs/ARCHITECTURE.md "Threads on a small
// machine").
//   spin:            busy-poll (production, a dedicated core);
//   spin_then_park:  poll a bounded number of rounds, then sleep on a futex until a producer
//                    rings the doorbell (the default: two spinning threads starve a 2-core box);
//   park:            sleep as soon as there is nothing to do.
// A Doorbell is the futex word: producers ring() after publishing work; ring() costs one load
// when nobody sleeps. With an eventfd instead (use_eventfd), a thread that sleeps in an event
// loop of its own (epoll: an api worker that runs the pipeline) can be rung too.
#include <linux/futex.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <x86intrin.h>
#include <atomic>
#include <cstdint>
#include <string>

#include "tachyon/pipe/spsc_ring.hpp"

namespace tachyon::pipe {

enum class WaitStrategy : uint8_t { kSpin, kSpinThenPark, kPark };

inline bool parse_wait_strategy(const std::string& s, WaitStrategy& out) {
  if (s == "spin")
    out = WaitStrategy::kSpin;
  else if (s == "spin_then_park")
    out = WaitStrategy::kSpinThenPark;
  else if (s == "park")
    out = WaitStrategy::kPark;
  else
    return false;
  return true;
}

class Doorbell {
 public:
  Doorbell() = default;
  Doorbell(const Doorbell&) = delete;
  Doorbell& operator=(const Doorbell&) = delete;
  ~Doorbell() {
    if (efd_ >= 0) ::close(efd_);
  }
  // Before any producer or sleeper: ring an eventfd (fd()) instead of the futex. Its sleepers
  // are an event loop watching fd() (announce, sleep, withdraw) or sleep() below (poll).
  bool use_eventfd() {
    efd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    return efd_ >= 0;
  }
  int fd() const { return efd_; }

  // Producer side: after making work visible.
  void ring() {
    if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
    if (efd_ >= 0) {
      const uint64_t one = 1;
      (void)::write(efd_, &one, sizeof(one));  // fails only when the count would overflow
      return;
    }
    seq_.fetch_add(1, std::memory_order_seq_cst);
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&seq_), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr,
            nullptr, 0);
  }
  // Consumer side: `has_work` is re-checked after announcing the sleep, so a ring between the
  // check and the futex call is never lost. Sleeps at most timeout_us.
  template <typename HasWork>
  void sleep(HasWork&& has_work, long timeout_us) {
    if (efd_ >= 0) {
      if (announce(has_work)) {
        pollfd p{efd_, POLLIN, 0};
        timespec ts{timeout_us / 1'000'000, (timeout_us % 1'000'000) * 1000};
        ::ppoll(&p, 1, &ts, nullptr);
      }
      withdraw();
      return;
    }
    const uint32_t seen = seq_.load(std::memory_order_seq_cst);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    if (!has_work()) {
      timespec ts{timeout_us / 1'000'000, (timeout_us % 1'000'000) * 1000};
      syscall(SYS_futex, reinterpret_cast<uint32_t*>(&seq_), FUTEX_WAIT_PRIVATE, seen, &ts, nullptr,
              0);
    }
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }
  // eventfd only, a sleeper in its own event loop: announce the sleep, then sleep (until fd() is
  // readable, or a timeout) only if true: `has_work` found nothing after the announcement, so a
  // ring from then on writes fd(). withdraw() after, either way.
  template <typename HasWork>
  bool announce(HasWork&& has_work) {
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    return !has_work();
  }
  void withdraw() {
    uint64_t v = 0;
    (void)::read(efd_, &v, sizeof(v));  // the rings so far are seen: count from zero again
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }

 private:
  int efd_ = -1;
  alignas(kFalseSharingRange) std::atomic<uint32_t> seq_{0};
  alignas(kFalseSharingRange) std::atomic<uint32_t> sleepers_{0};
};

// The idle policy of one agent loop. A pause is ~40-140 cycles depending on the CPU, so the
// default 256 rounds spin for roughly 5-15 µs before parking: long enough to catch a burst,
// short enough that on a 2-core machine the spinning threads do not starve the others.
class Idler {
 public:
  Idler(WaitStrategy s, Doorbell& bell, uint32_t spin_rounds = 256)
      : s_(s), bell_(bell), spins_(spin_rounds) {}
  // Call with how much work the last round did; may sleep until the doorbell rings, or
  // `timeout_us` at most: until the caller's next timed duty (a producer that published rings,
  // so nothing else needs a timer; the bound also caps what a lost wake-up would cost).
  template <typename HasWork>
  void idle(size_t work_done, HasWork&& has_work, long timeout_us = 1000) {
    if (work_done > 0) {
      idle_rounds_ = 0;
      return;
    }
    if (s_ == WaitStrategy::kSpin ||
        (s_ == WaitStrategy::kSpinThenPark && ++idle_rounds_ < spins_)) {
      _mm_pause();
      return;
    }
    bell_.sleep(has_work, timeout_us);
    idle_rounds_ = 0;
  }

 private:
  WaitStrategy s_;
  Doorbell& bell_;
  uint32_t spins_;
  uint32_t idle_rounds_ = 0;
};

}  // namespace tachyon::pipe
