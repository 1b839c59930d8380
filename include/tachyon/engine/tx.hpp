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
  kSetIndexPrice = 60,  // operator: oracle index price
};

bool is_operator_tx(TxType t);

enum class OrderType : uint8_t {
  kLimit = 0,
  kMarket = 1,
  kStopLoss = 2,
  kStopLossLimit = 3,
  kTakeProfit = 4,
  kTakeProfitLimit = 5,
  kTwap = 6
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
  Lots min_base_lots;
  Usdc min_quote_usdc;
  int32_t max_orders_per_account;  // open orders in this market per account
  uint32_t max_orders;             // open orders in this market (book capacity)
};

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

struct CancelOrderTx {
  MarketId market;
  uint64_t index;  // >= 2^48: order index, else client order index
};

struct CancelAllOrdersTx {
  uint8_t tif;      // 0 now; 1 scheduled, 2 abort: not supported yet
  MarketId market;  // 255 = all markets
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
  uint8_t margin_mode;  // 0 cross (1 isolated: not supported yet)
};

struct Tx {
  TxHeader h;
  union {
    DepositTx deposit;
    CreateMarketTx create_market;
    UpdateMarketTx update_market;
    SetIndexPriceTx set_index;
    ChangePubKeyTx change_key;
    TransferTx transfer;
    WithdrawTx withdraw;
    CreateOrderTx order;
    CancelOrderTx cancel;
    CancelAllOrdersTx cancel_all;
    ModifyOrderTx modify;
    UpdateLeverageTx leverage;
  };
  // Zeroed whole, padding included, so equal txs are equal bytes (codec, signatures).
  Tx() { std::memset(static_cast<void*>(this), 0, sizeof(*this)); }
};
static_assert(std::is_trivially_copyable_v<Tx>);

}  // namespace tachyon
