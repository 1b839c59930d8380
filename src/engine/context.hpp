#pragma once
// Per-tx execution context, private to the engine's translation units.
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <absl/container/inlined_vector.h>

#include "tachyon/engine/engine.hpp"

namespace tachyon {

struct Engine::Ctx {
  Ctx(UpdateSink& s, const Tx& t, int64_t ns, int64_t ms)
      : sink(s), tx(t), now_ns(ns), now_ms(ms) {}

  UpdateSink& sink;
  const Tx& tx;
  int64_t now_ns;
  int64_t now_ms;
  int64_t next_nonce = -1;             // set when the tx consumed its signer's nonce
  uint64_t touched[4] = {0, 0, 0, 0};  // markets whose book or index changed: mark to refresh

  // Accounts whose margin changed other than by a mark move (fills, funding, transfers): the
  // risk pass looks at them after the tx. Room for a sweep of ~60 fills without the heap (with 8,
  // a market order filling more than 7 makers allocated).
  absl::InlinedVector<uint32_t, 64> risk_accounts;
  // Trigger orders whose trigger the mark reached (order indices), fired in the next risk round.
  absl::InlinedVector<OrderIndex, 4> triggered;
  // Set while a liquidation IOC order is the taker: its slot and zero price (engine fee rule).
  uint32_t liq_order = 0xffffffffu;
  Ticks liq_zero_price = 0;
  // Set while an isolated position is being liquidated: its account slot and market. Its margin
  // stays with it when it closes, until the liquidation has covered any deficit.
  uint32_t liq_isolated_slot = 0xffffffffu;
  MarketId liq_isolated_market = 0;

  // While an order matches (match_and_rest): its account's position and trade balance, and the
  // fee account's balance, change at every fill. Their updates are emitted once, when the
  // matching ends (Engine::flush_fills), with the values then: a sweep of k fills emits 2 of them
  // instead of 3k. The makers' are emitted at each fill (each fill has its own maker).
  struct Coalesce {
    uint32_t taker_slot = 0xffffffffu;  // none: every update goes out at once
    MarketId market = 0;
    bool position_due = false, balance_due = false, fee_due = false;
    Usdc trade_delta = 0, fee_delta = 0;
  };
  Coalesce co;

  // ADL rankings made in this tx, by market × side (engine/liquidation.cpp).
  struct AdlRanking {
    std::vector<std::pair<uint32_t, AccountIndex>> order;  // account slot, index
    size_t next = 0;
  };
  std::map<int, AdlRanking> adl;

  void touch(MarketId m) { touched[m >> 6] |= uint64_t{1} << (m & 63); }
  void risk(uint32_t account_slot) { risk_accounts.push_back(account_slot); }
  StateUpdate make(UpdateType t) const { return StateUpdate(t, now_ns, StateUpdate::NoZero{}); }
};

}  // namespace tachyon
