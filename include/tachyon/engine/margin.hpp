#pragma once
// Margin arithmetic (ENGINE.md "Margin"), pure functions of numbers: the engine's authoritative
// checks and the api workers' dry-run (against read-side snapshots) run this one implementation.
#include <algorithm>
#include <cstdint>

#include "tachyon/core/units.hpp"

namespace tachyon {

// Account-level figures at current mark prices.
struct MarginInfo {
  __int128 tav = 0;  // collateral + Σ unrealized PnL
  __int128 imr = 0;  // initial margin, open orders counted on their worst side
  __int128 mmr = 0;  // maintenance margin of positions
  __int128 cmr = 0;  // close-out requirement of positions
};

// Lighter's health states (LIGHTER_API.md §5).
enum class Health : uint8_t {
  kHealthy = 0,
  kPreLiquidation = 1,      // IMR > TAV >= MMR: only risk-reducing txs
  kPartialLiquidation = 2,  // TAV < MMR
  kFullLiquidation = 3,     // TAV < close-out
};

inline Health health_of(const MarginInfo& mi) {
  // Flat (no position: no maintenance requirement): nothing to liquidate. A negative flat
  // balance is bad debt, which the liquidation that left it already settled.
  if (mi.mmr == 0) return Health::kHealthy;
  if (mi.tav < mi.cmr) return Health::kFullLiquidation;
  if (mi.tav < mi.mmr) return Health::kPartialLiquidation;
  if (mi.tav < mi.imr) return Health::kPreLiquidation;
  return Health::kHealthy;
}

// What margin needs to know about a market.
struct MarginMarket {
  Ticks mark = 0;
  int64_t quote_multiplier = 1;
  Bps4 default_imf = 0;
  Bps4 min_imf = 0;
  Bps4 mmf = 0;
  Bps4 cmf = 0;
};

struct MarketMargin {
  __int128 upnl, imr, mmr, cmr;
};

inline __int128 abs128(__int128 v) { return v < 0 ? -v : v; }

// The initial margin fraction in force: the account's setting (never below the market's
// minimum), or the market default.
inline Bps4 effective_imf(const MarginMarket& m, Bps4 user_imf) {
  return user_imf != 0 ? std::max(user_imf, m.min_imf) : m.default_imf;
}

inline MarketMargin market_margin(const MarginMarket& m, Lots size, Usdc entry, Lots buy_open,
                                  Lots sell_open, Bps4 user_imf) {
  const __int128 unit = static_cast<__int128>(m.mark) * m.quote_multiplier;
  const Bps4 imf = effective_imf(m, user_imf);
  // Open orders count as if filled on their worst side.
  const __int128 worst = std::max(abs128(static_cast<__int128>(size) + buy_open),
                                  abs128(static_cast<__int128>(size) - sell_open));
  return MarketMargin{size * unit - entry, ceil_div(worst * unit * imf, kFractionOne),
                      ceil_div(abs128(size) * unit * m.mmf, kFractionOne),
                      ceil_div(abs128(size) * unit * m.cmf, kFractionOne)};
}

// An isolated position is its own margin account: its allocated margin is its collateral and
// only its own position counts (its open orders are reserved from cross margin until they fill).
template <typename Position>
MarginInfo isolated_margin(const MarginMarket& m, const Position& p) {
  const MarketMargin mm = market_margin(m, p.size, p.entry_notional, 0, 0, p.imf);
  return MarginInfo{p.allocated + mm.upnl, mm.imr, mm.mmr, mm.cmr};
}

// Margin of an account's cross bucket with extra open size on market `mid` (negative: a modify
// that shrinks). `positions` holds elements with market, size, entry_notional, buy_open,
// sell_open, imf, isolated and allocated; `market_of(MarketId)` returns the MarginMarket.
// imr_without: the IMR without the extra size. Isolated positions add only what their open
// orders need beyond the position itself (the position is covered by its allocated margin; a
// fill moves the initial margin of what it opens from cross collateral into it).
template <typename Positions, typename MarketOf>
MarginInfo account_margin(Usdc collateral, const Positions& positions, MarketOf&& market_of,
                          MarketId mid, Lots extra_buy, Lots extra_sell, __int128* imr_without) {
  MarginInfo mi;
  mi.tav = collateral;
  __int128 without = 0;
  bool seen = false;
  for (const auto& p : positions) {
    const MarginMarket m = market_of(p.market);
    MarketMargin mm = market_margin(m, p.size, p.entry_notional, p.buy_open, p.sell_open, p.imf);
    if (p.isolated) {
      const __int128 own = market_margin(m, p.size, p.entry_notional, 0, 0, p.imf).imr;
      without += std::max<__int128>(mm.imr - own, 0);
      if (p.market == mid) {
        seen = true;
        mm = market_margin(m, p.size, p.entry_notional, p.buy_open + extra_buy,
                           p.sell_open + extra_sell, p.imf);
      }
      mi.imr += std::max<__int128>(mm.imr - own, 0);
      continue;
    }
    mi.tav += mm.upnl;
    mi.mmr += mm.mmr;
    mi.cmr += mm.cmr;
    without += mm.imr;
    if (p.market == mid) {
      seen = true;
      mm = market_margin(m, p.size, p.entry_notional, p.buy_open + extra_buy,
                         p.sell_open + extra_sell, p.imf);
    }
    mi.imr += mm.imr;
  }
  if (!seen && (extra_buy != 0 || extra_sell != 0))
    mi.imr += market_margin(market_of(mid), 0, 0, extra_buy, extra_sell, 0).imr;
  if (imr_without != nullptr) *imr_without = without;
  return mi;
}

// An order is accepted when the account stays at or above initial margin with the order counted,
// or when the order does not raise the requirement (it can only reduce risk).
inline bool order_margin_ok(const MarginInfo& with_order, __int128 imr_before) {
  return with_order.tav >= with_order.imr || with_order.imr <= imr_before;
}

// One side of a fill of q lots at `price` on a position of `size` and cost basis `entry`: the
// position after it and the PnL it realizes (what it closes, against the pro-rata cost basis,
// truncated toward zero). The engine moves money with it; the read side shows each trade's
// sides with the same arithmetic.
struct FillOutcome {
  Lots size;
  Usdc entry_notional;
  Usdc pnl;
};
inline FillOutcome fill_outcome(Lots size, Usdc entry, bool is_buy, Lots q, Ticks price,
                                int64_t quote_multiplier) {
  FillOutcome r{size, entry, 0};
  Lots open = q;
  if (size != 0 && (size > 0) != is_buy) {  // reduces (and maybe flips) the position
    const Lots held = size < 0 ? -size : size;
    const Lots close = q < held ? q : held;
    const __int128 portion = div_trunc(static_cast<__int128>(entry) * close, held);
    const __int128 n_close = static_cast<__int128>(close) * price * quote_multiplier;
    r.pnl = static_cast<Usdc>((is_buy ? -n_close : n_close) - portion);
    r.entry_notional -= static_cast<Usdc>(portion);
    r.size += is_buy ? close : -close;
    open = q - close;
  }
  if (open > 0) {
    const Usdc n_open = static_cast<Usdc>(static_cast<__int128>(open) * price * quote_multiplier);
    r.size += is_buy ? open : -open;
    r.entry_notional += is_buy ? n_open : -n_open;
  }
  return r;
}

}  // namespace tachyon
