#pragma once
// Transactions: a fixed-size, trivially copyable header plus a union of payloads, tagged by
// Lighter's tx_type numbers (LIGHTER_API.md §3.1). Operator types use numbers Lighter does not.
// Time, sequence number and block come in the tx: the engine never reads a clock.
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tachyon/core/units.hpp"

namespace tachyon {

enum class TxType : uint8_t {
  kDeposit = 1,       // operator (L1 in Lighter)
  kCreateMarket = 3,  // operator
  kUpdateMarket = 4,  // operator: params and status (halt / resume)
  kChangePubKey = 8,
  kCreateSubAccount = 9,
  kTransfer = 12,
  kWithdraw = 13,
  kCreateOrder = 14,
  kCancelOrder = 15,
  kCancelAllOrders = 16,
  kModifyOrder = 17,
  kUpdateLeverage = 20,
  kCreateGroupedOrders = 28,
  kUpdateMargin = 29,
  kSetIndexPrice = 60,    // operator: oracle index price
  kFundingTick = 61,      // internal (the server's clock): premium sample, payment when due
  kSetMarketStatus = 62,  // operator: halt / resume / post-only / reduce-only by hand
};

bool is_operator_tx(TxType t);

enum class OrderType : uint8_t {
  kLimit = 0,
  kMarket = 1,
  kStopLoss = 2,
  kStopLossLimit = 3,
  kTakeProfit = 4,
  kTakeProfitLimit = 5,
  kTwap = 6,
  kTwapSub = 7,      // internal: one slice of a TWAP order, an IOC market order
  kLiquidation = 8,  // internal: the engine's IOC order for an account under maintenance margin
};
enum class TimeInForce : uint8_t { kIoc = 0, kGoodTillTime = 1, kPostOnly = 2 };
enum class StpMode : uint8_t {
  kExpireMaker = 0,
  kExpireTaker = 1,
  kExpireBoth = 2,
  kDecrement = 3
};
enum class MarketStatus : uint8_t { kActive = 0, kPostOnly = 1, kReduceOnly = 2, kHalted = 3 };

inline constexpr uint8_t kTxFlagSkipNonce = 1;  // Lighter attribute 4: nonce > last, not +1
// Set only by the server's own clock (never by a parser): an internal tx without a nonce.
inline constexpr uint8_t kTxFlagInternal = 2;

struct TxHeader {
  uint64_t seq;  // assigned by the sequencer
  uint64_t block;
  int64_t time_ns;        // sequencer time, realtime ns
  int64_t expired_at_ms;  // 0 = never
  AccountIndex account;   // signer's account (operator txs: ignored)
  int64_t nonce;
  uint32_t key_version;  // version of the api key the signature was verified against
  TxType type;
  uint8_t api_key_index;
  uint8_t flags;
  uint8_t pad_;
};
static_assert(sizeof(TxHeader) == 56);

// What the server's own clock submits (flag kTxFlagInternal); the admin port may send the same
// type signed by the operator, with the operator's nonce.
inline bool is_internal_tx(const TxHeader& h) { return (h.flags & kTxFlagInternal) != 0; }
static_assert(std::is_trivially_copyable_v<TxHeader>);

struct DepositTx {
  AccountIndex to_account;
  Usdc amount;
  std::array<uint8_t, 20> l1_address;  // owner address, kept for accountsByL1Address
  std::array<uint8_t, 32> pubkey;      // all zero: no key registered
  uint8_t api_key_index;
};

struct MarketParams {
  std::array<char, 16> symbol;  // NUL padded
  uint8_t size_decimals;
  uint8_t price_decimals;  // size_decimals + price_decimals <= 6
  MarketStatus status;
  uint8_t pad_;
  Ppm taker_fee_ppm;
  Ppm maker_fee_ppm;
  Bps4 default_imf;  // initial margin fraction, 1e-4
  Bps4 min_imf;
  Bps4 mmf;                // maintenance
  Bps4 cmf;                // close-out
  Bps4 price_band;         // limit price vs mark, fat-finger band
  Bps4 market_protection;  // default slippage bound of market orders vs mark
  int32_t pad2_;           // explicit: the struct is hashed as bytes
  Lots min_base_lots;
  Usdc min_quote_usdc;
  int32_t max_orders_per_account;  // open orders in this market per account
  uint32_t max_orders;             // open orders in this market (book capacity)
  // Funding (LIGHTER_API.md §5), in 1e-6 per funding period: 500 = 0.05%.
  int32_t funding_clamp_small;
  int32_t funding_clamp_big;
  int32_t interest_rate;
  // Circuit breaker: a mark move of more than breaker_band (1e-4) within breaker_window_s makes
  // the market post-only, a second one halts it; breaker_cooldown_s without one restores it.
  // breaker_band 0 = off.
  Bps4 breaker_band;
  int32_t breaker_window_s;
  int32_t breaker_cooldown_s;
};
static_assert(sizeof(MarketParams) == 104);

struct CreateMarketTx {
  MarketId market;
  MarketParams params;
  Ticks index_price;  // initial oracle index price
};

struct UpdateMarketTx {
  MarketId market;
  MarketParams params;  // symbol and decimals cannot change
};

struct SetIndexPriceTx {
  MarketId market;
  Ticks index_price;
};

struct SetMarketStatusTx {
  MarketId market;
  MarketStatus status;  // kActive also clears a tripped circuit breaker
};

struct FundingTickTx {
  MarketId market;  // kAllMarkets (255) = every market
};

struct ChangePubKeyTx {
  uint8_t target_key_index;
  std::array<uint8_t, 32> pubkey;
};

struct TransferTx {
  AccountIndex to_account;
  uint8_t asset;  // 3 = USDC
  Usdc amount;
  Usdc fee;  // to the fee account
  std::array<uint8_t, 32> memo;
};

struct WithdrawTx {
  uint8_t asset;
  Usdc amount;
};

struct CreateOrderTx {
  MarketId market;
  uint64_t client_order_index;  // 0 = none
  Lots base_amount;
  Ticks price;
  uint8_t is_ask;
  OrderType type;
  TimeInForce tif;
  uint8_t reduce_only;
  StpMode stp;
  Ticks trigger_price;
  int64_t order_expiry_ms;  // 0 for IOC
};

// Grouped orders (Lighter tx 28), one market:
//   OTO: a primary order and one trigger child that waits until the primary is done;
//   OCO: two trigger orders on the same side: when one fires or is canceled, the other is canceled;
//   OTOCO: a primary and an OCO pair of trigger children that wait for it.
// A child waits until its primary has left the book (filled, or canceled after a fill); a primary
// that leaves without any fill cancels its children (canceled-child).
enum class Grouping : uint8_t { kOto = 1, kOco = 2, kOtoco = 3 };

struct CreateGroupedOrdersTx {
  Grouping grouping;
  uint8_t count;  // 2 (OTO, OCO) or 3 (OTOCO)
  CreateOrderTx orders[3];
};

struct CancelOrderTx {
  MarketId market;
  uint64_t index;  // >= 2^48: order index, else client order index
};

// The dead man's switch: tif 0 cancels now; 1 schedules a cancel of every order at time_ms
// (now + 5 min .. now + 15 days, renewable by sending it again); 2 aborts the schedule.
inline constexpr uint8_t kCancelAllNow = 0;
inline constexpr uint8_t kCancelAllScheduled = 1;
inline constexpr uint8_t kCancelAllAbort = 2;
inline constexpr int64_t kCancelAllMinDelayMs = 5 * 60 * 1000;
inline constexpr int64_t kCancelAllMaxDelayMs = 15LL * 24 * 3600 * 1000;

struct CancelAllOrdersTx {
  uint8_t tif;
  MarketId market;  // 255 = all markets (tif 0 only; a schedule covers every market)
  int64_t time_ms;
};

struct ModifyOrderTx {
  MarketId market;
  uint64_t index;
  Lots base_amount;  // new remaining size
  Ticks price;
  Ticks trigger_price;
};

struct UpdateLeverageTx {
  MarketId market;
  Bps4 imf;
  uint8_t margin_mode;  // 0 cross, 1 isolated (only while the market holds no position or order)
};

// Moves USDC between the account's cross collateral and its isolated position on `market`.
inline constexpr uint8_t kMarginRemove = 0;
inline constexpr uint8_t kMarginAdd = 1;
struct UpdateMarginTx {
  MarketId market;
  uint8_t direction;  // kMarginRemove / kMarginAdd
  Usdc amount;        // micro-USDC, > 0
};

struct Tx {
  TxHeader h;
  union {
    DepositTx deposit;
    CreateMarketTx create_market;
    UpdateMarketTx update_market;
    SetIndexPriceTx set_index;
    FundingTickTx funding;
    SetMarketStatusTx market_status;
    ChangePubKeyTx change_key;
    TransferTx transfer;
    WithdrawTx withdraw;
    CreateOrderTx order;
    CancelOrderTx cancel;
    CancelAllOrdersTx cancel_all;
    ModifyOrderTx modify;
    UpdateLeverageTx leverage;
    UpdateMarginTx margin;
    CreateGroupedOrdersTx grouped;
  };
  // Zeroed whole, padding included, so equal txs are equal bytes (codec, signatures).
  Tx() { std::memset(static_cast<void*>(this), 0, sizeof(*this)); }
};
static_assert(std::is_trivially_copyable_v<Tx>);

}  // namespace tachyon
