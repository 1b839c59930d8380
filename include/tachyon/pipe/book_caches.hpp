#pragma once
// The read model's books (docs/ARCHITECTURE.md "The path of one signed tx"): per market, its
// levels worst first and every resting order in its level's FIFO, kept from the update stream,
// and their publication as one immutable BookSnapshot per changed market per batch, with the
// delta history that lets a WebSocket client repair a gap.
//
// Owner: the apply thread (every non-const method but the seeding, which runs before it starts).
// Readers (any thread): book(), book_deltas().
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <absl/functional/function_ref.h>

#include "tachyon/core/broadcast_log.hpp"
#include "tachyon/core/thread_owner.hpp"
#include "tachyon/engine/update.hpp"
#include "tachyon/pipe/book_snapshot.hpp"
#include "tachyon/pipe/order_nodes.hpp"
#include "tachyon/pipe/published.hpp"

namespace tachyon {
class Engine;
}

namespace tachyon::pipe {

class BookCaches {
 public:
  // `node_capacity`: resting orders the node pool holds before it grows a chunk.
  BookCaches(uint32_t max_readers, size_t book_history, size_t node_capacity);
  ~BookCaches();
  BookCaches(const BookCaches&) = delete;
  BookCaches& operator=(const BookCaches&) = delete;

  // Seeding, before the apply thread starts: the engine's book of market `m` as it is now,
  // stamped `now_ns`, into consecutive nodes; returns where its nodes end. index_nodes() then
  // makes nodes [begin, end) findable by order index: it may run on a second thread while the
  // next book is seeded (the two never write the same memory).
  uint32_t seed_book(const Engine& e, MarketId m, int64_t now_ns, uint64_t nonce);
  void index_nodes(uint32_t begin, uint32_t end);

  // Apply thread: one state update (orders, new markets; the rest is not the books' business).
  void apply(const StateUpdate& u);
  // Apply thread: one snapshot per market changed since the last call, stamped with `seq`.
  void publish_changed(uint64_t seq);
  // Apply thread: frees retired snapshots no reader holds any more (only books that hold some).
  void collect();
  bool collecting() const { return !collect_pending_.empty(); }
  // Apply thread, idle: reads what the next batch most likely touches into this core's cache.
  void keep_warm(absl::FunctionRef<bool()> work_waiting);

  // Any thread.
  Published<BookSnapshot>& book(MarketId m) { return *books_[m]; }
  bool book_deltas(MarketId m, uint64_t since_nonce, uint64_t until_nonce,
                   std::vector<BookDelta>& out) const;
  uint64_t publications() const { return publications_.load(std::memory_order_relaxed); }
  ThreadOwner& owner() { return owner_; }

 private:
  // The lowest level index each of the last kSideHistory publishes changed, by nonce: a recycled
  // snapshot published at nonce K then needs only the levels from the lowest of (K, now] copied.
  static constexpr uint64_t kSideHistory = 16;
  static constexpr uint32_t kWarmQueueDepth = 1024, kWarmQueueSlice = 64;
  static constexpr size_t kTouchedReserve = 1024;  // Cache::touched entries, 16 KiB per market
  // A level's resting orders, oldest first (nodes_, linked through prev / next).
  struct Fifo {
    uint32_t head = OrderNodes::kNone, tail = OrderNodes::kNone;
  };
  struct Side {
    std::vector<PriceLevel> levels;  // worst first: the touch is at the back
    std::vector<Fifo> fifo;          // each level's orders, at the same index as the level
    uint32_t changed_from = 0;       // the lowest index changed since the last publish
    std::array<uint32_t, kSideHistory> changed_at{};
  };
  struct Cache {
    Side bids, asks;
    std::vector<std::pair<uint8_t, Ticks>> touched;  // levels changed since the last publish
    uint64_t nonce = 0;
    int64_t engine_ts_ns = 0;
    bool changed = false;
    // Bids', asks' top orders: +1 at each publish that changed them (BookSnapshot::top_version).
    std::array<uint64_t, 2> top_version{};
    // keep_warm's walk of each side's top kWarmQueueDepth orders, at least kWarmQueueSlice per
    // call (whole levels): the level it goes on from (counted from the touch) and how deep it is.
    std::array<uint32_t, 2> warm_level{};
    std::array<uint32_t, 2> warm_depth{};
  };

  void mark_changed(MarketId m);
  void rest_order(const OrderUpdate& o);
  // Resting order in node `s` now has `remaining` left, or (`removed`) leaves its book.
  void reduce_or_remove(uint32_t s, Lots remaining, bool removed);
  // The level that `price` was just changed at (index `i` of its side): noted for the publish.
  void level_changed(MarketId m, Side& sd, size_t i, bool is_ask, Ticks price);
  void publish_one(MarketId m, uint64_t seq);
  static std::array<bool, 2> top_orders_changed(const Cache& c, const BookSnapshot* prev);
  void top_orders(const Cache& c, bool is_ask, const std::vector<BookOrder>* prev,
                  std::vector<BookOrder>& out) const;
  static void copy_levels(Side& sd, uint64_t nonce, uint64_t had, LevelArray& out);
  void record_delta(MarketId m, uint64_t begin_nonce, uint64_t nonce);
  void warm_side(Cache& c, int side);

  const size_t book_history_;
  ThreadOwner owner_{"apply"};
  std::vector<std::unique_ptr<Published<BookSnapshot>>> books_;
  // Per market, made by the apply thread on first use and kept until destruction. Release on
  // store, acquire on load: a reader that sees the log sees it constructed.
  std::vector<std::atomic<BroadcastLog<BookDeltaRecord>*>> deltas_;
  std::atomic<uint64_t> publications_{0};  // statistics only: relaxed
  std::vector<Cache> caches_;
  OrderNodes nodes_;            // every resting order of every book
  OrderIndex last_rested_ = 0;  // order indices grow: the next ones to rest follow it
  std::vector<MarketId> changed_;
  std::array<int16_t, 4> recent_{-1, -1, -1, -1};  // published last (keep_warm), a ring
  uint32_t recent_pos_ = 0;
  std::vector<MarketId> collect_pending_;    // books holding retired snapshots
  std::vector<uint8_t> in_collect_pending_;  // per market: listed in collect_pending_
};

}  // namespace tachyon::pipe
