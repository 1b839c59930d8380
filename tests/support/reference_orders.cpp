// The reference engine's order book and matching: std::map levels of std::deque order ids.
#include <algorithm>

#include "support/reference_engine.hpp"
#include "tachyon/core/hash.hpp"

namespace tachyon::testing {

Lots ReferenceEngine::ro_room(const Acc& a, MarketId m, bool is_ask) const {
  auto it = a.pos.find(m);
  if (it == a.pos.end()) return 0;
  const Lots s = it->second.size;
  return is_ask ? std::max<Lots>(s, 0) : std::max<Lots>(-s, 0);
}

const ReferenceEngine::Ord* ReferenceEngine::find(AccountIndex a, MarketId m,
                                                  uint64_t index) const {
  for (auto& [id, o] : orders_) {
    const bool hit = index >= kFirstOrderIndex ? id == index : (index != 0 && o.coi == index);
    if (hit && o.account == a) return o.market == m ? &o : nullptr;
    if (hit && index >= kFirstOrderIndex) return nullptr;
  }
  return nullptr;
}

void ReferenceEngine::rest(const Ord& o) {
  Mkt& m = mkts_[o.market];
  (o.is_ask ? m.asks : m.bids)[o.price].push_back(o.id);
  orders_[o.id] = o;
}

void ReferenceEngine::drop(OrderIndex id) {
  const Ord o = orders_.at(id);
  Mkt& m = mkts_[o.market];
  auto& side = o.is_ask ? m.asks : m.bids;
  auto& q = side[o.price];
  q.erase(std::find(q.begin(), q.end(), id));
  if (q.empty()) side.erase(o.price);
  orders_.erase(id);
}

Reject ReferenceEngine::place(const Tx& tx, OrderIndex& out, std::vector<RefFill>& fills) {
  Acc* a = nullptr;
  Key* k = nullptr;
  if (Reject r = auth(tx, a, k); r != Reject::kOk) return r;
  const CreateOrderTx& o = tx.order;
  if (!mkts_.count(o.market)) return Reject::kInvalidMarket;
  Mkt& m = mkts_[o.market];
  if (m.p.status == MarketStatus::kHalted) return Reject::kMarketStatus;
  if (m.p.status == MarketStatus::kPostOnly && o.tif != TimeInForce::kPostOnly)
    return Reject::kMarketStatus;
  if (m.p.status == MarketStatus::kReduceOnly && !o.reduce_only) return Reject::kMarketStatus;
  const bool mkt = o.type == OrderType::kMarket;
  if (o.type != OrderType::kLimit && !mkt) return Reject::kInvalidOrderType;
  if (static_cast<int>(o.tif) > 2) return Reject::kInvalidTimeInForce;
  if (o.is_ask > 1 || o.reduce_only > 1) return Reject::kInvalidTxInfo;
  if (static_cast<int>(o.stp) > 3) return Reject::kInvalidStpMode;
  if (o.trigger_price != 0) return Reject::kInvalidTrigger;
  if (mkt && o.tif != TimeInForce::kIoc) return Reject::kInvalidTimeInForce;
  if (o.tif == TimeInForce::kIoc && o.order_expiry_ms != 0) return Reject::kInvalidExpiry;
  if (o.tif != TimeInForce::kIoc && o.order_expiry_ms <= now_ms_) return Reject::kInvalidExpiry;
  if (o.client_order_index > kMaxClientOrderIndex) return Reject::kInvalidClientOrderIndex;
  if (o.client_order_index != 0) {
    for (auto& [id, x] : orders_)
      if (x.account == tx.h.account && x.coi == o.client_order_index)
        return Reject::kClientOrderIndexExists;
  }
  if (o.base_amount < 0 || o.base_amount > kMaxBaseAmount || (o.base_amount == 0 && !o.reduce_only))
    return Reject::kInvalidBaseAmount;
  if (o.price <= 0 || o.price > kMaxPriceTicks) return Reject::kInvalidPrice;
  if (!o.reduce_only) {
    if (o.base_amount < m.p.min_base_lots) return Reject::kInvalidBaseAmount;
    if (static_cast<__int128>(o.base_amount) * o.price * m.mult < m.p.min_quote_usdc)
      return Reject::kInvalidAmount;
  }
  const __int128 px = static_cast<__int128>(o.price) * 10000, mark = m.mark;
  if (!mkt) {
    if (!o.is_ask && px > mark * (10000 + m.p.price_band)) return Reject::kPriceBandFatFinger;
    if (o.is_ask && px < mark * (10000 - m.p.price_band)) return Reject::kPriceBandFatFinger;
  } else {
    if (o.is_ask && px > mark * (10000 + m.p.price_band)) return Reject::kFarFromMark;
    if (!o.is_ask && px < mark * (10000 - m.p.price_band)) return Reject::kFarFromMark;
  }
  Lots size = o.base_amount;
  if (o.reduce_only) {
    auto pit = a->pos.find(o.market);
    if (pit == a->pos.end() || pit->second.size == 0) return Reject::kNoPosition;
    const Lots room = ro_room(*a, o.market, o.is_ask);
    if (room == 0) return Reject::kReduceOnlyIncreasesPosition;
    size = size == 0 ? room : std::min(size, room);
  }
  if (orders_.size() >= cfg_.max_orders) return Reject::kBookFull;
  if (o.tif != TimeInForce::kIoc) {
    if (open_count(tx.h.account, o.market) >= m.p.max_orders_per_account)
      return Reject::kMaxOrdersPerAccount;
    int in_market = 0;
    for (auto& [id, x] : orders_) in_market += x.market == o.market;
    if (in_market >= static_cast<int>(m.p.max_orders)) return Reject::kMaxOrdersPerMarket;
  }
  if (!o.reduce_only) {
    __int128 tav, imr, plain;
    margin(tx.h.account, o.market, o.is_ask ? 0 : size, o.is_ask ? size : 0, tav, imr, plain);
    if (tav < imr && imr > plain) return Reject::kNotEnoughMargin;
  }
  k->nonce = tx.h.nonce + 1;
  Ord t{next_order_++,
        o.client_order_index,
        tx.h.account,
        o.market,
        o.is_ask != 0,
        o.price,
        size,
        size,
        o.order_expiry_ms,
        o.tif,
        o.type,
        o.reduce_only != 0,
        o.stp};
  out = t.id;
  Ticks bound = o.price;
  if (mkt) {
    const int prot = m.p.market_protection;
    if (o.is_ask) {
      const __int128 lo = mark * (10000 - prot);
      bound = std::max<Ticks>(o.price, static_cast<Ticks>(lo / 10000 + (lo % 10000 != 0)));
    } else {
      bound = std::min<Ticks>(o.price, static_cast<Ticks>(mark * (10000 + prot) / 10000));
    }
  }
  if (t.tif == TimeInForce::kPostOnly) {
    const Ticks opp = best(o.market, !t.is_ask);
    if (opp != 0 && (t.is_ask ? opp >= t.price : opp <= t.price)) return Reject::kOk;  // canceled
  }
  match(t, bound, fills);
  return Reject::kOk;
}

void ReferenceEngine::match(Ord t, Ticks bound, std::vector<RefFill>& fills) {
  Mkt& m = mkts_[t.market];
  while (t.remaining > 0) {
    const Ticks opp = best(t.market, !t.is_ask);
    if (opp == 0 || (t.is_ask ? opp < bound : opp > bound)) break;
    auto& q = t.is_ask ? m.bids.rbegin()->second : m.asks.begin()->second;
    Ord& mk = orders_.at(q.front());
    if (mk.account == t.account) {
      if (t.stp == StpMode::kExpireMaker) {
        drop(mk.id);
        continue;
      }
      if (t.stp == StpMode::kExpireTaker) return;
      if (t.stp == StpMode::kExpireBoth) {
        drop(mk.id);
        return;
      }
      const Lots d = std::min(t.remaining, mk.remaining);
      t.remaining -= d;
      mk.remaining -= d;
      if (mk.remaining == 0) drop(mk.id);
      continue;
    }
    Lots qty = std::min(t.remaining, mk.remaining);
    if (mk.reduce_only) {
      const Lots room = ro_room(accs_[mk.account], t.market, mk.is_ask);
      if (room == 0) {
        drop(mk.id);
        continue;
      }
      qty = std::min(qty, room);
    }
    if (t.reduce_only) {
      const Lots room = ro_room(accs_[t.account], t.market, t.is_ask);
      if (room == 0) return;
      qty = std::min(qty, room);
    }
    const Ticks px = mk.price;
    const __int128 n = static_cast<__int128>(qty) * px * m.mult;
    const Usdc tf = t.id == liq_order_
                        ? 0  // liquidation orders pay no trading fee
                        : static_cast<Usdc>((n * m.p.taker_fee_ppm + 999'999) / 1'000'000);
    const Usdc mf = static_cast<Usdc>((n * m.p.maker_fee_ppm + 999'999) / 1'000'000);
    fills.push_back(RefFill{mk.id, t.id, mk.account, t.account, px, qty, mf, tf});
    ++next_trade_;
    settle(t.account, m, t.market, !t.is_ask, qty, px, tf);
    settle(mk.account, m, t.market, !mk.is_ask, qty, px, mf);
    accs_[cfg_.fee_account].collateral += tf + mf;
    if (t.id == liq_order_) {  // a liquidation fill better than the zero price pays the fund
      const __int128 better = t.is_ask ? px - liq_zp_ : liq_zp_ - px;
      if (better > 0) {
        const __int128 lf = std::min<__int128>(static_cast<__int128>(qty) * m.mult * better,
                                               n * cfg_.liquidation_fee / 10000);
        Pos& tp = accs_[t.account].pos[t.market];  // an isolated position pays from its margin
        (tp.iso ? tp.alloc : accs_[t.account].collateral) -= static_cast<Usdc>(lf);
        accs_[cfg_.insurance_account].collateral += static_cast<Usdc>(lf);
      }
    }
    t.remaining -= qty;
    m.last = px;
    m.trades += 1;
    m.vol_base += qty;
    m.vol_quote += static_cast<Usdc>(n);
    mk.remaining -= qty;
    if (mk.remaining == 0) drop(mk.id);
  }
  if (t.remaining > 0 && t.tif != TimeInForce::kIoc) rest(t);
}

void ReferenceEngine::settle(AccountIndex ai, Mkt& m, MarketId mid, bool is_buy, Lots q, Ticks px,
                             Usdc fee) {
  Acc& a = accs_.at(ai);
  Pos& p = a.pos[mid];
  const Lots before = p.size;
  Usdc& pot = p.iso ? p.alloc : a.collateral;  // where realized PnL goes
  const Lots dir = is_buy ? 1 : -1;
  for (Lots i = 0; i < 1; ++i) {  // one pass: reduce part, then open part
    if (p.size != 0 && (p.size > 0) != is_buy) {
      const Lots held = p.size < 0 ? -p.size : p.size;
      const Lots close = std::min(q, held);
      const __int128 portion = static_cast<__int128>(p.entry) * close / held;
      const __int128 proceeds = static_cast<__int128>(close) * px * m.mult;
      const Usdc pnl = static_cast<Usdc>(-dir * proceeds - portion);
      p.entry -= static_cast<Usdc>(portion);
      p.size += dir * close;
      p.realized += pnl;
      pot += pnl;
      q -= close;
    }
    p.size += dir * q;
    p.entry += static_cast<Usdc>(dir * static_cast<__int128>(q) * px * m.mult);
  }
  a.collateral -= fee;
  if (!p.iso) return;
  // What the fill opened brings its initial margin over from cross collateral (as much as there
  // is); a closed position hands its margin back, unless it is being liquidated.
  const Lots now = p.size < 0 ? -p.size : p.size, was = before < 0 ? -before : before;
  const Lots opened =
      (before == 0 || (before > 0) != (p.size > 0)) ? now : std::max<Lots>(now - was, 0);
  if (opened > 0) {
    const Bps4 imf = p.imf ? std::max(p.imf, m.p.min_imf) : m.p.default_imf;
    const __int128 im = (static_cast<__int128>(opened) * px * m.mult * imf + 9999) / 10000;
    const Usdc move =
        static_cast<Usdc>(std::clamp<__int128>(im, 0, std::max<Usdc>(a.collateral, 0)));
    a.collateral -= move;
    p.alloc += move;
  }
  if (p.size == 0 && !(iso_liq_ && iso_liq_account_ == ai && iso_liq_market_ == mid)) {
    a.collateral += p.alloc;
    p.alloc = 0;
  }
}

Reject ReferenceEngine::cancel(const Tx& tx, OrderIndex& out) {
  Acc* a = nullptr;
  Key* k = nullptr;
  if (Reject r = auth(tx, a, k); r != Reject::kOk) return r;
  if (!mkts_.count(tx.cancel.market)) return Reject::kInvalidMarket;
  const Ord* o = find(tx.h.account, tx.cancel.market, tx.cancel.index);
  if (o == nullptr) return Reject::kOrderNotFound;
  k->nonce = tx.h.nonce + 1;
  out = o->id;
  drop(o->id);
  return Reject::kOk;
}

Reject ReferenceEngine::cancel_all(const Tx& tx) {
  Acc* a = nullptr;
  Key* k = nullptr;
  if (Reject r = auth(tx, a, k); r != Reject::kOk) return r;
  const MarketId mid = tx.cancel_all.market;
  if (tx.cancel_all.tif != 0) return Reject::kUnsupportedCancelAllMode;
  if (mid != kAllMarkets && !mkts_.count(mid)) return Reject::kInvalidMarket;
  k->nonce = tx.h.nonce + 1;
  std::vector<OrderIndex> mine;
  for (auto& [id, o] : orders_)
    if (o.account == tx.h.account && (mid == kAllMarkets || o.market == mid)) mine.push_back(id);
  for (OrderIndex id : mine) drop(id);
  return Reject::kOk;
}

Reject ReferenceEngine::modify(const Tx& tx, OrderIndex& out, std::vector<RefFill>& fills) {
  Acc* a = nullptr;
  Key* k = nullptr;
  if (Reject r = auth(tx, a, k); r != Reject::kOk) return r;
  const ModifyOrderTx& x = tx.modify;
  if (!mkts_.count(x.market)) return Reject::kInvalidMarket;
  Mkt& m = mkts_[x.market];
  const Ord* found = find(tx.h.account, x.market, x.index);
  if (found == nullptr) return Reject::kOrderNotFound;
  Ord o = *found;
  if (m.p.status == MarketStatus::kHalted) return Reject::kMarketStatus;
  if (m.p.status == MarketStatus::kPostOnly && o.tif != TimeInForce::kPostOnly)
    return Reject::kMarketStatus;
  if (m.p.status == MarketStatus::kReduceOnly && !o.reduce_only) return Reject::kMarketStatus;
  if (x.trigger_price != 0) return Reject::kInvalidTrigger;
  if (x.base_amount <= 0 || x.base_amount > kMaxBaseAmount) return Reject::kInvalidBaseAmount;
  if (x.price <= 0 || x.price > kMaxPriceTicks) return Reject::kInvalidPrice;
  if (!o.reduce_only) {
    if (x.base_amount < m.p.min_base_lots) return Reject::kInvalidBaseAmount;
    if (static_cast<__int128>(x.base_amount) * x.price * m.mult < m.p.min_quote_usdc)
      return Reject::kInvalidAmount;
  }
  const __int128 px = static_cast<__int128>(x.price) * 10000, mark = m.mark;
  if (!o.is_ask && px > mark * (10000 + m.p.price_band)) return Reject::kPriceBandFatFinger;
  if (o.is_ask && px < mark * (10000 - m.p.price_band)) return Reject::kPriceBandFatFinger;
  if (!o.reduce_only) {
    const Lots d = x.base_amount - o.remaining;
    __int128 tav, imr, plain;
    margin(tx.h.account, x.market, o.is_ask ? 0 : d, o.is_ask ? d : 0, tav, imr, plain);
    if (tav < imr && imr > plain) return Reject::kNotEnoughMargin;
  }
  k->nonce = tx.h.nonce + 1;
  out = o.id;
  if (x.price == o.price && x.base_amount <= o.remaining) {
    orders_.at(o.id).remaining = x.base_amount;
    return Reject::kOk;
  }
  drop(o.id);
  o.initial = o.initial - o.remaining + x.base_amount;
  o.remaining = x.base_amount;
  o.price = x.price;
  if (o.reduce_only) o.remaining = std::min(o.remaining, ro_room(*a, x.market, o.is_ask));
  if (o.remaining == 0) return Reject::kOk;
  if (o.tif == TimeInForce::kPostOnly) {
    const Ticks opp = best(x.market, !o.is_ask);
    if (opp != 0 && (o.is_ask ? opp >= o.price : opp <= o.price)) return Reject::kOk;
  }
  match(o, o.price, fills);
  return Reject::kOk;
}

// ---- canonical digest, shared by both implementations ----

namespace {
struct DigestPos {
  MarketId market;
  Lots size;
  Usdc entry, realized;
  Bps4 imf;
  bool iso;
  Usdc alloc;
};
void add_account(StableHasher& h, AccountIndex idx, AccountIndex master, Usdc coll,
                 const std::vector<DigestPos>& pos,
                 const std::vector<std::pair<uint8_t, std::pair<int64_t, uint32_t>>>& keys) {
  h.add(idx);
  h.add(master);
  h.add_i(coll);
  for (auto& p : pos) {
    if (p.size == 0 && p.entry == 0 && p.realized == 0 && p.imf == 0) continue;
    for (int64_t v :
         {int64_t{p.market}, p.size, p.entry, p.realized, int64_t{p.imf}, int64_t{p.iso}, p.alloc})
      h.add_i(v);
  }
  for (auto& [i, nv] : keys) {
    h.add(i);
    h.add_i(nv.first);
    h.add(nv.second);
  }
}
}  // namespace

uint64_t ReferenceEngine::digest() const {
  StableHasher h;
  h.add(next_order_);
  h.add(next_sub_);
  h.add(next_trade_);
  h.add_i(op_nonce_);
  h.add_i(deposits_);
  h.add_i(withdrawals_);
  for (auto& [id, m] : mkts_) {
    h.add(id);
    for (int64_t v : {m.index, m.mark, m.last, static_cast<int64_t>(m.trades), m.vol_base,
                      m.vol_quote, int64_t(m.p.status)})
      h.add_i(v);
    auto add_level = [&](Ticks px, const std::deque<OrderIndex>& q) {
      h.add_i(px);
      for (OrderIndex oid : q) {
        const Ord& o = orders_.at(oid);
        for (int64_t v : {int64_t(o.id), int64_t(o.coi), int64_t(o.account), o.remaining, o.initial,
                          o.expiry_ms, int64_t{o.reduce_only}})
          h.add_i(v);
      }
    };
    for (auto it = m.bids.rbegin(); it != m.bids.rend(); ++it) add_level(it->first, it->second);
    h.add(0xB1D5);
    for (auto& [px, q] : m.asks) add_level(px, q);
  }
  for (AccountIndex ai : created_) {
    const Acc& a = accs_.at(ai);
    std::vector<DigestPos> pos;
    for (auto& [mid, p] : a.pos)
      pos.push_back({mid, p.size, p.entry, p.realized, p.imf, p.iso, p.alloc});
    std::vector<std::pair<uint8_t, std::pair<int64_t, uint32_t>>> keys;
    for (auto& [i, k] : a.keys) keys.push_back({i, {k.nonce, k.version}});
    add_account(h, ai, a.master, a.collateral, pos, keys);
  }
  return h.digest();
}

uint64_t canonical_digest(const Engine& e) {
  StableHasher h;
  // Engine internals the reference mirrors: counters come from observable effects.
  h.add(e.next_order_index());
  h.add(e.next_sub_account());
  h.add(e.next_trade_id());
  h.add_i(e.operator_next_nonce());
  h.add_i(e.total_deposits());
  h.add_i(e.total_withdrawals());
  for (int id = 0; id < kMaxMarkets; ++id) {
    const Market* m = e.market(static_cast<MarketId>(id));
    if (m == nullptr) continue;
    h.add(static_cast<uint64_t>(id));
    for (int64_t v :
         {m->index_price, m->mark_price, m->last_trade_price, static_cast<int64_t>(m->trade_count),
          m->volume_base, m->volume_quote, int64_t(m->params.status)})
      h.add_i(v);
    for (int side = 0; side < 2; ++side) {
      if (side == 1) h.add(0xB1D5);
      for (size_t i = 0; i < m->book.level_count(side); ++i) {
        const Level& l = m->book.level(side, i);
        h.add_i(l.price);
        for (uint32_t s = l.head; s != kNoSlot; s = e.orders()[s].next) {
          const Order& o = e.orders()[s];
          for (int64_t v :
               {int64_t(o.order_index), int64_t(o.client_order_index), int64_t(o.account),
                o.remaining, o.initial, o.expiry_ms, int64_t{o.reduce_only}})
            h.add_i(v);
        }
      }
    }
  }
  for (const Account& a : e.accounts()) {
    std::vector<DigestPos> pos;
    for (const Position& p : a.positions)
      pos.push_back({p.market, p.size, p.entry_notional, p.realized_pnl, p.imf, p.isolated != 0,
                     p.allocated});
    std::vector<std::pair<uint8_t, std::pair<int64_t, uint32_t>>> keys;
    for (const ApiKey& k : a.keys) keys.push_back({k.index, {k.next_nonce, k.version}});
    add_account(h, a.index, a.master, a.collateral, pos, keys);
  }
  return h.digest();
}

}  // namespace tachyon::testing
