#pragma once
// The naive reference: the same rules as the engine (docs/ARCHITECTURE.md "Engine rules"), written
// the obvious way with std::map and std::deque, no pools, no caches, no aggregates: open-order
// totals and margin are recomputed from scratch every time. Slow on purpose, easy to read.
// Orders in waiting (stop-loss / take-profit, grouped children, TWAPs) sit in the same order map,
// marked `pending`; funding (reference_risk.cpp) and market status are modeled from the rules in
// docs/ARCHITECTURE.md, not from the engine's code. Not modeled (the random stream never makes
// them): circuit breakers, the dead man's switch (CancelAllOrders time in force 1 and 2),
// UpdateMarket after genesis.
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "tachyon/core/reject.hpp"
#include "tachyon/engine/engine.hpp"
#include "tachyon/engine/tx.hpp"

namespace tachyon::testing {

struct RefFill {
  OrderIndex maker_order, taker_order;
  AccountIndex maker, taker;
  Ticks price;
  Lots size;
  Usdc maker_fee, taker_fee;
  bool operator==(const RefFill&) const = default;
};

class ReferenceEngine {
 public:
  explicit ReferenceEngine(const EngineConfig& cfg);
  TxResult execute(const Tx& tx, std::vector<RefFill>& fills);
  // A canonical digest, computed the same way from the fast engine by canonical_digest(Engine).
  uint64_t digest() const;
  Ticks best(MarketId m, bool is_ask) const;
  uint64_t funding_payments() const { return funding_payments_; }

  struct Ord {
    OrderIndex id;
    uint64_t coi;
    AccountIndex account;
    MarketId market;
    bool is_ask;
    Ticks price;
    Lots remaining, initial;
    int64_t expiry_ms;
    TimeInForce tif;
    OrderType type;
    bool reduce_only;
    StpMode stp;
    // Orders in waiting (outside the book): 1 a stop-loss / take-profit for its trigger, 2 a
    // grouped child for its primary, 3 a TWAP between slices (`trigger`: its next slice's time).
    uint8_t pending = 0;
    Ticks trigger = 0;
    OrderIndex parent = 0, child = 0, sibling = 0;  // grouped orders: links by order index
  };
  struct Pos {
    Lots size = 0;
    Usdc entry = 0, realized = 0;
    Bps4 imf = 0;
    bool iso = false;  // isolated margin: `alloc` is the position's own collateral
    Usdc alloc = 0;
    Usdc funding = 0;  // funding paid (received: negative), cumulative
  };
  struct Key {
    std::array<uint8_t, 32> pubkey{};
    int64_t nonce = 0;
    uint32_t version = 0;
  };
  struct Acc {
    AccountIndex master;
    Usdc collateral = 0;
    std::array<uint8_t, 20> l1{};
    std::map<MarketId, Pos> pos;
    std::map<uint8_t, Key> keys;
  };
  struct Mkt {
    bool exists = false;
    MarketParams p{};
    int64_t mult = 1;
    Ticks index = 0, mark = 0, last = 0;
    uint64_t trades = 0;
    Lots vol_base = 0;
    Usdc vol_quote = 0;
    std::map<Ticks, std::deque<OrderIndex>> bids, asks;  // bids: best = last; asks: best = first
    // Funding: premium samples since the last payment, the next payment's time, the last one.
    int64_t premium_sum = 0, premium_samples = 0, next_funding_ms = 0;
    int64_t last_rate = 0, last_funding_ms = 0;
  };

 private:
  Reject auth(const Tx& tx, Acc*& a, Key*& k);
  Reject op_auth(const Tx& tx) const;
  Reject place(const Tx& tx, OrderIndex& out, std::vector<RefFill>& fills);
  Reject cancel(const Tx& tx, OrderIndex& out);
  Reject cancel_all(const Tx& tx);
  Reject modify(const Tx& tx, OrderIndex& out, std::vector<RefFill>& fills);
  Reject transfer_or_withdraw(const Tx& tx);
  Reject leverage(const Tx& tx);
  Reject update_margin(const Tx& tx);
  Reject account_tx(const Tx& tx);
  Reject operator_tx(const Tx& tx);
  Reject funding_tick(const Tx& tx);
  Reject grouped(const Tx& tx, OrderIndex& out, std::vector<RefFill>& fills);
  // The order checks after authentication, in the documented precedence; `extra` more orders the
  // same tx places need pool room too.
  Reject check_new(AccountIndex ai, const CreateOrderTx& o, size_t extra, Lots& size) const;
  // A new waiting order (trigger, grouped child, TWAP) with the next order index.
  OrderIndex wait(AccountIndex ai, const CreateOrderTx& o, uint8_t pending, OrderIndex parent);
  bool reached(const Ord& o) const;
  void fire(OrderIndex id, std::vector<RefFill>& fills);
  void fire_twaps(std::vector<RefFill>& fills);
  void twap_slice(OrderIndex id, std::vector<RefFill>& fills);
  void arm(OrderIndex id);
  Ticks protection(const Mkt& m, bool is_ask, Ticks price) const;
  int64_t premium(const Mkt& m) const;
  int64_t funding_rate(const Mkt& m) const;
  bool margin_refuses(AccountIndex ai, MarketId mid, bool is_ask, Lots size) const;
  int resting_in(MarketId mid) const;

  void match(Ord taker, Ticks bound, std::vector<RefFill>& fills);
  void settle(AccountIndex ai, Mkt& m, MarketId mid, bool is_buy, Lots q, Ticks px, Usdc fee);
  void rest(const Ord& o);
  void drop(OrderIndex id);    // out of the book / the waiting orders, nothing else
  void remove(OrderIndex id);  // gone for good: drop, then what its group does (gone)
  void gone(Ord o);            // an OCO partner goes; a primary's children are armed or go
  const Ord* find(AccountIndex a, MarketId m, uint64_t index) const;
  Lots open_size(AccountIndex a, MarketId m, bool is_ask) const;
  int open_count(AccountIndex a, MarketId m) const;
  Lots ro_room(const Acc& a, MarketId m, bool is_ask) const;
  // Σ over markets: tav, imr (orders on their worst side), with optional extra open size. An
  // isolated position adds only what its orders need beyond the position (its own margin covers
  // the position), and none of its PnL.
  void margin(AccountIndex ai, MarketId xm, Lots xbuy, Lots xsell, __int128& tav, __int128& imr,
              __int128& imr_plain) const;
  Usdc free_collateral(AccountIndex ai) const;
  // The liquidation waterfall, naively: after every tx, rounds over every account
  // (tests/support/reference_risk.cpp).
  void refresh_marks();
  void settle_risk(std::vector<RefFill>& fills);
  // Health figures of a margin bucket (kAllMarkets: the cross positions, else one isolated
  // position): 0 healthy, 2 partial, 3 full liquidation.
  int health(AccountIndex ai, __int128& tav, __int128& mmr, MarketId bucket = kAllMarkets) const;
  void liquidate_partial(AccountIndex ai, MarketId bucket, std::vector<RefFill>& fills);
  void liquidate_full(AccountIndex ai, MarketId bucket, std::vector<RefFill>& fills);
  void drop_orders(AccountIndex ai, MarketId bucket);
  void cover(AccountIndex ai, __int128 deficit);  // the insurance fund, then the fee account
  void end_isolated(AccountIndex ai, MarketId mid);
  // The isolated position being liquidated keeps its margin when it closes, until end_isolated.
  bool iso_liq_ = false;
  AccountIndex iso_liq_account_ = 0;
  MarketId iso_liq_market_ = 0;
  void move(AccountIndex from, AccountIndex to, MarketId mid, Lots from_delta, Ticks px,
            std::vector<RefFill>& fills);
  // ADL rankings of the current tx by market x side: accounts in rank order, and the next one.
  std::map<int, std::pair<std::vector<AccountIndex>, size_t>> adl_;
  OrderIndex liq_order_ = 0;  // the liquidation IOC being matched, and its zero price
  Ticks liq_zp_ = 0;

  EngineConfig cfg_;
  int64_t now_ms_ = 0;
  std::map<MarketId, Mkt> mkts_;
  std::map<AccountIndex, Acc> accs_;
  std::vector<AccountIndex> created_;  // creation order
  std::map<OrderIndex, Ord> orders_;   // resting and waiting
  std::vector<OrderIndex> due_;        // trigger orders the mark reached: fire in the risk pass
  OrderIndex next_order_ = kFirstOrderIndex;
  AccountIndex next_sub_ = kFirstSubAccountIndex;
  uint64_t next_trade_ = 1;
  int64_t op_nonce_ = 0;
  Usdc deposits_ = 0, withdrawals_ = 0;
  uint64_t funding_payments_ = 0;
};

// The same canonical digest over the fast engine's state.
uint64_t canonical_digest(const Engine& e);

}  // namespace tachyon::testing
