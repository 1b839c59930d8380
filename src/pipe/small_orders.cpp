#include "tachyon/pipe/small_orders.hpp"

#include <algorithm>

namespace tachyon::pipe {

// ---- SmallChunkPool ----

SmallOrderChunk* SmallChunkPool::take(uint64_t safe, uint64_t born) {
  settle(safe);
  SmallOrderChunk* c;
  if (!free_.empty()) {
    c = free_.back();
    free_.pop_back();
  } else {
    if (fresh_ == kBlock) new_block();
    c = &blocks_.back()[fresh_++];
  }
  c->n = 0;
  c->born = born;
  return c;
}

void SmallChunkPool::retire(const SmallOrderChunk* c, uint64_t tag) {
  auto* m = const_cast<SmallOrderChunk*>(c);  // the pool's own chunk
  if (tag == 0) {
    free_.push_back(m);
    return;
  }
  if (count_ == ring_.size()) {  // grow (rare): the waiting ones moved to the front, in order
    std::vector<Retired> bigger(std::max<size_t>(256, 2 * ring_.size()));
    for (size_t i = 0; i < count_; ++i) bigger[i] = ring_[(head_ + i) & (ring_.size() - 1)];
    ring_ = std::move(bigger);
    head_ = 0;
  }
  ring_[(head_ + count_) & (ring_.size() - 1)] = {m, tag};
  ++count_;
}

void SmallChunkPool::new_block() {
  blocks_.push_back(std::make_unique<SmallOrderChunk[]>(kBlock));
  fresh_ = 0;
}

void SmallChunkPool::make_ahead(uint64_t safe) {
  settle(safe);
  if (free_.empty() && fresh_ == kBlock) new_block();
}

void SmallChunkPool::settle(uint64_t safe) {
  while (count_ > 0 && ring_[head_].tag < safe) {
    free_.push_back(ring_[head_].chunk);
    head_ = (head_ + 1) & (ring_.size() - 1);
    --count_;
  }
}

// ---- SmallOrders ----

size_t SmallOrders::chunk_of(OrderIndex id) const {
  const auto it = std::upper_bound(firsts_.begin(), firsts_.end(), id);
  return it == firsts_.begin() ? 0 : static_cast<size_t>(it - firsts_.begin()) - 1;
}

namespace {
// The position of order `id` in `c`, or c.n.
uint32_t position(const SmallOrderChunk& c, OrderIndex id) {
  uint32_t i = 0;
  while (i < c.n && c.v[i].o.order_index != id) ++i;
  return i;
}
}  // namespace

const OrderView* SmallOrders::find(OrderIndex id) const {
  if (chunks_.empty()) return nullptr;
  const SmallOrderChunk& c = *chunks_[chunk_of(id)];
  const uint32_t i = position(c, id);
  return i < c.n ? &c.v[i] : nullptr;
}

OrderView* SmallOrders::writable(OrderIndex id, const Ctx& ctx) {
  if (chunks_.empty()) return nullptr;
  const size_t c = chunk_of(id);
  const uint32_t i = position(*chunks_[c], id);
  if (i == chunks_[c]->n) return nullptr;
  return &own(c, ctx)->v[i];
}

SmallOrderChunk* SmallOrders::own(size_t c, const Ctx& ctx) {
  const SmallOrderChunk* cur = chunks_[c];
  if (is_private(cur)) return const_cast<SmallOrderChunk*>(cur);  // NOLINT: the pool's chunk
  SmallOrderChunk* copy = ctx.pool.take(ctx.safe, ctx.gen);
  copy->n = cur->n;
  std::copy(cur->v.begin(), cur->v.begin() + cur->n, copy->v.begin());
  letting_go_.push_back(cur);
  chunks_[c] = copy;
  return copy;
}

void SmallOrders::let_go(const SmallOrderChunk* c, const Ctx& ctx) {
  if (is_private(c)) {
    ctx.pool.retire(c, 0);  // no view ever showed it
  } else {
    letting_go_.push_back(c);
  }
}

void SmallOrders::add_chunk(size_t at, SmallOrderChunk* c) {
  if (chunks_.capacity() == 0) {  // room for a typical list at once, not growth step by step
    chunks_.reserve(kTableRoom);
    firsts_.reserve(kTableRoom);
    letting_go_.reserve(kTableRoom);
  }
  chunks_.insert(chunks_.begin() + static_cast<std::ptrdiff_t>(at), c);
  firsts_.insert(firsts_.begin() + static_cast<std::ptrdiff_t>(at), c->v[0].o.order_index);
}

void SmallOrders::remove_chunk(size_t at, const Ctx& ctx) {
  let_go(chunks_[at], ctx);
  chunks_.erase(chunks_.begin() + static_cast<std::ptrdiff_t>(at));
  firsts_.erase(firsts_.begin() + static_cast<std::ptrdiff_t>(at));
}

void SmallOrders::push_back(const OrderView& o, const Ctx& ctx) {
  ++size_;
  if (!chunks_.empty() && chunks_.back()->n < SmallOrderChunk::kCapacity) {
    SmallOrderChunk* last = own(chunks_.size() - 1, ctx);
    last->v[last->n++] = o;
    return;
  }
  SmallOrderChunk* c = ctx.pool.take(ctx.safe, ctx.gen);
  c->v[0] = o;
  c->n = 1;
  add_chunk(chunks_.size(), c);
}

void SmallOrders::insert(const OrderView& o, const Ctx& ctx) {
  const OrderIndex id = o.o.order_index;
  // New orders take the highest index yet: they go at the back.
  if (chunks_.empty() || id > chunks_.back()->v[chunks_.back()->n - 1].o.order_index) {
    push_back(o, ctx);
    return;
  }
  size_t c = chunk_of(id);
  if (const uint32_t at = position(*chunks_[c], id); at < chunks_[c]->n) {  // held: replaced
    own(c, ctx)->v[at] = o;
    return;
  }
  SmallOrderChunk* ch = own(c, ctx);
  if (ch->n == SmallOrderChunk::kCapacity) {  // full: its upper half to a new chunk after it
    constexpr uint32_t kKeep = SmallOrderChunk::kCapacity / 2;
    SmallOrderChunk* hi = ctx.pool.take(ctx.safe, ctx.gen);
    std::copy(ch->v.begin() + kKeep, ch->v.begin() + ch->n, hi->v.begin());
    hi->n = ch->n - kKeep;
    ch->n = kKeep;
    add_chunk(c + 1, hi);
    if (id > ch->v[kKeep - 1].o.order_index) {
      ++c;
      ch = hi;
    }
  }
  uint32_t pos = ch->n;
  for (; pos > 0 && ch->v[pos - 1].o.order_index > id; --pos) ch->v[pos] = ch->v[pos - 1];
  ch->v[pos] = o;
  ++ch->n;
  ++size_;
  if (pos == 0) firsts_[c] = id;
}

bool SmallOrders::erase(OrderIndex id, const Ctx& ctx, OrderView* removed) {
  if (chunks_.empty()) return false;
  const size_t c = chunk_of(id);
  const uint32_t pos = position(*chunks_[c], id);
  if (pos == chunks_[c]->n) return false;
  if (removed != nullptr) *removed = chunks_[c]->v[pos];
  --size_;
  if (chunks_[c]->n == 1) {  // the chunk goes: nothing to copy
    remove_chunk(c, ctx);
    return true;
  }
  SmallOrderChunk* ch;
  const SmallOrderChunk* cur = chunks_[c];
  if (is_private(cur)) {
    ch = const_cast<SmallOrderChunk*>(cur);  // NOLINT: the pool's chunk
    std::copy(ch->v.begin() + pos + 1, ch->v.begin() + ch->n, ch->v.begin() + pos);
  } else {  // a copy without it
    ch = ctx.pool.take(ctx.safe, ctx.gen);
    std::copy(cur->v.begin(), cur->v.begin() + pos, ch->v.begin());
    std::copy(cur->v.begin() + pos + 1, cur->v.begin() + cur->n, ch->v.begin() + pos);
    ch->n = cur->n;
    letting_go_.push_back(cur);
    chunks_[c] = ch;
  }
  --ch->n;
  if (pos == 0) firsts_[c] = ch->v[0].o.order_index;
  // Two neighbours that fit in half a chunk become one (a list keeps few chunks); a neighbour
  // is looked at only when this chunk is that small.
  constexpr uint32_t kHalf = SmallOrderChunk::kCapacity / 2;
  if (ch->n >= kHalf) return true;
  if (c + 1 < chunks_.size() && ch->n + chunks_[c + 1]->n <= kHalf) {
    const SmallOrderChunk* next = chunks_[c + 1];
    std::copy(next->v.begin(), next->v.begin() + next->n, ch->v.begin() + ch->n);
    ch->n += next->n;
    remove_chunk(c + 1, ctx);
  } else if (c > 0 && chunks_[c - 1]->n + ch->n <= kHalf) {
    SmallOrderChunk* prev = own(c - 1, ctx);
    std::copy(ch->v.begin(), ch->v.begin() + ch->n, prev->v.begin() + prev->n);
    prev->n += ch->n;
    remove_chunk(c, ctx);
  }
  return true;
}

void SmallOrders::clear(const Ctx& ctx) {
  for (const SmallOrderChunk* c : chunks_) let_go(c, ctx);
  chunks_.clear();
  firsts_.clear();
  size_ = 0;
}

}  // namespace tachyon::pipe
