// Stream generation for the engine benchmarks (see workload.hpp).
#include "workload.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "support/tx_builder.hpp"
#include "tachyon/engine/engine.hpp"

namespace tachyon::bench {
namespace {

using testing::TxBuilder;

// Owns the shadow engine; every tx goes through emit(), which executes it and insists that the
// engine accepts it (a refused tx would not consume its nonce and the replay would diverge).
class Generator {
 public:
  explicit Generator(const WorldSpec& w)
      : w_(w),
        rng_(w.seed),
        engine_(EngineConfig{.max_orders = 1u << 18, .expected_accounts = 4096}),
        nonce_(static_cast<size_t>(w.accounts), 0),
        mid_(w.mid) {}

  void build_setup(std::vector<Tx>& out) {
    emit(out, b_.create_market(kBenchMarket, testing::demo_market_params("ETH"), w_.mid));
    for (int i = 0; i < w_.accounts; ++i) {
      emit(out, b_.deposit(kFirstTrader + static_cast<AccountIndex>(i), 1'000'000 * kUsdcScale));
    }
    for (int i = 0; i < w_.resting_orders; ++i) place(out, i % 2 == 1);
  }

  // ---- single txs; each returns false when there was nothing to do ----

  void place(std::vector<Tx>& out, bool is_ask) {
    place_at(out, is_ask, placement_price(is_ask), rng_.range(1, w_.max_size));
  }
  void place_at(std::vector<Tx>& out, bool is_ask, Ticks price, Lots size) {
    const AccountIndex a = random_account();
    const OrderIndex idx = emit(out, b_.limit(a, nonce(a), kBenchMarket, is_ask, price, size));
    if (engine_.order(idx) != nullptr) live_.push_back(idx);
  }
  bool cancel(std::vector<Tx>& out) {
    size_t i = 0;
    const Order* o = pick_live(i);
    if (o == nullptr) return false;
    const OrderIndex idx = o->order_index;
    const AccountIndex a = o->account;
    live_[i] = live_.back();
    live_.pop_back();
    emit(out, b_.cancel(a, nonce(a), kBenchMarket, idx));
    return true;
  }
  bool modify(std::vector<Tx>& out) {
    size_t i = 0;
    const Order* o = pick_live(i);
    if (o == nullptr) return false;
    const bool is_ask = o->is_ask;
    const AccountIndex a = o->account;
    const OrderIndex idx = o->order_index;
    emit(out, b_.modify(a, nonce(a), kBenchMarket, idx, rng_.range(1, w_.max_size),
                        placement_price(is_ask)));
    return true;
  }
  void ioc(std::vector<Tx>& out) {
    const bool is_ask = rng_.chance(50);
    const Level* best = engine_.market(kBenchMarket)->book.best(!is_ask);
    const Ticks touch = best != nullptr ? best->price : mid_;
    const Ticks price = is_ask ? touch - rng_.range(0, 2) : touch + rng_.range(0, 2);
    const AccountIndex a = random_account();
    emit(out, b_.limit(a, nonce(a), kBenchMarket, is_ask, price, rng_.range(1, w_.max_take),
                       TimeInForce::kIoc));
  }
  void market(std::vector<Tx>& out) {
    const bool is_ask = rng_.chance(50);
    const Ticks worst = is_ask ? mid_ * 98 / 100 : mid_ * 102 / 100;
    const AccountIndex a = random_account();
    emit(out, b_.market(a, nonce(a), kBenchMarket, is_ask, worst, rng_.range(1, w_.max_take)));
  }

  // ---- book state ----

  using LevelTotals = std::vector<std::pair<Ticks, Lots>>;
  LevelTotals level_totals(bool is_ask) const {
    const OrderBook& book = engine_.market(kBenchMarket)->book;
    LevelTotals v;
    for (size_t i = 0; i < book.level_count(is_ask); ++i) {
      v.emplace_back(book.level(is_ask, i).price, book.level(is_ask, i).total);
    }
    return v;
  }
  // Puts back what was taken from the levels in `before` (untimed refill of the take scenario).
  uint64_t refill(std::vector<Tx>& out, bool is_ask, const LevelTotals& before) {
    const LevelTotals after = level_totals(is_ask);
    uint64_t n = 0;
    for (const auto& [price, total] : before) {
      auto it = std::find_if(after.begin(), after.end(),
                             [p = price](const auto& l) { return l.first == p; });
      Lots missing = total - (it == after.end() ? 0 : it->second);
      while (missing > 0) {
        const Lots size = std::min(missing, rng_.range(1, w_.max_size));
        place_at(out, is_ask, price, size);
        missing -= size;
        ++n;
      }
    }
    return n;
  }

  void walk_mid() {
    if (rng_.below(64) != 0) return;
    mid_ += rng_.chance(50) ? 1 : -1;
    mid_ = std::clamp<Ticks>(mid_, w_.mid - w_.mid_walk_ticks, w_.mid + w_.mid_walk_ticks);
  }

  Rng& rng() { return rng_; }
  const Engine& engine() const { return engine_; }
  uint32_t resting() const { return engine_.orders().live_count(); }
  uint64_t trades() const { return engine_.market(kBenchMarket)->trade_count; }
  size_t levels() const {
    const OrderBook& b = engine_.market(kBenchMarket)->book;
    return b.level_count(false) + b.level_count(true);
  }

 private:
  OrderIndex emit(std::vector<Tx>& out, const Tx& tx) {
    const TxResult r = engine_.execute(tx, sink_);
    if (!r.ok()) {
      std::fprintf(stderr, "workload: generated tx %zu (type %d) refused: reject %d\n", out.size(),
                   static_cast<int>(tx.h.type), static_cast<int>(r.reject));
      std::abort();
    }
    if (!is_operator_tx(tx.h.type)) ++nonce_[tx.h.account - kFirstTrader];
    out.push_back(tx);
    return r.order_index;
  }
  int64_t nonce(AccountIndex a) const { return nonce_[a - kFirstTrader]; }
  AccountIndex random_account() {
    return kFirstTrader + rng_.below(static_cast<uint64_t>(w_.accounts));
  }
  // Half near the mid, half further out: a few hundred levels, densest at the touch.
  Ticks placement_price(bool is_ask) {
    const Ticks off = rng_.chance(50) ? rng_.range(1, w_.near_ticks) : rng_.range(1, w_.far_ticks);
    return is_ask ? mid_ + off : mid_ - off;
  }
  // A random resting order; entries of orders that left the book are dropped on the way.
  const Order* pick_live(size_t& i) {
    while (!live_.empty()) {
      i = rng_.below(live_.size());
      if (const Order* o = engine_.order(live_[i])) return o;
      live_[i] = live_.back();
      live_.pop_back();
    }
    return nullptr;
  }

  WorldSpec w_;
  Rng rng_;
  Engine engine_;
  NullSink sink_;
  TxBuilder b_;
  std::vector<int64_t> nonce_;
  std::vector<OrderIndex> live_;
  Ticks mid_;
};

Scenario start(const char* name, Generator& g) {
  Scenario s;
  s.name = name;
  g.build_setup(s.setup);
  return s;
}

void close_segment(Scenario& s, uint32_t begin, bool timed) {
  const auto end = static_cast<uint32_t>(s.ops.size());
  if (end == begin) return;
  s.segments.push_back(Segment{begin, end, timed});
  if (timed) s.timed_ops += end - begin;
}

void finish(Scenario& s, const Generator& g, uint64_t trades_before_timed) {
  s.trades = g.trades() - trades_before_timed;
  s.resting_at_end = g.resting();
  s.levels_at_end = g.levels();
}

constexpr int kWarmupBatches = 4;

}  // namespace

Scenario make_place_scenario(const WorldSpec& w, int batches, int batch) {
  Generator g(w);
  Scenario s = start("place", g);
  uint64_t trades0 = 0;
  for (int k = 0; k < kWarmupBatches + batches; ++k) {
    const bool timed = k >= kWarmupBatches;
    if (k == kWarmupBatches) trades0 = g.trades();
    auto b = static_cast<uint32_t>(s.ops.size());
    for (int i = 0; i < batch; ++i) g.place(s.ops, g.rng().chance(50));
    close_segment(s, b, timed);
    if (timed) s.mix.place += batch;
    b = static_cast<uint32_t>(s.ops.size());
    for (int i = 0; i < batch; ++i) g.cancel(s.ops);
    close_segment(s, b, false);
  }
  s.warmup_segments = 2 * kWarmupBatches;
  finish(s, g, trades0);
  return s;
}

Scenario make_cancel_scenario(const WorldSpec& w, int batches, int batch) {
  Generator g(w);
  Scenario s = start("cancel", g);
  uint64_t trades0 = 0;
  for (int k = 0; k < kWarmupBatches + batches; ++k) {
    const bool timed = k >= kWarmupBatches;
    if (k == kWarmupBatches) trades0 = g.trades();
    auto b = static_cast<uint32_t>(s.ops.size());
    for (int i = 0; i < batch; ++i) g.cancel(s.ops);
    close_segment(s, b, timed);
    if (timed) s.mix.cancel += s.ops.size() - b;
    b = static_cast<uint32_t>(s.ops.size());
    for (int i = 0; i < batch; ++i) g.place(s.ops, g.rng().chance(50));
    close_segment(s, b, false);
  }
  s.warmup_segments = 2 * kWarmupBatches;
  finish(s, g, trades0);
  return s;
}

Scenario make_take_scenario(const WorldSpec& w, int batches, int batch) {
  Generator g(w);
  Scenario s = start("market_take", g);
  uint64_t trades0 = 0;
  uint64_t timed_trades = 0;
  for (int k = 0; k < kWarmupBatches + batches; ++k) {
    const bool timed = k >= kWarmupBatches;
    const auto bids = g.level_totals(false);
    const auto asks = g.level_totals(true);
    trades0 = g.trades();
    auto b = static_cast<uint32_t>(s.ops.size());
    for (int i = 0; i < batch; ++i) g.market(s.ops);
    close_segment(s, b, timed);
    if (timed) {
      s.mix.market += batch;
      timed_trades += g.trades() - trades0;
    }
    b = static_cast<uint32_t>(s.ops.size());
    g.refill(s.ops, false, bids);
    g.refill(s.ops, true, asks);
    close_segment(s, b, false);
  }
  s.warmup_segments = 2 * kWarmupBatches;
  finish(s, g, 0);
  s.trades = timed_trades;
  return s;
}

Scenario make_mixed_scenario(const WorldSpec& w, uint64_t warmup_ops, uint64_t timed_ops) {
  Generator g(w);
  Scenario s = start("mixed", g);
  s.ops.reserve(warmup_ops + timed_ops);
  const auto lo = static_cast<uint32_t>(w.resting_orders * 95 / 100);
  const auto hi = static_cast<uint32_t>(w.resting_orders * 105 / 100);
  uint64_t trades0 = 0;
  for (uint64_t i = 0; i < warmup_ops + timed_ops; ++i) {
    if (i == warmup_ops) {
      close_segment(s, 0, false);
      trades0 = g.trades();
    }
    g.walk_mid();
    const uint64_t r = g.rng().below(100);
    OpMix& m = s.mix;
    // Depth control: a cancel below the target band places instead, and vice versa.
    if (r < 90) {
      const uint32_t live = g.resting();
      const bool want_place = r < 45 ? live <= hi : live < lo;
      if (want_place || !g.cancel(s.ops)) {
        g.place(s.ops, g.rng().chance(50));
        ++m.place;
      } else {
        ++m.cancel;
      }
    } else if (r < 98) {
      if (g.rng().chance(50) && g.modify(s.ops)) {
        ++m.modify;
      } else {
        g.ioc(s.ops);
        ++m.ioc;
      }
    } else {
      g.market(s.ops);
      ++m.market;
    }
    if (i + 1 == warmup_ops) s.mix = OpMix{};
  }
  close_segment(s, s.segments.empty() ? 0 : s.segments.back().end, true);
  s.warmup_segments = warmup_ops > 0 ? 1 : 0;
  finish(s, g, trades0);
  return s;
}

std::string describe(const Scenario& s) {
  const double n = static_cast<double>(std::max<uint64_t>(s.mix.total(), 1));
  char buf[512];
  std::snprintf(
      buf, sizeof(buf),
      "%-12s setup %zu txs, %zu stream txs (%llu timed), timed mix: place %.1f%% cancel "
      "%.1f%% modify %.1f%% ioc %.1f%% market %.1f%%; %.2f trades/timed op; at end "
      "%u resting orders on %zu levels",
      s.name.c_str(), s.setup.size(), s.ops.size(), static_cast<unsigned long long>(s.timed_ops),
      100.0 * s.mix.place / n, 100.0 * s.mix.cancel / n, 100.0 * s.mix.modify / n,
      100.0 * s.mix.ioc / n, 100.0 * s.mix.market / n,
      static_cast<double>(s.trades) / static_cast<double>(std::max<uint64_t>(s.timed_ops, 1)),
      s.resting_at_end, s.levels_at_end);
  return buf;
}

}  // namespace tachyon::bench
