// The benchmark contestants (see books.hpp).
#include "books.hpp"

#include <algorithm>
#include <cstdio>

namespace tachyon::bench {

// ---- EngineRunner ----

bool EngineRunner::execute(const Tx& tx) { return engine_->execute(tx, sink_).ok(); }

namespace {
BookView view_of(const OrderBook& book) {
  BookView v;
  for (int side = 0; side < 2; ++side) {
    for (size_t i = 0; i < book.level_count(side); ++i) {
      const Level& l = book.level(side, i);
      v.push_back(LevelView{side == 1, l.price, l.total, l.count});
    }
  }
  return v;
}
}  // namespace

BookView EngineRunner::view() const { return view_of(engine_->market(kBenchMarket)->book); }

// ---- EngineBook ----

EngineBook::EngineBook(uint32_t capacity) : pool_(capacity), slots_(2 * capacity) {
  book_.reserve(EngineConfig{}.levels_per_side);
}

bool EngineBook::execute(const Tx& tx) {
  switch (tx.h.type) {
    case TxType::kCreateOrder: return place(tx);
    case TxType::kCancelOrder: return cancel(tx);
    case TxType::kModifyOrder: return modify(tx);
    default: return true;  // deposits, market creation: nothing for a bare book to do
  }
}

BookView EngineBook::view() const { return view_of(book_); }

uint32_t EngineBook::find(OrderIndex idx, AccountIndex a, MarketId m) const {
  const uint32_t s = slots_.find(idx, pool_);
  if (s == kNoSlot) return kNoSlot;
  const Order& o = pool_[s];
  return o.account == a && o.market == m ? s : kNoSlot;
}

bool EngineBook::place(const Tx& tx) {
  const CreateOrderTx& x = tx.order;
  const uint32_t slot = pool_.alloc();
  Order& o = pool_[slot];
  o.order_index = next_index_++;
  o.account = tx.h.account;
  o.price = x.price;
  o.remaining = o.initial = x.base_amount;
  o.expiry_ms = x.order_expiry_ms;
  o.prev = o.next = o.acct_prev = o.acct_next = o.heap_pos = kNoSlot;
  o.market = x.market;
  o.is_ask = x.is_ask;
  o.type = x.type;
  o.tif = x.tif;
  match(slot);
  rest_or_release(slot);
  return true;
}

bool EngineBook::cancel(const Tx& tx) {
  const uint32_t slot = find(tx.cancel.index, tx.h.account, tx.cancel.market);
  if (slot == kNoSlot) return false;
  remove(slot);
  return true;
}

bool EngineBook::modify(const Tx& tx) {
  const ModifyOrderTx& x = tx.modify;
  const uint32_t slot = find(x.index, tx.h.account, x.market);
  if (slot == kNoSlot) return false;
  Order& o = pool_[slot];
  if (x.price == o.price && x.base_amount <= o.remaining) {  // keeps time priority
    if (x.base_amount < o.remaining) book_.reduce(pool_, slot, o.remaining - x.base_amount);
    return true;
  }
  book_.remove(pool_, slot);  // loses priority: re-enters as a taker, same order index
  slots_.erase(o.order_index, pool_);
  o.remaining = x.base_amount;
  o.price = x.price;
  match(slot);
  rest_or_release(slot);
  return true;
}

void EngineBook::match(uint32_t slot) {
  Order& t = pool_[slot];
  while (t.remaining > 0) {
    const Level* best = book_.best(!t.is_ask);
    if (best == nullptr || (t.is_ask ? best->price < t.price : best->price > t.price)) break;
    const uint32_t ms = best->head;
    Order& mk = pool_[ms];
    if (mk.account == t.account) {  // self-trade prevention: expire the maker
      remove(ms);
      continue;
    }
    const Lots q = std::min(t.remaining, mk.remaining);
    t.remaining -= q;
    ++trades_;
    if (q == mk.remaining) {
      remove(ms);
    } else {
      book_.reduce(pool_, ms, q);
    }
  }
}

void EngineBook::rest_or_release(uint32_t slot) {
  const Order& o = pool_[slot];
  if (o.remaining > 0 && o.tif != TimeInForce::kIoc) {
    book_.add(pool_, slot);
    slots_.insert(o.order_index, slot);
  } else {
    pool_.release(slot);
  }
}

void EngineBook::remove(uint32_t slot) {
  book_.remove(pool_, slot);
  slots_.erase(pool_[slot].order_index, pool_);
  pool_.release(slot);
}

// ---- StdMapBook ----

StdMapBook::StdMapBook(size_t expected_orders) { where_.reserve(expected_orders); }

bool StdMapBook::execute(const Tx& tx) {
  switch (tx.h.type) {
    case TxType::kCreateOrder: return place(tx);
    case TxType::kCancelOrder: return cancel(tx);
    case TxType::kModifyOrder: return modify(tx);
    default: return true;
  }
}

BookView StdMapBook::view() const {
  BookView v;
  for (const auto& [price, l] : bids_) {
    v.push_back(LevelView{false, price, l.total, static_cast<uint32_t>(l.orders.size())});
  }
  for (const auto& [price, l] : asks_) {
    v.push_back(LevelView{true, price, l.total, static_cast<uint32_t>(l.orders.size())});
  }
  return v;
}

bool StdMapBook::place(const Tx& tx) {
  const CreateOrderTx& x = tx.order;
  const OrderIndex id = next_index_++;
  const Lots left = take(x.is_ask, tx.h.account, x.base_amount, x.price);
  if (left > 0 && x.tif != TimeInForce::kIoc)
    rest(id, x.is_ask, tx.h.account, x.market, x.price, left);
  return true;
}

bool StdMapBook::cancel(const Tx& tx) {
  auto it = where_.find(tx.cancel.index);
  if (it == where_.end() || it->second.account != tx.h.account ||
      it->second.market != tx.cancel.market)
    return false;
  const Where w = it->second;
  where_.erase(it);
  if (w.is_ask) {
    erase(asks_, w.price, tx.cancel.index);
  } else {
    erase(bids_, w.price, tx.cancel.index);
  }
  return true;
}

bool StdMapBook::modify(const Tx& tx) {
  const ModifyOrderTx& x = tx.modify;
  auto it = where_.find(x.index);
  if (it == where_.end() || it->second.account != tx.h.account || it->second.market != x.market)
    return false;
  const Where w = it->second;
  if (x.price == w.price) {  // a shrink in place keeps time priority
    RefLevel& l = w.is_ask ? asks_.find(w.price)->second : bids_.find(w.price)->second;
    auto o = std::find_if(l.orders.begin(), l.orders.end(),
                          [id = x.index](const RefOrder& r) { return r.id == id; });
    if (x.base_amount <= o->remaining) {
      l.total -= o->remaining - x.base_amount;
      o->remaining = x.base_amount;
      return true;
    }
  }
  where_.erase(it);
  if (w.is_ask) {
    erase(asks_, w.price, x.index);
  } else {
    erase(bids_, w.price, x.index);
  }
  const Lots left = take(w.is_ask, w.account, x.base_amount, x.price);
  if (left > 0) rest(x.index, w.is_ask, w.account, w.market, x.price, left);
  return true;
}

Lots StdMapBook::take(bool taker_is_ask, AccountIndex a, Lots qty, Ticks bound) {
  return taker_is_ask ? take_from(bids_, true, a, qty, bound)
                      : take_from(asks_, false, a, qty, bound);
}

template <typename Side>
Lots StdMapBook::take_from(Side& side, bool taker_is_ask, AccountIndex a, Lots qty, Ticks bound) {
  while (qty > 0 && !side.empty()) {
    auto lvl = side.begin();
    if (taker_is_ask ? lvl->first < bound : lvl->first > bound) break;
    RefLevel& l = lvl->second;
    RefOrder& mk = l.orders.front();
    Lots q = 0;
    if (mk.account == a) {  // self-trade prevention: expire the maker
      q = mk.remaining;
    } else {
      q = std::min(qty, mk.remaining);
      qty -= q;
      ++trades_;
    }
    mk.remaining -= q;
    l.total -= q;
    if (mk.remaining == 0) {
      where_.erase(mk.id);
      l.orders.pop_front();
      if (l.orders.empty()) side.erase(lvl);
    }
  }
  return qty;
}

void StdMapBook::rest(OrderIndex id, bool is_ask, AccountIndex a, MarketId m, Ticks price,
                      Lots qty) {
  RefLevel& l = is_ask ? asks_[price] : bids_[price];
  l.orders.push_back(RefOrder{id, a, qty});
  l.total += qty;
  where_.emplace(id, Where{price, a, m, is_ask});
}

template <typename Side>
StdMapBook::RefOrder StdMapBook::erase(Side& side, Ticks price, OrderIndex id) {
  auto lvl = side.find(price);
  RefLevel& l = lvl->second;
  auto o = std::find_if(l.orders.begin(), l.orders.end(),
                        [id](const RefOrder& r) { return r.id == id; });
  const RefOrder out = *o;
  l.orders.erase(o);
  l.total -= out.remaining;
  if (l.orders.empty()) side.erase(lvl);
  return out;
}

// ---- StateUpdate construction ----

namespace {
OrderUpdate sample_order_update(uint64_t x) {
  return OrderUpdate{x,
                     x,
                     x,
                     1,
                     2,
                     3,
                     4,
                     0,
                     1,
                     OrderType::kLimit,
                     TimeInForce::kGoodTillTime,
                     RemoveReason::kFilled,
                     0,
                     0,
                     0,
                     0,
                     0,
                     0,
                     0,
                     0};
}
}  // namespace

void emit_update_memset_ctor(UpdateSink& sink, int64_t time_ns, uint64_t x) {
  StateUpdate u;
  u.type = UpdateType::kOrderAdded;
  u.time_ns = time_ns;
  u.order = sample_order_update(x);
  sink.on_update(u);
}

void emit_update_vector_zero(UpdateSink& sink, int64_t time_ns, uint64_t x) {
  static_assert(sizeof(StateUpdate) > 64);
  alignas(StateUpdate) unsigned char raw[sizeof(StateUpdate)];
  __builtin_memset(raw, 0, 64);
  __builtin_memset(raw + 64, 0, sizeof(StateUpdate) - 64);
  auto& u = *reinterpret_cast<StateUpdate*>(raw);
  u.type = UpdateType::kOrderAdded;
  u.time_ns = time_ns;
  u.order = sample_order_update(x);
  sink.on_update(u);
}

// ---- cross-check ----

namespace {
std::string diff(const char* who, const BookView& want, const BookView& got) {
  if (want == got) return {};
  char buf[256];
  size_t i = 0;
  while (i < want.size() && i < got.size() && want[i] == got[i]) ++i;
  std::snprintf(buf, sizeof(buf), "%s disagrees with the engine at level %zu (%zu vs %zu levels)",
                who, i, got.size(), want.size());
  return buf;
}
}  // namespace

std::string verify_books(const Scenario& s) {
  EngineRunner e;
  EngineBook b;
  StdMapBook r;
  auto run = [&](const Tx& tx) {
    if (!e.execute(tx)) return std::string("engine refused a tx of the stream");
    if (!b.execute(tx) || !r.execute(tx)) return std::string("a book refused a tx of the stream");
    return std::string();
  };
  for (const Tx& tx : s.setup) {
    if (std::string err = run(tx); !err.empty()) return err;
  }
  for (const Segment& seg : s.segments) {
    for (uint32_t i = seg.begin; i < seg.end; ++i) {
      if (std::string err = run(s.ops[i]); !err.empty()) return err;
    }
    if (!seg.timed && &seg != &s.segments.back()) continue;
    const BookView want = e.view();
    if (std::string d = diff(EngineBook::kName, want, b.view()); !d.empty()) return d;
    if (std::string d = diff(StdMapBook::kName, want, r.view()); !d.empty()) return d;
    const uint64_t trades = e.engine().market(kBenchMarket)->trade_count;
    if (b.trades() != trades || r.trades() != trades) return "trade counts disagree";
  }
  return {};
}

}  // namespace tachyon::bench
