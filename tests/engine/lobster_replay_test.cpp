// Replays real NASDAQ order flow (LOBSTER sample files, tests/data/lobster) through the engine
// and compares the engine's book with LOBSTER's reconstructed book after every event.
//
// Mapping (one market, id 0, price_decimals 4 so a tick is LOBSTER's price, size_decimals 0 so a
// lot is a share):
//   type 1 (new limit order)      -> resting GTT limit order of a maker account
//   type 2 (partial cancel)       -> ModifyOrder to a smaller size at the same price (keeps
//                                    priority), or CancelOrder when nothing is left
//   type 3 (delete)               -> CancelOrder
//   type 4 (visible execution)    -> IOC limit order of the taker account on the opposite side,
//                                    at the resting order's price, for the executed size
//   types 5, 6, 7                 -> nothing (hidden execution, cross trade, halt)
// Resting orders are spread round robin over maker accounts, bids and asks on different ones, and
// the taker is an account of its own: self-trade prevention never fires.
//
// A level-N file only reports events that touch the best N levels, so orders appear that were
// never added inside the file. The book is seeded from orderbook row 0 with message 0 undone (one
// anonymous order per level); a message about an unknown order takes its shares from the anonymous
// liquidity at that price. After each event the engine's book is compared with the row and then
// reconciled to it inside the row's window (anonymous orders added or shares taken away), so every
// row checks one event from a correct start. Anonymous orders have no known time priority: when the
// file executes a known order that has anonymous ones ahead of it in the engine's queue, those move
// to the back first, and the test counts how often the engine's FIFO then fills the named order.
//
// Two comparisons are counted per row:
//   exact:      the engine's top N levels (price and size, both sides) equal the row.
//   determined: the same, restricted to prices inside the previous row's window. Levels outside
//               it were never described by a message (their contents only show up in the row when
//               an inner level empties), so only these are fully determined by the message flow.
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <gtest/gtest.h>

#include "support/lobster_data.hpp"
#include "support/tx_builder.hpp"
#include "tachyon/engine/engine.hpp"

namespace {

using tachyon::AccountIndex;
using tachyon::Engine;
using tachyon::EngineConfig;
using tachyon::Level;
using tachyon::Lots;
using tachyon::MarketParams;
using tachyon::OrderIndex;
using tachyon::Reject;
using tachyon::StateUpdate;
using tachyon::Ticks;
using tachyon::TimeInForce;
using tachyon::TradeUpdate;
using tachyon::Tx;
using tachyon::TxResult;
using tachyon::UpdateType;
using tachyon::testing::TxBuilder;

constexpr tachyon::MarketId kMarket = 0;
constexpr AccountIndex kFirstBidMaker = 1000;
constexpr AccountIndex kFirstAskMaker = 2000;
constexpr AccountIndex kTaker = 3000;
constexpr int kMakersPerSide = 16;
constexpr tachyon::Usdc kDeposit = 1'000'000'000'000'000;   // 10^9 USDC: margin never binds
constexpr int64_t kDayStartNs = 1'340'236'800'000'000'000;  // 2012-06-21 00:00 UTC
constexpr size_t kValidateEvery = 1000;

using namespace tachyon::testing::lobster;

// ---- the replay ----

class RecordingSink final : public tachyon::UpdateSink {
 public:
  void on_update(const StateUpdate& u) override {
    if (u.type == UpdateType::kTrade) {
      trades.push_back(u.trade);
    } else if (u.type == UpdateType::kOrderRemoved) {
      if (u.order.reason == tachyon::RemoveReason::kSelfTrade) ++self_trade_removals;
      if (u.order.reason == tachyon::RemoveReason::kExpired) ++expirations;
    }
  }
  std::vector<TradeUpdate> trades;
  uint64_t self_trade_removals = 0;
  uint64_t expirations = 0;
};

struct Stats {
  size_t events = 0;
  size_t exact = 0;                   // rows whose top N levels match exactly
  size_t determined = 0;              // rows matching inside the previous row's window
  size_t best_price = 0;              // rows whose best bid and best ask prices match
  size_t best_size = 0;               // rows whose best bid and best ask prices and sizes match
  size_t executions = 0;              // type 4 events
  size_t executions_known = 0;        // ... against an order the replay knows and still rests
  size_t executions_on_intended = 0;  // ... whose first fill is that order (FIFO agrees)
  size_t execution_shortfall = 0;     // executions that could not fill the whole size
  size_t execution_off_price = 0;     // fills at another price than the file's
  size_t requeue_txs = 0;             // txs moving anonymous orders behind an executed known order
  size_t unexpected_trades = 0;       // trades outside type 4 events (an add that crossed)
  Lots missing_shares = 0;            // cancels of shares the engine's level did not hold
  size_t anonymous_takes = 0;         // shares taken from anonymous liquidity (unknown orders)
  size_t reconcile_txs = 0;           // txs spent reconciling the book to the rows
  size_t crossed = 0;                 // events after which the engine's book was crossed
  size_t txs = 0;
  std::map<Reject, size_t> rejects;
  std::string invalid;  // first validate() failure
  uint64_t self_trade_removals = 0;
  uint64_t expirations = 0;
};

class Replay {
 public:
  Replay(int levels, const std::vector<Message>& msgs, const std::vector<Row>& rows)
      : levels_(levels), msgs_(msgs), rows_(rows), engine_(config()), builder_(kDayStartNs) {}

  Stats run() {
    setup();
    seed();
    for (size_t k = 0; k < msgs_.size(); ++k) {
      advance_to(msgs_[k].time_ns);
      apply(msgs_[k]);
      ++stats_.events;
      compare(rows_[k], k == 0 ? rows_[0] : rows_[k - 1]);
      check_crossed();
      reconcile(rows_[k]);
      check_crossed();
      if ((k + 1) % kValidateEvery == 0) validate();
    }
    validate();
    stats_.self_trade_removals = sink_.self_trade_removals;
    stats_.expirations = sink_.expirations;
    return stats_;
  }

 private:
  static EngineConfig config() {
    EngineConfig c;
    c.max_orders = 1u << 18;
    c.expected_accounts = 256;
    c.levels_per_side = 1024;
    return c;
  }

  static MarketParams params() {
    MarketParams p = tachyon::testing::demo_market_params("AMZN", 0, 4);
    p.taker_fee_ppm = 0;
    p.maker_fee_ppm = 0;
    p.min_base_lots = 1;
    p.min_quote_usdc = 0;
    p.price_band = 10'000;  // 100%: real prices are never refused as fat fingers
    p.market_protection = 10'000;
    p.max_orders_per_account = 1 << 20;
    p.max_orders = 1u << 20;
    return p;
  }

  TxResult submit(const Tx& tx) {
    sink_.trades.clear();
    const TxResult r = engine_.execute(tx, sink_);
    ++stats_.txs;
    if (!r.ok()) {
      ++stats_.rejects[r.reject];
    } else if (tx.h.type != tachyon::TxType::kDeposit &&
               tx.h.type != tachyon::TxType::kCreateMarket) {
      ++nonce_[tx.h.account];
    }
    return r;
  }

  void setup() {
    std::vector<AccountIndex> accounts = {kTaker};
    for (int i = 0; i < kMakersPerSide; ++i) {
      accounts.push_back(kFirstBidMaker + i);
      accounts.push_back(kFirstAskMaker + i);
    }
    for (AccountIndex a : accounts) submit(builder_.deposit(a, kDeposit));
    const Side ask = row_side(rows_[0], true);
    const Side bid = row_side(rows_[0], false);
    Ticks index = 1'000'000;
    if (!ask.levels.empty() && !bid.levels.empty()) {
      index = (ask.levels[0].first + bid.levels[0].first) / 2;
    }
    submit(builder_.create_market(kMarket, params(), index));
  }

  void advance_to(int64_t time_ns) {
    const int64_t ms = time_ns / 1'000'000;
    if (ms > last_ms_) builder_.advance_ms(ms - last_ms_);
    last_ms_ = std::max(last_ms_, ms);
  }

  // Row 0 is the book after message 0: undo message 0, then rest one anonymous order per level.
  void seed() {
    std::map<Ticks, Lots> side[2];  // [is_ask]
    for (int a = 0; a < 2; ++a) {
      for (auto [px, sz] : row_side(rows_[0], a).levels) side[a][px] = sz;
    }
    const Message& m = msgs_[0];
    const bool is_ask = m.direction == -1;
    if (m.type == 1) {
      if ((side[is_ask][m.price] -= m.size) <= 0) side[is_ask].erase(m.price);
    } else if (m.type == 2 || m.type == 3 || m.type == 4) {
      side[is_ask][m.price] += m.size;
    }
    for (int a = 0; a < 2; ++a) {
      for (auto [px, sz] : side[a]) place(a, px, sz);
    }
    last_ms_ = m.time_ns / 1'000'000;
    builder_.advance_ms(last_ms_);
  }

  AccountIndex next_maker(bool is_ask) {
    const AccountIndex a = (is_ask ? kFirstAskMaker : kFirstBidMaker) + rr_[is_ask];
    rr_[is_ask] = (rr_[is_ask] + 1) % kMakersPerSide;
    return a;
  }

  // A resting order; 0 when it did not rest.
  OrderIndex place(bool is_ask, Ticks px, Lots size) {
    const AccountIndex a = next_maker(is_ask);
    const TxResult r = submit(builder_.limit(a, nonce_[a], kMarket, is_ask, px, size));
    stats_.unexpected_trades += sink_.trades.size();
    if (!r.ok() || engine_.order(r.order_index) == nullptr) return 0;
    return r.order_index;
  }

  // Takes `by` shares off a resting order: a modify that keeps priority, or a cancel.
  void reduce(OrderIndex idx, Lots by) {
    const tachyon::Order* o = engine_.order(idx);
    if (o == nullptr || by <= 0) return;
    const AccountIndex a = o->account;
    if (by >= o->remaining) {
      submit(builder_.cancel(a, nonce_[a], kMarket, idx));
      tracked_.erase(idx);
    } else {
      submit(builder_.modify(a, nonce_[a], kMarket, idx, o->remaining - by, o->price));
    }
  }

  const Level* find_level(bool is_ask, Ticks px) const {
    const auto& s = engine_.market(kMarket)->book.side(is_ask);
    // Bids ascend, asks descend; the best level is at the back.
    auto it = std::lower_bound(s.begin(), s.end(), px, [is_ask](const Level& l, Ticks p) {
      return is_ask ? l.price > p : l.price < p;
    });
    return it != s.end() && it->price == px ? &*it : nullptr;
  }

  // Orders at a level, oldest first.
  std::vector<OrderIndex> level_orders(bool is_ask, Ticks px) const {
    std::vector<OrderIndex> out;
    const Level* l = find_level(is_ask, px);
    if (l == nullptr) return out;
    for (uint32_t s = l->head; s != tachyon::kNoSlot; s = engine_.orders()[s].next) {
      out.push_back(engine_.orders()[s].order_index);
    }
    return out;
  }

  // Removes `qty` shares from a level: from `prefer` first (the order a message names), then from
  // anonymous orders (oldest first), then from a known order holding exactly what is left (an
  // order deleted while outside the file's window), then from known orders newest first. Returns
  // what could not be found.
  Lots take_from_level(bool is_ask, Ticks px, Lots qty, OrderIndex prefer) {
    if (prefer != 0) {
      if (const tachyon::Order* o = engine_.order(prefer)) {
        const Lots q = std::min(qty, o->remaining);
        reduce(prefer, q);
        qty -= q;
      }
    }
    if (qty <= 0) return 0;
    std::vector<OrderIndex> orders = level_orders(is_ask, px);
    for (OrderIndex i : orders) {
      if (qty <= 0) return 0;
      if (tracked_.contains(i)) continue;
      const Lots q = std::min(qty, engine_.order(i)->remaining);
      stats_.anonymous_takes += static_cast<size_t>(q);
      reduce(i, q);
      qty -= q;
    }
    if (qty <= 0) return 0;
    std::reverse(orders.begin(), orders.end());
    auto exact = std::find_if(orders.begin(), orders.end(), [&](OrderIndex i) {
      const tachyon::Order* o = engine_.order(i);
      return o != nullptr && o->remaining == qty;
    });
    if (exact != orders.end()) std::rotate(orders.begin(), exact, exact + 1);
    for (OrderIndex i : orders) {
      if (qty <= 0) return 0;
      const tachyon::Order* o = engine_.order(i);
      if (o == nullptr) continue;
      const Lots q = std::min(qty, o->remaining);
      reduce(i, q);
      qty -= q;
    }
    return qty;
  }

  OrderIndex known(int64_t id) const {
    auto it = ids_.find(id);
    return it == ids_.end() ? 0 : it->second;
  }

  void apply(const Message& m) {
    const bool is_ask = m.direction == -1;  // side of the resting order
    switch (m.type) {
      case 1: {
        const OrderIndex idx = place(is_ask, m.price, m.size);
        if (idx != 0) {
          ids_[m.id] = idx;
          tracked_.insert(idx);
        }
        break;
      }
      case 2: {  // partial cancel: the order keeps resting with fewer shares
        stats_.missing_shares += take_from_level(is_ask, m.price, m.size, known(m.id));
        break;
      }
      case 3: {  // delete: `size` shares leave; whatever the engine still holds becomes anonymous
        const OrderIndex idx = known(m.id);
        stats_.missing_shares += take_from_level(is_ask, m.price, m.size, idx);
        tracked_.erase(idx);
        ids_.erase(m.id);
        break;
      }
      case 4: execute_against(is_ask, m.price, m.size, known(m.id)); break;
      default: break;  // 5 hidden execution, 6 cross trade, 7 halt: the visible book is unchanged
    }
  }

  // Anonymous orders stand for liquidity of unknown time priority. When the file executes a known
  // order while anonymous orders rest ahead of it, those were in fact behind it: they go to the
  // back of the queue (cancel and rest again), so the engine's FIFO can be checked on the rest.
  void requeue_anonymous_ahead_of(bool is_ask, Ticks px, OrderIndex intended) {
    std::vector<OrderIndex> ahead;
    for (OrderIndex i : level_orders(is_ask, px)) {
      if (i == intended) break;
      if (!tracked_.contains(i)) ahead.push_back(i);
    }
    const size_t before = stats_.txs;
    for (OrderIndex i : ahead) {
      const Lots size = engine_.order(i)->remaining;
      reduce(i, size);
      place(is_ask, px, size);
    }
    stats_.requeue_txs += stats_.txs - before;
  }

  void execute_against(bool resting_is_ask, Ticks px, Lots size, OrderIndex intended) {
    ++stats_.executions;
    const bool intended_live = intended != 0 && engine_.order(intended) != nullptr;
    if (intended_live) requeue_anonymous_ahead_of(resting_is_ask, px, intended);
    submit(builder_.limit(kTaker, nonce_[kTaker], kMarket, !resting_is_ask, px, size,
                          TimeInForce::kIoc));
    Lots filled = 0;
    for (const TradeUpdate& t : sink_.trades) {
      filled += t.size;
      if (t.price != px) ++stats_.execution_off_price;
    }
    if (filled != size) ++stats_.execution_shortfall;
    if (intended_live) {
      ++stats_.executions_known;
      if (!sink_.trades.empty() && sink_.trades[0].maker_order == intended) {
        ++stats_.executions_on_intended;
      }
    }
    if (engine_.order(intended) == nullptr) tracked_.erase(intended);
  }

  // Engine levels of one side, best first, at most N.
  std::vector<std::pair<Ticks, Lots>> engine_levels(bool is_ask) const {
    const auto& book = engine_.market(kMarket)->book;
    std::vector<std::pair<Ticks, Lots>> out;
    for (size_t i = 0; i < book.level_count(is_ask) && i < static_cast<size_t>(levels_); ++i) {
      out.emplace_back(book.level(is_ask, i).price, book.level(is_ask, i).total);
    }
    return out;
  }

  // The worst price a row describes on a side when all N levels are shown; else none (the row
  // shows the whole side).
  bool window_bound(const Side& s, Ticks& bound) const {
    if (s.levels.size() < static_cast<size_t>(levels_)) return false;
    bound = s.levels.back().first;
    return true;
  }

  static bool within(bool is_ask, Ticks px, bool bounded, Ticks bound) {
    return !bounded || (is_ask ? px <= bound : px >= bound);
  }

  void compare(const Row& row, const Row& prev) {
    bool exact = true, determined = true, best_price = true, best_size = true;
    for (int a = 0; a < 2; ++a) {
      const Side want = row_side(row, a);
      const auto have = engine_levels(a);
      exact &= have == want.levels;
      Ticks bound = 0;
      const bool bounded = window_bound(row_side(prev, a), bound);
      std::vector<std::pair<Ticks, Lots>> w, h;
      for (auto l : want.levels) {
        if (within(a, l.first, bounded, bound)) w.push_back(l);
      }
      for (auto l : have) {
        if (within(a, l.first, bounded, bound)) h.push_back(l);
      }
      determined &= w == h;
      const bool want_empty = want.levels.empty();
      if (want_empty != have.empty()) {
        best_price = best_size = false;
      } else if (!want_empty) {
        best_price &= want.levels[0].first == have[0].first;
        best_size &= want.levels[0] == have[0];
      }
    }
    stats_.exact += exact;
    stats_.determined += determined;
    stats_.best_price += best_price;
    stats_.best_size += best_size;
  }

  // Makes the engine's book equal the row inside the row's window: first shares taken away on
  // both sides (so no stale level crosses), then missing shares added as anonymous orders.
  void reconcile(const Row& row) {
    const size_t before = stats_.txs;
    Side want[2] = {row_side(row, false), row_side(row, true)};
    for (int a = 0; a < 2; ++a) {
      Ticks bound = 0;
      const bool bounded = window_bound(want[a], bound);
      std::map<Ticks, Lots> target(want[a].levels.begin(), want[a].levels.end());
      const auto& book = engine_.market(kMarket)->book;
      std::vector<std::pair<Ticks, Lots>> excess;
      for (size_t i = 0; i < book.level_count(a); ++i) {
        const Level& l = book.level(a, i);
        if (!within(a, l.price, bounded, bound)) break;
        auto it = target.find(l.price);
        const Lots t = it == target.end() ? 0 : it->second;
        if (l.total > t) excess.emplace_back(l.price, l.total - t);
      }
      for (auto [px, q] : excess) take_from_level(a, px, q, 0);
    }
    for (int a = 0; a < 2; ++a) {
      for (auto [px, t] : want[a].levels) {
        const Level* l = find_level(a, px);
        const Lots have = l == nullptr ? 0 : l->total;
        if (have < t) place(a, px, t - have);
      }
    }
    stats_.reconcile_txs += stats_.txs - before;
  }

  void check_crossed() {
    const auto& book = engine_.market(kMarket)->book;
    const Level* b = book.best(false);
    const Level* a = book.best(true);
    if (b != nullptr && a != nullptr && b->price >= a->price) ++stats_.crossed;
  }

  void validate() {
    if (!stats_.invalid.empty()) return;
    stats_.invalid = engine_.validate();
  }

  const int levels_;
  const std::vector<Message>& msgs_;
  const std::vector<Row>& rows_;
  Engine engine_;
  TxBuilder builder_;
  RecordingSink sink_;
  Stats stats_;
  std::unordered_map<AccountIndex, int64_t> nonce_;
  std::unordered_map<int64_t, OrderIndex> ids_;  // LOBSTER order id -> engine order
  std::unordered_set<OrderIndex> tracked_;       // engine orders that stand for a LOBSTER id
  int rr_[2] = {0, 0};
  int64_t last_ms_ = 0;
};

struct Dataset {
  const char* name;
  const char* message_file;
  const char* orderbook_file;
  int levels;
  size_t rows;
};

double pct(size_t n, size_t d) { return d == 0 ? 0.0 : 100.0 * static_cast<double>(n) / d; }

Stats replay(const Dataset& d) {
  const std::string dir = TACHYON_LOBSTER_DIR;
  std::string err;
  const auto msgs = load_messages(dir + "/" + d.message_file, &err);
  const auto rows = load_rows(dir + "/" + d.orderbook_file, d.levels, &err);
  EXPECT_TRUE(err.empty()) << err;
  EXPECT_EQ(msgs.size(), d.rows);
  EXPECT_EQ(rows.size(), d.rows);
  if (msgs.empty() || msgs.size() != rows.size()) return {};
  Stats s = Replay(d.levels, msgs, rows).run();
  const size_t n = s.events;
  std::printf("LOBSTER %s: %zu/%zu rows match (%.3f%%)\n", d.name, s.exact, n, pct(s.exact, n));
  std::printf("  inside the previous row's window: %zu/%zu (%.3f%%)\n", s.determined, n,
              pct(s.determined, n));
  std::printf("  best bid/ask price: %zu/%zu (%.3f%%), price and size: %zu/%zu (%.3f%%)\n",
              s.best_price, n, pct(s.best_price, n), s.best_size, n, pct(s.best_size, n));
  std::printf(
      "  executions: %zu, on a known order: %zu, first fill on that order: %zu (%.3f%%), "
      "short: %zu, off price: %zu\n",
      s.executions, s.executions_known, s.executions_on_intended,
      pct(s.executions_on_intended, s.executions_known), s.execution_shortfall,
      s.execution_off_price);
  std::printf(
      "  txs: %zu, reconcile txs: %zu, requeue txs: %zu, anonymous shares taken: %zu, "
      "missing shares: %lld, reject codes: %zu\n",
      s.txs, s.reconcile_txs, s.requeue_txs, s.anonymous_takes,
      static_cast<long long>(s.missing_shares), s.rejects.size());
  for (auto [r, c] : s.rejects) {
    std::printf("    reject %u: %zu\n", tachyon::reject_code(r), c);
  }
  return s;
}

// What every replay must hold whatever the data: a valid, never crossed book, no refused tx, no
// trade outside an execution, no self-trade and no expiry; every execution fills its whole size at
// the file's price; and every level the previous row described ends up as the file says (the
// "determined" comparison: only levels that enter the window from outside, never described by a
// message, may differ).
void expect_sound(const Stats& s, size_t rows) {
  EXPECT_EQ(s.events, rows);
  EXPECT_EQ(s.invalid, "");
  EXPECT_EQ(s.crossed, 0u);
  EXPECT_TRUE(s.rejects.empty()) << s.rejects.size() << " reject codes, first "
                                 << (s.rejects.empty() ? 0 : reject_code(s.rejects.begin()->first));
  EXPECT_EQ(s.unexpected_trades, 0u);
  EXPECT_EQ(s.self_trade_removals, 0u);
  EXPECT_EQ(s.expirations, 0u);
  EXPECT_EQ(s.execution_shortfall, 0u);
  EXPECT_EQ(s.execution_off_price, 0u);
  EXPECT_EQ(s.missing_shares, 0);
  EXPECT_EQ(s.determined, s.events);
}

const Dataset kAmznLevel1{"AMZN level1", "AMZN_2012-06-21_34200000_57600000_message_1.csv.gz",
                          "AMZN_2012-06-21_34200000_57600000_orderbook_1.csv.gz", 1, 57'515};
const Dataset kAmznLevel5{"AMZN level5",
                          "AMZN_2012-06-21_34200000_57600000_message_5_subset.csv.gz",
                          "AMZN_2012-06-21_34200000_57600000_orderbook_5_subset.csv.gz", 5, 1'000};
const Dataset kTslaLevel10{"TSLA level10",
                           "TSLA_2015-01-07_34200000_57600000_message_10_SAMPLE.csv.gz",
                           "TSLA_2015-01-07_34200000_57600000_orderbook_10_SAMPLE.csv.gz", 10, 50};

// What the message flow determines is asserted (expect_sound: every row inside the previous
// row's window, nothing crossed, refused or invented); how often a row matches the file exactly
// is printed, not asserted: a level-1 file says nothing about the book below the touch, so when
// the best level empties the new one shows up with contents no message described. Executions of
// a known order start at that order in the engine's FIFO most of the time; the rest are known
// orders the reconciliation guessed wrong about (shares that vanished while their level was below
// the touch are taken from the wrong order) and a few executions the file itself reports out of
// time priority (a younger order at the same price filled first).
TEST(LobsterReplay, amzn_level1_whole_day_top_of_book_matches_the_file) {
  const Stats s = replay(kAmznLevel1);
  expect_sound(s, kAmznLevel1.rows);
  EXPECT_GT(s.executions_known, 5000u);
}

// Best bid/ask price and size on every row and FIFO on every execution of a known order, as the
// flow determines; exact rows are printed (the misses are levels entering the 5-level window from
// below, whose contents no message described).
TEST(LobsterReplay, amzn_level5_first_thousand_events_match_five_levels) {
  const Stats s = replay(kAmznLevel5);
  expect_sound(s, kAmznLevel5.rows);
  EXPECT_EQ(s.best_size, s.events);
  EXPECT_GT(s.executions_known, 100u);
  EXPECT_EQ(s.executions_on_intended, s.executions_known);
}

// Best bid/ask price and size on every row; exact rows are printed (the misses are levels
// entering the 10-level window from below).
TEST(LobsterReplay, tsla_level10_opening_cross_sample_matches_ten_levels) {
  const Stats s = replay(kTslaLevel10);
  expect_sound(s, kTslaLevel10.rows);
  EXPECT_EQ(s.best_size, s.events);
  EXPECT_EQ(s.executions, 8u);
  EXPECT_EQ(s.executions_on_intended, s.executions_known);
}

}  // namespace
