#pragma once
// A perpetual market: parameters, prices, open interest and its order book.
#include <cstdint>

#include "tachyon/core/units.hpp"
#include "tachyon/engine/margin.hpp"
#include "tachyon/engine/order_book.hpp"
#include "tachyon/engine/tx.hpp"

namespace tachyon {

struct Market {
  bool exists = false;
  MarketId id = 0;
  MarketParams params{};
  int64_t quote_multiplier = 1;  // 10^(6 - size_decimals - price_decimals)
  Ticks index_price = 0;
  Ticks mark_price = 0;
  Ticks last_trade_price = 0;
  Lots open_interest = 0;  // Σ long sizes = Σ short sizes
  uint64_t trade_count = 0;
  Lots volume_base = 0;  // cumulative
  Usdc volume_quote = 0;
  uint32_t open_orders = 0;
  OrderBook book;
  // What the last kMarkPrice update said (derived, not state: outside the hash and snapshots).
  Ticks emitted_index = -1;
  Lots emitted_open_interest = -1;

  // Notional in micro-USDC; exact because size_decimals + price_decimals <= 6.
  __int128 notional(Lots size, Ticks price) const {
    return static_cast<__int128>(size) * price * quote_multiplier;
  }
};

inline MarginMarket margin_market(const Market& m) {
  return MarginMarket{m.mark_price, m.quote_multiplier, m.params.default_imf, m.params.min_imf,
                      m.params.mmf};
}

// The validation of market parameters shared by create and update.
bool market_params_valid(const MarketParams& p);

}  // namespace tachyon
