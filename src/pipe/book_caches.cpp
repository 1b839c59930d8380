// The read model's books (book_caches.hpp): the caches kept from the update stream, and their
// publication, each snapshot built from what changed since the recycled one was published.
#include "tachyon/pipe/book_caches.hpp"

#include <algorithm>

#include "tachyon/core/assert.hpp"
#include "tachyon/core/cache_warm.hpp"
#include "tachyon/engine/engine.hpp"

namespace tachyon::pipe {

namespace {
// Position of a price in a side kept worst first: the touch, where most levels come and go, is
// the back of the vector (an insert or erase there moves nothing; best first, a new best level
// moved every level of the side, ~10 KB at 400 levels).
size_t level_pos(const std::vector<PriceLevel>& v, bool is_ask, Ticks price) {
  return static_cast<size_t>(std::lower_bound(v.begin(), v.end(), price,
                                              [is_ask](const PriceLevel& l, Ticks p) {
                                                return is_ask ? l.price > p : l.price < p;
                                              }) -
                             v.begin());
}
}  // namespace

BookCaches::BookCaches(uint32_t max_readers, size_t book_history, size_t node_capacity)
    : book_history_(book_history),
      deltas_(kMaxMarkets),
      caches_(kMaxMarkets),
      nodes_(node_capacity),
      in_collect_pending_(kMaxMarkets, 0) {
  collect_pending_.reserve(kMaxMarkets);
  for (int m = 0; m < kMaxMarkets; ++m) {
    books_.push_back(std::make_unique<Published<BookSnapshot>>(max_readers));
    books_.back()->enable_recycling();
  }
}

BookCaches::~BookCaches() {
  for (auto& d : deltas_) delete d.load(std::memory_order_acquire);
}

// What rest_order() does per order, built a level at a time: the engine's levels already hold
// their totals and counts, and their orders oldest first. Every market starts with a published
// (maybe empty) snapshot.
uint32_t BookCaches::seed_book(const Engine& e, MarketId m, int64_t now_ns, uint64_t nonce) {
  const Market* mk = e.market(m);
  Cache& c = caches_[m];
  c.engine_ts_ns = now_ns;
  c.nonce = nonce;
  // A batch touches a level per fill, rest and cancel: sized here for the batches a busy market
  // sees, so that its first large batch does not allocate on the apply thread.
  c.touched.reserve(kTouchedReserve);
  mark_changed(m);
  for (int side = 0; side < 2; ++side) {
    Side& sd = side ? c.asks : c.bids;
    sd.levels.reserve(mk->book.level_count(side));
    sd.fifo.reserve(mk->book.level_count(side));
    for (size_t i = 0; i < mk->book.level_count(side); ++i) {
      const Level& l = mk->book.level(side, i);
      sd.levels.push_back(PriceLevel{l.price, l.total, l.count});
      c.touched.emplace_back(static_cast<uint8_t>(side), l.price);
      Fifo f;
      for (uint32_t s = l.head; s != kNoSlot; s = e.orders()[s].next) {
        const Order& o = e.orders()[s];
        const uint32_t n = nodes_.allocate(o.order_index);
        nodes_[n] = OrderNodes::Node{
            BookOrder{o.order_index, o.account, o.price, o.remaining, o.initial, o.expiry_ms},
            f.tail, OrderNodes::kNone, m, o.is_ask};
        if (f.tail != OrderNodes::kNone) nodes_[f.tail].next = n;
        if (f.head == OrderNodes::kNone) f.head = n;
        f.tail = n;
        last_rested_ = std::max(last_rested_, o.order_index);
      }
      sd.fifo.push_back(f);
    }
    // kept worst first (level_pos)
    std::reverse(sd.levels.begin(), sd.levels.end());
    std::reverse(sd.fifo.begin(), sd.fifo.end());
  }
  return static_cast<uint32_t>(nodes_.size());
}

// Each cell prefetched 16 orders ahead: an insert is otherwise a cache (and TLB) miss into a
// ring sized for every order.
void BookCaches::index_nodes(uint32_t begin, uint32_t end) {
  for (uint32_t k = begin; k < std::min(end, begin + 16); ++k)
    nodes_.prefetch(nodes_[k].o.order_index);
  for (uint32_t s = begin; s < end; ++s) {
    if (s + 16 < end) nodes_.prefetch(nodes_[s + 16].o.order_index);
    nodes_.index(nodes_[s].o.order_index, s);
  }
}

void BookCaches::mark_changed(MarketId m) {
  Cache& c = caches_[m];
  if (!c.changed) {
    c.changed = true;
    changed_.push_back(m);
  }
}

void BookCaches::level_changed(MarketId m, Side& sd, size_t i, bool is_ask, Ticks price) {
  sd.changed_from = std::min(sd.changed_from, static_cast<uint32_t>(i));  // and all after it
  caches_[m].touched.emplace_back(static_cast<uint8_t>(is_ask), price);
  mark_changed(m);
}

// A new resting order (or one re-placed by a modify, removed first): it joins the back of its
// price.
void BookCaches::rest_order(const OrderUpdate& o) {
  // The engine removes an order before it rests again; were one still here, it would be counted
  // twice.
  if (const uint32_t old = nodes_.find(o.order_index); old != OrderNodes::kNone)
    reduce_or_remove(old, 0, true);
  Side& sd = o.is_ask ? caches_[o.market].asks : caches_[o.market].bids;
  const size_t i = level_pos(sd.levels, o.is_ask, o.price);
  if (i == sd.levels.size() || sd.levels[i].price != o.price) {
    sd.levels.insert(sd.levels.begin() + static_cast<std::ptrdiff_t>(i), PriceLevel{o.price, 0, 0});
    sd.fifo.insert(sd.fifo.begin() + static_cast<std::ptrdiff_t>(i), Fifo{});
  }
  Fifo& f = sd.fifo[i];
  const uint32_t s = nodes_.add(o.order_index);
  nodes_[s] = OrderNodes::Node{
      BookOrder{o.order_index, o.account, o.price, o.remaining, o.initial, o.expiry_ms}, f.tail,
      OrderNodes::kNone, o.market, o.is_ask};
  if (f.tail != OrderNodes::kNone) {
    nodes_[f.tail].next = s;
  } else {
    f.head = s;
  }
  f.tail = s;
  sd.levels[i].size += o.remaining;
  ++sd.levels[i].orders;
  last_rested_ = std::max(last_rested_, o.order_index);
  level_changed(o.market, sd, i, o.is_ask, o.price);
}

void BookCaches::reduce_or_remove(uint32_t s, Lots remaining, bool removed) {
  OrderNodes::Node& n = nodes_[s];
  const bool is_ask = n.is_ask != 0;
  Side& sd = is_ask ? caches_[n.market].asks : caches_[n.market].bids;
  const size_t i = level_pos(sd.levels, is_ask, n.o.price);
  TACHYON_ASSERT(i < sd.levels.size() && sd.levels[i].price == n.o.price,
                 "a resting order's level is in its book");
  PriceLevel& l = sd.levels[i];
  const MarketId m = n.market;
  const Ticks price = n.o.price;
  if (!removed) {
    l.size -= n.o.remaining - remaining;
    n.o.remaining = remaining;
  } else {
    l.size -= n.o.remaining;
    --l.orders;
    Fifo& f = sd.fifo[i];
    if (n.prev != OrderNodes::kNone) {
      nodes_[n.prev].next = n.next;
    } else {
      f.head = n.next;
    }
    if (n.next != OrderNodes::kNone) {
      nodes_[n.next].prev = n.prev;
    } else {
      f.tail = n.prev;
    }
    nodes_.remove(s);
    if (l.orders == 0) {
      sd.levels.erase(sd.levels.begin() + static_cast<std::ptrdiff_t>(i));
      sd.fifo.erase(sd.fifo.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  level_changed(m, sd, i, is_ask, price);
}

void BookCaches::apply(const StateUpdate& u) {
  TACHYON_OWNER_ONLY(owner_);
  switch (u.type) {
    case UpdateType::kOrderAdded: {
      if (u.order.pending) break;  // a trigger order waits outside the book
      rest_order(u.order);
      caches_[u.order.market].engine_ts_ns = u.time_ns;
      break;
    }
    case UpdateType::kOrderReduced:
    case UpdateType::kOrderRemoved: {
      const uint32_t s = nodes_.find(u.order.order_index);
      if (s == OrderNodes::kNone) break;  // a taker that never rested, or a waiting order
      caches_[nodes_[s].market].engine_ts_ns = u.time_ns;
      reduce_or_remove(s, u.order.remaining, u.type == UpdateType::kOrderRemoved);
      break;
    }
    case UpdateType::kMarket:  // a new market gets its (empty) book published at once
      caches_[u.market.market].engine_ts_ns = u.time_ns;
      mark_changed(u.market.market);
      break;
    default: break;  // accounts, marks, results: not the books'
  }
}

void BookCaches::publish_changed(uint64_t seq) {
  TACHYON_OWNER_ONLY(owner_);
  for (MarketId m : changed_) publish_one(m, seq);
  changed_.clear();
}

void BookCaches::publish_one(MarketId m, uint64_t seq) {
  Cache& c = caches_[m];
  c.changed = false;
  remember_recent(recent_, recent_pos_, static_cast<int16_t>(m));
  std::unique_ptr<BookSnapshot> s = books_[m]->take_spare();  // vectors keep their capacity
  if (!s) s = std::make_unique<BookSnapshot>();
  const uint64_t had = s->nonce;  // what the recycled snapshot (only ever this book's) shows
  s->market = m;
  s->begin_nonce = c.nonce;
  s->nonce = ++c.nonce;
  s->engine_ts_ns = c.engine_ts_ns;
  s->seq = seq;
  copy_levels(c.bids, s->nonce, had, s->bids);
  copy_levels(c.asks, s->nonce, had, s->asks);
  // The levels changed since the previous snapshot, sorted (bids, then asks; by price).
  std::sort(c.touched.begin(), c.touched.end());
  c.touched.erase(std::unique(c.touched.begin(), c.touched.end()), c.touched.end());
  // A side's top orders are the previous snapshot's, copied, when the batch touched no level at
  // or better than the last order it shows; else merged from it (top_orders).
  const BookSnapshot* prev = books_[m]->current_for_writer();
  // The recycled snapshot (only ever this book's) already shows an unchanged side when that
  // side did not change since it was published: ~4.8 KB a side not written (100 orders).
  const std::array<bool, 2> changed = top_orders_changed(c, prev);
  for (int side = 0; side < 2; ++side) {
    std::vector<BookOrder>& out = side == 0 ? s->bid_orders : s->ask_orders;
    if (changed[side]) {
      ++c.top_version[side];
      top_orders(c, side == 1, prev ? (side == 0 ? &prev->bid_orders : &prev->ask_orders) : nullptr,
                 out);
    } else if (s->top_version[side] != c.top_version[side]) {
      const std::vector<BookOrder>& from = side == 0 ? prev->bid_orders : prev->ask_orders;
      out.assign(from.begin(), from.end());
    }
    s->top_version[side] = c.top_version[side];
  }
  record_delta(m, s->begin_nonce, s->nonce);
  books_[m]->publish(std::move(s));
  if (books_[m]->retired() > 0 && !in_collect_pending_[m]) {
    in_collect_pending_[m] = 1;
    collect_pending_.push_back(m);
  }
  publications_.fetch_add(1, std::memory_order_relaxed);
}

// Only the books that still hold retired snapshots: scanning all kMaxMarkets every round cost
// 15% of the server's CPU at 6k tx/s (perf), cache misses on idle books.
void BookCaches::collect() {
  TACHYON_OWNER_ONLY(owner_);
  size_t kept = 0;
  for (MarketId m : collect_pending_) {
    if (books_[m]->collect() > 0) {
      collect_pending_[kept++] = m;
    } else {
      in_collect_pending_[m] = 0;
    }
  }
  collect_pending_.resize(kept);
}

// A side's levels into a snapshot being published at `nonce` that showed them at nonce `had` (0:
// nothing): only those from the lowest index changed since then (all when that is too long ago).
void BookCaches::copy_levels(Side& sd, uint64_t nonce, uint64_t had, LevelArray& out) {
  sd.changed_at[nonce % kSideHistory] = sd.changed_from;
  sd.changed_from = UINT32_MAX;
  size_t from = 0;
  if (had != 0 && nonce - had < kSideHistory) {
    from = SIZE_MAX;
    for (uint64_t n = had + 1; n <= nonce; ++n)
      from = std::min<size_t>(from, sd.changed_at[n % kSideHistory]);
  }
  std::vector<PriceLevel>& v = out.worst_first();
  from = std::min({from, v.size(), sd.levels.size()});
  v.resize(sd.levels.size());
  std::copy(sd.levels.begin() + static_cast<std::ptrdiff_t>(from), sd.levels.end(),
            v.begin() + static_cast<std::ptrdiff_t>(from));
}

// Per side, whether the top orders `prev` shows may have changed since: a level touched at or
// better than the last of them (an order there came, went or changed size before or after it), or
// any level touched when it shows fewer than kTopOrders (a deeper order may now be among them).
std::array<bool, 2> BookCaches::top_orders_changed(const Cache& c, const BookSnapshot* prev) {
  if (prev == nullptr) return {true, true};
  std::array<bool, 2> changed{false, false};
  for (const auto& [is_ask, price] : c.touched) {
    const auto& shown = is_ask ? prev->ask_orders : prev->bid_orders;
    if (shown.size() < BookSnapshot::kTopOrders ||
        (is_ask ? price <= shown.back().price : price >= shown.back().price))
      changed[is_ask] = true;
  }
  return changed;
}

// A side's first kTopOrders orders in priority into `out`, from the best level down: a level the
// batch did not touch (c.touched, sorted) shows the orders it showed in `prev` (the snapshot
// published last, the same orders in the same order), copied from there; a touched level, one
// `prev` did not show, and the last level `prev` showed when it was full (maybe only in part)
// are walks of the level's list. A market order that swept the touch walks only the level it
// stopped in, not the ~100 nodes below it, each a dependent load.
void BookCaches::top_orders(const Cache& c, bool is_ask, const std::vector<BookOrder>* prev,
                            std::vector<BookOrder>& out) const {
  constexpr size_t K = BookSnapshot::kTopOrders;
  const Side& sd = is_ask ? c.asks : c.bids;
  const size_t pn = prev != nullptr ? prev->size() : 0;
  auto better = [is_ask](Ticks a, Ticks b) { return is_ask ? a < b : a > b; };
  out.clear();
  size_t j = 0;  // prev's first order not yet passed
  for (size_t i = sd.levels.size(); i-- > 0 && out.size() < K;) {
    const Ticks p = sd.levels[i].price;
    while (j < pn && better((*prev)[j].price, p)) ++j;  // levels gone since
    size_t g = j;                                       // prev shows this level as [j, g)
    while (g < pn && (*prev)[g].price == p) ++g;
    const bool whole = g > j && !(pn == K && g == pn);
    if (whole && !std::binary_search(c.touched.begin(), c.touched.end(),
                                     std::pair<uint8_t, Ticks>(is_ask ? 1 : 0, p))) {
      out.insert(out.end(), prev->begin() + static_cast<std::ptrdiff_t>(j),
                 prev->begin() + static_cast<std::ptrdiff_t>(std::min(g, j + K - out.size())));
    } else {
      for (uint32_t k = sd.fifo[i].head; k != OrderNodes::kNone && out.size() < K;
           k = nodes_[k].next)
        out.push_back(nodes_[k].o);
    }
    j = g;
  }
}

// The levels this publish changed (sorted, no repeats), with their final sizes, into the
// market's delta history.
void BookCaches::record_delta(MarketId m, uint64_t begin_nonce, uint64_t nonce) {
  Cache& c = caches_[m];
  // Relaxed: only this (apply) thread ever stores the pointer.
  BroadcastLog<BookDeltaRecord>* log = deltas_[m].load(std::memory_order_relaxed);
  if (log == nullptr) {
    size_t cap = 1;
    while (cap < book_history_) cap <<= 1;
    log = new BroadcastLog<BookDeltaRecord>(cap);
    deltas_[m].store(log, std::memory_order_release);
  }
  BookDeltaRecord r;
  r.nonce = nonce;
  r.begin_nonce = begin_nonce;
  r.engine_ts_ns = c.engine_ts_ns;
  for (size_t k = 0; k < c.touched.size(); ++k) {
    const bool is_ask = c.touched[k].first != 0;
    const Ticks price = c.touched[k].second;
    const auto& v = (is_ask ? c.asks : c.bids).levels;
    const size_t i = level_pos(v, is_ask, price);
    const Lots size = (i < v.size() && v[i].price == price) ? v[i].size : 0;
    r.lv[r.count++] = BookDeltaRecord::Level{price, size, static_cast<uint8_t>(is_ask), {}};
    if (r.count == BookDeltaRecord::kLevels && k + 1 < c.touched.size()) {
      log->append(r);
      r.count = 0;
    }
  }
  r.last = 1;
  log->append(r);
  c.touched.clear();
}

bool BookCaches::book_deltas(MarketId m, uint64_t since, uint64_t until,
                             std::vector<BookDelta>& out) const {
  out.clear();
  const BroadcastLog<BookDeltaRecord>* log = deltas_[m].load(std::memory_order_acquire);
  if (log == nullptr) return false;
  const uint64_t head = log->head();
  const uint64_t first = head > log->capacity() ? head - log->capacity() : 0;
  BookDeltaRecord r;
  // Anchored once the last record of publish `since` is seen: everything after it is complete.
  bool anchored = false;
  for (uint64_t pos = first; pos < head; ++pos) {
    if (!log->read(pos, r)) {
      if (anchored) return false;  // overwritten under us: too old after all
      continue;
    }
    if (!anchored) {
      anchored = r.nonce == since && r.last != 0;
      continue;
    }
    if (r.nonce > until) break;
    if (out.empty() || out.back().nonce != r.nonce)
      out.push_back(BookDelta{r.nonce, r.begin_nonce, r.engine_ts_ns, {}, {}});
    for (int i = 0; i < r.count; ++i)
      (r.lv[i].is_ask ? out.back().asks : out.back().bids)
          .push_back(PriceLevel{r.lv[i].price, r.lv[i].size, 0});
  }
  return anchored;
}

// What the next batch most likely touches, read into this core's cache: the levels of the books
// published last (a publish copies those past the lowest change) and the spare snapshot it
// copies them into, and both ends of each side's queue (the top orders and the touch). Changes
// nothing; stops once work_waiting() says updates arrived.
void BookCaches::keep_warm(absl::FunctionRef<bool()> work_waiting) {
  TACHYON_OWNER_ONLY(owner_);
  for (const int16_t m : recent_) {
    if (m < 0) continue;
    if (work_waiting()) return;
    Cache& c = caches_[m];
    warm_lines(c.bids.levels.data(), c.bids.levels.size() * sizeof(PriceLevel));
    warm_lines(c.asks.levels.data(), c.asks.levels.size() * sizeof(PriceLevel));
    for (int side = 0; side < 2; ++side) {
      if (work_waiting()) return;
      warm_side(c, side);
    }
    books_[m]->keep_warm();
    if (const BookSnapshot* s = books_[m]->peek_spare()) {  // the levels near the touch, which
      for (const LevelArray* l : {&s->bids, &s->asks}) {    // the next publish rewrites
        const std::vector<PriceLevel>& v = l->worst_first();
        const size_t n = std::min<size_t>(v.size(), 128);
        warm_lines(v.data() + (v.size() - n), n * sizeof(PriceLevel));
      }
    }
  }
  for (OrderIndex i = last_rested_ + 1; i <= last_rested_ + 4; ++i) nodes_.prefetch(i);
}

// A side's top kWarmQueueDepth orders, a slice of whole levels per call (most orders rest and
// most cancels and fills happen near the touch): the nodes an insert or removal there links,
// and their cells of the order index.
void BookCaches::warm_side(Cache& c, int side) {
  const Side& sd = side ? c.asks : c.bids;
  warm_lines(sd.fifo.data(), sd.fifo.size() * sizeof(Fifo));
  if (c.warm_depth[side] >= kWarmQueueDepth || c.warm_level[side] >= sd.levels.size())
    c.warm_depth[side] = c.warm_level[side] = 0;
  uint64_t x = 0;
  uint32_t k = 0;
  size_t lv = c.warm_level[side];
  for (; k < kWarmQueueSlice && lv < sd.levels.size(); ++lv)
    for (uint32_t s = sd.fifo[sd.levels.size() - 1 - lv].head; s != OrderNodes::kNone;
         s = nodes_[s].next, ++k) {
      x += static_cast<uint64_t>(nodes_[s].o.remaining);
      nodes_.prefetch(nodes_[s].o.order_index);  // where a fill or cancel of it looks first
    }
  const bool more = lv < sd.levels.size();
  c.warm_depth[side] = more ? c.warm_depth[side] + k : 0;
  c.warm_level[side] = more ? static_cast<uint32_t>(lv) : 0;
  keep_value(x);
}

}  // namespace tachyon::pipe
