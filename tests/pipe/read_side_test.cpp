// The read side: views equal the engine after a live run and after seeding; candles, trade lists
// and daily figures at known times; the broadcast log; the account table under concurrent readers.
// Suites named Pipeline* and Published* also run under TSan (the tsan preset's ctest filter).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <optional>
#include <span>
#include <thread>
#include <tuple>
#include <vector>

#include "support/engine_fixture.hpp"
#include "support/random_stream.hpp"
#include "tachyon/pipe/pipeline.hpp"

namespace tachyon::testing {
namespace {

using namespace tachyon::pipe;  // NOLINT: the read side's views, candles and tables

constexpr uint64_t kSeed = 20240611;
constexpr uint64_t kSpinCap = 200'000'000;  // polling bound: a hang fails instead of blocking

int64_t realtime_ns() {
  return std::chrono::system_clock::now().time_since_epoch() / std::chrono::nanoseconds(1);
}
EngineConfig small_engine() { return EngineConfig{1 << 14, 256, 256}; }
pipe::ReadSideConfig small_read_side() {
  return pipe::ReadSideConfig{4, 1 << 12, 1 << 17, 20'000'000};  // the log holds every update
}
pipe::PipelineConfig small_pipeline() { return {.workers = 1, .read = small_read_side()}; }

// Field tuples shared by the engine's structs and the views (same member names).
auto acct_of = [](auto& a) { return std::tuple(a.index, a.master, a.collateral, a.l1_address); };
auto key_of = [](auto& k) { return std::tuple(k.index, k.version, k.pubkey, k.next_nonce); };
auto order_of = [](auto& o) { return std::tuple(o.order_index, o.remaining, o.price, o.is_ask); };

// Known bug: the engine emits kMarkPrice only when the mark moves and kPosition has no imf, so live
// views' index price, open interest and imf lag. Set true once fixed; enable ReadSideFromEngine.
constexpr bool kLiveMarkFieldsFixed = true;

// The stream did what the comparison needs: trades, resting orders, several funded accounts.
void expect_busy(const Engine& e) {
  uint64_t trades = e.market(0)->trade_count + e.market(1)->trade_count, open = 0, funded = 0;
  for (const Account& a : e.accounts()) open += a.open_orders, funded += a.collateral > 0;
  EXPECT_TRUE(trades > 50 && open > 5 && funded > 5) << trades << " " << open << " " << funded;
}

// Every account and market view equals the engine's state (`all`: index, OI and imf too).
void expect_views_match(const Engine& e, ReadSide& rs, bool all) {
  auto pos_of = [&](const auto& p) {
    return std::tuple(p.size, p.entry_notional, p.realized_pnl, p.buy_open, p.sell_open,
                      p.open_orders, all ? p.imf : 0);
  };
  auto market_of = [&](const auto& m) {
    return std::tuple(m.id, m.mark_price, m.last_trade_price, m.trade_count, m.quote_multiplier,
                      all ? m.index_price : 0, all ? m.open_interest : 0);
  };
  auto r = rs.accounts().reader();
  for (const Account& a : e.accounts()) {
    SCOPED_TRACE("account " + std::to_string(a.index));
    r.read([&] {
      const AccountView* v = rs.accounts().find(a.index);
      ASSERT_NE(v, nullptr);
      EXPECT_EQ(acct_of(*v), acct_of(a));
      const pipe::PositionView none{};
      for (const Position& p : a.positions) {
        const pipe::PositionView* pv = v->position(p.market);
        EXPECT_EQ(pos_of(pv != nullptr ? *pv : none), pos_of(p)) << int{p.market};
      }
      for (const pipe::PositionView& pv : v->positions)  // extra entries must be empty
        EXPECT_TRUE(a.position(pv.market) != nullptr || pos_of(pv) == pos_of(none));
      ASSERT_EQ(v->keys.size(), a.keys.size());
      for (size_t i = 0; i < a.keys.size(); ++i) EXPECT_EQ(key_of(v->keys[i]), key_of(a.keys[i]));
      std::vector<decltype(order_of(e.orders()[0]))> want, got;
      for (uint32_t s = a.order_head; s != kNoSlot; s = e.orders()[s].acct_next)
        want.push_back(order_of(e.orders()[s]));
      EXPECT_TRUE(v->orders_current);
      EXPECT_EQ(v->open_order_count, want.size());
      for (const pipe::OrderView& o : v->order_list()) got.push_back(order_of(o.o));
      std::sort(want.begin(), want.end());
      EXPECT_EQ(got, want);  // the view lists them by order index
    });
  }
  EXPECT_EQ(rs.accounts().size(), e.accounts().size());
  for (int mi = 0; mi < kMaxMarkets; ++mi) {
    const Market* m = e.market(static_cast<MarketId>(mi));
    EXPECT_EQ(rs.market_exists(static_cast<MarketId>(mi)), m != nullptr) << "market " << mi;
    if (m == nullptr) continue;
    rs.market(m->id).reader().read([&](const MarketView* v) {
      ASSERT_NE(v, nullptr) << "market " << mi;
      EXPECT_EQ(market_of(*v), market_of(*m));
    });
  }
}

// A seeded random stream through a pipeline, one tx at a time; the views then equal the engine.
void views_equal_the_engine_after_a_random_stream(const pipe::PipelineConfig& pc) {
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  // The sequencer stamps real time: the stream's order expiries must be ahead of it.
  RandomStream stream(kSeed, StreamConfig{10, 2, 4, realtime_ns()});
  pipe::Pipeline p(pc, std::make_unique<Engine>(small_engine()), nullptr, nullptr);
  std::atomic<uint64_t> notified{0};
  p.set_notify([&](uint64_t) { notified.fetch_add(1, std::memory_order_relaxed); });
  p.start();
  auto keys = p.read_side().accounts().reader();
  uint64_t cookie = 0, stale_nonce = 0, transfers = 0;
  auto run = [&](const Tx& tx) {
    ASSERT_TRUE(p.submit(0, tx, ++cookie, 0));
    std::optional<pipe::Result> got;
    for (uint64_t i = 0; !got && i < kSpinCap; ++i, std::this_thread::yield())
      p.poll_results(0, [&](const pipe::Result& r) { got = r; });
    ASSERT_TRUE(got && got->cookie == cookie) << "no result for cookie " << cookie;
    EXPECT_EQ(p.applied_seq(), got->seq);
    const TxResult r{got->reject, got->order_index};
    stream.on_result(tx, r);
    if (!r.ok() || is_operator_tx(tx.h.type)) return;
    transfers += tx.h.type == TxType::kTransfer;
    // A result leaves after the views of its batch are published: the signer's next nonce shows.
    keys.read([&] {
      const AccountView* v = p.read_side().accounts().find(tx.h.account);
      const pipe::KeyView* k = v != nullptr ? v->key(tx.h.api_key_index) : nullptr;
      if (k == nullptr || k->next_nonce != tx.h.nonce + 1) ++stale_nonce;
    });
  };
  for (const Tx& tx : stream.genesis()) run(tx);
  for (int i = 0; i < 4000 && !::testing::Test::HasFatalFailure(); ++i) run(stream.next());
  p.stop();
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  EXPECT_EQ(stale_nonce, 0u);
  EXPECT_GT(transfers, 0u);
  EXPECT_GT(notified.load(), 0u);
  EXPECT_EQ(p.engine().validate(), "");
  expect_busy(p.engine());
  expect_views_match(p.engine(), p.read_side(), kLiveMarkFieldsFixed);
  const auto& log = p.read_side().log();
  uint64_t next_seq = 1;  // the log holds every update in order: tx results of seq 1..last
  for (uint64_t pos = 0; pos < log.head(); ++pos) {
    StateUpdate u;
    ASSERT_TRUE(log.read(pos, u)) << pos;
    next_seq += u.type == UpdateType::kTxResult && u.result.seq == next_seq;
  }
  EXPECT_EQ(next_seq, p.engine().last_seq() + 1);
}

TEST(PipelineReadSide, views_equal_the_engine_after_a_seeded_random_stream_and_lead_results) {
  views_equal_the_engine_after_a_random_stream(small_pipeline());
}

// The same with a busy-polling apply thread that keeps its caches warm on every idle round
// (Pipeline/ReadSide::keep_warm between every tx): warming reads and changes nothing.
TEST(PipelineReadSide, keeping_the_caches_warm_while_idle_changes_no_view) {
  pipe::PipelineConfig pc = small_pipeline();
  pc.apply_wait = pipe::WaitStrategy::kSpin;
  pc.keep_warm_rounds = 1;
  views_equal_the_engine_after_a_random_stream(pc);
}

TEST(PipelineReadSide, a_pipeline_on_a_recovered_engine_starts_with_views_equal_to_it) {
  SCOPED_TRACE("seed " + std::to_string(kSeed + 1));
  auto e = std::make_unique<Engine>(small_engine());
  RandomStream stream(kSeed + 1, StreamConfig{10, 2, 4});
  stream.set_oracle(e.get());
  NullSink sink;
  auto run = [&](const Tx& tx) { stream.on_result(tx, e->execute(tx, sink)); };
  for (const Tx& tx : stream.genesis()) run(tx);
  for (int i = 0; i < 4000; ++i) run(stream.next());  // the oracle reads the engine in next()
  pipe::Pipeline p(small_pipeline(), std::move(e), nullptr, nullptr);  // seeds; never started
  expect_busy(p.engine());
  expect_views_match(p.engine(), p.read_side(), /*all=*/true);
}

// A start publishes each account's view without building its apply-side state (made from that
// view at the account's first update): accounts seeded with short and long order lists keep
// views equal to the engine as trading goes on, nonces included.
TEST(PipelineReadSide, accounts_seeded_at_start_stay_equal_to_the_engine_as_trading_goes_on) {
  SCOPED_TRACE("seed " + std::to_string(kSeed + 2));
  auto e = std::make_unique<Engine>(small_engine());
  RandomStream stream(kSeed + 2, StreamConfig{10, 2, 4, realtime_ns()});
  NullSink sink;
  for (const Tx& tx : stream.genesis()) stream.on_result(tx, e->execute(tx, sink));
  for (int i = 0; i < 4000; ++i) {
    const Tx tx = stream.next();
    stream.on_result(tx, e->execute(tx, sink));
  }
  pipe::PipelineConfig cfg = small_pipeline();
  cfg.read.orders_in_view = 4;
  uint32_t most = 0, fewest = UINT32_MAX;
  for (const Account& a : e->accounts()) {
    most = std::max(most, a.open_orders);
    fewest = std::min(fewest, a.open_orders);
  }
  // both kinds of seeded order list: in the view, and shared (more than orders_in_view)
  EXPECT_GT(most, cfg.read.orders_in_view);
  EXPECT_LE(fewest, cfg.read.orders_in_view);
  pipe::Pipeline p(cfg, std::move(e), nullptr, nullptr);
  p.start();
  uint64_t cookie = 0;
  for (int i = 0; i < 3000 && !::testing::Test::HasFatalFailure(); ++i) {
    const Tx tx = stream.next();
    ASSERT_TRUE(p.submit(0, tx, ++cookie, 0));
    std::optional<pipe::Result> got;
    for (uint64_t n = 0; !got && n < kSpinCap; ++n, std::this_thread::yield())
      p.poll_results(0, [&](const pipe::Result& r) { got = r; });
    ASSERT_TRUE(got && got->cookie == cookie) << "no result for cookie " << cookie;
    stream.on_result(tx, TxResult{got->reject, got->order_index});
  }
  p.stop();
  expect_busy(p.engine());
  expect_views_match(p.engine(), p.read_side(), kLiveMarkFieldsFixed);
}

// The account table is sized for the recovered engine: a configured size that is too small
// (the default held 734k of 1M accounts) must not leave accounts without a view.
TEST(PipelineReadSide, every_recovered_account_gets_a_view_however_small_the_configured_table) {
  auto e = std::make_unique<Engine>(small_engine());
  RandomStream stream(kSeed + 5, StreamConfig{200, 2, 4, realtime_ns()});
  NullSink sink;
  for (const Tx& tx : stream.genesis()) stream.on_result(tx, e->execute(tx, sink));
  ASSERT_GE(e->accounts().size(), 200u);
  pipe::PipelineConfig cfg = small_pipeline();
  cfg.read.account_capacity = 16;  // room for 11 views
  std::vector<AccountIndex> indexes;
  for (const Account& a : e->accounts()) indexes.push_back(a.index);
  pipe::Pipeline p(cfg, std::move(e), nullptr, nullptr);
  EXPECT_EQ(p.read_side().accounts().refused(), 0u);
  EXPECT_EQ(p.read_side().accounts().size(), indexes.size());
  auto r = p.read_side().accounts().reader();
  r.read([&] {
    for (AccountIndex a : indexes)
      EXPECT_NE(p.read_side().accounts().find(a), nullptr) << "account " << a << " has no view";
  });
}

TEST(ReadSideFromEngine, index_open_interest_and_imf_follow_the_engine_when_mark_stays) {
  Engine e(small_engine());
  ReadSide rs(small_read_side());
  RecordingSink sink;  // its updates go to the read side as the apply thread would give them
  TxBuilder b;
  rs.seed_markets(e, 0);
  rs.seed_accounts(e, 0, 0, e.accounts().size());
  rs.seed_done(0);
  for (const Tx& tx :
       {b.create_market(0, demo_market_params(), 300000), b.deposit(100, kUsdcScale << 20),
        b.deposit(101, kUsdcScale << 20), b.deposit(102, kUsdcScale << 20),
        b.limit(100, 0, 0, false, 299000, 10), b.limit(101, 0, 0, true, 301000, 10),
        b.set_index(0, 302000),                                   // mark 300000 -> 301000
        b.set_index(0, 303000),                                   // mark stays 301000
        b.limit(102, 0, 0, false, 301000, 1, TimeInForce::kIoc),  // OI 0 -> 1
        b.leverage(100, 1, 0, 1000)})
    EXPECT_TRUE(e.execute(tx, sink).ok()) << int{static_cast<uint8_t>(tx.h.type)};
  for (const StateUpdate& u : sink.updates) rs.apply(u);
  rs.publish(1, true);
  expect_views_match(e, rs, /*all=*/true);
}

// History, fed by hand: trades at chosen times.
constexpr int64_t kHourMs = 3'600'000;
constexpr int64_t kT0Ms = 472'222 * kHourMs;  // an hour boundary (2023-11-14 22:00 UTC)

StateUpdate market_update(MarketId m) {
  StateUpdate u(UpdateType::kMarket, kT0Ms * 1'000'000, StateUpdate::NoZero{});
  u.market = MarketUpdate{m, MarketStatus::kActive, demo_market_params("SOL", 3, 1)};  // x100
  return u;
}
StateUpdate trade(MarketId m, uint64_t id, int64_t t_ms, Ticks px, Lots size,
                  AccountIndex taker = 8) {
  StateUpdate u(UpdateType::kTrade, t_ms * 1'000'000, StateUpdate::NoZero{});
  u.trade =
      TradeUpdate{id, 0, 0, /*maker=*/7, taker, px, size, 0, 0, m, 0, TradeKind::kTrade, 0, 0, 0};
  return u;
}
using CandleRow = std::tuple<int64_t, Ticks, Ticks, Ticks, Ticks, Lots, Usdc, uint64_t>;
CandleRow row(const Candle& c) {
  return {c.start_ms, c.open, c.high, c.low, c.close, c.volume_base, c.volume_quote, c.trades};
}
using DailyRow = std::tuple<Ticks, Ticks, Ticks, Lots, Usdc, uint64_t>;
DailyRow daily(const MarketView& v) {
  return {v.daily_open, v.daily_high, v.daily_low, v.daily_base, v.daily_quote, v.daily_trades};
}

TEST(ReadSideHistory, candles_split_at_each_resolution_boundary_and_daily_figures_cover_24h) {
  ReadSide rs(small_read_side());
  rs.apply(market_update(3));
  // time (ms after an hour boundary) | price | size
  rs.apply(trade(3, 1, kT0Ms + 10'000, 100, 2));   // minute 0
  rs.apply(trade(3, 2, kT0Ms + 59'999, 120, 1));   // minute 0, its last ms
  rs.apply(trade(3, 3, kT0Ms + 60'000, 90, 3));    // minute 1: new 1m candle, same 5m
  rs.apply(trade(3, 4, kT0Ms + 300'000, 110, 4));  // minute 5: new 1m and 5m, same 1h
  rs.publish(kT0Ms * 1'000'000, true);
  auto hr = rs.history(3).reader();
  hr.read([&](const MarketHistory* h) {
    ASSERT_NE(h, nullptr);
    const auto &m1 = h->candles[0], &m5 = h->candles[1], &h1 = h->candles[4];
    ASSERT_EQ(m1.size(), 3u);  // start | open | high | low | close | base | quote | trades
    EXPECT_EQ(row(m1[0]), CandleRow(kT0Ms, 100, 120, 100, 120, 3, 32'000, 2));
    EXPECT_EQ(row(m1[1]), CandleRow(kT0Ms + 60'000, 90, 90, 90, 90, 3, 27'000, 1));
    EXPECT_EQ(row(m1[2]), CandleRow(kT0Ms + 300'000, 110, 110, 110, 110, 4, 44'000, 1));
    ASSERT_EQ(m5.size(), 2u);
    EXPECT_EQ(row(m5[0]), CandleRow(kT0Ms, 100, 120, 90, 90, 6, 59'000, 3));
    EXPECT_EQ(row(m5[1]), CandleRow(kT0Ms + 300'000, 110, 110, 110, 110, 4, 44'000, 1));
    ASSERT_EQ(h1.size(), 1u);
    EXPECT_EQ(row(h1[0]), CandleRow(kT0Ms, 100, 120, 90, 110, 10, 103'000, 4));
    ASSERT_EQ(h->trades.size(), 4u);
    for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(h->trades[i].t.trade_id, i + 1);
  });
  auto mr = rs.market(3).reader();
  mr.read([](const MarketView* v) {
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->last_trade_price, 110);
    EXPECT_EQ(v->trade_count, 4u);  // open | high | low | base | quote | trades
    EXPECT_EQ(daily(*v), DailyRow(100, 120, 90, 10, 103'000, 4));
  });
  // 25 h later the first hour has left the window; the hour that ends after now - 24 h has not.
  rs.apply(trade(3, 5, kT0Ms + kHourMs + 1'800'000, 95, 1));
  rs.apply(trade(3, 6, kT0Ms + 25 * kHourMs, 200, 2));
  rs.publish((kT0Ms + 25 * kHourMs) * 1'000'000, true);
  mr.read([](const MarketView* v) {
    EXPECT_EQ(v->trade_count, 6u);
    EXPECT_EQ(daily(*v), DailyRow(95, 200, 95, 3, 49'500, 2));
  });
}

// A history publication updates the recycled copy with what changed (history_incremental):
// after every publication it must equal a full copy, through windows that fill and trim (trades,
// 1m..1w candles, fundings), open candles that change, and times that jump ahead.
TEST(ReadSideHistory, an_incremental_publication_equals_a_full_copy) {
  ReadSideConfig full_cfg = small_read_side();
  full_cfg.history_incremental = false;
  ReadSide inc(small_read_side()), full(full_cfg);
  Rng rng(20261201);
  int64_t t_ms = kT0Ms;
  uint64_t id = 0;
  auto both = [&](const StateUpdate& u) {
    inc.apply(u);
    full.apply(u);
  };
  both(market_update(0));
  for (int i = 0; i < 4000; ++i) {
    const uint64_t roll = rng.below(100);
    t_ms += roll < 50   ? rng.range(0, 20'000)               // within a minute or the next
            : roll < 80 ? rng.range(60'000, 3'600'000)       // minutes to an hour
                        : rng.range(1, 3) * 7 * 86'400'000;  // weeks: every window rolls
    both(trade(0, ++id, t_ms, rng.range(90, 110), rng.range(1, 5)));
    if (rng.chance(35)) {  // a funding payment
      StateUpdate f(UpdateType::kFunding, t_ms * 1'000'000, StateUpdate::NoZero{});
      f.funding = FundingUpdate{
          0, rng.range(-500, 500), t_ms, t_ms + 3'600'000, rng.range(0, 1'000'000), 0, 100, 0, 1};
      both(f);
    }
    if (!rng.chance(40)) continue;
    inc.publish(t_ms * 1'000'000, true);
    full.publish(t_ms * 1'000'000, true);
    inc.history(0).reader().read([&](const MarketHistory* a) {
      full.history(0).reader().read([&](const MarketHistory* b) {
        ASSERT_TRUE(a && b);
        ASSERT_EQ(a->trades.size(), b->trades.size()) << "publication after trade " << id;
        for (size_t k = 0; k < a->trades.size(); ++k)
          ASSERT_EQ(a->trades[k].t.trade_id, b->trades[k].t.trade_id) << "trade " << id;
        for (int r = 0; r < kResolutions; ++r) {
          ASSERT_EQ(a->candles[r].size(), b->candles[r].size()) << "resolution " << r;
          for (size_t k = 0; k < a->candles[r].size(); ++k)
            ASSERT_EQ(row(a->candles[r][k]), row(b->candles[r][k])) << "resolution " << r;
        }
        ASSERT_EQ(a->fundings.size(), b->fundings.size());
        for (size_t k = 0; k < a->fundings.size(); ++k)
          ASSERT_EQ(std::tuple(a->fundings[k].time_ms, a->fundings[k].rate, a->fundings[k].paid),
                    std::tuple(b->fundings[k].time_ms, b->fundings[k].rate, b->fundings[k].paid));
      });
    });
  }
  // the windows did fill and trim
  inc.history(0).reader().read([&](const MarketHistory* h) {
    EXPECT_EQ(h->trades.size(), ReadSide::kHistoryTrades);
    EXPECT_EQ(h->candles[kResolutions - 1].size(), ReadSide::kHistoryCandles);
    EXPECT_EQ(h->fundings.size(), kHistoryFundings);
  });
}

TEST(ReadSideHistory, keeps_the_last_trades_and_candles_oldest_first_and_waits_for_the_interval) {
  ReadSide rs(small_read_side());
  rs.apply(market_update(0));
  const uint64_t n = ReadSide::kHistoryCandles + 7;  // one trade a minute; odd ones self-trades
  for (uint64_t i = 1; i <= n; ++i)
    rs.apply(trade(0, i, kT0Ms + static_cast<int64_t>(i) * 60'000, 100, 1, i % 2 ? 7 : 8));
  int64_t now_ns = kT0Ms * 1'000'000;
  rs.publish(now_ns, true);
  auto hr = rs.history(0).reader();
  hr.read([&](const MarketHistory* h) {
    ASSERT_EQ(h->trades.size(), ReadSide::kHistoryTrades);
    EXPECT_EQ(h->trades.front().t.trade_id, n - ReadSide::kHistoryTrades + 1);
    EXPECT_EQ(h->trades.back().t.trade_id, n);
    const auto& m1 = h->candles[0];
    ASSERT_EQ(m1.size(), ReadSide::kHistoryCandles);
    EXPECT_EQ(m1.front().start_ms, kT0Ms + 8 * 60'000);
    for (size_t i = 1; i < m1.size(); ++i) EXPECT_EQ(m1[i].start_ms - m1[i - 1].start_ms, 60'000);
  });
  rs.accounts().reader().read([&] {  // maker 7 in every trade (once when self), taker 8 in evens
    const AccountView *v = rs.accounts().find(7), *v8 = rs.accounts().find(8);
    ASSERT_TRUE(v && v8 && v->trades().size() == ReadSide::kAccountTrades);
    EXPECT_EQ(std::pair(v->trade_count, v8->trade_count), std::pair(n, n / 2));
    for (size_t i = 0; i < v->trades().size(); ++i)
      EXPECT_EQ(v->trades()[i].t.trade_id, n - ReadSide::kAccountTrades + 1 + i);
  });
  // Not forced, within history_interval and no candle closed: the history waits (the market
  // view, with the open candle, does not).
  rs.apply(trade(0, n + 1, kT0Ms + static_cast<int64_t>(n) * 60'000 + 1000, 150, 1));
  rs.publish(now_ns += 1'000'000, false);
  EXPECT_TRUE(rs.history_dirty());
  hr.read([&](const MarketHistory* h) { EXPECT_EQ(h->trades.back().t.trade_id, n); });
  rs.market(0).reader().read([](const MarketView* v) { EXPECT_EQ(v->last_trade_price, 150); });
  rs.publish(now_ns += small_read_side().history_interval_ns, false);
  EXPECT_FALSE(rs.history_dirty());
  hr.read([&](const MarketHistory* h) { EXPECT_EQ(h->trades.back().t.trade_id, n + 1); });
  // A trade that opens a new candle closes the previous one: the history goes out at once.
  rs.apply(trade(0, n + 2, kT0Ms + static_cast<int64_t>(n + 1) * 60'000, 151, 1));
  rs.publish(now_ns += 1'000'000, false);
  EXPECT_FALSE(rs.history_dirty());
  hr.read([&](const MarketHistory* h) { EXPECT_EQ(h->trades.back().t.trade_id, n + 2); });
  rs.market(0).reader().read([&](const MarketView* v) {
    EXPECT_EQ(v->current[0].start_ms, kT0Ms + static_cast<int64_t>(n + 1) * 60'000);
    EXPECT_EQ(v->current[0].close, 151);
  });
  const auto recent = rs.recent_trades(0, 3);
  ASSERT_EQ(recent.size(), 3u);
  EXPECT_EQ(recent.back().t.trade_id, n + 2);
  EXPECT_EQ(recent.front().t.trade_id, n);
}

// An account's trades are a log the views share: every view shows its last kAccountTrades, and
// a view a reader holds keeps showing what it showed while trades go on (the log's chunks fill,
// the log continues in new ones, and chunks no view holds are reused).
TEST(ReadSideHistory, each_view_keeps_its_trades_while_the_account_trades_on) {
  ReadSide rs(small_read_side());
  rs.apply(market_update(0));
  int64_t now_ns = kT0Ms * 1'000'000;
  auto ids = [](const pipe::TradeRange& ts) {
    std::vector<uint64_t> out;
    for (const auto& t : ts) out.push_back(t.t.trade_id);
    return out;
  };
  auto last = [](uint64_t upto) {
    std::vector<uint64_t> out;
    for (uint64_t i = upto > ReadSide::kAccountTrades ? upto - ReadSide::kAccountTrades + 1 : 1;
         i <= upto; ++i)
      out.push_back(i);
    return out;
  };
  uint64_t id = 0;
  auto trade_and_publish = [&](int count) {
    for (int i = 0; i < count; ++i) {
      ++id;
      rs.apply(trade(0, id, kT0Ms + static_cast<int64_t>(id) * 1000, 100, 1, 9));
      rs.publish(now_ns += 1'000'000, false);
      rs.accounts().reader().read([&] {
        const AccountView* v = rs.accounts().find(9);
        ASSERT_NE(v, nullptr);
        EXPECT_EQ(ids(v->trades()), last(id)) << "after trade " << id;
      });
    }
  };
  trade_and_publish(150);
  rs.accounts().reader().read([&] {  // held across 5 log buffers' worth of trades
    const AccountView* held = rs.accounts().find(9);
    ASSERT_NE(held, nullptr);
    const std::vector<uint64_t> before = ids(held->trades());
    EXPECT_EQ(before, last(150));
    trade_and_publish(5 * static_cast<int>(ReadSide::kAccountTrades + kTradeChunkMax));
    EXPECT_EQ(ids(held->trades()), before);
  });
  trade_and_publish(3 * static_cast<int>(ReadSide::kAccountTrades + kTradeChunkMax));
}

// Accounts whose indices share their low bits (the writer's account cache is direct-mapped by
// them) each keep their own state: balances and positions of 1,000 rounds, interleaved.
TEST(ReadSideAccounts, accounts_whose_indices_share_low_bits_keep_their_own_state) {
  ReadSide rs(small_read_side());
  rs.apply(market_update(0));
  const std::array<AccountIndex, 5> ids = {5, 5 + 1024, 5 + 4096, kFirstSubAccountIndex + 5,
                                           kFirstSubAccountIndex + 5 + 1024};
  std::array<Usdc, ids.size()> collateral{};
  std::array<Lots, ids.size()> size{};
  int64_t now_ns = kT0Ms * 1'000'000;
  uint64_t x = 88172645463325252ull;  // xorshift64
  for (int round = 0; round < 1000; ++round) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const size_t k = x % ids.size();
    if (x & 1024) {
      collateral[k] = static_cast<Usdc>(x % 1'000'000'000);
      StateUpdate u(UpdateType::kBalance, now_ns, StateUpdate::NoZero{});
      u.balance = BalanceUpdate{ids[k], collateral[k], 1, BalanceReason::kDeposit};
      rs.apply(u);
    } else {
      size[k] = static_cast<Lots>(x % 1000) - 500;
      StateUpdate u(UpdateType::kPosition, now_ns, StateUpdate::NoZero{});
      u.position = PositionUpdate{ids[k], size[k], 0, 0, 0, 0, 0, 0, 0};
      rs.apply(u);
    }
    if (round % 7 == 0) rs.publish(now_ns += 1'000'000, false);
  }
  rs.publish(now_ns += 1'000'000, false);
  rs.accounts().reader().read([&] {
    for (size_t k = 0; k < ids.size(); ++k) {
      const AccountView* v = rs.accounts().find(ids[k]);
      ASSERT_NE(v, nullptr) << ids[k];
      EXPECT_EQ(v->index, ids[k]);
      EXPECT_EQ(v->collateral, collateral[k]) << ids[k];
      Lots shown = 0;
      for (const PositionView& p : v->positions)
        if (p.market == 0) shown = p.size;
      EXPECT_EQ(shown, size[k]) << ids[k];
    }
  });
}

// BroadcastLog records: position, two payload words and a check word, all derived from pos.
using Rec = std::array<uint64_t, 4>;
Rec rec(uint64_t pos) { return {pos, pos * 0x9E3779B97F4A7C15ull, ~pos, pos ^ (pos << 17) ^ 5}; }
bool intact(const Rec& r, uint64_t pos) { return r == rec(pos); }

TEST(PublishedBroadcastLog, reads_what_was_appended_until_a_lap_overwrites_it) {
  BroadcastLog<Rec> log(8);
  Rec r{};
  EXPECT_FALSE(log.read(0, r));  // nothing written yet
  for (uint64_t i = 0; i < 5; ++i) log.append(rec(i));
  EXPECT_EQ(log.head(), 5u);
  for (uint64_t i = 0; i < 5; ++i) EXPECT_TRUE(log.read(i, r) && intact(r, i)) << i;
  EXPECT_FALSE(log.read(5, r));   // not yet written
  EXPECT_FALSE(log.read(13, r));  // the same slot, a lap ahead
  for (uint64_t i = 5; i < 13; ++i) log.append(rec(i));
  EXPECT_EQ(log.head(), 13u);
  for (uint64_t i = 0; i < 5; ++i) EXPECT_FALSE(log.read(i, r)) << "overwritten " << i;
  for (uint64_t i = 5; i < 13; ++i) EXPECT_TRUE(log.read(i, r) && intact(r, i)) << i;
  EXPECT_FALSE(log.read(13, r));
}

// A record whose size is not a multiple of 8 bytes: its last word is padded, every byte kept.
TEST(PublishedBroadcastLog, keeps_every_byte_of_a_record_of_odd_size) {
  using Odd = std::array<uint8_t, 21>;
  BroadcastLog<Odd> log(4);
  for (uint64_t pos = 0; pos < 6; ++pos) {
    Odd o;
    for (size_t i = 0; i < o.size(); ++i) o[i] = static_cast<uint8_t>(pos * 31 + i * 7 + 1);
    log.append(o);
    Odd back{};
    ASSERT_TRUE(log.read(pos, back));
    EXPECT_EQ(back, o) << pos;
  }
}

TEST(PublishedBroadcastLog, a_tailing_reader_gets_whole_records_in_order_or_learns_it_fell_behind) {
  constexpr uint64_t kN = 300'000;
  BroadcastLog<Rec> log(64);
  std::thread writer([&] {
    for (uint64_t i = 0; i < kN; ++i) log.append(rec(i));
  });
  uint64_t got = 0, skipped = 0, bad = 0;
  for (uint64_t pos = 0; pos < kN; ++pos) {
    for (uint64_t i = 0; pos >= log.head() && i < kSpinCap; ++i) std::this_thread::yield();
    Rec r;
    const bool ok = log.read(pos, r);  // false: overwritten first (a WS session would resync)
    ++(ok ? got : skipped);
    bad += ok && !intact(r, pos);
  }
  writer.join();
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(got + skipped, kN);
  EXPECT_GE(got, log.capacity());  // at least the last lap, once the writer stopped
  std::printf("broadcast log: %lu read, %lu overwritten first\n", got, skipped);
}

// AccountTable views: every field follows from (index, version), so a torn or recycled one shows.
std::unique_ptr<AccountView> view(AccountIndex a, uint64_t version,
                                  std::unique_ptr<AccountView> v = nullptr) {
  if (!v) v = std::make_unique<AccountView>();
  v->index = v->master = a;
  v->version = version;
  v->collateral = static_cast<Usdc>(a * 7 + version);
  v->positions.clear();  // (assign(n, x) trips a GCC 12 -Wstringop-overflow false positive)
  for (uint64_t i = 0; i <= version % 4; ++i)
    v->positions.push_back({.size = static_cast<Lots>(a * 7), .entry_notional = Usdc(version)});
  return v;
}
bool consistent(const AccountView& v, AccountIndex a) {
  const auto& ps = v.positions;
  return v.index == a && v.master == a && v.collateral == static_cast<Usdc>(a * 7 + v.version) &&
         ps.size() == 1 + v.version % 4 && std::all_of(ps.begin(), ps.end(), [&](auto& p) {
           return p.size == static_cast<Lots>(a * 7) && p.entry_notional == Usdc(v.version);
         });
}

TEST(PublishedAccountTable, readers_see_whole_views_while_the_writer_republishes_and_recycles) {
  constexpr AccountIndex kAccounts = 300, kLate = 100;  // 400 of 1024 slots: under 70%
  pipe::AccountTable table(1024, 4);
  for (AccountIndex a = 0; a < kAccounts; ++a) ASSERT_TRUE(table.publish(view(a, 1)));
  std::atomic<bool> done{false};
  std::atomic<uint64_t> bad{0}, missing{0}, reads{0};
  auto reader = [&](AccountIndex stride) {
    auto r = table.reader();
    for (uint64_t i = 0; i < kSpinCap && !(done.load() && i > 0); ++i, ++reads) {
      r.read([&] {
        for (AccountIndex a = i % stride; a < kAccounts + kLate; a += stride) {
          const AccountView* v = table.find(a);
          missing += v == nullptr && a < kAccounts;  // the late ones appear during the run
          bad += v != nullptr && !consistent(*v, a);
        }
        bad += table.find(kFirstSubAccountIndex + 5) != nullptr;
      });
    }
  };
  std::vector<std::thread> readers;
  for (AccountIndex s : {3, 5, 7}) readers.emplace_back(reader, s);
  uint64_t recycled = 0, refused = 0;  // no ASSERT here: the readers must be joined
  for (uint64_t round = 2; round < 302; ++round) {
    for (AccountIndex a = 0; a < kAccounts + std::min<AccountIndex>(round - 2, kLate); ++a) {
      auto spare = table.take_spare();
      recycled += spare != nullptr;
      refused += !table.publish(view(a, round, std::move(spare)));
    }
    table.collect();
  }
  done.store(true);
  for (auto& t : readers) t.join();
  EXPECT_EQ(refused, 0u);
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_EQ(missing.load(), 0u);
  EXPECT_EQ(table.size(), kAccounts + kLate);
  // No reader left: once views made without room replace every recycled one in the table, a
  // collect brings back every view the table recycles.
  for (AccountIndex a = 0; a < kAccounts + kLate; ++a) table.publish(view(a, 302));
  table.collect();
  size_t spares = 0;
  while (table.take_spare() != nullptr) ++spares;
  EXPECT_EQ(spares, pipe::AccountTable::kStartSpares);
  std::printf("account table: %lu reads, %lu views recycled\n", reads.load(), recycled);
}

TEST(PublishedAccountTable, publish_refuses_a_new_account_past_seventy_percent_but_replaces) {
  pipe::AccountTable table(64, 1);
  for (AccountIndex a = 0; a < 44; ++a) ASSERT_TRUE(table.publish(view(a * 1000, 1))) << a;
  EXPECT_FALSE(table.publish(view(44'000, 1)));  // 45 of 64 would pass 70%
  EXPECT_EQ(table.size(), 44u);
  EXPECT_TRUE(table.publish(view(3000, 2)));  // an existing account is still replaced
  table.reader().read([&] {
    for (AccountIndex a = 0; a < 44; ++a) EXPECT_NE(table.find(a * 1000), nullptr) << a;
    EXPECT_EQ(table.find(44'000), nullptr);
    EXPECT_EQ(table.find(3000)->version, 2u);
  });
}

}  // namespace
}  // namespace tachyon::testing
