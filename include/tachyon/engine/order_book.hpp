#pragma once
// One market's price levels. Each side is a vector sorted so that the best level is at the back
// (bids ascending by price, asks descending): most activity happens near the touch, where
// insert and erase move few elements. Each level is a FIFO of pool slots (price-time priority).
// Owned by the sequencer thread.
#include <cstdint>
#include <vector>

#include "tachyon/engine/order.hpp"

namespace tachyon {

struct Level {
  Ticks price;
  Lots total;  // Σ remaining of its orders
  uint32_t count;
  uint32_t head;  // oldest order (first to match)
  uint32_t tail;
  uint32_t pad_;
};
static_assert(sizeof(Level) == 32);

class OrderBook {
 public:
  OrderBook() = default;
  void reserve(size_t levels_per_side) {
    bids_.reserve(levels_per_side);
    asks_.reserve(levels_per_side);
    bid_prices_.reserve(levels_per_side);
    ask_prices_.reserve(levels_per_side);
  }

  const std::vector<Level>& side(bool is_ask) const { return is_ask ? asks_ : bids_; }
  bool empty(bool is_ask) const { return side(is_ask).empty(); }
  const Level* best(bool is_ask) const {
    const auto& s = side(is_ask);
    return s.empty() ? nullptr : &s.back();
  }
  Level* best_mut(bool is_ask) {
    auto& s = is_ask ? asks_ : bids_;
    return s.empty() ? nullptr : &s.back();
  }
  // Does a taker on side `taker_is_ask` at `price` cross the opposite best?
  bool crosses(bool taker_is_ask, Ticks price) const {
    const Level* b = best(!taker_is_ask);
    return b && (taker_is_ask ? b->price >= price : b->price <= price);
  }

  // Best bid at or above best ask (both sides non-empty): never so once a matching is done.
  bool crossed() const {
    const Level* b = best(false);
    const Level* a = best(true);
    return b && a && b->price >= a->price;
  }

  void add(OrderPool& pool, uint32_t slot);              // appends at the level's tail
  void remove(OrderPool& pool, uint32_t slot);           // unlinks; drops an empty level
  void reduce(OrderPool& pool, uint32_t slot, Lots by);  // in place, keeps priority

  size_t level_count(bool is_ask) const { return side(is_ask).size(); }
  // Levels from best to worse: i = 0 is the best.
  const Level& level(bool is_ask, size_t i) const {
    const auto& s = side(is_ask);
    return s[s.size() - 1 - i];
  }

 private:
  std::vector<Level>& side_mut(bool is_ask) { return is_ask ? asks_ : bids_; }
  // Index of the level with this price, or the insertion point (found = false).
  size_t find(bool is_ask, Ticks price, bool& found) const;

  std::vector<Level> bids_;
  std::vector<Level> asks_;
  // The levels' prices again, densely packed (8 bytes, not 32, per level): what find() searches.
  std::vector<Ticks> bid_prices_;
  std::vector<Ticks> ask_prices_;
};

}  // namespace tachyon
