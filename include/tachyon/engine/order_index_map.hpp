#pragma once
// Order index -> pool slot. Order indices are handed out sequentially, so a direct-mapped ring
// (cell = index mod R) keeps recent orders in adjacent cache lines and needs no hashing. A cell
// is taken by an older order that still rests R indices later only rarely; that order's
// successor goes to a small overflow hash map. Owned by the sequencer thread.
#include <cstdint>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "tachyon/engine/order.hpp"

namespace tachyon {

class OrderIndexMap {
 public:
  // ring_cells is rounded up to a power of two.
  explicit OrderIndexMap(uint32_t ring_cells) {
    uint32_t r = 1024;
    while (r < ring_cells) r <<= 1;
    ring_.assign(r, kNoSlot);
    mask_ = r - 1;
  }
  uint32_t find(OrderIndex id, const OrderPool& pool) const {
    const uint32_t s = ring_[id & mask_];
    if (s != kNoSlot && pool[s].order_index == id) return s;
    if (overflow_.empty()) return kNoSlot;
    auto it = overflow_.find(id);
    return it == overflow_.end() ? kNoSlot : it->second;
  }
  void insert(OrderIndex id, uint32_t slot) {
    uint32_t& cell = ring_[id & mask_];
    if (cell == kNoSlot) {
      cell = slot;
      ++size_;
    } else {
      overflow_.emplace(id, slot);
      ++size_;
    }
  }
  // `id` must be present.
  void erase(OrderIndex id, const OrderPool& pool) {
    uint32_t& cell = ring_[id & mask_];
    if (cell != kNoSlot && pool[cell].order_index == id) {
      cell = kNoSlot;
    } else {
      overflow_.erase(id);
    }
    --size_;
  }
  size_t size() const { return size_; }
  // For a batch of lookups, a few ids ahead: first the ring's cell, then (once it is in cache)
  // the pool entry it names, so that find() meets neither miss.
  void prefetch_cell(OrderIndex id) const { __builtin_prefetch(&ring_[id & mask_]); }
  void prefetch_order(OrderIndex id, const OrderPool& pool) const {
    const uint32_t s = ring_[id & mask_];
    if (s != kNoSlot) __builtin_prefetch(&pool[s]);
  }
  // The slot `id` most likely has (its ring cell; kNoSlot or another order's when it is not):
  // for prefetching what a caller keeps by slot.
  uint32_t slot_hint(OrderIndex id) const { return ring_[id & mask_]; }

 private:
  std::vector<uint32_t, HugePageAllocator<uint32_t>> ring_;
  uint32_t mask_ = 0;
  size_t size_ = 0;
  absl::flat_hash_map<OrderIndex, uint32_t> overflow_;
};

}  // namespace tachyon
