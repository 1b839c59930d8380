#pragma once
// Published<T>: one writer swaps in immutable T objects; many readers read the current one
// without locks and without writing any line the writer or another reader writes (each reader
// announces itself on a line of its own). Old objects are freed by epoch-based reclamation:
//   reader: announce the global epoch (seq_cst), load the pointer, use it, announce "quiescent";
//   writer: swap the pointer, retire the old object tagged with the global epoch, bump the epoch;
//           an object tagged G is freed once no reader is active with an announced epoch <= G.
// A reader that loaded the old pointer announced before the swap, so its epoch is <= G; a reader
// announcing after the bump sees the new pointer. libstdc++ 12's atomic<shared_ptr> takes a
// spin-lock bit on every load (docs/ARCHITECTURE.md "Toolchain"); bench/pipe/bench_published.cpp
// measures both. Threads: publish()/collect() on the one writer; Reader on the reader thread that
// got it.
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "tachyon/core/assert.hpp"
#include "tachyon/core/cache_warm.hpp"
#include "tachyon/pipe/spsc_ring.hpp"

namespace tachyon::pipe {

template <typename T>
class Published {
  struct alignas(kFalseSharingRange) Slot {
    std::atomic<uint64_t> epoch{0};  // 0 = not reading
    std::atomic<bool> taken{false};
  };

 public:
  explicit Published(size_t max_readers, std::unique_ptr<T> initial = nullptr)
      : slots_(max_readers), current_(initial.release()) {}
  ~Published() {
    delete current_.load();
    for (auto& r : retired_) delete r.obj;
    for (T* s : spare_) delete s;
  }
  Published(const Published&) = delete;
  Published& operator=(const Published&) = delete;

  // A reader's handle: one per reader thread. Readers that come and go return their slot.
  class Reader {
   public:
    Reader(Reader&& o) noexcept : p_(o.p_), slot_(o.slot_) { o.p_ = nullptr; }
    ~Reader() {
      if (p_ != nullptr) p_->slots_[slot_].taken.store(false, std::memory_order_release);
    }
    // Calls f(const T*) on the current object (nullptr before the first publish).
    template <typename F>
    decltype(auto) read(F&& f) {
      auto& s = p_->slots_[slot_];
      s.epoch.store(p_->epoch_.load(std::memory_order_seq_cst), std::memory_order_seq_cst);
      const T* obj = p_->current_.load(std::memory_order_seq_cst);
      struct Exit {
        std::atomic<uint64_t>& e;
        ~Exit() { e.store(0, std::memory_order_release); }
      } exit{s.epoch};
      return f(obj);
    }

   private:
    friend class Published;
    Reader(Published* p, size_t slot) : p_(p), slot_(slot) {}
    Published* p_;
    size_t slot_;
  };

  // Any thread, before it reads; refuses (asserts) when every slot is taken: size max_readers.
  Reader reader() {
    for (size_t i = 0; i < slots_.size(); ++i) {
      bool expected = false;
      if (slots_[i].taken.compare_exchange_strong(expected, true)) return Reader(this, i);
    }
    TACHYON_ASSERT(false, "Published: more readers than slots");
    __builtin_unreachable();
  }

  // Writer: make `next` current; the old object is freed once no reader can hold it.
  void publish(std::unique_ptr<T> next) {
    T* old = current_.exchange(next.release(), std::memory_order_seq_cst);
    if (old != nullptr) retired_.push_back({old, epoch_.fetch_add(1, std::memory_order_seq_cst)});
    collect();
  }

  // Writer: with recycling on, objects no reader can hold come back through take_spare()
  // instead of being freed, so a writer that refills them allocates nothing in steady state.
  void enable_recycling(size_t expected_in_flight = 64) {
    recycle_ = true;
    spare_.reserve(expected_in_flight);
    retired_.reserve(expected_in_flight);
  }
  // Writer, while idle: the reader slots collect() scans and the lists publish() appends to,
  // read into this core's cache.
  void keep_warm() const {
    uint64_t x = 0;
    for (auto& s : slots_) x += s.epoch.load(std::memory_order_relaxed);
    __builtin_prefetch(retired_.data() + retired_.size());
    __builtin_prefetch(spare_.data() + spare_.size());
    keep_value(x);
  }
  // Writer: the object take_spare() would return next, or nullptr (to warm it, not to use it).
  const T* peek_spare() const { return spare_.empty() ? nullptr : spare_.back(); }
  std::unique_ptr<T> take_spare() {
    if (spare_.empty()) return nullptr;
    T* s = spare_.back();
    spare_.pop_back();
    return std::unique_ptr<T>(s);
  }

  // Writer: frees (or recycles) what no reader can still hold. Returns how many objects wait.
  // Writer: snapshots retired but not yet reclaimable (a reader may still hold them).
  size_t retired() const { return retired_.size(); }
  size_t collect() {
    if (retired_.empty()) return 0;  // the common case: nothing waits, no slot to scan
    uint64_t min_active = UINT64_MAX;
    for (auto& s : slots_) {
      const uint64_t e = s.epoch.load(std::memory_order_seq_cst);
      if (e != 0 && e < min_active) min_active = e;
    }
    size_t kept = 0;
    for (auto& r : retired_) {
      if (r.tag < min_active) {
        if (recycle_) {
          spare_.push_back(r.obj);
        } else {
          delete r.obj;
        }
      } else {
        retired_[kept++] = r;
      }
    }
    retired_.resize(kept);
    return kept;
  }

  // Writer-side peek (the writer may read what it published without announcing).
  const T* current_for_writer() const { return current_.load(std::memory_order_relaxed); }

 private:
  struct Retired {
    T* obj;
    uint64_t tag;
  };
  std::vector<Slot> slots_;
  alignas(kFalseSharingRange) std::atomic<T*> current_;
  alignas(kFalseSharingRange) std::atomic<uint64_t> epoch_{1};  // 0 means "not reading"
  std::vector<Retired> retired_;                                // writer only
  std::vector<T*> spare_;                                       // writer only: recycled objects
  bool recycle_ = false;
};

}  // namespace tachyon::pipe
