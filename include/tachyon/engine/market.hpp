#pragma once
// A perpetual market: parameters, prices, open interest and its order book.
#include <cstdint>
#include <utility>
#include <vector>

#include <absl/container/btree_set.h>

#include "tachyon/core/cached_allocator.hpp"
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
  // Funding (state): premium samples since the last payment (1e-9 of the index) and the last
  // payment.
  int64_t premium_sum = 0;
  int64_t premium_samples = 0;
  int64_t next_funding_ms = 0;  // 0: no sample yet
  int64_t last_funding_rate = 0;
  int64_t last_funding_ms = 0;
  // Circuit breaker (state): 0 none, 1 post-only, 2 halted; the window's reference mark.
  uint8_t breaker_level = 0;
  int64_t breaker_until_ms = 0;
  int64_t window_start_ms = 0;
  Ticks window_ref = 0;
  // Derived (rebuilt by load(), outside the hash): account slots with a position here, and the
  // liquidation index. drift is Σ|Δmark| / mark over every mark change, in 1e-12; an account's
  // key is the drift at which its margin must be looked at again (engine/risk.cpp).
  std::vector<uint32_t> holders;
  // Pending trigger orders by trigger price (derived from the pool: rebuilt by load()). `below`
  // fires when the mark falls to the trigger (keyed by −trigger: highest first), `above` when it
  // rises to it.
  absl::btree_set<std::pair<Ticks, OrderIndex>> triggers_below, triggers_above;
  uint32_t pending_orders = 0;  // in the trigger index
  uint32_t waiting_orders = 0;  // grouped children waiting for their primary
  // Re-keyed on every fill: its nodes are recycled, so steady trading allocates nothing.
  absl::btree_set<std::pair<int64_t, uint32_t>, std::less<std::pair<int64_t, uint32_t>>,
                  CachedAllocator<std::pair<int64_t, uint32_t>>>
      risk_index;
  int64_t drift = 0;
  // What the last kMarkPrice update said (derived, not state: outside the hash and snapshots).
  Ticks emitted_index = -1;
  Lots emitted_open_interest = -1;

  // Notional in micro-USDC; exact because size_decimals + price_decimals <= 6.
  __int128 notional(Lots size, Ticks price) const {
    return static_cast<__int128>(size) * price * quote_multiplier;
  }
  // What traders see: the operator's status, made stricter by the circuit breaker.
  MarketStatus status() const {
    const MarketStatus b = breaker_level == 0   ? MarketStatus::kActive
                           : breaker_level == 1 ? MarketStatus::kPostOnly
                                                : MarketStatus::kHalted;
    return static_cast<uint8_t>(b) > static_cast<uint8_t>(params.status) ? b : params.status;
  }
};

inline MarginMarket margin_market(const Market& m) {
  return MarginMarket{m.mark_price,     m.quote_multiplier, m.params.default_imf,
                      m.params.min_imf, m.params.mmf,       m.params.cmf};
}

// The validation of market parameters shared by create and update.
bool market_params_valid(const MarketParams& p);

}  // namespace tachyon
