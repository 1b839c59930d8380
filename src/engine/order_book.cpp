#include "tachyon/engine/order_book.hpp"

#include <algorithm>

namespace tachyon {

namespace {
// Position of a price in a side's sort order: the back is the best level.
inline bool before(bool is_ask, Ticks a, Ticks b) { return is_ask ? a > b : a < b; }
}  // namespace

size_t OrderBook::find(bool is_ask, Ticks price, bool& found) const {
  const std::vector<Ticks>& px = is_ask ? ask_prices_ : bid_prices_;
  const size_t n = px.size();
  found = false;
  if (n == 0) return 0;
  // Prices are integers, so at most dist + 1 levels lie between `price` and the best price
  // (inclusive): the level, or its insertion point, is at index >= n - 1 - dist. Near the touch a
  // book is dense and the first probe is the answer; otherwise the search is over that tail only.
  const Ticks dist = is_ask ? price - px[n - 1] : px[n - 1] - price;
  if (dist < 0) return n;  // better than the best: a new best level
  const size_t lo = static_cast<size_t>(dist) < n ? n - 1 - static_cast<size_t>(dist) : 0;
  if (px[lo] == price) {
    found = true;
    return lo;
  }
  auto it = std::lower_bound(px.begin() + static_cast<std::ptrdiff_t>(lo), px.end(), price,
                             [is_ask](Ticks l, Ticks p) { return before(is_ask, l, p); });
  found = it != px.end() && *it == price;
  return static_cast<size_t>(it - px.begin());
}

void OrderBook::add(OrderPool& pool, uint32_t slot) {
  Order& o = pool[slot];
  bool found = false;
  size_t i = find(o.is_ask, o.price, found);
  auto& s = side_mut(o.is_ask);
  if (!found) {
    s.insert(s.begin() + static_cast<std::ptrdiff_t>(i), Level{o.price, 0, 0, kNoSlot, kNoSlot, 0});
    auto& px = o.is_ask ? ask_prices_ : bid_prices_;
    px.insert(px.begin() + static_cast<std::ptrdiff_t>(i), o.price);
  }
  Level& l = s[i];
  o.prev = l.tail;
  o.next = kNoSlot;
  if (l.tail != kNoSlot)
    pool[l.tail].next = slot;
  else
    l.head = slot;
  l.tail = slot;
  l.total += o.remaining;
  ++l.count;
}

void OrderBook::remove(OrderPool& pool, uint32_t slot) {
  Order& o = pool[slot];
  bool found = false;
  size_t i = find(o.is_ask, o.price, found);
  TACHYON_ASSERT(found, "order's level missing");
  auto& s = side_mut(o.is_ask);
  Level& l = s[i];
  if (o.prev != kNoSlot)
    pool[o.prev].next = o.next;
  else
    l.head = o.next;
  if (o.next != kNoSlot)
    pool[o.next].prev = o.prev;
  else
    l.tail = o.prev;
  l.total -= o.remaining;
  --l.count;
  o.prev = o.next = kNoSlot;
  if (l.count == 0) {
    s.erase(s.begin() + static_cast<std::ptrdiff_t>(i));
    auto& px = o.is_ask ? ask_prices_ : bid_prices_;
    px.erase(px.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void OrderBook::reduce(OrderPool& pool, uint32_t slot, Lots by) {
  Order& o = pool[slot];
  bool found = false;
  size_t i = find(o.is_ask, o.price, found);
  TACHYON_ASSERT(found, "order's level missing");
  side_mut(o.is_ask)[i].total -= by;
  o.remaining -= by;
}

void ExpiryHeap::push(uint32_t slot) {
  heap_.push_back(slot);
  place(heap_.size() - 1, slot);
  sift_up(heap_.size() - 1);
}

void ExpiryHeap::erase(uint32_t slot) {
  size_t i = pool_[slot].heap_pos;
  TACHYON_ASSERT(i < heap_.size() && heap_[i] == slot, "expiry heap corrupt");
  uint32_t last = heap_.back();
  heap_.pop_back();
  pool_[slot].heap_pos = kNoSlot;
  if (i == heap_.size()) return;
  place(i, last);
  sift_up(i);
  sift_down(pool_[last].heap_pos);
}

void ExpiryHeap::sift_up(size_t i) {
  uint32_t s = heap_[i];
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!less(s, heap_[p])) break;
    place(i, heap_[p]);
    i = p;
  }
  place(i, s);
}

void ExpiryHeap::sift_down(size_t i) {
  uint32_t s = heap_[i];
  size_t n = heap_.size();
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && less(heap_[c + 1], heap_[c])) ++c;
    if (!less(heap_[c], s)) break;
    place(i, heap_[c]);
    i = c;
  }
  place(i, s);
}

bool ExpiryHeap::valid() const {
  for (size_t i = 0; i < heap_.size(); ++i) {
    if (pool_[heap_[i]].heap_pos != i) return false;
    if (i > 0 && less(heap_[i], heap_[(i - 1) / 2])) return false;
  }
  return true;
}

}  // namespace tachyon
