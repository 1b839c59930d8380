#pragma once
// Seeded tx streams for the engine benchmarks. A shadow Engine executes every generated tx, so
// nonces, order indices and "is this order still resting" are the engine's own answers, and a
// stream replays exactly (all of its txs accepted) on a fresh Engine built the same way.
#include <cstdint>
#include <string>
#include <vector>

#include "support/rng.hpp"
#include "tachyon/engine/tx.hpp"

namespace tachyon::bench {

// The tests' splitmix64 generator: deterministic on every platform (no std distributions).
using Rng = testing::Rng;

// The book the benchmarks run on: one market, ~1000 accounts, a few thousand small resting
// orders over a few hundred price levels around a mid.
struct WorldSpec {
  int accounts = 1000;
  int resting_orders = 4000;  // target depth, held within ±5% by the mixed stream
  Ticks mid = 300'000;        // $3000.00 (ETH-like market: 4 size decimals, 2 price decimals)
  int near_ticks = 20;        // half of the placements land within this many ticks of the mid,
  int far_ticks = 200;        // the other half within this many
  Lots max_size = 20;         // resting sizes 1..max_size lots
  Lots max_take = 40;         // taker sizes 1..max_take lots
  int mid_walk_ticks = 300;   // the mixed stream's mid random-walks within ±this
  uint64_t seed = 20240601;
};

inline constexpr AccountIndex kFirstTrader = 2;  // 0 = fee account, 1 = insurance fund
inline constexpr MarketId kBenchMarket = 0;

struct Segment {
  uint32_t begin;
  uint32_t end;
  bool timed;
};

// Counts of the timed txs by kind.
struct OpMix {
  uint64_t place = 0, cancel = 0, modify = 0, ioc = 0, market = 0;
  uint64_t total() const { return place + cancel + modify + ioc + market; }
};

struct Scenario {
  std::string name;
  std::vector<Tx> setup;  // market, deposits and the initial book: replayed, never timed
  std::vector<Tx> ops;
  std::vector<Segment> segments;  // cover `ops` in order
  size_t warmup_segments = 0;     // untimed segments at the start of each replay
  uint64_t timed_ops = 0;
  OpMix mix;            // of the timed txs
  uint64_t trades = 0;  // trades the timed txs made (shadow engine)
  uint32_t resting_at_end = 0;
  size_t levels_at_end = 0;
};

// Non-crossing GTT limits; after each timed batch the same number of random resting orders are
// canceled (untimed) so the depth stays put.
Scenario make_place_scenario(const WorldSpec& w, int batches, int batch);
// Cancels of random resting orders; each timed batch is followed by as many untimed placements.
Scenario make_cancel_scenario(const WorldSpec& w, int batches, int batch);
// Market orders of random side; after each timed batch the liquidity they took is put back
// (untimed) at the same price levels.
Scenario make_take_scenario(const WorldSpec& w, int batches, int batch);
// exchange-core's mix: ~45% place GTT limit, ~45% cancel, ~8% modify-or-IOC taker, ~2% market,
// with a random-walking mid. The first `warmup_ops` are untimed.
Scenario make_mixed_scenario(const WorldSpec& w, uint64_t warmup_ops, uint64_t timed_ops);

std::string describe(const Scenario& s);

}  // namespace tachyon::bench
