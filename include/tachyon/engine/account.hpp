#pragma once
// Accounts, their positions and API keys. Owned by the sequencer thread.
#include <array>
#include <cstdint>

#include <absl/container/inlined_vector.h>

#include "tachyon/core/units.hpp"
#include "tachyon/engine/order.hpp"

namespace tachyon {

struct Position {
  Lots size;            // signed: > 0 long
  Usdc entry_notional;  // signed cost basis: Σ fills, long > 0, short < 0
  Usdc realized_pnl;    // cumulative, already in collateral
  Lots buy_open;        // Σ remaining of open bids in this market
  Lots sell_open;       // Σ remaining of open asks
  Bps4 imf;             // per-account initial margin fraction, 0 = market default
  uint32_t open_orders;
  Usdc funding_paid;  // cumulative: > 0 paid, < 0 received
  // Isolated margin (margin mode 1): the position's own collateral, outside the account's cross
  // collateral. Realized PnL, funding and liquidation fees of an isolated position land here; it
  // goes back to cross collateral when the position is closed.
  Usdc allocated;
  // Derived (rebuilt by load(), outside the hash): where this account sits in the market's
  // liquidation index and holder list.
  int64_t risk_key;     // key in Market::risk_index, kNoRiskKey if not indexed
  uint32_t holder_pos;  // kNoSlot: flat
  MarketId market;
  uint8_t isolated;  // margin mode: 0 cross, 1 isolated
};
static_assert(sizeof(Position) == 80);  // as before isolated margin: no more cache lines

inline constexpr int64_t kNoRiskKey = INT64_MIN;

struct ApiKey {
  std::array<uint8_t, 32> pubkey;
  int64_t next_nonce;
  uint32_t version;  // +1 on every rotation; starts at 1
  uint8_t index;
};

struct Account {
  AccountIndex index = 0;
  AccountIndex master = 0;  // itself for a main account
  Usdc collateral = 0;
  std::array<uint8_t, 20> l1_address{};
  uint32_t order_head = kNoSlot;  // doubly linked list of its open orders (all markets)
  uint32_t open_orders = 0;
  int64_t cancel_all_at_ms = 0;                // the dead man's switch: 0 = not scheduled
  absl::InlinedVector<Position, 2> positions;  // sorted by market; entries are kept once made
  absl::InlinedVector<ApiKey, 1> keys;         // sorted by index

  Position* position(MarketId m) {
    for (auto& p : positions)
      if (p.market == m) return &p;
    return nullptr;
  }
  const Position* position(MarketId m) const {
    for (auto& p : positions)
      if (p.market == m) return &p;
    return nullptr;
  }
  Position& position_or_add(MarketId m) {
    auto it = positions.begin();
    while (it != positions.end() && it->market < m) ++it;
    if (it != positions.end() && it->market == m) return *it;
    Position p{};
    p.market = m;
    p.holder_pos = kNoSlot;
    p.risk_key = kNoRiskKey;
    return *positions.insert(it, p);
  }
  ApiKey* key(uint8_t i) {
    for (auto& k : keys)
      if (k.index == i) return &k;
    return nullptr;
  }
  const ApiKey* key(uint8_t i) const {
    for (auto& k : keys)
      if (k.index == i) return &k;
    return nullptr;
  }
  ApiKey& key_or_add(uint8_t i) {
    auto it = keys.begin();
    while (it != keys.end() && it->index < i) ++it;
    if (it != keys.end() && it->index == i) return *it;
    ApiKey k{};
    k.index = i;
    return *keys.insert(it, k);
  }
};

}  // namespace tachyon
