#pragma once
// The apply thread's resting orders (the books' caches in pipeline.hpp): one cache line per
// order, each in its price level's FIFO list, found by order index through a direct-mapped ring.
//
// Order indices are handed out sequentially, so the ring (cell = index mod R) keeps the orders
// that rest near each other in time in adjacent cells and needs no hashing; an order whose cell a
// still resting older one holds goes to a small overflow map (as the engine's OrderIndexMap
// does). Nodes live in fixed chunks that never move (a new chunk only when every node is in use)
// and freed ones are reused first, so that a steady book allocates nothing. While nothing was
// freed, nodes are handed out in slot order.
//
// Not a hash map (order index -> price and time rank) plus an ordered map over (side, price,
// time): that map's 64-byte entries in 256-byte nodes make ~8 levels of dependent cache misses
// per insert or removal.
#include <cstdint>
#include <memory>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "tachyon/core/assert.hpp"
#include "tachyon/core/units.hpp"
#include "tachyon/pipe/book_snapshot.hpp"

namespace tachyon::pipe {

class OrderNodes {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct alignas(64) Node {
    BookOrder o;          // as a book snapshot shows it
    uint32_t prev, next;  // in the level, oldest first (kNone at the ends)
    MarketId market;
    uint8_t is_ask;
  };
  static_assert(sizeof(Node) == 64);

  // Room for `expected` orders without a new chunk; the ring has at least 2 x expected cells
  // (at least 64k).
  explicit OrderNodes(size_t expected) {
    size_t cells = size_t{1} << 16;
    while (cells < 2 * expected) cells <<= 1;
    cells_.assign(cells, kNone);
    mask_ = cells - 1;
    reserve(expected);
  }

  // Chunks for `n` nodes in all. Before any add() that another thread's index() may race with.
  void reserve(size_t n) {
    while (chunks_.size() * kChunk < n) grow();
  }

  Node& operator[](uint32_t s) { return chunks_[s >> kChunkShift][s & (kChunk - 1)]; }
  const Node& operator[](uint32_t s) const { return chunks_[s >> kChunkShift][s & (kChunk - 1)]; }

  // The node of order `id`, or kNone.
  uint32_t find(OrderIndex id) const {
    const uint32_t s = cells_[id & mask_];
    if (s != kNone && (*this)[s].o.order_index == id) return s;
    if (overflow_.empty()) return kNone;
    auto it = overflow_.find(id);
    return it == overflow_.end() ? kNone : it->second;
  }
  // A free node for order `id` (its other fields are the caller's), not yet findable: index()
  // makes it so. add() does both.
  uint32_t allocate(OrderIndex id) {
    uint32_t s;
    if (!free_.empty()) {
      s = free_.back();
      free_.pop_back();
    } else {
      if (fresh_ == capacity()) grow();
      s = static_cast<uint32_t>(fresh_++);
    }
    (*this)[s].o.order_index = id;
    ++size_;
    return s;
  }
  void index(OrderIndex id, uint32_t s) {
    uint32_t& cell = cells_[id & mask_];
    if (cell == kNone) {
      cell = s;
    } else {
      overflow_.emplace(id, s);
    }
  }
  uint32_t add(OrderIndex id) {
    const uint32_t s = allocate(id);
    index(id, s);
    return s;
  }
  // Node `s` (found, or added) leaves: no longer findable, and reused by a later allocate().
  void remove(uint32_t s) {
    const OrderIndex id = (*this)[s].o.order_index;
    uint32_t& cell = cells_[id & mask_];
    if (cell == s) {
      cell = kNone;
    } else {
      const size_t erased = overflow_.erase(id);
      TACHYON_ASSERT(erased == 1, "a removed order node was findable");
    }
    free_.push_back(s);
    --size_;
  }
  size_t size() const { return size_; }
  size_t overflowed() const { return overflow_.size(); }
  size_t capacity() const { return chunks_.size() * kChunk; }
  // Where find(id) looks first, into this core's cache.
  void prefetch(OrderIndex id) const { __builtin_prefetch(&cells_[id & mask_]); }

 private:
  static constexpr uint32_t kChunkShift = 12;  // 4096 nodes (256 KB) a chunk
  static constexpr size_t kChunk = size_t{1} << kChunkShift;
  // One chunk more (and room to free all of them without an allocation).
  void grow() {
    TACHYON_ASSERT(capacity() + kChunk <= kNone, "order nodes fit 32-bit slots");
    chunks_.push_back(std::make_unique_for_overwrite<Node[]>(kChunk));  // touched when used
    free_.reserve(capacity());
  }
  std::vector<std::unique_ptr<Node[]>> chunks_;
  size_t fresh_ = 0;            // nodes below it were handed out (in use, or in free_)
  std::vector<uint32_t> free_;  // released nodes, handed out again before fresh ones (last first)
  std::vector<uint32_t> cells_;
  uint64_t mask_ = 0;
  size_t size_ = 0;
  absl::flat_hash_map<OrderIndex, uint32_t> overflow_;
};

}  // namespace tachyon::pipe
