#pragma once
// The deterministic state machine (shared/design/ENGINE.md). One door: execute(). No threads, no
// I/O, no clock reads: time, sequence number and block come in the tx. Owned by one thread.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <absl/container/btree_set.h>
#include <absl/container/flat_hash_map.h>

#include "tachyon/core/bytes.hpp"
#include "tachyon/core/reject.hpp"
#include "tachyon/core/status.hpp"
#include "tachyon/engine/account.hpp"
#include "tachyon/engine/market.hpp"
#include "tachyon/engine/order.hpp"
#include "tachyon/engine/order_index_map.hpp"
#include "tachyon/engine/tx.hpp"
#include "tachyon/engine/update.hpp"

namespace tachyon {

struct EngineConfig {
  uint32_t max_orders = 1u << 20;           // resting orders, all markets (the pool)
  uint32_t expected_accounts = 1u << 16;    // reserved up front
  uint32_t levels_per_side = 4096;          // reserved per book side
  AccountIndex fee_account = 0;             // receives trading and transfer fees
  AccountIndex insurance_account = 1;       // the insurance fund (liquidity pool)
  int64_t funding_interval_ms = 3'600'000;  // payments at multiples of this (tx time)
  Usdc impact_notional = 1'000'000'000;     // impact bid/ask: average price to fill 1000 USDC
  Bps4 liquidation_fee = 100;               // up to 1% of a better liquidation fill → insurance
};

// Engine-wide risk figures (tests, benchmarks, metrics).
struct RiskStats {
  uint64_t partial_liquidations = 0;
  uint64_t full_liquidations = 0;
  uint64_t takeovers = 0;      // positions the insurance fund took over
  uint64_t deleverages = 0;    // ADL fills
  uint64_t margin_checks = 0;  // accounts whose margin the risk pass recomputed
  uint64_t funding_payments = 0;
  Usdc deficit_covered = 0;  // bankrupt balances the insurance fund paid
};

struct TxResult {
  Reject reject = Reject::kOk;
  OrderIndex order_index = 0;  // the order a CreateOrder made, or the one a cancel/modify touched
  bool ok() const { return reject == Reject::kOk; }
};

using AccountVector = std::vector<Account, HugePageAllocator<Account>>;

// Where each account's own state lies in a snapshot that Engine::load() decoded, so that it can be
// read again, one account at a time, after the engine has moved on: the read side builds an
// account's view from it on the account's first use instead of building every view at start
// (pipe::AccountTable). It points into the snapshot's bytes, which must stay mapped and unchanged
// while it is used: `owner` keeps them (the caller's mapping). Immutable once load() returns, so
// any thread may read it.
class SavedAccounts {
 public:
  size_t size() const { return index_.size(); }  // accounts, in the snapshot's (creation) order
  AccountIndex index_at(size_t pos) const { return index_[pos]; }
  size_t position(AccountIndex a) const;  // SIZE_MAX when the snapshot has no such account
  // Account `pos` as saved: index, master, collateral, address, positions and keys in `a` (its
  // order list and derived fields unset), and its open orders, in its list order, in `orders`
  // (with their pending kind, trigger price and group parent).
  void decode(size_t pos, Account& a, std::vector<Order>& orders) const;
  std::array<uint8_t, 20> l1_address(size_t pos) const;

  std::shared_ptr<const void> owner;

 private:
  friend class Engine;
  const uint8_t* body_ = nullptr;
  size_t len_ = 0;
  bool eng3_ = false;
  bool sorted_ = true;  // index_ ascending (accounts made in index order): by_index_ unused
  std::vector<AccountIndex> index_;
  std::vector<std::pair<AccountIndex, uint32_t>> by_index_;  // sorted, when index_ is not
  std::vector<uint64_t> record_;      // per account: its record's offset in the body
  std::vector<uint32_t> list_begin_;  // per account + 1: its first entry in entry_
  std::vector<uint64_t> entry_;       // per listed order: its SavedOrder's offset | pending << 56
  std::vector<std::pair<OrderIndex, OrderIndex>> parents_;  // grouped orders: id -> parent
};

class Engine {
 public:
  explicit Engine(const EngineConfig& cfg = {});
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  TxResult execute(const Tx& tx, UpdateSink& sink);

  uint64_t state_hash() const;
  // The whole state, as a byte stream (snapshots). load() replaces this engine's state with what
  // save() wrote; a short or inconsistent stream is refused and leaves a message. A caller that
  // verifies the loaded state hash against the saved one may skip the full validate() pass.
  void save(ByteSink& out) const;
  // `saved` (optional) receives where each account lies in the bytes (SavedAccounts).
  Status load(ByteSource& in, bool validate_after = true, SavedAccounts* saved = nullptr);
  uint64_t last_seq() const { return last_seq_; }
  uint64_t last_block() const { return last_block_; }
  // Empty when every invariant holds, else a description of the first one broken.
  std::string validate() const;

  // Read access (tests, tools; the api reads snapshots instead).
  const Market* market(MarketId m) const { return markets_[m].exists ? &markets_[m] : nullptr; }
  const Account* account(AccountIndex a) const;
  const Order* order(OrderIndex id) const;
  const OrderPool& orders() const { return pool_; }
  const AccountVector& accounts() const { return accounts_; }
  MarginInfo margin(const Account& a) const;  // the cross bucket
  // An isolated position's own bucket: its allocated margin and its position.
  MarginInfo isolated(const Position& p) const;
  // The cross bucket or any isolated one below maintenance margin.
  bool below_maintenance(const Account& a) const;
  bool isolated_below_maintenance(const Account& a) const;  // any isolated position
  int64_t operator_next_nonce() const { return operator_nonce_; }
  Usdc total_deposits() const { return total_deposits_; }
  Usdc total_withdrawals() const { return total_withdrawals_; }
  const EngineConfig& config() const { return cfg_; }
  OrderIndex next_order_index() const { return next_order_index_; }
  AccountIndex next_sub_account() const { return next_sub_account_; }
  uint64_t next_trade_id() const { return next_trade_id_; }
  const RiskStats& risk_stats() const { return risk_stats_; }
  // The rate the next funding payment of market m would have from the samples so far (1e-9).
  int64_t funding_estimate(MarketId m) const;
  // Impact-price premium of market m right now (1e-9 of the index); what a tick would sample.
  int64_t premium_now(MarketId m) const;

 private:
  struct Ctx;  // per-tx context: sink, time, touched markets

  // dispatch targets
  Reject deposit(const Tx& tx, Ctx& c);
  Reject create_market(const Tx& tx, Ctx& c);
  Reject update_market(const Tx& tx, Ctx& c);
  Reject set_index_price(const Tx& tx, Ctx& c);
  Reject change_pub_key(const Tx& tx, Ctx& c);
  Reject create_sub_account(const Tx& tx, Ctx& c);
  Reject transfer(const Tx& tx, Ctx& c);
  Reject withdraw(const Tx& tx, Ctx& c);
  Reject create_order(const Tx& tx, Ctx& c, OrderIndex& out);
  Reject create_grouped(const Tx& tx, Ctx& c, OrderIndex& out);
  Reject check_new_order(const Account& a, const CreateOrderTx& o, int64_t now_ms,
                         uint32_t extra_slots, Lots& size) const;
  uint32_t start_order(Account& a, const CreateOrderTx& o, Lots size);
  void run_order(Ctx& c, Market& m, Account& a, uint32_t slot);
  // Grouped orders: what happens to an order's group when it leaves (engine/grouped.cpp).
  void order_gone(Ctx& c, uint32_t slot, RemoveReason why);
  void cancel_linked(Ctx& c, OrderIndex id, RemoveReason why);
  void arm_child(Ctx& c, OrderIndex id);
  void cancel_account_orders(Ctx& c, uint32_t account_slot, MarketId only, RemoveReason why);
  Reject cancel_order(const Tx& tx, Ctx& c, OrderIndex& out);
  Reject cancel_all(const Tx& tx, Ctx& c);
  Reject modify_order(const Tx& tx, Ctx& c, OrderIndex& out);
  Reject update_leverage(const Tx& tx, Ctx& c);
  Reject update_margin(const Tx& tx, Ctx& c);
  Reject funding_tick(const Tx& tx, Ctx& c);
  Reject set_market_status(const Tx& tx, Ctx& c);

  // risk (engine/risk.cpp, engine/liquidation.cpp)
  void settle_funding(Ctx& c, Market& m, int64_t rate);
  void emit_funding(Ctx& c, const Market& m, bool settled, Usdc paid, Usdc residue);
  void fire_scheduled_cancels(Ctx& c);
  void clear_breakers(Ctx& c);
  void breaker_on_mark(Ctx& c, Market& m, Ticks old_mark);
  void emit_market(Ctx& c, const Market& m);
  void emit_risk(Ctx& c, const Account& a, MarketId m, RiskEvent e, const MarginInfo& mi,
                 Usdc amount);
  void track_holder(Market& m, uint32_t account_slot, Position& p);
  void reindex(uint32_t account_slot, const MarginInfo& mi);
  void unindex(uint32_t account_slot);
  void settle_risk(Ctx& c);  // marks, then every account the tx may have made unhealthy
  void check_account(Ctx& c, uint32_t slot);
  // Liquidation of one margin bucket: kAllMarkets for the cross positions, else the isolated
  // position on that market.
  void liquidate_partial(Ctx& c, uint32_t slot, MarketId bucket);
  void liquidate_full(Ctx& c, uint32_t slot, MarketId bucket);
  MarginInfo bucket_margin(const Account& a, MarketId bucket) const;
  void start_liquidation(Ctx& c, uint32_t slot, MarketId bucket, RiskEvent event);
  void end_isolated_liquidation(Ctx& c, uint32_t slot, MarketId bucket);
  // Bad debt: the insurance fund pays what it has (never going negative), the fee account the
  // rest.
  void cover_deficit(Ctx& c, Account& a, Usdc deficit);
  // A closed (flat) isolated position's allocated margin goes back to cross collateral (a deficit
  // is covered first when `cover` is set: a liquidation's bad debt).
  void release_isolated(Ctx& c, Account& a, Position& p, bool cover);
  bool takeover(Ctx& c, Market& m, uint32_t slot, Ticks zp);
  void deleverage(Ctx& c, Market& m, uint32_t slot, Ticks zp);
  std::vector<std::pair<uint32_t, AccountIndex>> adl_ranking(const Market& m, bool longs) const;
  void move_position(Ctx& c, Market& m, Account& from, Account& to, Lots from_delta, Ticks price,
                     TradeKind kind);
  Ticks zero_price(const Market& m, const Position& p, const MarginInfo& mi) const;
  void rebuild_risk_indexes();
  // trigger orders (engine/triggers.cpp)
  OrderIndex place_trigger(Ctx& c, Account& a, Market& m, const CreateOrderTx& o,
                           uint8_t pending = kWaitingTrigger, OrderIndex parent = 0,
                           OrderIndex sibling = 0);
  void link_pending(Market& m, Account& a, uint32_t slot);
  void unlink_pending(Market& m, Account& a, uint32_t slot);
  void remove_pending(Ctx& c, uint32_t slot, RemoveReason why);
  void collect_triggers(Ctx& c, Market& m);
  void fire_trigger(Ctx& c, uint32_t slot);
  Reject modify_pending(const Tx& tx, Ctx& c, uint32_t slot);
  // TWAP orders (engine/triggers.cpp): placed waiting, a slice now and every kTwapSliceMs after
  OrderIndex place_twap(Ctx& c, Account& a, Market& m, const CreateOrderTx& o);
  void fire_twaps(Ctx& c);  // every slice due at the tx's time, oldest first
  void fire_twap(Ctx& c, uint32_t slot);

  // shared checks, in the documented precedence
  Reject check_operator(const Tx& tx) const;
  Reject authenticate(const Tx& tx, Ctx& c, Account*& acct, ApiKey*& key);
  static void consume_nonce(Ctx& c, ApiKey& key, const Tx& tx);

  // orders
  Reject check_price_band(const Market& m, bool is_ask, Ticks price) const;
  // A market-like order's bound: its own price, but never further than the market's price
  // protection from the mark.
  Ticks protection_bound(const Market& m, bool is_ask, Ticks price) const;
  Reject check_order_margin(const Account& a, const Market& m, bool is_ask, Lots size) const;
  // Margin with extra open size on one market (may be negative: a modify that shrinks).
  MarginInfo margin_with(const Account& a, MarketId m, Lots extra_buy, Lots extra_sell,
                         __int128* imr_without) const;
  void match_and_rest(Ctx& c, Market& m, Account& taker, uint32_t slot, Ticks bound,
                      bool is_market);
  void fill(Ctx& c, Market& m, Account& taker, uint32_t taker_slot, uint32_t maker_slot, Lots q);
  // A liquidation fill better than the zero price pays part of the improvement to the insurance
  // fund.
  void pay_liquidation_fee(Ctx& c, Market& m, Account& taker, bool taker_is_ask, Lots q,
                           Ticks price, __int128 notional);
  // One side of a fill, fee included. Returns the change of what the account holds (collateral +
  // isolated margin - cost basis, the sum validate() checks) modulo 2^64: the trade's cash flow
  // less the fee.
  uint64_t apply_fill(Ctx& c, Market& m, Account& a, bool is_buy, Lots q, Ticks price, Usdc fee);
  // The arithmetic of one side of a fill, without emitting: returns the open-interest change.
  static Lots fill_position(const Market& m, Position& p, Usdc& collateral, bool is_buy, Lots q,
                            Ticks price);
  void rest(Ctx& c, Market& m, Account& a, uint32_t slot);
  // The resting order in `slot` leaves its book and its account's order list (emits nothing).
  void unlink_resting(Market& m, Account& a, uint32_t slot);
  void remove_order(Ctx& c, uint32_t slot, RemoveReason why);  // resting order leaves the book
  void finish_taker(Ctx& c, uint32_t slot, RemoveReason why);  // taker that did not rest
  void reduce_resting(Ctx& c, Market& m, uint32_t slot, Lots by, RemoveReason if_empty);
  void expire_orders(Ctx& c, int64_t now_ms);
  void update_mark(Ctx& c, Market& m);
  uint32_t find_order(const Account& a, MarketId m, uint64_t index) const;
  Lots reduce_only_room(const Account& a, MarketId m, bool is_ask) const;

  // emitters
  void emit_order(Ctx& c, UpdateType t, const Order& o, RemoveReason why = RemoveReason::kFilled);
  void emit_balance(Ctx& c, const Account& a, Usdc delta, BalanceReason why);
  void flush_fills(Ctx& c);  // the updates a matching deferred (Ctx::Coalesce)
  void emit_position(Ctx& c, const Account& a, const Position& p);

  // snapshots (engine/snapshot.cpp): one writer and one reader per section, in stream order
  struct Loading;  // load()'s state while it reads one snapshot
  void save_accounts(ByteSink& out) const;
  void save_books(ByteSink& out) const;
  void save_pending(ByteSink& out) const;       // trigger orders, by market
  void save_outside_book(ByteSink& out) const;  // waiting children, TWAPs, group links
  void save_order_lists(ByteSink& out) const;
  Status load_accounts(Loading& ld);
  void start_prefault(Loading& ld, uint64_t n_accounts);
  Status index_accounts();
  void index_saved(Loading& ld);
  Status load_markets(Loading& ld);
  Status load_market(Loading& ld);
  Status load_level(Loading& ld, Market& m, int side);
  Status load_pending(Loading& ld);
  Status load_waiting(Loading& ld, uint8_t kind, const std::string& what);
  Status load_links(Loading& ld);
  Status load_order_lists(Loading& ld);
  Status link_order_lists(Loading& ld, const std::vector<OrderIndex>& ids);

  // validate() (engine/state.cpp), one part of the state each, in validate()'s order: empty
  // when it holds, else what is broken
  std::string validate_books(uint64_t& resting) const;
  std::string validate_level(const Market& m, int side, size_t i, uint32_t& in_book) const;
  std::string validate_pending(uint64_t& pending) const;
  std::string validate_outside_book() const;
  std::string validate_positions() const;
  std::string validate_account_orders() const;

  static constexpr uint32_t kFeeAccountSlot = 0;  // created first, at genesis
  Account* find_account(AccountIndex a);
  Account& create_account(Ctx& c, AccountIndex index, AccountIndex master,
                          const std::array<uint8_t, 20>& l1 = {});

  EngineConfig cfg_;
  std::array<Market, kMaxMarkets> markets_;
  AccountVector accounts_;  // in creation order
  absl::flat_hash_map<AccountIndex, uint32_t, absl::Hash<AccountIndex>, std::equal_to<AccountIndex>,
                      HugePageAllocator<std::pair<const AccountIndex, uint32_t>>>
      account_slot_;
  OrderPool pool_;
  ExpiryHeap expiries_;
  OrderIndexMap order_slot_;
  struct CoiKey {
    AccountIndex account;
    uint64_t coi;
    bool operator==(const CoiKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const CoiKey& k) {
      return H::combine(std::move(h), k.account, k.coi);
    }
  };
  absl::flat_hash_map<CoiKey, uint32_t, absl::Hash<CoiKey>, std::equal_to<CoiKey>,
                      HugePageAllocator<std::pair<const CoiKey, uint32_t>>>
      coi_slot_;
  OrderIndex next_order_index_ = kFirstOrderIndex;
  AccountIndex next_sub_account_ = kFirstSubAccountIndex;
  uint64_t next_trade_id_ = 1;
  int64_t operator_nonce_ = 0;
  Usdc total_deposits_ = 0;
  Usdc total_withdrawals_ = 0;
  uint64_t last_seq_ = 0;
  uint64_t last_block_ = 0;
  // Dead man's switches by deadline (derived from the accounts: rebuilt by load()).
  absl::btree_set<std::pair<int64_t, uint32_t>> scheduled_cancels_;
  // TWAP orders by the time of their next slice (derived from the orders: rebuilt by load()).
  absl::btree_set<std::pair<int64_t, OrderIndex>> twaps_;
  uint64_t breaker_markets_[4] = {0, 0, 0, 0};  // markets whose breaker is tripped (derived)
  RiskStats risk_stats_;
};

}  // namespace tachyon
