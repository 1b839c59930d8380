#pragma once
// Integer units of the exchange (docs/ARCHITECTURE.md "Units"). No floating point here.
#include <cstdint>

namespace tachyon {

using Ticks = int64_t;  // price × 10^price_decimals
using Lots = int64_t;   // size × 10^size_decimals
using Usdc = int64_t;   // micro-USDC (1e-6)
using Ppm = int32_t;    // fees, 1e-6 of notional
using Bps4 = int32_t;   // margin fractions and bands, 1e-4 (500 = 5%)
using AccountIndex = uint64_t;
using OrderIndex = uint64_t;
using MarketId = uint8_t;

inline constexpr Usdc kUsdcScale = 1'000'000;
inline constexpr int kQuoteDecimals = 6;
inline constexpr Bps4 kFractionOne = 10'000;
inline constexpr Ppm kPpmOne = 1'000'000;
inline constexpr Lots kMaxBaseAmount = (Lots{1} << 48) - 1;
inline constexpr Ticks kMaxPriceTicks = (Ticks{1} << 32) - 1;  // uint32 on the Lighter wire
inline constexpr OrderIndex kFirstOrderIndex = OrderIndex{1} << 48;
inline constexpr uint64_t kMaxClientOrderIndex = (uint64_t{1} << 48) - 1;
inline constexpr AccountIndex kMaxAccountIndex = (AccountIndex{1} << 48) - 2;
inline constexpr AccountIndex kFirstSubAccountIndex = AccountIndex{1} << 47;
inline constexpr int kMaxMarkets = 255;  // ids 0..254, 255 = nil / all
inline constexpr int kMaxApiKeys = 255;  // ids 0..254
inline constexpr MarketId kAllMarkets = 255;

inline constexpr int64_t pow10_i64(int n) {
  int64_t r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}

inline constexpr bool fits_i64(__int128 v) { return v >= INT64_MIN && v <= INT64_MAX; }

// a / b truncated towards zero; 64-bit division when both fit (__divti3 costs several times more).
inline constexpr __int128 div_trunc(__int128 a, __int128 b) {
  if (fits_i64(a) && fits_i64(b)) return static_cast<int64_t>(a) / static_cast<int64_t>(b);
  return a / b;
}

// Division rounding towards +infinity for non-negative divisors.
inline constexpr __int128 ceil_div(__int128 a, __int128 b) {
  if (fits_i64(a) && b > 0 && fits_i64(b)) {
    const int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
    return x / y + (x % y != 0 && x > 0);
  }
  __int128 q = a / b;
  if ((a % b != 0) && ((a > 0) == (b > 0))) ++q;
  return q;
}

// Division rounding towards −infinity for positive divisors.
inline constexpr __int128 floor_div(__int128 a, __int128 b) {
  __int128 q = a / b;
  if (a % b != 0 && a < 0) --q;
  return q;
}

}  // namespace tachyon
