#pragma once
// StateUpdate: what the engine tells the world after each tx. Fixed-size, trivially copyable
// records (the codec frames them for the journal and the apply ring).
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tachyon/core/reject.hpp"
#include "tachyon/core/units.hpp"
#include "tachyon/engine/tx.hpp"

namespace tachyon {

enum class UpdateType : uint8_t {
  kTxResult = 1,
  kOrderAdded = 2,
  kOrderReduced = 3,  // partial fill or size change in place (priority kept)
  kOrderRemoved = 4,
  kTrade = 5,
  kPosition = 6,
  kBalance = 7,
  kMarkPrice = 8,
  kMarket = 9,    // created or parameters/status changed
  kAccount = 10,  // created (deposit or sub-account)
  kApiKey = 11,   // registered or rotated
  kFunding = 12,  // premium sampled or funding paid (per market)
  kRisk = 13,     // an account entered liquidation, was taken over or deleveraged
};

// Lighter's order statuses for why an order left the book.
enum class RemoveReason : uint8_t {
  kFilled = 0,
  kCanceled = 1,          // by the owner
  kExpired = 2,           // good-till-time reached
  kPostOnly = 3,          // canceled-post-only: would have crossed
  kIocRemainder = 4,      // canceled: IOC / market remainder
  kSelfTrade = 5,         // canceled-self-trade
  kReduceOnly = 6,        // canceled-reduce-only: nothing left to reduce
  kMarketProtection = 7,  // canceled: market order hit its price protection bound
  kModified = 8,          // left its level to be re-placed by ModifyOrder (same order index)
  kMarketHalted = 9,      // reserved for the circuit breaker
  kCancelAll = 10,
  kLiquidation = 11,         // canceled: the account is being liquidated
  kScheduledCancelAll = 12,  // the dead man's switch fired
  kTriggered = 13,           // a pending trigger order fired (it comes back as a live order)
  kMarginNotAllowed = 14,    // canceled-margin-not-allowed: a triggered order without margin
  kChild = 15,               // canceled-child: its primary left without a fill
  kOco = 16,                 // canceled-oco: the other order of its OCO pair fired or went
  kArmed = 17,               // a grouped child whose primary is done: it now waits for its trigger
};

enum class BalanceReason : uint8_t {
  kDeposit = 0,
  kWithdraw = 1,
  kTransferIn = 2,
  kTransferOut = 3,
  kFee = 4,
  kRealizedPnl = 5,
  kTrade = 6,
  kFunding = 7,          // funding payment (either way)
  kLiquidationFee = 8,   // liquidated account → insurance fund
  kInsurance = 9,        // insurance fund covers a bankrupt account's deficit
  kIsolatedMargin = 10,  // moved between cross collateral and an isolated position's margin
};

// What kind of trade: a match in the book, or a risk transfer of the liquidation waterfall.
enum class TradeKind : uint8_t {
  kTrade = 0,
  kLiquidation = 1,  // a liquidation IOC order matched in the book (taker = liquidated account)
  kTakeover = 2,     // the insurance fund took the position over at the zero price
  kDeleverage = 3,   // ADL against an opposite position at the zero price
};

struct TxResultUpdate {
  uint64_t seq;
  AccountIndex account;
  OrderIndex order_index;  // order created or touched, 0 if none
  Reject reject;
  TxType type;
  uint8_t api_key_index;
  int64_t next_nonce;  // the signer key's next nonce when this tx consumed one, else -1
  uint64_t block;
};

struct OrderUpdate {
  OrderIndex order_index;
  uint64_t client_order_index;
  AccountIndex account;
  Ticks price;
  Lots remaining;  // after the change
  Lots initial;
  int64_t expiry_ms;
  MarketId market;
  uint8_t is_ask;
  OrderType type;
  TimeInForce tif;
  RemoveReason reason;  // kOrderRemoved only
  uint8_t reduce_only;
  uint8_t pending;      // 1 waits for the mark, 2 for its primary (grouped): not in the book
  Ticks trigger_price;  // 0 = none
  // Grouped orders (0 = none): a child's primary, a primary's children (the second only in an
  // OTOCO), the other order of an OCO pair.
  OrderIndex parent;
  OrderIndex child;
  OrderIndex child2;
  OrderIndex sibling;
  uint64_t block;  // the block of the tx that made this change
};

struct TradeUpdate {
  uint64_t trade_id;
  OrderIndex maker_order;
  OrderIndex taker_order;
  AccountIndex maker;
  AccountIndex taker;
  Ticks price;
  Lots size;
  Usdc maker_fee;
  Usdc taker_fee;
  MarketId market;
  uint8_t taker_is_ask;
  TradeKind kind;
  uint64_t maker_client_order_index;  // 0 = none (and for takeovers and deleverages)
  uint64_t taker_client_order_index;
  uint64_t block;  // the block of the tx that made the trade
};

struct PositionUpdate {
  AccountIndex account;
  Lots size;            // signed
  Usdc entry_notional;  // signed cost basis
  Usdc realized_pnl;    // cumulative
  MarketId market;
  Bps4 imf;             // the account's initial margin fraction here, 0 = market default
  Usdc funding_paid;    // cumulative funding paid (> 0) or received (< 0) on this position
  Usdc allocated;       // isolated margin of the position (0 when cross)
  uint8_t margin_mode;  // 0 cross, 1 isolated
};

struct BalanceUpdate {
  AccountIndex account;
  Usdc collateral;  // after
  Usdc delta;
  BalanceReason reason;
};

struct MarkPriceUpdate {
  Ticks mark;
  Ticks index;
  Lots open_interest;
  MarketId market;
};

// Funding of one market: every premium sample updates the estimate of the next rate; a payment
// also sets rate/time (rates in 1e-9 per funding period).
struct FundingUpdate {
  int64_t estimate_rate;  // what the next payment's rate would be from the samples so far
  int64_t last_rate;      // the last payment's rate
  int64_t last_time_ms;   // when it was paid, 0 = never
  int64_t next_time_ms;   // when the next one is due
  Usdc paid;              // Σ paid by the paying side in the last payment
  Usdc residue;           // rounding residue of it, to the fee account
  Ticks mark;             // the mark price it was paid at
  MarketId market;
  uint8_t settled;  // 1: this update is a payment
};

enum class RiskEvent : uint8_t {
  kPartialLiquidation = 1,  // TAV < MMR: orders canceled, IOC liquidation orders sent
  kFullLiquidation = 2,     // positions taken over by the insurance fund / deleveraged
  kDeficitCovered = 3,      // the insurance fund paid a bankrupt account's negative balance
  kBreakerPostOnly = 4,     // circuit breaker: market post-only (account = 0)
  kBreakerHalted = 5,
  kBreakerCleared = 6,
};

struct RiskUpdate {
  AccountIndex account;
  int64_t tav;  // at the event (saturated to int64)
  int64_t mmr;
  Usdc amount;  // deficit covered, or 0
  MarketId market;
  RiskEvent event;
};

struct MarketUpdate {
  MarketId market;
  MarketStatus status;
  MarketParams params;  // all of them: the read side formats prices and sizes with its decimals
};

struct AccountUpdate {
  AccountIndex account;
  AccountIndex master;
  std::array<uint8_t, 20> l1_address;
};

struct ApiKeyUpdate {
  AccountIndex account;
  uint32_t version;
  uint8_t key_index;
  int64_t next_nonce;
  std::array<uint8_t, 32> pubkey;
};

struct StateUpdate {
  UpdateType type;
  // Where the tx came from, filled by the pipeline (not the engine, not the codec): the api
  // worker that submitted it and the low bits of its cookie, so readers can name the tx (its
  // hash) in trade pushes. The bytes were padding before.
  uint8_t origin_worker;
  uint16_t pad_;
  uint32_t origin_cookie;
  int64_t time_ns;
  union {
    TxResultUpdate result;
    OrderUpdate order;
    TradeUpdate trade;
    PositionUpdate position;
    BalanceUpdate balance;
    MarkPriceUpdate mark;
    MarketUpdate market;
    FundingUpdate funding;
    RiskUpdate risk;
    AccountUpdate account;
    ApiKeyUpdate api_key;
  };
  StateUpdate() { std::memset(static_cast<void*>(this), 0, sizeof(*this)); }
  // The engine's hot path: the emitter assigns the one union member it needs right after, so
  // zeroing the whole record (a rep stos per update) is wasted work.
  struct NoZero {};
  StateUpdate(UpdateType t, int64_t time, NoZero) : type(t), time_ns(time) {}
};
static_assert(std::is_trivially_copyable_v<StateUpdate>);

// Calls f(account) for each account whose state the update is about (none for market updates).
template <typename F>
void for_each_account_of(const StateUpdate& u, F&& f) {
  switch (u.type) {
    case UpdateType::kTxResult: f(u.result.account); break;
    case UpdateType::kOrderAdded:
    case UpdateType::kOrderReduced:
    case UpdateType::kOrderRemoved: f(u.order.account); break;
    case UpdateType::kTrade:
      f(u.trade.maker);
      f(u.trade.taker);
      break;
    case UpdateType::kPosition: f(u.position.account); break;
    case UpdateType::kBalance: f(u.balance.account); break;
    case UpdateType::kAccount:
      f(u.account.account);
      f(u.account.master);
      break;
    case UpdateType::kApiKey: f(u.api_key.account); break;
    case UpdateType::kRisk: f(u.risk.account); break;
    case UpdateType::kMarkPrice:
    case UpdateType::kMarket:
    case UpdateType::kFunding: break;
  }
}

// Receives updates on the sequencer thread, in order. Must not call back into the engine.
class UpdateSink {
 public:
  virtual ~UpdateSink() = default;
  virtual void on_update(const StateUpdate& u) = 0;
};

// Drops everything (replay, benchmarks of the engine alone).
class NullSink final : public UpdateSink {
 public:
  void on_update(const StateUpdate&) override {}
};

}  // namespace tachyon
