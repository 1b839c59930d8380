#include "tachyon/core/reject.hpp"

namespace tachyon {

std::string_view reject_message(Reject r) {
  switch (r) {
    case Reject::kOk: return "ok";
    case Reject::kTxExpired: return "transaction expired (ExpiredAt is in the past)";
    case Reject::kAccountNotFound: return "account not found";
    case Reject::kApiKeyNotFound: return "api key not found";
    case Reject::kInvalidSignature: return "invalid signature";
    case Reject::kInvalidNonce: return "invalid nonce";
    case Reject::kStaleKeyVersion: return "api key was rotated after the signature was checked";
    case Reject::kNotOperator: return "operator transaction not signed by the operator";
    case Reject::kInvalidAccountIndex: return "invalid account index";
    case Reject::kInvalidApiKeyIndex: return "invalid api key index (0..254)";
    case Reject::kInvalidPubKey: return "invalid public key";
    case Reject::kAccountExists: return "account already exists";
    case Reject::kTooManySubAccounts: return "sub-account index space exhausted";
    case Reject::kInsufficientCollateral: return "amount exceeds free collateral";
    case Reject::kInvalidTransferAmount: return "invalid amount";
    case Reject::kSelfTransfer: return "cannot transfer to the same account";
    case Reject::kInvalidFee: return "invalid fee";
    case Reject::kInvalidAsset: return "unsupported asset (only USDC, asset 3)";
    case Reject::kInvalidLeverage: return "initial margin fraction out of range";
    case Reject::kUnsupportedMarginMode: return "margin mode must be 0 (cross) or 1 (isolated)";
    case Reject::kMarginModeLocked:
      return "the margin mode changes only while the account has no position and no open order "
             "in the market";
    case Reject::kNotIsolated: return "no open isolated position in this market";
    case Reject::kInvalidMarginDirection: return "direction must be 0 (remove) or 1 (add)";
    case Reject::kCrossOnlyAccount: return "the fee and insurance accounts use cross margin only";
    case Reject::kInvalidTxInfo: return "invalid tx info";
    case Reject::kUnsupportedTxType: return "unsupported transaction type";
    case Reject::kBelowMaintenanceMargin: return "account below maintenance margin";
    case Reject::kBelowInitialMargin: return "account below initial margin";
    case Reject::kOrderNotFound: return "order not found or not an active limit order";
    case Reject::kBookFull: return "order book is full";
    case Reject::kInvalidMarket: return "market not found";
    case Reject::kMarketExists: return "market already exists";
    case Reject::kInvalidMarketConfig: return "invalid market configuration";
    case Reject::kMarketStatus: return "market status does not allow this";
    case Reject::kInvalidIndexPrice: return "invalid index price";
    case Reject::kNoPosition: return "reduce-only order without a position";
    case Reject::kInvalidBaseAmount: return "invalid base amount";
    case Reject::kInvalidPrice: return "invalid price";
    case Reject::kInvalidOrderType: return "invalid or unsupported order type";
    case Reject::kInvalidTimeInForce: return "invalid time in force";
    case Reject::kInvalidAmount: return "order value below the market minimum";
    case Reject::kInvalidStpMode: return "invalid self-trade behaviour";
    case Reject::kInvalidExpiry: return "invalid order expiry";
    case Reject::kMaxOrdersPerAccount: return "too many open orders for this account";
    case Reject::kMaxOrdersPerMarket: return "too many open orders in this market";
    case Reject::kInvalidClientOrderIndex: return "invalid client order index";
    case Reject::kClientOrderIndexExists: return "client order index already in use";
    case Reject::kInvalidTrigger: return "invalid trigger price";
    case Reject::kReduceOnlyIncreasesPosition:
      return "reduce-only order would increase the position";
    case Reject::kPriceBandFatFinger: return "price too far from the mark price (fat finger)";
    case Reject::kFarFromMark: return "market order protection too far from the mark price";
    case Reject::kNotEnoughMargin: return "not enough margin";
    case Reject::kUnsupportedCancelAllMode:
      return "cancel-all time in force must be 0 (now), 1 (scheduled) or 2 (abort)";
    case Reject::kInvalidGrouping:
      return "grouped orders: OTO/OCO need 2 orders, OTOCO 3, one market; a primary plain order, "
             "then reduce-only trigger orders on the other side";
  }
  return "unknown reject";
}

}  // namespace tachyon
