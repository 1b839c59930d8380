#pragma once
// Resting orders live in one preallocated pool; books, account lists and the expiry heap link
// them by 32-bit slot. Owned by the sequencer thread.
#include <cstdint>
#include <vector>

#include "tachyon/core/assert.hpp"
#include "tachyon/core/huge_page_allocator.hpp"
#include "tachyon/core/units.hpp"
#include "tachyon/engine/tx.hpp"

namespace tachyon {

inline constexpr uint32_t kNoSlot = 0xffffffffu;

struct Order {
  OrderIndex order_index;
  uint64_t client_order_index;
  AccountIndex account;
  Ticks price;
  Lots remaining;
  Lots initial;
  int64_t expiry_ms;    // 0 = no expiry
  uint32_t prev, next;  // FIFO within the price level
  uint32_t acct_prev, acct_next;
  uint32_t heap_pos;  // position in the expiry heap, kNoSlot if none
  uint32_t account_slot;
  MarketId market;
  uint8_t is_ask;
  OrderType type;
  TimeInForce tif;
  uint8_t reduce_only;
  StpMode stp;
  uint8_t live;
  // Not in the book: 1 a stop-loss / take-profit waiting for its trigger, 2 a grouped order's
  // child waiting for its primary (kWaitingParent), 3 a TWAP between its slices (kWaitingTwap).
  uint8_t pending;
  Ticks trigger_price;  // 0 = none; a TWAP's: the time (ms) its next slice is due
  // Grouped orders (order indices, 0 = none): a primary's first child, a child's primary, the
  // other order of an OCO pair.
  OrderIndex child, parent, sibling;
};
static_assert(sizeof(Order) == 120);
inline constexpr uint8_t kWaitingTrigger = 1;
inline constexpr uint8_t kWaitingParent = 2;
inline constexpr uint8_t kWaitingTwap = 3;

inline bool is_trigger_type(OrderType t) {
  return t == OrderType::kStopLoss || t == OrderType::kStopLossLimit ||
         t == OrderType::kTakeProfit || t == OrderType::kTakeProfitLimit;
}
// A trigger order fires when the mark reaches its trigger from this side: a stop-loss sell or a
// take-profit buy when the mark falls to it, a stop-loss buy or a take-profit sell when it rises.
inline bool fires_below(OrderType t, bool is_ask) {
  const bool stop = t == OrderType::kStopLoss || t == OrderType::kStopLossLimit;
  return stop == is_ask;
}

class OrderPool {
 public:
  explicit OrderPool(uint32_t capacity) : orders_(capacity) {
    free_.reserve(capacity);
    for (uint32_t i = capacity; i > 0; --i) free_.push_back(i - 1);
  }
  bool full() const { return free_.empty(); }
  uint32_t alloc() {
    TACHYON_ASSERT(!free_.empty(), "order pool exhausted");
    uint32_t s = free_.back();
    free_.pop_back();
    orders_[s] = Order{};
    orders_[s].live = 1;
    return s;
  }
  void release(uint32_t s) {
    orders_[s].live = 0;
    free_.push_back(s);
  }
  Order& operator[](uint32_t s) { return orders_[s]; }
  const Order& operator[](uint32_t s) const { return orders_[s]; }
  uint32_t capacity() const { return static_cast<uint32_t>(orders_.size()); }
  uint32_t live_count() const { return capacity() - static_cast<uint32_t>(free_.size()); }

 private:
  std::vector<Order, HugePageAllocator<Order>> orders_;
  std::vector<uint32_t, HugePageAllocator<uint32_t>> free_;
};

// Indexed binary min-heap of good-till-time orders keyed by (expiry, order index): O(log n)
// insert and erase with no allocation (sized to the pool at start).
class ExpiryHeap {
 public:
  explicit ExpiryHeap(OrderPool& pool) : pool_(pool) { heap_.reserve(pool.capacity()); }
  bool empty() const { return heap_.empty(); }
  uint32_t top() const { return heap_.front(); }
  size_t size() const { return heap_.size(); }
  void push(uint32_t slot);
  void erase(uint32_t slot);
  bool valid() const;

 private:
  bool less(uint32_t a, uint32_t b) const {
    const Order& x = pool_[a];
    const Order& y = pool_[b];
    return x.expiry_ms != y.expiry_ms ? x.expiry_ms < y.expiry_ms : x.order_index < y.order_index;
  }
  void place(size_t i, uint32_t slot) {
    heap_[i] = slot;
    pool_[slot].heap_pos = static_cast<uint32_t>(i);
  }
  void sift_up(size_t i);
  void sift_down(size_t i);

  OrderPool& pool_;
  std::vector<uint32_t, HugePageAllocator<uint32_t>> heap_;
};

}  // namespace tachyon
