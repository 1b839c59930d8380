#pragma once
// EpochDomain: epoch-based reclamation shared by many published objects (one domain for all
// account views, instead of a slot array per object as Published<T> has). Same protocol:
//   reader: announce the global epoch (seq_cst), load pointers, use them, announce "quiescent";
//   writer: swap a pointer, retire the old object tagged with the epoch, bump the epoch; an object
//           tagged G is reclaimed once no reader is active with an announced epoch <= G.
// BroadcastLog (core/broadcast_log.hpp) is the one-writer, many-reader log used beside it.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "tachyon/core/assert.hpp"
#include "tachyon/core/broadcast_log.hpp"
#include "tachyon/core/cache_warm.hpp"
#include "tachyon/pipe/spsc_ring.hpp"

namespace tachyon::pipe {

class EpochDomain {
  struct alignas(kFalseSharingRange) Slot {
    std::atomic<uint64_t> epoch{0};  // 0 = not reading
    std::atomic<bool> taken{false};
  };

 public:
  explicit EpochDomain(size_t max_readers) : slots_(max_readers) {}
  EpochDomain(const EpochDomain&) = delete;
  EpochDomain& operator=(const EpochDomain&) = delete;

  // A reader thread's registration; the slot is returned when it is destroyed.
  class Reader {
   public:
    Reader() = default;
    Reader(Reader&& o) noexcept : d_(o.d_), slot_(o.slot_) { o.d_ = nullptr; }
    Reader& operator=(Reader&& o) noexcept {
      std::swap(d_, o.d_);
      std::swap(slot_, o.slot_);
      return *this;
    }
    ~Reader() {
      if (d_ != nullptr) d_->slots_[slot_].taken.store(false, std::memory_order_release);
    }
    // Calls f() inside a read-side critical section: pointers loaded in it stay valid.
    template <typename F>
    decltype(auto) read(F&& f) {
      auto& s = d_->slots_[slot_];
      s.epoch.store(d_->epoch_.load(std::memory_order_seq_cst), std::memory_order_seq_cst);
      struct Exit {
        std::atomic<uint64_t>& e;
        ~Exit() { e.store(0, std::memory_order_release); }
      } exit{s.epoch};
      return f();
    }
    bool valid() const { return d_ != nullptr; }

   private:
    friend class EpochDomain;
    Reader(EpochDomain* d, size_t slot) : d_(d), slot_(slot) {}
    EpochDomain* d_ = nullptr;
    size_t slot_ = 0;
  };

  Reader reader() {
    for (size_t i = 0; i < slots_.size(); ++i) {
      bool expected = false;
      if (slots_[i].taken.compare_exchange_strong(expected, true)) return Reader(this, i);
    }
    TACHYON_ASSERT(false, "EpochDomain: more readers than slots");
    __builtin_unreachable();
  }

  // Writer: the tag for an object just unlinked (bumps the epoch).
  uint64_t retire_tag() { return epoch_.fetch_add(1, std::memory_order_seq_cst); }
  // Writer, while idle: the reader slots safe_below() scans read into this core's cache.
  void keep_warm() const {
    uint64_t x = 0;
    for (auto& s : slots_) x += s.epoch.load(std::memory_order_relaxed);
    keep_value(x);
  }
  // Writer: the epoch the next retire_tag() returns.
  uint64_t current() const { return epoch_.load(std::memory_order_seq_cst); }
  // Writer: objects tagged below this are unreachable by any reader.
  uint64_t safe_below() const {
    uint64_t min_active = UINT64_MAX;
    for (auto& s : slots_) {
      const uint64_t e = s.epoch.load(std::memory_order_seq_cst);
      if (e != 0 && e < min_active) min_active = e;
    }
    return min_active;
  }

 private:
  std::vector<Slot> slots_;
  alignas(kFalseSharingRange) std::atomic<uint64_t> epoch_{1};
};

}  // namespace tachyon::pipe
