#pragma once
// The stateless order checks, in the documented precedence (ENGINE.md): market status, shape,
// amounts, price band. Pure functions of the order and market numbers, so the engine (the
// authority) and the api workers' dry-run (against snapshots) run the same code.
#include <algorithm>

#include "tachyon/core/reject.hpp"
#include "tachyon/core/units.hpp"
#include "tachyon/engine/tx.hpp"

namespace tachyon {

struct OrderMarket {
  const MarketParams& params;
  Ticks mark;
  int64_t quote_multiplier;
};

// TWAP: a good-till-time order executed in slices, one every kTwapSliceMs from its creation while
// its expiry is ahead; each slice is an IOC market order (type twap-sub) bounded by the TWAP's
// price and the market's price protection. What a slice leaves unfilled is spread over the
// slices after it; after the last one the TWAP ends.
inline constexpr int64_t kTwapSliceMs = 30'000;
// The size of the slice due at `due_ms`: the rest spread over the slices left before `end_ms`.
inline Lots twap_slice(Lots remaining, int64_t due_ms, int64_t end_ms) {
  const int64_t left = std::max<int64_t>(1, (end_ms - due_ms + kTwapSliceMs - 1) / kTwapSliceMs);
  return (remaining + left - 1) / left;
}

inline Reject check_market_status(MarketStatus status, TimeInForce tif, bool reduce_only) {
  switch (status) {
    case MarketStatus::kActive: return Reject::kOk;
    case MarketStatus::kPostOnly:
      return tif == TimeInForce::kPostOnly ? Reject::kOk : Reject::kMarketStatus;
    case MarketStatus::kReduceOnly: return reduce_only ? Reject::kOk : Reject::kMarketStatus;
    case MarketStatus::kHalted: return Reject::kMarketStatus;
  }
  return Reject::kMarketStatus;
}

// Type, time in force, flags, self-trade mode, trigger, expiry, client order index range.
// Trigger orders (stop-loss / take-profit, market or limit) need a trigger price and an expiry
// (how long they may wait); the market-like ones execute as IOC market orders when they fire.
// A TWAP is good-till-time with an expiry (its slices run until then) and a size.
inline Reject check_order_shape(const CreateOrderTx& o, int64_t now_ms) {
  const bool trigger = o.type == OrderType::kStopLoss || o.type == OrderType::kStopLossLimit ||
                       o.type == OrderType::kTakeProfit || o.type == OrderType::kTakeProfitLimit;
  const bool is_market = o.type == OrderType::kMarket || o.type == OrderType::kStopLoss ||
                         o.type == OrderType::kTakeProfit;
  const bool twap = o.type == OrderType::kTwap;
  if (o.type != OrderType::kLimit && !is_market && !trigger && !twap)
    return Reject::kInvalidOrderType;
  if (static_cast<uint8_t>(o.tif) > static_cast<uint8_t>(TimeInForce::kPostOnly))
    return Reject::kInvalidTimeInForce;
  if (o.is_ask > 1 || o.reduce_only > 1) return Reject::kInvalidTxInfo;
  if (static_cast<uint8_t>(o.stp) > static_cast<uint8_t>(StpMode::kDecrement))
    return Reject::kInvalidStpMode;
  if (trigger ? o.trigger_price <= 0 || o.trigger_price > kMaxPriceTicks : o.trigger_price != 0)
    return Reject::kInvalidTrigger;
  if (is_market && o.tif != TimeInForce::kIoc) return Reject::kInvalidTimeInForce;
  if (twap && o.tif != TimeInForce::kGoodTillTime) return Reject::kInvalidTimeInForce;
  if (twap && o.base_amount <= 0) return Reject::kInvalidBaseAmount;
  if (trigger) {
    if (o.order_expiry_ms <= now_ms) return Reject::kInvalidExpiry;
  } else if (o.tif == TimeInForce::kIoc ? o.order_expiry_ms != 0 : o.order_expiry_ms <= now_ms) {
    return Reject::kInvalidExpiry;
  }
  if (o.client_order_index > kMaxClientOrderIndex) return Reject::kInvalidClientOrderIndex;
  return Reject::kOk;
}

// Base amount, price range, minimum size and notional.
inline Reject check_order_amounts(const CreateOrderTx& o, const OrderMarket& m) {
  if (o.base_amount < 0 || o.base_amount > kMaxBaseAmount || (o.base_amount == 0 && !o.reduce_only))
    return Reject::kInvalidBaseAmount;
  if (o.price <= 0 || o.price > kMaxPriceTicks) return Reject::kInvalidPrice;
  if (!o.reduce_only) {  // reduce-only may close dust below the minimums
    if (o.base_amount < m.params.min_base_lots) return Reject::kInvalidBaseAmount;
    const __int128 notional = static_cast<__int128>(o.base_amount) * o.price * m.quote_multiplier;
    if (notional < m.params.min_quote_usdc) return Reject::kInvalidAmount;
  }
  return Reject::kOk;
}

// A limit price far through the mark is a fat finger; a market order whose protection bound
// can never fill near the mark is refused too.
inline Reject check_limit_band(const MarketParams& p, Ticks mark_price, bool is_ask, Ticks price) {
  const __int128 lhs = static_cast<__int128>(price) * kFractionOne;
  const __int128 mark = mark_price;
  if (!is_ask && lhs > mark * (kFractionOne + p.price_band)) return Reject::kPriceBandFatFinger;
  if (is_ask && lhs < mark * (kFractionOne - p.price_band)) return Reject::kPriceBandFatFinger;
  return Reject::kOk;
}

inline Reject check_order_band(const CreateOrderTx& o, const OrderMarket& m) {
  // A trigger order's prices are judged against its trigger, where it will execute.
  const bool trigger = o.trigger_price != 0;
  const Ticks ref = trigger ? o.trigger_price : m.mark;
  const bool market_like = o.type == OrderType::kMarket || o.type == OrderType::kStopLoss ||
                           o.type == OrderType::kTakeProfit;
  if (!market_like) return check_limit_band(m.params, ref, o.is_ask, o.price);
  const __int128 mark = ref;
  const __int128 px = static_cast<__int128>(o.price) * kFractionOne;
  if (o.is_ask ? px > mark * (kFractionOne + m.params.price_band)
               : px < mark * (kFractionOne - m.params.price_band))
    return Reject::kFarFromMark;
  return Reject::kOk;
}

}  // namespace tachyon
