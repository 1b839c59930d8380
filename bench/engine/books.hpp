#pragma once
// The three contestants the benchmarks drive with the same tx stream:
//  - EngineRunner: the full Engine (auth, nonces, margin, fees, positions, updates to a NullSink);
//  - EngineBook:   the engine's matching structures alone (OrderBook + OrderPool + an
//                  OrderIndexMap from order index to slot), no accounts or margin;
//  - StdMapBook:   the naive reference, std::map<price, std::deque<order>> per side and a
//                  std::unordered_map for order lookup.
// The two books do the same place / cancel / modify / match work as the engine (price-time
// priority, maker's price, self-trade prevention "expire maker", same order indices), so their
// books match the engine's level for level after any stream of accepted txs (verify_books()).
// All execute() calls are out of line, in books.cpp, like Engine::execute.
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "tachyon/engine/engine.hpp"
#include "tachyon/engine/order_book.hpp"
#include "workload.hpp"

namespace tachyon::bench {

struct LevelView {
  bool is_ask;
  Ticks price;
  Lots total;
  uint32_t count;
  bool operator==(const LevelView&) const = default;
};
using BookView = std::vector<LevelView>;  // bids best first, then asks best first

class EngineRunner {
 public:
  static constexpr const char* kName = "engine";
  explicit EngineRunner(const EngineConfig& cfg = EngineConfig{})
      : engine_(std::make_unique<Engine>(cfg)) {}
  bool execute(const Tx& tx);
  BookView view() const;
  const Engine& engine() const { return *engine_; }

 private:
  std::unique_ptr<Engine> engine_;
  NullSink sink_;
};

class EngineBook {
 public:
  static constexpr const char* kName = "engine_book";
  explicit EngineBook(uint32_t capacity = EngineConfig{}.max_orders);
  bool execute(const Tx& tx);
  BookView view() const;
  uint64_t trades() const { return trades_; }

 private:
  bool place(const Tx& tx);
  bool cancel(const Tx& tx);
  bool modify(const Tx& tx);
  void match(uint32_t slot);  // price bound = the order's price
  void rest_or_release(uint32_t slot);
  void remove(uint32_t slot);
  uint32_t find(OrderIndex idx, AccountIndex a, MarketId m) const;

  OrderPool pool_;
  OrderBook book_;
  OrderIndexMap slots_;  // the engine's own order index -> slot map
  OrderIndex next_index_ = kFirstOrderIndex;
  uint64_t trades_ = 0;
};

class StdMapBook {
 public:
  static constexpr const char* kName = "std_map_book";
  explicit StdMapBook(size_t expected_orders = EngineConfig{}.max_orders);
  bool execute(const Tx& tx);
  BookView view() const;
  uint64_t trades() const { return trades_; }

 private:
  struct RefOrder {
    OrderIndex id;
    AccountIndex account;
    Lots remaining;
  };
  struct RefLevel {
    std::deque<RefOrder> orders;
    Lots total = 0;
  };
  struct Where {
    Ticks price;
    AccountIndex account;
    MarketId market;
    bool is_ask;
  };
  using Bids = std::map<Ticks, RefLevel, std::greater<Ticks>>;
  using Asks = std::map<Ticks, RefLevel, std::less<Ticks>>;

  bool place(const Tx& tx);
  bool cancel(const Tx& tx);
  bool modify(const Tx& tx);
  // Matches a taker against the opposite side; returns what is left of `qty`.
  Lots take(bool taker_is_ask, AccountIndex a, Lots qty, Ticks bound);
  template <typename Side>
  Lots take_from(Side& side, bool taker_is_ask, AccountIndex a, Lots qty, Ticks bound);
  void rest(OrderIndex id, bool is_ask, AccountIndex a, MarketId m, Ticks price, Lots qty);
  template <typename Side>
  RefOrder erase(Side& side, Ticks price, OrderIndex id);

  Bids bids_;
  Asks asks_;
  std::unordered_map<OrderIndex, Where> where_;
  OrderIndex next_index_ = kFirstOrderIndex;
  uint64_t trades_ = 0;
};

// The same, with the engine's tables sized to the benchmark's working set (a few thousand orders,
// a thousand accounts) instead of the defaults (2^20 orders, 2^16 accounts): isolates what the
// sparse, pre-reserved hash maps cost in cache and TLB misses.
inline EngineConfig compact_config() {
  return EngineConfig{.max_orders = 1u << 14, .expected_accounts = 2048, .levels_per_side = 1024};
}
class CompactEngineRunner : public EngineRunner {
 public:
  static constexpr const char* kName = "engine_compact_cfg";
  CompactEngineRunner() : EngineRunner(compact_config()) {}
};
class CompactEngineBook : public EngineBook {
 public:
  static constexpr const char* kName = "engine_book_compact";
  CompactEngineBook() : EngineBook(compact_config().max_orders) {}
};

// One OrderAdded update built and handed to `sink`, as the engine's emitters do: through
// StateUpdate's memset constructor (g++ 12 lowers its 96 bytes to `rep stosq`), or zeroed with
// two fixed-size stores the compiler turns into vector moves. Out of line on purpose.
void emit_update_memset_ctor(UpdateSink& sink, int64_t time_ns, uint64_t x);
void emit_update_vector_zero(UpdateSink& sink, int64_t time_ns, uint64_t x);

// Replays setup + ops on all three; empty when their books agree after every timed segment.
std::string verify_books(const Scenario& s);

}  // namespace tachyon::bench
