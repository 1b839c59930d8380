#pragma once
// An account's open orders while they are few (up to ReadSideConfig::orders_in_view), as the
// apply thread keeps them and its views show them: chunks of up to SmallOrderChunk::kCapacity
// orders in index order, copied on write.
//
// A view's list is the table of chunk pointers as it was published. A chunk made since the list
// was last published is private to the apply thread and changed in place; one a view may hold is
// copied first (into a chunk from the pool), and the copy replaces it in the table. So an order
// change copies at most one chunk, and a publication copies only the table, not the whole list
// (26 orders x 104 B for bench_apply's accounts).
//
// Chunks are pooled (SmallChunkPool) and held by plain pointers: no reference count to touch per
// chunk and view. A chunk a list let go is retired with the epoch tag of the view that replaced
// the last view showing it (EpochDomain) and reused once no reader can hold that view.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "tachyon/pipe/order_list.hpp"

namespace tachyon::pipe {

// Owns every chunk; the apply thread's only.
class SmallChunkPool {
 public:
  SmallChunkPool() = default;
  SmallChunkPool(const SmallChunkPool&) = delete;
  SmallChunkPool& operator=(const SmallChunkPool&) = delete;

  // An empty chunk stamped `born`: the one made reusable last (the likeliest still in this core's
  // caches; retired ones tagged below `safe` are reusable), else a never used one (a block of
  // kBlock is made when none is left).
  SmallOrderChunk* take(uint64_t safe, uint64_t born);
  // A chunk no list holds any more, last shown by views up to the one retired with `tag`
  // (0: never shown, reusable at once). Tags only grow: the oldest retired is the first safe.
  void retire(const SmallOrderChunk* c, uint64_t tag);
  // The retired chunks tagged below `safe` made reusable.
  void settle(uint64_t safe);
  // While idle: settle(safe), and when no chunk is left for take(), the next block made now
  // (256 chunks, ~217 KB written: tens of µs inside a batch).
  void make_ahead(uint64_t safe);
  // The i-th chunk take() reuses next (nullptr: none is reusable).
  const SmallOrderChunk* next(size_t i) const {
    return i < free_.size() ? free_[free_.size() - 1 - i] : nullptr;
  }
  size_t made() const { return blocks_.size() * kBlock - (kBlock - fresh_); }
  static constexpr size_t kBlock = 256;

 private:
  struct Retired {
    SmallOrderChunk* chunk = nullptr;
    uint64_t tag = 0;
  };
  void new_block();
  std::vector<std::unique_ptr<SmallOrderChunk[]>> blocks_;
  size_t fresh_ = kBlock;      // the next never used chunk of the last block
  std::vector<Retired> ring_;  // retired, oldest first; a power of 2 long
  size_t head_ = 0, count_ = 0;
  std::vector<SmallOrderChunk*> free_;  // reusable, the last made so on top
};

// One account's small list. `gen` (the caller's counter, grown by one at each publication of any
// list) stamps the chunks a change makes; published(gen) marks every chunk as possibly held.
class SmallOrders {
 public:
  struct Ctx {
    SmallChunkPool& pool;
    uint64_t safe;  // AccountTable::safe_below_seen()
    uint64_t gen;
  };
  using Table = std::vector<const SmallOrderChunk*>;
  // Chunks reserved at the first (bench_apply's 26-order lists keep 4-8; a list that needs more
  // grows its table once).
  static constexpr size_t kTableRoom = 16;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Table& chunks() const { return chunks_; }
  const std::vector<OrderIndex>& firsts() const { return firsts_; }
  const OrderView* find(OrderIndex id) const;
  // The order with this index, its chunk made private first (copied if shared), or nullptr.
  OrderView* writable(OrderIndex id, const Ctx& ctx);
  void insert(const OrderView& o, const Ctx& ctx);     // added, or replacing its index's
  void push_back(const OrderView& o, const Ctx& ctx);  // past every index held
  // false: not held. `removed` (if given): the order as it was.
  bool erase(OrderIndex id, const Ctx& ctx, OrderView* removed = nullptr);
  void clear(const Ctx& ctx);  // every order let go
  // The orders of [from, to) (in index order), in full chunks.
  template <typename It>
  void assign_sorted(It from, It to, const Ctx& ctx) {
    clear(ctx);
    for (; from != to; ++from) push_back(*from, ctx);
  }
  // The table was published (with `gen`): every chunk may be held from now on.
  void published(uint64_t gen) { published_gen_ = gen; }
  // Shared chunks let go since the last publication (to retire with its tag), emptied by the
  // caller.
  std::vector<const SmallOrderChunk*>& letting_go() { return letting_go_; }
  template <typename F>
  void for_each(F&& f) const {
    for (const SmallOrderChunk* c : chunks_)
      for (uint32_t i = 0; i < c->n; ++i) f(c->v[i]);
  }

 private:
  size_t chunk_of(OrderIndex id) const;  // the last chunk whose first index is <= id, or 0
  bool is_private(const SmallOrderChunk* c) const { return c->born > published_gen_; }
  SmallOrderChunk* own(size_t c, const Ctx& ctx);  // chunk c private (copied if shared)
  void let_go(const SmallOrderChunk* c, const Ctx& ctx);
  void add_chunk(size_t at, SmallOrderChunk* c);
  void remove_chunk(size_t at, const Ctx& ctx);

  Table chunks_;
  std::vector<OrderIndex> firsts_;  // each chunk's first order index
  size_t size_ = 0;
  uint64_t published_gen_ = 0;
  std::vector<const SmallOrderChunk*> letting_go_;
};

}  // namespace tachyon::pipe
