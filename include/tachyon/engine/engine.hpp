#pragma once
// The deterministic state machine (shared/design/ENGINE.md). One door: execute(). No threads, no
// I/O, no clock reads: time, sequence number and block come in the tx. Owned by one thread.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

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
  uint32_t max_orders = 1u << 20;         // resting orders, all markets (the pool)
  uint32_t expected_accounts = 1u << 16;  // reserved up front
  uint32_t levels_per_side = 4096;        // reserved per book side
  AccountIndex fee_account = 0;           // receives trading and transfer fees
  AccountIndex insurance_account = 1;     // the insurance fund (liquidity pool)
};

struct TxResult {
  Reject reject = Reject::kOk;
  OrderIndex order_index = 0;  // the order a CreateOrder made, or the one a cancel/modify touched
  bool ok() const { return reject == Reject::kOk; }
};

using AccountVector = std::vector<Account, HugePageAllocator<Account>>;

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
  Status load(ByteSource& in, bool validate_after = true);
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
  MarginInfo margin(const Account& a) const;
  int64_t operator_next_nonce() const { return operator_nonce_; }
  Usdc total_deposits() const { return total_deposits_; }
  Usdc total_withdrawals() const { return total_withdrawals_; }
  const EngineConfig& config() const { return cfg_; }
  OrderIndex next_order_index() const { return next_order_index_; }
  AccountIndex next_sub_account() const { return next_sub_account_; }
  uint64_t next_trade_id() const { return next_trade_id_; }

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
  Reject cancel_order(const Tx& tx, Ctx& c, OrderIndex& out);
  Reject cancel_all(const Tx& tx, Ctx& c);
  Reject modify_order(const Tx& tx, Ctx& c, OrderIndex& out);
  Reject update_leverage(const Tx& tx, Ctx& c);

  // shared checks, in the documented precedence
  Reject check_operator(const Tx& tx) const;
  Reject authenticate(const Tx& tx, Ctx& c, Account*& acct, ApiKey*& key);
  static void consume_nonce(Ctx& c, ApiKey& key, const Tx& tx);

  // orders
  Reject check_price_band(const Market& m, bool is_ask, Ticks price) const;
  Reject check_order_margin(const Account& a, const Market& m, bool is_ask, Lots size) const;
  // Margin with extra open size on one market (may be negative: a modify that shrinks).
  MarginInfo margin_with(const Account& a, MarketId m, Lots extra_buy, Lots extra_sell,
                         __int128* imr_without) const;
  void match_and_rest(Ctx& c, Market& m, Account& taker, uint32_t slot, Ticks bound,
                      bool is_market);
  void fill(Ctx& c, Market& m, Account& taker, uint32_t taker_slot, uint32_t maker_slot, Lots q);
  void apply_fill(Ctx& c, Market& m, Account& a, bool is_buy, Lots q, Ticks price, Usdc fee);
  void rest(Ctx& c, Market& m, Account& a, uint32_t slot);
  void unrest(Market& m, Account& a, uint32_t slot);
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
  void emit_position(Ctx& c, const Account& a, const Position& p);

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
};

}  // namespace tachyon
