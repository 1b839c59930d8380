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
  if (o.pending != 0) {
    orders_.erase(id);
    return;
  }
  Mkt& m = mkts_[o.market];
  auto& side = o.is_ask ? m.asks : m.bids;
  auto& q = side[o.price];
  q.erase(std::find(q.begin(), q.end(), id));
  if (q.empty()) side.erase(o.price);
  orders_.erase(id);
}

namespace {
bool trigger_type(OrderType t) {
  return t == OrderType::kStopLoss || t == OrderType::kStopLossLimit ||
         t == OrderType::kTakeProfit || t == OrderType::kTakeProfitLimit;
}
// Executes like a market order (walks the book to the protection bound).
bool market_like(OrderType t) {
  return t == OrderType::kMarket || t == OrderType::kStopLoss || t == OrderType::kTakeProfit;
}
bool status_refuses(MarketStatus s, TimeInForce tif, bool reduce_only) {
  return s == MarketStatus::kHalted ||
         (s == MarketStatus::kPostOnly && tif != TimeInForce::kPostOnly) ||
         (s == MarketStatus::kReduceOnly && !reduce_only);
}
constexpr int64_t kSliceMs = 30'000;  // a TWAP slice every 30 s
// The slice due at `due`: what is left spread evenly (rounded up) over the slices left.
Lots slice_size(Lots left, int64_t due, int64_t end) {
  int64_t slices = (end - due) / kSliceMs + ((end - due) % kSliceMs > 0 ? 1 : 0);
  if (slices < 1) slices = 1;
  return left / slices + (left % slices != 0 ? 1 : 0);
}
}  // namespace

int ReferenceEngine::resting_in(MarketId mid) const {
  int n = 0;
  for (auto& [id, x] : orders_) n += x.market == mid && x.pending == 0;
  return n;
}

bool ReferenceEngine::margin_refuses(AccountIndex ai, MarketId mid, bool is_ask, Lots size) const {
  __int128 tav, imr, plain;
  margin(ai, mid, is_ask ? 0 : size, is_ask ? size : 0, tav, imr, plain);
  return tav < imr && imr > plain;
}

Ticks ReferenceEngine::protection(const Mkt& m, bool is_ask, Ticks price) const {
  const __int128 mark = m.mark;
  const int prot = m.p.market_protection;
  if (is_ask) {
    const __int128 lo = mark * (10000 - prot);
    return std::max<Ticks>(price, static_cast<Ticks>(lo / 10000 + (lo % 10000 != 0)));
  }
  return std::min<Ticks>(price, static_cast<Ticks>(mark * (10000 + prot) / 10000));
}

Reject ReferenceEngine::check_new(AccountIndex ai, const CreateOrderTx& o, size_t extra,
                                  Lots& size) const {
  const Acc& a = accs_.at(ai);
  if (!mkts_.count(o.market)) return Reject::kInvalidMarket;
  const Mkt& m = mkts_.at(o.market);
  if (status_refuses(m.p.status, o.tif, o.reduce_only)) return Reject::kMarketStatus;
  const bool trig = trigger_type(o.type), twap = o.type == OrderType::kTwap;
  const bool mkt = market_like(o.type);
  if (o.type != OrderType::kLimit && !mkt && !trig && !twap) return Reject::kInvalidOrderType;
  if (static_cast<int>(o.tif) > 2) return Reject::kInvalidTimeInForce;
  if (o.is_ask > 1 || o.reduce_only > 1) return Reject::kInvalidTxInfo;
  if (static_cast<int>(o.stp) > 3) return Reject::kInvalidStpMode;
  if (trig ? (o.trigger_price <= 0 || o.trigger_price > kMaxPriceTicks) : o.trigger_price != 0)
    return Reject::kInvalidTrigger;
  if (mkt && o.tif != TimeInForce::kIoc) return Reject::kInvalidTimeInForce;
  if (twap && o.tif != TimeInForce::kGoodTillTime) return Reject::kInvalidTimeInForce;
  if (twap && o.base_amount <= 0) return Reject::kInvalidBaseAmount;
  if (trig) {
    if (o.order_expiry_ms <= now_ms_) return Reject::kInvalidExpiry;  // how long it may wait
  } else {
    if (o.tif == TimeInForce::kIoc && o.order_expiry_ms != 0) return Reject::kInvalidExpiry;
    if (o.tif != TimeInForce::kIoc && o.order_expiry_ms <= now_ms_) return Reject::kInvalidExpiry;
  }
  if (o.client_order_index > kMaxClientOrderIndex) return Reject::kInvalidClientOrderIndex;
  if (o.client_order_index != 0) {
    for (auto& [id, x] : orders_)
      if (x.account == ai && x.coi == o.client_order_index) return Reject::kClientOrderIndexExists;
  }
  if (o.base_amount < 0 || o.base_amount > kMaxBaseAmount || (o.base_amount == 0 && !o.reduce_only))
    return Reject::kInvalidBaseAmount;
  if (o.price <= 0 || o.price > kMaxPriceTicks) return Reject::kInvalidPrice;
  if (!o.reduce_only) {
    if (o.base_amount < m.p.min_base_lots) return Reject::kInvalidBaseAmount;
    if (static_cast<__int128>(o.base_amount) * o.price * m.mult < m.p.min_quote_usdc)
      return Reject::kInvalidAmount;
  }
  // The band: around the mark, or for a trigger order around its trigger (where it executes).
  const __int128 px = static_cast<__int128>(o.price) * 10000;
  const __int128 ref = trig ? o.trigger_price : m.mark;
  if (!mkt) {
    if (!o.is_ask && px > ref * (10000 + m.p.price_band)) return Reject::kPriceBandFatFinger;
    if (o.is_ask && px < ref * (10000 - m.p.price_band)) return Reject::kPriceBandFatFinger;
  } else {
    if (o.is_ask && px > ref * (10000 + m.p.price_band)) return Reject::kFarFromMark;
    if (!o.is_ask && px < ref * (10000 - m.p.price_band)) return Reject::kFarFromMark;
  }
  if (orders_.size() + extra >= cfg_.max_orders) return Reject::kBookFull;
  if (trig) {  // size, room and margin are judged when it fires
    if (open_count(ai, o.market) >= m.p.max_orders_per_account) return Reject::kMaxOrdersPerAccount;
    size = o.base_amount;
    return Reject::kOk;
  }
  size = twap ? slice_size(o.base_amount, now_ms_, o.order_expiry_ms) : o.base_amount;
  if (o.reduce_only) {
    auto pit = a.pos.find(o.market);
    if (pit == a.pos.end() || pit->second.size == 0) return Reject::kNoPosition;
    const Lots room = ro_room(a, o.market, o.is_ask);
    if (room == 0) return Reject::kReduceOnlyIncreasesPosition;
    size = size == 0 ? room : std::min(size, room);
  }
  if (o.tif != TimeInForce::kIoc) {
    if (open_count(ai, o.market) >= m.p.max_orders_per_account) return Reject::kMaxOrdersPerAccount;
    if (resting_in(o.market) >= static_cast<int>(m.p.max_orders))
      return Reject::kMaxOrdersPerMarket;
  }
  if (!o.reduce_only && margin_refuses(ai, o.market, o.is_ask, size))
    return Reject::kNotEnoughMargin;
  return Reject::kOk;
}

Reject ReferenceEngine::place(const Tx& tx, OrderIndex& out, std::vector<RefFill>& fills) {
  Acc* a = nullptr;
  Key* k = nullptr;
  if (Reject r = auth(tx, a, k); r != Reject::kOk) return r;
  const CreateOrderTx& o = tx.order;
  Lots size = 0;
  if (Reject r = check_new(tx.h.account, o, 0, size); r != Reject::kOk) return r;
  k->nonce = tx.h.nonce + 1;
  if (trigger_type(o.type)) {
    out = wait(tx.h.account, o, 1, 0);
    return Reject::kOk;
  }
  if (o.type == OrderType::kTwap) {  // the first slice now
    CreateOrderTx t = o;
    t.trigger_price = now_ms_;
    out = wait(tx.h.account, t, 3, 0);
    twap_slice(out, fills);
    return Reject::kOk;
  }
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
  const Mkt& m = mkts_.at(o.market);
  const Ticks bound = o.type == OrderType::kMarket ? protection(m, t.is_ask, o.price) : o.price;
  if (t.tif == TimeInForce::kPostOnly) {
    const Ticks opp = best(o.market, !t.is_ask);
    if (opp != 0 && (t.is_ask ? opp >= t.price : opp <= t.price)) {  // canceled
      gone(t);
      return Reject::kOk;
    }
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
        remove(mk.id);
        continue;
      }
      if (t.stp == StpMode::kExpireTaker) return gone(t);
      if (t.stp == StpMode::kExpireBoth) {
        remove(mk.id);
        return gone(t);
      }
      const Lots d = std::min(t.remaining, mk.remaining);
      t.remaining -= d;
      mk.remaining -= d;
      if (mk.remaining == 0) remove(mk.id);
      continue;
    }
    Lots qty = std::min(t.remaining, mk.remaining);
    if (mk.reduce_only) {
      const Lots room = ro_room(accs_[mk.account], t.market, mk.is_ask);
      if (room == 0) {
        remove(mk.id);
        continue;
      }
      qty = std::min(qty, room);
    }
    if (t.reduce_only) {
      const Lots room = ro_room(accs_[t.account], t.market, t.is_ask);
      if (room == 0) return gone(t);
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
    if (mk.remaining == 0) remove(mk.id);
  }
  if (t.remaining > 0 && t.tif != TimeInForce::kIoc) {
    rest(t);
  } else {
    gone(t);
  }
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
  remove(o->id);
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
  for (OrderIndex id : mine)
    if (orders_.count(id)) remove(id);  // a primary that goes may have taken its children
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
  if (o.pending != 0) {  // a waiting order: new size, price and trigger; it waits again
    if (o.pending == 3) return Reject::kInvalidOrderType;  // a TWAP is not modified
    if (o.pending != 1) return Reject::kInvalidTrigger;    // a child waits for its primary
    if (x.trigger_price <= 0 || x.trigger_price > kMaxPriceTicks) return Reject::kInvalidTrigger;
    if (x.base_amount < 0 || x.base_amount > kMaxBaseAmount ||
        (x.base_amount == 0 && !o.reduce_only))
      return Reject::kInvalidBaseAmount;
    if (x.price <= 0 || x.price > kMaxPriceTicks) return Reject::kInvalidPrice;
    if (!market_like(o.type)) {
      const __int128 px = static_cast<__int128>(x.price) * 10000, ref = x.trigger_price;
      if (!o.is_ask && px > ref * (10000 + m.p.price_band)) return Reject::kPriceBandFatFinger;
      if (o.is_ask && px < ref * (10000 - m.p.price_band)) return Reject::kPriceBandFatFinger;
    }
    k->nonce = tx.h.nonce + 1;
    out = o.id;
    Ord& w = orders_.at(o.id);
    w.remaining = w.initial = x.base_amount;
    w.price = x.price;
    w.trigger = x.trigger_price;
    if (reached(w)) due_.push_back(w.id);
    return Reject::kOk;
  }
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
  if (o.remaining == 0) {
    gone(o);
    return Reject::kOk;
  }
  if (o.tif == TimeInForce::kPostOnly) {
    const Ticks opp = best(x.market, !o.is_ask);
    if (opp != 0 && (o.is_ask ? opp >= o.price : opp <= o.price)) {
      gone(o);
      return Reject::kOk;
    }
  }
  match(o, o.price, fills);
  return Reject::kOk;
}

// ---- orders in waiting: triggers, grouped orders, TWAPs ----

void ReferenceEngine::remove(OrderIndex id) {
  const Ord o = orders_.at(id);
  drop(id);
  gone(o);
}

void ReferenceEngine::gone(Ord o) {
  if (o.sibling != 0 && orders_.count(o.sibling)) {  // the other order of an OCO pair goes too
    orders_.at(o.sibling).sibling = 0;
    remove(o.sibling);
  }
  if (o.child != 0) {  // a primary's children: armed if it filled at all, else canceled
    std::vector<OrderIndex> kids{o.child};
    if (orders_.count(o.child) && orders_.at(o.child).sibling != 0)
      kids.push_back(orders_.at(o.child).sibling);
    const bool filled = o.initial > o.remaining;
    for (OrderIndex kid : kids) {
      if (!orders_.count(kid)) continue;
      if (filled) {
        arm(kid);
      } else {
        remove(kid);
      }
    }
  }
}

bool ReferenceEngine::reached(const Ord& o) const {
  // a stop-loss sell or a take-profit buy waits for the mark to fall to its trigger, the others
  // for it to rise to it
  const bool stop = o.type == OrderType::kStopLoss || o.type == OrderType::kStopLossLimit;
  const Ticks mark = mkts_.at(o.market).mark;
  return stop == o.is_ask ? mark <= o.trigger : mark >= o.trigger;
}

OrderIndex ReferenceEngine::wait(AccountIndex ai, const CreateOrderTx& o, uint8_t pending,
                                 OrderIndex parent) {
  Ord w{next_order_++,
        o.client_order_index,
        ai,
        o.market,
        o.is_ask != 0,
        o.price,
        o.base_amount,
        o.base_amount,
        o.order_expiry_ms,
        o.tif,
        o.type,
        o.reduce_only != 0,
        o.stp};
  w.pending = pending;
  w.trigger = o.trigger_price;
  w.parent = parent;
  orders_[w.id] = w;
  if (pending == 1 && reached(w)) due_.push_back(w.id);
  return w.id;
}

void ReferenceEngine::arm(OrderIndex id) {
  Ord& o = orders_.at(id);
  if (o.pending != 2) return;
  o.pending = 1;
  if (reached(o)) due_.push_back(id);
}

void ReferenceEngine::fire(OrderIndex id, std::vector<RefFill>& fills) {
  auto it = orders_.find(id);
  if (it == orders_.end() || it->second.pending == 0) return;
  Ord o = it->second;
  orders_.erase(it);
  if (o.sibling != 0) {  // OCO: the other one goes
    const OrderIndex other = o.sibling;
    o.sibling = 0;
    if (orders_.count(other)) {
      orders_.at(other).sibling = 0;
      remove(other);
    }
  }
  o.pending = 0;
  o.trigger = 0;
  const Mkt& m = mkts_.at(o.market);
  if (status_refuses(m.p.status, o.tif, o.reduce_only)) return gone(o);
  if (o.reduce_only) {
    const Lots room = ro_room(accs_.at(o.account), o.market, o.is_ask);
    o.remaining = o.remaining == 0 ? room : std::min(o.remaining, room);
    o.initial = o.remaining;
    if (o.remaining == 0) return gone(o);
  } else if (margin_refuses(o.account, o.market, o.is_ask, o.remaining)) {
    return gone(o);
  }
  if (o.tif != TimeInForce::kIoc && resting_in(o.market) >= static_cast<int>(m.p.max_orders))
    return gone(o);
  const Ticks bound = market_like(o.type) ? protection(m, o.is_ask, o.price) : o.price;
  if (o.tif == TimeInForce::kPostOnly) {
    const Ticks opp = best(o.market, !o.is_ask);
    if (opp != 0 && (o.is_ask ? opp >= o.price : opp <= o.price)) return gone(o);
  }
  match(o, bound, fills);
}

void ReferenceEngine::fire_twaps(std::vector<RefFill>& fills) {
  for (;;) {  // the earliest due slice first (ties: the lower order index)
    OrderIndex next = 0;
    int64_t when = 0;
    for (auto& [id, o] : orders_) {
      if (o.pending != 3 || o.trigger > now_ms_) continue;
      if (next == 0 || o.trigger < when) {
        next = id;
        when = o.trigger;
      }
    }
    if (next == 0) return;
    twap_slice(next, fills);
  }
}

void ReferenceEngine::twap_slice(OrderIndex id, std::vector<RefFill>& fills) {
  Ord& p = orders_.at(id);
  const Mkt& m = mkts_.at(p.market);
  const int64_t due = p.trigger;
  const bool last = due + kSliceMs >= p.expiry_ms;
  Lots size = slice_size(p.remaining, due, p.expiry_ms);
  p.trigger = last ? 0 : due + kSliceMs;
  // a halted market (or a full pool) skips the slice
  const bool run = !status_refuses(m.p.status, TimeInForce::kIoc, p.reduce_only) &&
                   orders_.size() < cfg_.max_orders;
  if (run && p.reduce_only) {
    size = std::min(size, ro_room(accs_.at(p.account), p.market, p.is_ask));
    if (size == 0) return remove(id);
  } else if (run && margin_refuses(p.account, p.market, p.is_ask, size)) {
    return remove(id);
  }
  if (run) {
    Ord t{next_order_++,
          0,
          p.account,
          p.market,
          p.is_ask,
          p.price,
          size,
          size,
          0,
          TimeInForce::kIoc,
          OrderType::kTwapSub,
          p.reduce_only,
          p.stp};
    t.parent = id;
    const Lots before = accs_.at(p.account).pos[p.market].size;
    const AccountIndex ai = p.account;
    const MarketId mid = p.market;
    match(t, protection(m, t.is_ask, t.price), fills);
    const Lots moved = accs_.at(ai).pos[mid].size - before;
    Ord& q = orders_.at(id);
    q.remaining -= std::min(q.remaining, moved < 0 ? -moved : moved);
  }
  Ord& q = orders_.at(id);
  if (q.remaining == 0 || last) remove(id);
}

Reject ReferenceEngine::grouped(const Tx& tx, OrderIndex& out, std::vector<RefFill>& fills) {
  Acc* a = nullptr;
  Key* k = nullptr;
  if (Reject r = auth(tx, a, k); r != Reject::kOk) return r;
  const CreateGroupedOrdersTx& g = tx.grouped;
  const bool oco = g.grouping == Grouping::kOco;
  const bool otoco = g.grouping == Grouping::kOtoco;
  const bool with_primary = g.grouping == Grouping::kOto || otoco;
  if (!oco && !with_primary) return Reject::kInvalidGrouping;
  if (g.count != (otoco ? 3 : 2)) return Reject::kInvalidGrouping;
  const MarketId mid = g.orders[0].market;
  const int first_child = with_primary ? 1 : 0;
  for (int i = 0; i < g.count; ++i) {
    const CreateOrderTx& o = g.orders[i];
    if (o.market != mid) return Reject::kInvalidGrouping;
    const bool primary = with_primary && i == 0;
    // a primary is a plain order, the others trigger orders, reduce-only, all on one side (the
    // other side of the primary)
    if (primary == trigger_type(o.type)) return Reject::kInvalidGrouping;
    if (o.type == OrderType::kTwap) return Reject::kInvalidGrouping;
    if (!primary && (!o.reduce_only || o.is_ask != g.orders[first_child].is_ask))
      return Reject::kInvalidGrouping;
    if (!primary && with_primary && o.is_ask == g.orders[0].is_ask) return Reject::kInvalidGrouping;
    for (int j = 0; j < i; ++j)
      if (o.client_order_index != 0 && o.client_order_index == g.orders[j].client_order_index)
        return Reject::kClientOrderIndexExists;
  }
  if (oco && g.orders[0].type == g.orders[1].type) return Reject::kInvalidGrouping;
  if (otoco && g.orders[1].type == g.orders[2].type) return Reject::kInvalidGrouping;
  Lots size0 = 0;
  for (int i = 0; i < g.count; ++i) {
    Lots size = 0;
    if (Reject r = check_new(tx.h.account, g.orders[i], g.count - 1, size); r != Reject::kOk)
      return r;
    if (i == 0) size0 = size;
  }
  k->nonce = tx.h.nonce + 1;
  const AccountIndex ai = tx.h.account;
  if (oco) {
    // linked before either can fire (both fire in the risk pass, at the earliest)
    const OrderIndex x = next_order_;
    const OrderIndex y = x + 1;
    out = wait(ai, g.orders[0], 1, 0);
    orders_.at(x).sibling = y;
    wait(ai, g.orders[1], 1, 0);
    orders_.at(y).sibling = x;
    return Reject::kOk;
  }
  const CreateOrderTx& po = g.orders[0];
  Ord t{next_order_++, po.client_order_index, ai,     mid,     po.is_ask != 0,      po.price, size0,
        size0,         po.order_expiry_ms,    po.tif, po.type, po.reduce_only != 0, po.stp};
  out = t.id;
  std::vector<OrderIndex> kids;
  for (int i = 1; i < g.count; ++i) kids.push_back(wait(ai, g.orders[i], 2, t.id));
  if (kids.size() == 2) {
    orders_.at(kids[0]).sibling = kids[1];
    orders_.at(kids[1]).sibling = kids[0];
  }
  t.child = kids[0];
  const Mkt& m = mkts_.at(mid);
  const Ticks bound = po.type == OrderType::kMarket ? protection(m, t.is_ask, po.price) : po.price;
  if (t.tif == TimeInForce::kPostOnly) {
    const Ticks opp = best(mid, !t.is_ask);
    if (opp != 0 && (t.is_ask ? opp >= t.price : opp <= t.price)) {
      gone(t);
      return Reject::kOk;
    }
  }
  match(t, bound, fills);
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
  Usdc funding;
};
// An order in waiting (trigger, grouped child, TWAP), in order index order.
struct DigestWaiting {
  OrderIndex id;
  uint64_t coi;
  AccountIndex account;
  MarketId market;
  bool is_ask, reduce_only;
  OrderType type;
  TimeInForce tif;
  StpMode stp;
  uint8_t pending;
  Ticks price, trigger;
  Lots remaining, initial;
  int64_t expiry_ms;
  OrderIndex parent, sibling;
};
void add_waiting(StableHasher& h, const std::vector<DigestWaiting>& w) {
  h.add(0x3A17);
  for (const DigestWaiting& o : w) {
    for (int64_t v : {int64_t(o.id), int64_t(o.coi), int64_t(o.account), int64_t{o.market},
                      int64_t{o.is_ask}, int64_t{o.reduce_only}, int64_t(o.type), int64_t(o.tif),
                      int64_t(o.stp), int64_t{o.pending}, o.price, o.trigger, o.remaining,
                      o.initial, o.expiry_ms, int64_t(o.parent), int64_t(o.sibling)})
      h.add_i(v);
  }
}
void add_account(StableHasher& h, AccountIndex idx, AccountIndex master, Usdc coll,
                 const std::vector<DigestPos>& pos,
                 const std::vector<std::pair<uint8_t, std::pair<int64_t, uint32_t>>>& keys) {
  h.add(idx);
  h.add(master);
  h.add_i(coll);
  for (auto& p : pos) {
    if (p.size == 0 && p.entry == 0 && p.realized == 0 && p.imf == 0 && p.funding == 0) continue;
    for (int64_t v : {int64_t{p.market}, p.size, p.entry, p.realized, int64_t{p.imf},
                      int64_t{p.iso}, p.alloc, p.funding})
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
                      m.vol_quote, int64_t(m.p.status), m.premium_sum, m.premium_samples,
                      m.next_funding_ms, m.last_rate, m.last_funding_ms})
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
  std::vector<DigestWaiting> waiting;
  for (auto& [id, o] : orders_) {
    if (o.pending == 0) continue;
    waiting.push_back({id, o.coi, o.account, o.market, o.is_ask, o.reduce_only, o.type, o.tif,
                       o.stp, o.pending, o.price, o.trigger, o.remaining, o.initial, o.expiry_ms,
                       o.parent, o.sibling});
  }
  add_waiting(h, waiting);
  for (AccountIndex ai : created_) {
    const Acc& a = accs_.at(ai);
    std::vector<DigestPos> pos;
    for (auto& [mid, p] : a.pos)
      pos.push_back({mid, p.size, p.entry, p.realized, p.imf, p.iso, p.alloc, p.funding});
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
          m->volume_base, m->volume_quote, int64_t(m->params.status), m->premium_sum,
          m->premium_samples, m->next_funding_ms, m->last_funding_rate, m->last_funding_ms})
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
  std::vector<DigestWaiting> waiting;
  const OrderPool& pool = e.orders();
  for (const Account& a : e.accounts()) {  // waiting orders are on their account's order list
    for (uint32_t s = a.order_head; s != kNoSlot; s = pool[s].acct_next) {
      const Order& o = pool[s];
      if (o.pending == 0) continue;
      waiting.push_back({o.order_index, o.client_order_index, o.account, o.market, o.is_ask != 0,
                         o.reduce_only != 0, o.type, o.tif, o.stp, o.pending, o.price,
                         o.trigger_price, o.remaining, o.initial, o.expiry_ms, o.parent,
                         o.sibling});
    }
  }
  std::sort(waiting.begin(), waiting.end(),
            [](const DigestWaiting& x, const DigestWaiting& y) { return x.id < y.id; });
  add_waiting(h, waiting);
  for (const Account& a : e.accounts()) {
    std::vector<DigestPos> pos;
    for (const Position& p : a.positions)
      pos.push_back({p.market, p.size, p.entry_notional, p.realized_pnl, p.imf, p.isolated != 0,
                     p.allocated, p.funding_paid});
    std::vector<std::pair<uint8_t, std::pair<int64_t, uint32_t>>> keys;
    for (const ApiKey& k : a.keys) keys.push_back({k.index, {k.next_nonce, k.version}});
    add_account(h, a.index, a.master, a.collateral, pos, keys);
  }
  return h.digest();
}

}  // namespace tachyon::testing
