#pragma once
// One stable enum of everything a trader or operator can get wrong. Numbers are Lighter's 21xxx
// codes where one exists (docs/ARCHITECTURE.md "Reject codes"); ours fill the gaps in the same
// ranges. Never renumber or reuse a value: clients and journals keep them.
#include <cstdint>
#include <string_view>

namespace tachyon {

enum class Reject : uint16_t {
  kOk = 0,
  // transaction envelope: 211xx
  kTxExpired = 21100,
  kAccountNotFound = 21101,
  kApiKeyNotFound = 21102,
  kInvalidSignature = 21103,  // api worker only
  kInvalidNonce = 21104,
  kStaleKeyVersion = 21105,
  kNotOperator = 21106,
  kInvalidAccountIndex = 21107,
  kInvalidApiKeyIndex = 21108,
  kInvalidPubKey = 21109,
  kAccountExists = 21110,
  kTooManySubAccounts = 21111,
  kInsufficientCollateral = 21120,
  kInvalidTransferAmount = 21121,
  kSelfTransfer = 21122,
  kInvalidFee = 21123,
  kInvalidAsset = 21124,
  kInvalidLeverage = 21125,
  kUnsupportedMarginMode = 21126,
  kMarginModeLocked = 21127,  // a position or open order in the market
  kNotIsolated = 21128,       // UpdateMargin on a cross (or flat) position
  kInvalidMarginDirection = 21129,
  kCrossOnlyAccount = 21130,  // the fee and insurance accounts
  // tx level: 215xx
  kInvalidTxInfo = 21501,
  kUnsupportedTxType = 21505,
  kBelowMaintenanceMargin = 21507,
  kBelowInitialMargin = 21508,
  // books and markets: 216xx
  kOrderNotFound = 21600,
  kBookFull = 21601,
  kInvalidMarket = 21602,
  kMarketExists = 21603,
  kInvalidMarketConfig = 21604,
  kMarketStatus = 21605,
  kInvalidIndexPrice = 21606,
  kNoPosition = 21614,
  // orders: 217xx
  kInvalidBaseAmount = 21701,
  kInvalidPrice = 21702,
  kInvalidOrderType = 21704,
  kInvalidTimeInForce = 21705,
  kInvalidAmount = 21706,
  kInvalidStpMode = 21707,
  kInvalidExpiry = 21711,
  kMaxOrdersPerAccount = 21717,
  kMaxOrdersPerMarket = 21718,
  kInvalidClientOrderIndex = 21727,
  kClientOrderIndexExists = 21728,
  kInvalidTrigger = 21729,
  kReduceOnlyIncreasesPosition = 21732,
  kPriceBandFatFinger = 21733,
  kFarFromMark = 21734,
  kNotEnoughMargin = 21739,
  kUnsupportedCancelAllMode = 21740,
  kInvalidGrouping = 21741,  // grouped orders: wrong grouping, count, types, sides or markets
};

constexpr uint32_t reject_code(Reject r) { return static_cast<uint32_t>(r); }

std::string_view reject_message(Reject r);

}  // namespace tachyon
