// The reference engine's liquidation waterfall (docs/ARCHITECTURE.md "Risk lifecycle"), the obvious
// way: after every tx, rounds that refresh every mark, take every account under maintenance margin
// (all accounts scanned, in creation order) and liquidate them one after the other. No index:
// the fast engine's liquidation index must find exactly the same accounts.
#include <algorithm>

#include "support/reference_engine.hpp"

namespace tachyon::testing {

namespace {
__int128 iabs(__int128 v) { return v < 0 ? -v : v; }
__int128 cdiv(__int128 a, __int128 b) {
  return a / b + ((a % b != 0 && (a > 0) == (b > 0)) ? 1 : 0);
}
__int128 fdiv(__int128 a, __int128 b) { return a / b - ((a % b != 0 && a < 0) ? 1 : 0); }
}  // namespace

int ReferenceEngine::health(AccountIndex ai, __int128& tav, __int128& mmr, MarketId bucket) const {
  __int128 imr, plain, cmr = 0;
  if (bucket == kAllMarkets) {
    margin(ai, 0, 0, 0, tav, imr, plain);
  } else {
    const Pos& p = accs_.at(ai).pos.at(bucket);
    const Mkt& m = mkts_.at(bucket);
    tav = p.alloc + static_cast<__int128>(p.size) * m.mark * m.mult - p.entry;
  }
  mmr = 0;
  for (auto& [mid, p] : accs_.at(ai).pos) {
    if (p.size == 0 || (bucket == kAllMarkets ? p.iso : mid != bucket)) continue;
    const Mkt& m = mkts_.at(mid);
    const __int128 n = iabs(static_cast<__int128>(p.size) * m.mark * m.mult);
    mmr += cdiv(n * m.p.mmf, 10000);
    cmr += cdiv(n * m.p.cmf, 10000);
  }
  if (mmr == 0) return 0;
  if (tav < cmr) return 3;
  if (tav < mmr) return 2;
  return 0;
}

void ReferenceEngine::settle_risk(std::vector<RefFill>& fills) {
  auto isolated_under = [&](AccountIndex ai) {
    std::vector<MarketId> out;
    for (auto& [mid, p] : accs_.at(ai).pos) {
      __int128 tav, mmr;
      if (p.iso && p.size != 0 && health(ai, tav, mmr, mid) != 0) out.push_back(mid);
    }
    return out;
  };
  for (;;) {
    refresh_marks();
    std::vector<AccountIndex> under;
    for (AccountIndex ai : created_) {
      __int128 tav, mmr;
      if (health(ai, tav, mmr) != 0 || !isolated_under(ai).empty()) under.push_back(ai);
    }
    if (under.empty()) return;
    for (AccountIndex ai : under) {  // the cross bucket, then each isolated position by market
      __int128 tav, mmr;
      const int h = health(ai, tav, mmr);
      if (h == 2) liquidate_partial(ai, kAllMarkets, fills);
      if (h == 3) liquidate_full(ai, kAllMarkets, fills);
      for (MarketId mid : isolated_under(ai)) {
        const int hi = health(ai, tav, mmr, mid);
        if (hi == 2) liquidate_partial(ai, mid, fills);
        if (hi == 3) liquidate_full(ai, mid, fills);
      }
    }
  }
}

void ReferenceEngine::drop_orders(AccountIndex ai, MarketId bucket) {
  std::vector<OrderIndex> mine;
  for (auto& [id, o] : orders_)
    if (o.account == ai && (bucket == kAllMarkets || o.market == bucket)) mine.push_back(id);
  for (OrderIndex id : mine) drop(id);
  if (bucket != kAllMarkets) {
    iso_liq_ = true;
    iso_liq_account_ = ai;
    iso_liq_market_ = bucket;
  }
}

void ReferenceEngine::cover(AccountIndex ai, __int128 deficit) {
  const AccountIndex ins = cfg_.insurance_account;
  __int128 itav = 0, iimr, plain;
  if (ai != ins) margin(ins, 0, 0, 0, itav, iimr, plain);
  const __int128 have = ai == ins ? 0 : std::min<__int128>(accs_.at(ins).collateral, itav);
  const __int128 from_ins = std::clamp<__int128>(have, 0, deficit);
  accs_.at(ins).collateral -= static_cast<Usdc>(from_ins);
  accs_.at(cfg_.fee_account).collateral -= static_cast<Usdc>(deficit - from_ins);
}

void ReferenceEngine::end_isolated(AccountIndex ai, MarketId mid) {
  iso_liq_ = false;
  Acc& a = accs_.at(ai);
  Pos& p = a.pos.at(mid);
  if (p.size != 0) return;
  if (p.alloc < 0) {
    cover(ai, -p.alloc);
    p.alloc = 0;
  }
  a.collateral += p.alloc;
  p.alloc = 0;
}

static Ticks zero_price(Ticks mark, Bps4 mmf, Lots size, __int128 tav, __int128 mmr) {
  const __int128 x =
      fdiv(static_cast<__int128>(mark) * mmf * tav, __int128{10000} * std::max<__int128>(mmr, 1));
  const __int128 zp = size > 0 ? mark - x : mark + x;
  return static_cast<Ticks>(std::clamp<__int128>(zp, 1, kMaxPriceTicks));
}

void ReferenceEngine::liquidate_partial(AccountIndex ai, MarketId bucket,
                                        std::vector<RefFill>& fills) {
  drop_orders(ai, bucket);
  std::vector<MarketId> held;
  for (auto& [mid, p] : accs_.at(ai).pos)
    if (bucket == kAllMarkets ? !p.iso : (p.iso && mid == bucket)) held.push_back(mid);
  for (MarketId mid : held) {
    __int128 tav, mmr;
    health(ai, tav, mmr, bucket);
    if (tav >= mmr) break;
    const Lots size = accs_.at(ai).pos.at(mid).size;
    const Mkt& m = mkts_.at(mid);
    if (size == 0 || m.p.status != MarketStatus::kActive || orders_.size() >= cfg_.max_orders)
      continue;
    const Ticks zp = zero_price(m.mark, m.p.mmf, size, tav, mmr);
    const Lots q = size > 0 ? size : -size;
    Ord t{next_order_++,
          0,
          ai,
          mid,
          size > 0,
          zp,
          q,
          q,
          0,
          TimeInForce::kIoc,
          OrderType::kLiquidation,
          true,
          StpMode::kExpireTaker};
    liq_order_ = t.id;
    liq_zp_ = zp;
    match(t, zp, fills);
    liq_order_ = 0;
  }
  __int128 tav, mmr;
  if (health(ai, tav, mmr, bucket) != 0) {
    liquidate_full(ai, bucket, fills);
  } else if (bucket != kAllMarkets) {
    end_isolated(ai, bucket);
  }
}

void ReferenceEngine::move(AccountIndex from, AccountIndex to, MarketId mid, Lots from_delta,
                           Ticks px, std::vector<RefFill>& fills) {
  Mkt& m = mkts_.at(mid);
  const Lots q = from_delta > 0 ? from_delta : -from_delta;
  fills.push_back(RefFill{0, 0, to, from, px, q, 0, 0});
  ++next_trade_;
  settle(from, m, mid, from_delta > 0, q, px, 0);
  settle(to, m, mid, from_delta < 0, q, px, 0);
  m.trades += 1;
  m.vol_base += q;
  m.vol_quote += static_cast<Usdc>(static_cast<__int128>(q) * px * m.mult);
}

void ReferenceEngine::liquidate_full(AccountIndex ai, MarketId bucket,
                                     std::vector<RefFill>& fills) {
  drop_orders(ai, bucket);
  std::vector<std::pair<__int128, MarketId>> order;
  for (auto& [mid, p] : accs_.at(ai).pos) {
    if (p.size == 0 || (bucket == kAllMarkets ? p.iso : (!p.iso || mid != bucket))) continue;
    const Mkt& m = mkts_.at(mid);
    order.emplace_back(static_cast<__int128>(p.size) * m.mark * m.mult - p.entry, mid);
  }
  std::sort(order.begin(), order.end());
  const AccountIndex ins = cfg_.insurance_account;
  for (const auto& [upnl, mid] : order) {
    __int128 tav, mmr;
    health(ai, tav, mmr, bucket);
    const Mkt& m = mkts_.at(mid);
    const Lots size = accs_.at(ai).pos.at(mid).size;
    const Ticks zp = zero_price(m.mark, m.p.mmf, size, tav, mmr);
    // The insurance fund takes it all if it stays at or above its initial margin.
    if (ai != ins) {
      const Acc saved = accs_.at(ins);
      settle(ins, mkts_.at(mid), mid, size > 0, size > 0 ? size : -size, zp, 0);
      __int128 itav, iimr, plain;
      margin(ins, 0, 0, 0, itav, iimr, plain);
      accs_.at(ins) = saved;
      if (itav >= iimr) {
        move(ai, ins, mid, -size, zp, fills);
        continue;
      }
    }
    // ADL: opposite positions by PnL ratio x leverage (losers by ratio / leverage), ranked once
    // per tx and side (at the first deleverage), ranked again only when that list runs out.
    const bool longs = size < 0;
    auto rank = [&] {
      struct Cand {
        __int128 score;
        AccountIndex index;
      };
      std::vector<Cand> cands;
      for (auto& [oi, o] : accs_) {
        auto it = o.pos.find(mid);
        if (it == o.pos.end() || it->second.size == 0 || (it->second.size > 0) != longs) continue;
        const __int128 value = static_cast<__int128>(it->second.size) * m.mark * m.mult;
        const __int128 ratio =
            (value - it->second.entry) * 1'000'000 / std::max<__int128>(iabs(it->second.entry), 1);
        __int128 otav, oimr, plain, ommr;
        if (it->second.iso) {
          health(oi, otav, ommr, mid);
        } else {
          margin(oi, 0, 0, 0, otav, oimr, plain);
        }
        const __int128 lev = iabs(value) * 10'000 / std::max<__int128>(otav, 1);
        cands.push_back(
            {ratio >= 0 ? ratio * lev : ratio * 10'000 / std::max<__int128>(lev, 1), oi});
      }
      std::sort(cands.begin(), cands.end(), [](const Cand& x, const Cand& y) {
        return x.score != y.score ? x.score > y.score : x.index < y.index;
      });
      std::vector<AccountIndex> order;
      for (const Cand& c : cands) order.push_back(c.index);
      return order;
    };
    auto [it, fresh] = adl_.try_emplace(mid * 2 + (longs ? 1 : 0));
    auto& [order_list, next] = it->second;
    if (fresh) order_list = rank();
    Lots left = size > 0 ? size : -size;
    bool reranked = false;
    while (left > 0) {
      if (next == order_list.size()) {
        if (reranked) break;
        order_list = rank();
        next = 0;
        reranked = true;
        continue;
      }
      const AccountIndex ci = order_list[next];
      const Lots theirs = accs_.at(ci).pos[mid].size;
      if (ci == ai || theirs == 0 || (theirs > 0) != longs) {
        ++next;
        continue;
      }
      const Lots q = std::min(left, theirs > 0 ? theirs : -theirs);
      move(ai, ci, mid, size > 0 ? -q : q, zp, fills);
      left -= q;
    }
  }
  // Dust below zero: the insurance fund pays what it has (collateral, capped by its account
  // value), the fee account the rest.
  if (bucket != kAllMarkets) {
    end_isolated(ai, bucket);
  } else if (Acc& a = accs_.at(ai); a.collateral < 0) {
    cover(ai, -a.collateral);
    a.collateral = 0;
  }
}

}  // namespace tachyon::testing
