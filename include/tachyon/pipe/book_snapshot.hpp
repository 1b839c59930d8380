#pragma once
// BookSnapshot: an immutable view of one market's book that the apply thread publishes (through
// Published<BookSnapshot>) after each batch that changed the market; api workers read it without
// locks. Full depth as sorted level arrays, best first, plus the WS continuity counters.
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "tachyon/core/units.hpp"

namespace tachyon::pipe {

struct PriceLevel {
  Ticks price;
  Lots size;
  uint32_t orders;
};

// One side's levels: best first to readers, kept worst first underneath. The touch, where most
// levels come and go, is then the back of the vector: the apply thread brings a recycled snapshot
// up to date by rewriting only the levels from the first one that changed since that snapshot was
// published (Pipeline::publish_changed), not the whole side (~10 KB at 400 levels).
class LevelArray {
 public:
  size_t size() const { return v_.size(); }
  bool empty() const { return v_.empty(); }
  const PriceLevel& operator[](size_t i) const { return v_[v_.size() - 1 - i]; }  // 0: the best
  const PriceLevel& front() const { return v_.back(); }
  auto begin() const { return v_.rbegin(); }  // best first
  auto end() const { return v_.rend(); }
  // Writers: the levels worst first, and a level worse than every one so far (tests, benchmarks).
  std::vector<PriceLevel>& worst_first() { return v_; }
  const std::vector<PriceLevel>& worst_first() const { return v_; }
  void push_worse(const PriceLevel& l) { v_.insert(v_.begin(), l); }

 private:
  std::vector<PriceLevel> v_;
};

// A resting order as the book shows it (orderBookOrders).
struct BookOrder {
  OrderIndex order_index;
  AccountIndex owner;
  Ticks price;
  Lots remaining;
  Lots initial;
  int64_t expiry_ms;
};

struct BookSnapshot {
  MarketId market = 0;
  uint64_t nonce = 0;        // increases with every published change (WS `nonce`)
  uint64_t begin_nonce = 0;  // the previous snapshot's nonce (WS `begin_nonce`)
  int64_t engine_ts_ns = 0;  // when the sequencer executed the last change in it
  uint64_t seq = 0;          // the last tx it includes, whole: snapshots are made between txs
  LevelArray bids;           // best (highest) first
  LevelArray asks;           // best (lowest) first
  static constexpr size_t kTopOrders = 100;
  std::vector<BookOrder> bid_orders;  // the first kTopOrders in priority (price, then time)
  std::vector<BookOrder> ask_orders;
  // The apply thread's: the version of the book's bid and ask top orders these are (a recycled
  // snapshot whose side is still current is not copied again).
  std::array<uint64_t, 2> top_version{};

  const PriceLevel* best_bid() const { return bids.empty() ? nullptr : &bids.front(); }
  const PriceLevel* best_ask() const { return asks.empty() ? nullptr : &asks.front(); }
};

// One publish of a market's book as the levels it changed (absolute sizes, 0 = removed). A
// publish that changed more levels than fit spans several records with the same nonce; `last`
// marks the final one.
struct BookDeltaRecord {
  static constexpr int kLevels = 8;
  struct Level {
    Ticks price;
    Lots size;
    uint8_t is_ask;
    uint8_t pad[7];
  };
  uint64_t nonce = 0;
  uint64_t begin_nonce = 0;
  int64_t engine_ts_ns = 0;
  uint16_t count = 0;
  uint8_t last = 0;
  uint8_t pad[5] = {};
  Level lv[kLevels] = {};
};

// A publish's changes, reassembled from its records.
struct BookDelta {
  uint64_t nonce = 0, begin_nonce = 0;
  int64_t engine_ts_ns = 0;
  std::vector<PriceLevel> bids, asks;  // changed levels, size 0 = removed
};

}  // namespace tachyon::pipe
