#pragma once
// The read side (docs/ARCHITECTURE.md "The path of one signed tx"): what the apply thread keeps
// from the update stream for the api workers, published as immutable objects that readers use
// without locks:
//   - per market: MarketView (parameters, prices, open interest, daily figures) on every batch
//     that changed it, and MarketHistory (recent trades, candles 1m..1w) at most every
//     history_interval, plus on an idle apply thread;
//   - per account: AccountView (collateral, positions, open orders, API keys with their next
//     nonce, recent trades) through AccountTable, an insert-only hash table of atomic pointers
//     reclaimed by one EpochDomain;
//   - every update, in order, in a BroadcastLog that the workers tail for WebSocket fan-out.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <absl/container/btree_map.h>
#include <absl/container/flat_hash_map.h>
#include <absl/functional/function_ref.h>

#include "tachyon/core/cached_allocator.hpp"
#include "tachyon/core/wide_btree.hpp"
#include "tachyon/engine/margin.hpp"
#include "tachyon/engine/tx.hpp"
#include "tachyon/engine/update.hpp"
#include "tachyon/pipe/epoch.hpp"
#include "tachyon/pipe/order_list.hpp"
#include "tachyon/pipe/published.hpp"
#include "tachyon/pipe/small_orders.hpp"

namespace tachyon {
class Engine;  // the seeding and restore_history() read it before the apply thread starts (the app)
struct Market;
struct Account;
struct Order;
class SavedAccounts;  // the snapshot the engine started from, per account (engine.hpp)
}  // namespace tachyon

namespace tachyon::pipe {

inline constexpr int kResolutions = 9;
inline constexpr int64_t kResolutionSeconds[kResolutions] = {60,    300,   900,   1800,  3600,
                                                             14400, 43200, 86400, 604800};
inline constexpr const char* kResolutionNames[kResolutions] = {"1m", "5m",  "15m", "30m", "1h",
                                                               "4h", "12h", "1d",  "1w"};
int resolution_index(std::string_view name);  // -1 when unknown

struct Candle {
  int64_t start_ms = 0;
  Ticks open = 0, high = 0, low = 0, close = 0;
  Lots volume_base = 0;
  Usdc volume_quote = 0;
  uint64_t trades = 0;
  uint64_t last_trade_id = 0;
};

struct PositionView;

// One account's side of a trade: its position in the market before the fill, and the PnL the
// fill realized (fill_outcome's arithmetic, as the engine's).
struct TradeSide {
  Lots size_before = 0;   // signed: > 0 long
  Usdc entry_before = 0;  // signed cost basis
  Usdc pnl = 0;
  // the initial margin fraction in force (1e-4), the market's default when the account set none
  Bps4 imf_before = 0;
};
struct TradeSides {
  TradeSide maker, taker;
};
// The sides of trade `t`, from the two accounts' positions just before it (nullptr: none yet)
// and the market's default initial margin fraction and quote multiplier; `after` (optional, two
// entries) receives the maker's and the taker's positions after it.
TradeSides trade_sides(const TradeUpdate& t, const PositionView* maker, const PositionView* taker,
                       Bps4 default_imf, int64_t quote_multiplier, FillOutcome* after = nullptr);
// The same, from the engine while it emits the trade (its positions are those before the fill):
// the journal replay's trades.
TradeSides trade_sides(const TradeUpdate& t, const Engine& e);

struct TradeRecord {
  TradeUpdate t;
  int64_t time_ns;
  uint32_t origin_cookie;  // the taker tx's submitting worker and cookie (StateUpdate)
  uint8_t origin_worker;
  TradeSides sides;
};

// One side of a deposit, withdrawal or transfer, as the account's money history shows it.
struct MoneyRecord {
  AccountIndex account = 0;
  AccountIndex counterparty = 0;  // a transfer's other account (0: a deposit or withdrawal)
  Usdc amount = 0;                // > 0: what moved
  Usdc fee = 0;                   // a transfer's fee, paid by the sender
  int64_t time_ns = 0;
  uint64_t id = 0;  // the exchange's count of money movements since the start: unique, rising
  uint32_t origin_cookie = 0;  // the tx's submitting worker and cookie (StateUpdate)
  uint8_t origin_worker = 0;
  BalanceReason reason = BalanceReason::kDeposit;  // kDeposit, kWithdraw, kTransferIn/Out
};

struct FundingRecord {
  int64_t time_ms = 0;
  int64_t rate = 0;  // 1e-9 per period, > 0: longs paid
  Usdc paid = 0;     // Σ paid by the paying side
  Ticks mark = 0;
};
inline constexpr size_t kHistoryFundings = 1000;

struct MarketView {
  MarketId id = 0;
  MarketParams params{};
  int64_t quote_multiplier = 1;
  Ticks index_price = 0, mark_price = 0, last_trade_price = 0;
  Lots open_interest = 0;
  uint64_t trade_count = 0;
  // funding (1e-9 per period): the next payment's estimate, the last payment
  int64_t funding_estimate = 0, funding_rate = 0, funding_ms = 0, next_funding_ms = 0;
  // the last 24 h, from the hourly candles
  Ticks daily_open = 0, daily_high = 0, daily_low = 0;
  Lots daily_base = 0;
  Usdc daily_quote = 0;
  uint64_t daily_trades = 0;
  int64_t engine_ts_ns = 0;
  uint64_t version = 0;  // +1 per publish
  // The open candle of each resolution (start_ms 0: none yet), fresh with every batch; closed
  // candles come from MarketHistory.
  std::array<Candle, kResolutions> current{};
};

struct MarketHistory {
  MarketId id = 0;
  std::vector<TradeRecord> trades;                        // oldest first, the last kHistoryTrades
  std::array<std::vector<Candle>, kResolutions> candles;  // oldest first, the last kHistoryCandles
  std::vector<FundingRecord> fundings;                    // oldest first, the last kHistoryFundings
  int64_t engine_ts_ns = 0;
  uint64_t writer_epoch = 0;  // the writer's: which restore of the market's history it follows
};

// An account's recent trades across a restart (history.bin): what its view showed when saved.
struct AccountTrades {
  AccountIndex account = 0;
  uint64_t trade_count = 0;         // the view's total, the saved trades included
  std::vector<TradeRecord> trades;  // oldest first, at most ReadSide::kAccountTrades
};

// An account's recent trades, oldest first, as up to kParts contiguous parts (the chunks of its
// trade log that a view shares, or one list).
class TradeRange {
 public:
  static constexpr size_t kParts = 4;
  TradeRange() = default;
  explicit TradeRange(std::span<const TradeRecord> one) { add(one); }
  void add(std::span<const TradeRecord> part) {
    if (part.empty()) return;
    parts_[n_++] = part;
    size_ += part.size();
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const TradeRecord& operator[](size_t i) const {
    size_t k = 0;
    while (i >= parts_[k].size()) i -= parts_[k++].size();
    return parts_[k][i];
  }

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = TradeRecord;
    using difference_type = std::ptrdiff_t;
    using pointer = const TradeRecord*;
    using reference = const TradeRecord&;
    const_iterator() = default;
    reference operator*() const { return r_->parts_[part_][i_]; }
    pointer operator->() const { return &r_->parts_[part_][i_]; }
    const_iterator& operator++() {
      if (++i_ == r_->parts_[part_].size()) {
        ++part_;
        i_ = 0;
      }
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator t = *this;
      ++*this;
      return t;
    }
    bool operator==(const const_iterator& o) const { return part_ == o.part_ && i_ == o.i_; }

   private:
    friend class TradeRange;
    const_iterator(const TradeRange* r, size_t part) : r_(r), part_(part) {}
    const TradeRange* r_ = nullptr;
    size_t part_ = 0, i_ = 0;
  };
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, n_); }

 private:
  std::array<std::span<const TradeRecord>, kParts> parts_{};
  size_t n_ = 0, size_ = 0;
};

// An account's trade log is a series of chunks that never move once written: the apply thread
// appends to the newest, past every range a view shows, and starts a new chunk when it is full
// (8, 16, 32, then 64 trades each), so a trade is never copied again; the views share the chunks.
using TradeChunk = std::vector<TradeRecord>;  // reserved to its capacity once, never reallocated
inline constexpr size_t kTradeChunkMax = 64;

struct PositionView {
  MarketId market = 0;
  Lots size = 0;
  Usdc entry_notional = 0;
  Usdc realized_pnl = 0;
  Lots buy_open = 0, sell_open = 0;
  Bps4 imf = 0;  // 0: the market default
  uint32_t open_orders = 0;
  Usdc funding_paid = 0;  // cumulative, > 0 paid
  Usdc allocated = 0;     // isolated margin (0 when cross)
  uint8_t isolated = 0;   // margin mode: 0 cross, 1 isolated
};

struct KeyView {
  uint8_t index = 0;
  uint32_t version = 0;
  int64_t next_nonce = 0;
  std::array<uint8_t, 32> pubkey{};
};

struct AccountView {
  AccountIndex index = 0;
  AccountIndex master = 0;
  std::array<uint8_t, 20> l1_address{};
  Usdc collateral = 0;
  std::vector<PositionView> positions;  // by market
  // Open orders in index order. Up to orders_in_view of them are chunks of a few orders, each
  // shared with the previous views until one of its orders changes (small_chunks: a SmallOrders
  // list as published), or the view's own (small_orders: the views made at start), and are this
  // view's state.
  // More are an OrderList whose unchanged chunks are shared with the previous version
  // (order_list.hpp), rebuilt at most every orders_interval: orders_current tells whether it is
  // this view's state; open_order_count always is.
  std::shared_ptr<const OrderList> orders;
  std::vector<const SmallOrderChunk*> small_chunks;
  std::vector<OrderView> small_orders;
  bool orders_current = true;
  uint32_t open_order_count = 0;
  std::vector<KeyView> keys;  // by index
  // The last kAccountTrades trades, oldest first: trade_shown of them, from trade_first in the
  // first of the account's trade-log chunks held here (oldest first; null ones unused).
  std::array<std::shared_ptr<const TradeChunk>, TradeRange::kParts> trade_chunks;
  uint32_t trade_first = 0, trade_shown = 0;
  uint64_t trade_count = 0;
  int64_t engine_ts_ns = 0;
  // When this server executed the account's creation; 0 for an account restored from a snapshot
  // (the engine keeps no creation time).
  int64_t created_ns = 0;
  uint64_t version = 0;

  // The room every view the apply thread publishes has, so that a recycled one (views go back
  // to a spare pool and come back for any account) fills without allocating. Views made at the
  // start have only what their account needed: they are not recycled.
  static constexpr size_t kPositionRoom = 4, kKeyRoom = 4;
  bool has_room() const {
    return positions.capacity() >= kPositionRoom && keys.capacity() >= kKeyRoom &&
           small_chunks.capacity() >= SmallOrders::kTableRoom;
  }
  void make_room() {
    positions.reserve(kPositionRoom);
    keys.reserve(kKeyRoom);
    small_chunks.reserve(SmallOrders::kTableRoom);
  }

  TradeRange trades() const {
    TradeRange r;
    size_t skip = trade_first, left = trade_shown;
    for (const auto& c : trade_chunks) {
      if (c == nullptr || left == 0) continue;
      // Every chunk but the newest is full; of the newest only what this view counts is read
      // (the apply thread may be appending past it), so its size is never looked at.
      const size_t n = c->capacity();
      if (skip >= n) {
        skip -= n;
        continue;
      }
      const size_t take = std::min(n - skip, left);
      r.add(std::span<const TradeRecord>(c->data() + skip, take));
      left -= take;
      skip = 0;
    }
    return r;
  }
  OrderRange order_list() const {
    if (orders) return OrderRange(*orders);
    if (!small_chunks.empty()) return OrderRange(small_chunks, open_order_count);
    return OrderRange(small_orders);
  }
  const KeyView* key(uint8_t i) const {
    for (const auto& k : keys)
      if (k.index == i) return &k;
    return nullptr;
  }
  const PositionView* position(MarketId m) const {
    for (const auto& p : positions)
      if (p.market == m) return &p;
    return nullptr;
  }
};

// An account's first view, as seeding and the account base make it: `orders` (any order) become
// its open orders, sorted by index, stamped `now_ns`.
std::unique_ptr<AccountView> first_view(const Account& a, std::vector<OrderView>& orders,
                                        int64_t now_ns, size_t orders_in_view);
OrderView order_view(const Order& o, int64_t now_ns);  // created and updated at now_ns

// Insert-only open addressing of account index -> current view. Writers: the apply thread
// (publish, the only one that replaces a view) and, while seeding, the seeder threads
// (insert_concurrent); with an account base, also any reader's find(), which inserts an
// account's first view by compare-and-swap (below). Every insert claims its key by CAS, so
// concurrent inserts of one account end with one view.
//
// The account base (set_base): at a start from a snapshot, the accounts the journal replay left
// as the snapshot saved them get no view at start (at 1M accounts, building every view was most
// of the start's time and memory). find() makes an account's view from the snapshot on its first
// use, by any thread, and inserts it with a compare-and-swap: a view the apply thread published
// meanwhile wins. Until the apply thread publishes one, the account's state is still the one
// saved (its updates would have made the apply thread publish), so the view made is current.
class AccountTable {
 public:
  // Recycled views the table starts with (views made at start lack the room to be recycled).
  static constexpr size_t kStartSpares = 128;
  AccountTable(size_t capacity_pow2, size_t max_readers);
  ~AccountTable();
  AccountTable(const AccountTable&) = delete;
  AccountTable& operator=(const AccountTable&) = delete;

  EpochDomain::Reader reader() { return domain_.reader(); }
  // Reader, inside reader.read(): the view or nullptr. An account of the base without a view yet
  // gets it made and inserted here (the table's contents are the same: that is its view).
  const AccountView* find(AccountIndex a) const;
  size_t size() const { return size_.load(std::memory_order_relaxed); }
  // Views that found the table full (their accounts have no view: it is sized too small).
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }
  // Reader, inside reader.read(): the views of the accounts whose address is `l1`, base accounts
  // included (the base's matches are made first, then the table is scanned). Any order.
  void for_each_with_l1(const std::array<uint8_t, 20>& l1,
                        absl::FunctionRef<void(const AccountView&)> f) const;
  // Reader, inside reader.read(): every view made so far (a full scan of the table; base
  // accounts never used since the start have none, and nothing of theirs changed since).
  template <typename F>
  void for_each(F&& f) const {
    for (const auto& e : entries_) {
      if (e.key.load(std::memory_order_acquire) == 0) continue;
      if (const AccountView* v = e.view.load(std::memory_order_acquire)) f(*v);
    }
  }

  // Before any reader and any publish(): the account base. Views made from it are stamped
  // `now_ns` (the time of the restore), keep up to `orders_in_view` orders in the view itself
  // (ReadSideConfig) and are allocated in jemalloc arena `arena` (0: the caller's).
  void set_base(std::shared_ptr<const SavedAccounts> base, int64_t now_ns, size_t orders_in_view,
                unsigned arena);
  // Accounts that find() made from the base, and views it made that another thread's beat.
  uint64_t made_from_base() const { return made_.load(std::memory_order_relaxed); }
  uint64_t made_and_dropped() const { return dropped_.load(std::memory_order_relaxed); }

  // Writer: false when the table is full (counted in refused()). `tag`: the epoch tag the view
  // it replaced was retired with (0: none was).
  bool publish(std::unique_ptr<AccountView> v, uint64_t* tag = nullptr);
  // Writer: objects unlinked before the last collect() and tagged below this are unreachable by
  // any reader (the epoch then, or the oldest a reader announced, if lower).
  uint64_t safe_below_seen() const { return safe_seen_; }
  // Before any reader and any publish(): the first views of accounts not in the table, a batch at
  // a time, from any number of threads at once (distinct accounts). Room for the batch is taken
  // with one update of the shared count and each entry prefetched a few views ahead. Returns how
  // many went in; the others found the table full (counted in refused()). Empties `views`.
  size_t insert_concurrent(std::vector<std::unique_ptr<AccountView>>& views);
  std::unique_ptr<AccountView> take_spare();  // a recycled view (vectors keep their capacity)
  // Writer, while idle: the entry of account `a` and the next spare view pulled into this core's
  // cache.
  void keep_warm(AccountIndex a) const;
  void keep_warm() const;  // the reader slots and the writer's lists
  void collect();

 private:
  struct Entry {
    std::atomic<uint64_t> key{0};  // account index + 1; 0 = empty
    std::atomic<AccountView*> view{nullptr};
  };
  struct Retired {
    AccountView* v;
    uint64_t tag;
  };
  size_t slot_of(AccountIndex a) const;
  const AccountView* from_base(AccountIndex a) const;
  // `reserved`: the caller already counted the entry in size_ (and checked the room).
  Entry* claim(AccountIndex a, bool& fresh, bool reserved = false);
  std::vector<Entry> entries_;
  size_t mask_;
  std::atomic<size_t> size_{0};
  std::atomic<uint64_t> refused_{0};
  EpochDomain domain_;
  std::vector<Retired> retired_;  // writer only
  std::vector<AccountView*> spare_;
  uint64_t safe_seen_ = 1;
  std::shared_ptr<const SavedAccounts> base_;
  int64_t base_ns_ = 0;
  size_t base_orders_in_view_ = 0;
  unsigned base_arena_ = 0;
  mutable std::atomic<uint64_t> made_{0}, dropped_{0};
};

struct ReadSideConfig {
  size_t max_readers = 16;
  size_t account_capacity = 1 << 20;  // power of 2; at most ~70% used
  size_t log_capacity = 1 << 16;      // updates kept for WS fan-out (power of 2)
  int64_t history_interval_ns = 20'000'000;
  // A history publication brings the recycled MarketHistory up to date with what changed since
  // it was published (new and closed candles, the open one, new trades and fundings) instead of
  // copying every array (up to ~370 KB a market). false: the full copy, kept as the oracle of the
  // incremental publication's test and bench_history's same-run baseline; the server never
  // sets it (docs/ARCHITECTURE.md "Choices kept on purpose").
  bool history_incremental = true;
  // An account's open orders up to this many are chunks of up to 8 orders copied on write
  // (small_orders.hpp): a change copies one chunk, a new view the table of chunk pointers, and
  // neither allocates (the chunks are pooled, the views recycled). More are a shared,
  // chunked OrderList, rebuilt (only its chunks that changed) at most every
  // max(orders_interval, open orders x orders_interval_per_order): 5 ms up to 100k orders. Each
  // rebuild allocates (the list, its tables, the chunks it copies): rebuilt every batch, ten busy
  // accounts cost 5 allocations per tx.
  size_t orders_in_view = 64;
  int64_t orders_interval_ns = 5'000'000;
  int64_t orders_interval_per_order_ns = 50;
};

// Written by the apply thread only; read by anyone through the accessors.
class ReadSide {
 public:
  static constexpr size_t kHistoryTrades = 100;
  static constexpr size_t kHistoryCandles = 500;
  // Candle lists (and their published copies) start with room for this many: a new candle of a
  // live market allocates only when a list outgrows it (after an hour of minutes), not each
  // time the count passes a power of two from 1.
  static constexpr size_t kCandleRoom = 64;
  static constexpr size_t kAccountTrades = 100;
  // Closed orders kept (filled, canceled, expired, rejected takers), across all accounts.
  static constexpr size_t kClosedOrders = 1 << 14;
  // Deposits, withdrawals and transfer sides kept, across all accounts.
  static constexpr size_t kMoneyRecords = 1 << 14;

  explicit ReadSide(const ReadSideConfig& cfg);
  ReadSide(const ReadSide&) = delete;
  ReadSide& operator=(const ReadSide&) = delete;

  // Before the apply thread starts, the views of a recovered engine's state (candles and trade
  // history start empty: they are not part of the engine state), in parts so that the accounts
  // can be seeded by several threads (ReadModel): seed_markets first, then seed_accounts over
  // disjoint ranges of e.accounts() (any threads, at once), then seed_done once they all
  // returned.
  void seed_markets(const Engine& e, int64_t now_ns);
  void seed_accounts(const Engine& e, int64_t now_ns, size_t begin, size_t end);
  // The same for the accounts listed (any order; repeats and unknown ones skipped).
  void seed_listed(const Engine& e, int64_t now_ns, std::span<const AccountIndex> accounts);
  void seed_done(int64_t now_ns);
  // Before the apply thread starts, after the seeding: the market histories a previous run saved
  // (recent trades, candles, funding payments) and the accounts' recent trades, then the trades
  // and funding payments of the journal replay that they do not have yet (newer trade id, later
  // funding time). The saved account lists must hold no trade newer than their market's saved
  // history (save_history cuts them there). The trade count and last price stay the engine's.
  // Markets and accounts the engine does not have are skipped.
  // `replayed_sides` holds each replayed trade's sides (trade_sides from the engine), by index.
  void restore_history(const std::vector<MarketHistory>& saved,
                       const std::vector<AccountTrades>& accounts,
                       const std::vector<StateUpdate>& replayed,
                       const std::vector<TradeSides>& replayed_sides, const Engine& e,
                       int64_t now_ns);
  // apply thread
  void apply(const StateUpdate& u);
  // While the apply thread is idle (busy-polling): reads what the next updates most likely touch
  // (the state and views of the accounts and markets that changed last, the update log's next
  // slots, the recycled objects the next publish fills) so that it stays in this core's caches,
  // and makes the next chunk of a trade log about to fill. Changes no view. Returns early once
  // `work_waiting()` says the next updates arrived (it is asked between accounts).
  void keep_warm(absl::FunctionRef<bool()> work_waiting);
  // Publishes what changed since the last call; history and held-back order lists only when due,
  // or at once with `force_history` / `force_orders` (an idle apply thread; the last publish).
  void publish(int64_t now_ns, bool force_history, bool force_orders = false);
  bool history_dirty() const { return !history_changed_.empty(); }
  // Order lists held back by their interval (published when due, or forced).
  bool orders_pending() const { return !orders_pending_.empty(); }

  // readers
  Published<MarketView>& market(MarketId m) { return *markets_[m]; }
  Published<MarketHistory>& history(MarketId m) { return *histories_[m]; }
  // The market's last trades, fresh with every batch (lock-free; oldest first, at most `limit`).
  std::vector<TradeRecord> recent_trades(MarketId m, size_t limit) const;
  AccountTable& accounts() { return accounts_; }
  // Account `a`'s orders among the exchange's last kClosedOrders closed ones since the start,
  // newest first, at most `limit`, of market `m` (kAllMarkets: any); as of the last publish.
  std::vector<OrderView> closed_orders(AccountIndex a, MarketId m, size_t limit) const;
  // Account `a`'s deposits, withdrawals and transfers (reasons in `kinds`, a bit per
  // BalanceReason) among the exchange's last kMoneyRecords since the start, newest first, at
  // most `limit`; as of the last publish.
  std::vector<MoneyRecord> money_history(AccountIndex a, uint32_t kinds, size_t limit) const;
  const BroadcastLog<StateUpdate>& log() const { return log_; }
  // The sides of trade `trade_id`, for a reader that read its update from log(): the tape keeps
  // the sides of the newest log_capacity / 2 trades, and a log window of that capacity holds
  // fewer (a fill is at least a trade, a position and a balance update). Zero sides for a trade
  // not on the tape (restored from history, or older than the log).
  TradeSides logged_trade_sides(uint64_t trade_id) const;
  // The log positions whose effects the published views already show: a worker that fans out
  // up to here builds frames from views at least as new as the updates (it never pushes an
  // account's old view for a new update it read mid-batch).
  uint64_t log_published() const { return log_published_.load(std::memory_order_acquire); }
  // Markets that exist, as a bit set the readers may load at any time.
  bool market_exists(MarketId m) const {
    return (exists_[m >> 6].load(std::memory_order_acquire) >> (m & 63)) & 1;
  }

 private:
  struct MarketState {
    MarketView view;
    // The last kHistoryTrades trades in a ring written twice (trade i at i % K and i % K + K,
    // K = kHistoryTrades), so that they are always one contiguous window (trade_window()) and a
    // trade moves nothing (trimming a vector moved 11 KB, 30 µs on cold lines). Sized at the
    // market's first trade.
    std::vector<TradeRecord> trade_ring;
    uint64_t trade_n = 0;  // trades ever pushed
    void push_trade(const TradeRecord& r) {
      if (trade_ring.empty()) trade_ring.resize(2 * kHistoryTrades);
      const size_t i = trade_n++ % kHistoryTrades;
      trade_ring[i] = r;
      trade_ring[i + kHistoryTrades] = r;
    }
    std::span<const TradeRecord> trade_window() const {
      const size_t w = static_cast<size_t>(std::min<uint64_t>(trade_n, kHistoryTrades));
      if (w == 0) return {};
      return {trade_ring.data() + (trade_n - w) % kHistoryTrades, w};
    }
    std::array<std::vector<Candle>, kResolutions> candles;
    std::vector<FundingRecord> fundings;
    uint64_t history_epoch = 1;  // +1 when restore_history replaces the arrays
    bool changed = false, history_changed = false;
  };
  struct AccountState {
    AccountView view;  // orders / trades kept in the containers below while writing
    // The open orders: up to orders_in_view in `small` (as the views show them), more in
    // `orders` (in index order: a rebuild is a copy; nodes recycled on the apply thread; 2 KB
    // nodes hold ~18 orders each, where absl's default 256 bytes held 2-3: wide_btree.hpp).
    // The other one is empty; publish_account moves them across the limit.
    bool big = false;
    SmallOrders small;
    WideBtreeMap<OrderIndex, OrderView, std::less<OrderIndex>,
                 CachedAllocator<std::pair<const OrderIndex, OrderView>>, 2048>
        orders;
    size_t open_orders() const { return big ? orders.size() : small.size(); }
    // Its trade log's last chunks, oldest first, the newest being appended to (null ones unused),
    // and the chunk dropped last: reused for the next one once no view holds it.
    std::array<std::shared_ptr<TradeChunk>, TradeRange::kParts> trade_chunks;
    std::shared_ptr<TradeChunk> trade_spare;
    bool changed = false;
    bool warm_listed = false;  // in recent_accounts_
    bool orders_dirty = false;
    int64_t orders_built_ns = 0;
    std::shared_ptr<const OrderList> orders_list;  // a big list's last version
    std::vector<OrderIndex> orders_changed;        // its orders changed since (OrderList::rebuild)
  };
  AccountState& account(AccountIndex a);
  AccountState& make_account(AccountIndex a);  // account()'s first look at `a`: astate_
  AccountState* find_account(AccountIndex a);  // nullptr: neither a state nor a published view
  void touch(AccountState& s);
  void touch(MarketState& m);
  void on_trade(const StateUpdate& u);
  void record_trade(const StateUpdate& u, const TradeSides& sides);
  PositionView& position_entry(AccountState& s, MarketId m);  // made when missing
  void on_market(const StateUpdate& u);
  void on_funding(const StateUpdate& u);
  void on_position(const StateUpdate& u);
  void on_api_key(const StateUpdate& u);
  void on_result(const StateUpdate& u);
  void on_order(const StateUpdate& u);
  void publish_account(AccountState& s, int64_t now_ns, bool force);
  void append_trade(AccountState& s, const TradeRecord& rec);
  static size_t next_chunk_capacity(const TradeChunk* newest);  // newest null: the first
  static bool spare_chunk_ready(const std::shared_ptr<TradeChunk>& spare, size_t cap);
  bool orders_due(const AccountState& s, int64_t now_ns) const;
  void publish_history(MarketState& m);
  void seed_funding(const Engine& e, const Market& m, int64_t now_ns);
  void refresh_daily(MarketState& m);

  ReadSideConfig cfg_;
  std::vector<std::unique_ptr<Published<MarketView>>> markets_;
  std::vector<std::unique_ptr<Published<MarketHistory>>> histories_;
  std::vector<MarketState> mstate_;
  AccountTable accounts_;
  absl::flat_hash_map<AccountIndex, std::unique_ptr<AccountState>> astate_;
  // account()'s direct-mapped cache in front of astate_ (by the index's low bits: consecutive
  // indices never collide): a hit is one compare where the hash lookup was ~116 instructions
  // (callgrind, bench_read_side), once or twice per update. States are never erased, so a cached
  // pointer stays valid. `key` is the index + 1 (0: empty).
  struct CachedAccount {
    AccountIndex key = 0;
    AccountState* s = nullptr;
  };
  static constexpr size_t kAccountCache = 1024;  // 16 KB
  std::array<CachedAccount, kAccountCache> account_cache_{};
  std::vector<AccountState*> accounts_changed_;
  // The accounts and markets published last (keep_warm), a ring each.
  // The accounts: the last kWarmAccounts distinct ones, oldest overwritten first; keep_warm reads
  // kWarmSlice of them per call, in turn.
  static constexpr size_t kWarmAccounts = 256, kWarmSlice = 32;
  std::array<AccountState*, kWarmAccounts> recent_accounts_{};
  std::array<int16_t, 4> recent_markets_{-1, -1, -1, -1};
  uint32_t recent_account_pos_ = 0, recent_market_pos_ = 0, warm_cursor_ = 0;
  std::vector<AccountState*> orders_pending_;  // order lists held back by the interval
  // The small lists' chunks, and the count of publications that stamps them (SmallOrders).
  SmallChunkPool chunk_pool_;
  uint64_t small_gen_ = 1;
  SmallOrders::Ctx small_ctx() { return {chunk_pool_, accounts_.safe_below_seen(), small_gen_}; }
  void to_small(AccountState& s);  // the orders moved from the tree to the small list
  void to_big(AccountState& s);
  std::vector<MarketId> markets_changed_, history_changed_;
  BroadcastLog<StateUpdate> log_;
  std::atomic<uint64_t> log_published_{0};
  BroadcastLog<OrderView> closed_log_{kClosedOrders};   // every order that left, oldest first
  std::atomic<uint64_t> closed_published_{0};           // its head as of the last publish
  BroadcastLog<MoneyRecord> money_log_{kMoneyRecords};  // oldest first
  std::atomic<uint64_t> money_published_{0};            // its head as of the last publish
  MoneyRecord transfer_out_{};  // a transfer's sending side, until its receiving side follows
  uint64_t money_count_ = 0;
  void on_money(const StateUpdate& u);
  struct TapeEntry {
    uint64_t trade_id;
    TradeSides sides;
  };
  BroadcastLog<TapeEntry> sides_tape_;      // every live trade's sides, in trade id order
  std::atomic<uint64_t> tape_first_id_{0};  // the trade id at tape position 0, + 1 (0: empty)
  std::vector<std::unique_ptr<BroadcastLog<TradeRecord>>> trade_logs_;  // per market
  // Per market: the trade log's head as of the last publish (recent_trades reads no further, so
  // a trade shows there with its tx's views, not before).
  std::unique_ptr<std::atomic<uint64_t>[]> trade_published_;
  bool history_urgent_ = false;  // a candle closed: publish the history with this batch
  std::atomic<uint64_t> exists_[4] = {};
  int64_t last_history_ns_ = 0;
};

}  // namespace tachyon::pipe
