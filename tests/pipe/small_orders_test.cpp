// An account's small order list (pipe/small_orders.hpp): it always holds what a std::map of the
// same changes holds, a published table never changes while a view may hold it (its chunks are
// copied on write and reused only once the view's epoch tag is safe), and a list that stays the
// same size reuses its chunks instead of making new ones.
#include "tachyon/pipe/small_orders.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "tachyon/pipe/read_side.hpp"

namespace tachyon::testing {
namespace {

using pipe::OrderRange;
using pipe::OrderView;
using pipe::SmallChunkPool;
using pipe::SmallOrderChunk;
using pipe::SmallOrders;

OrderView order(OrderIndex id, Lots remaining) {
  OrderView v;
  v.o.order_index = id;
  v.o.remaining = remaining;
  return v;
}

using Contents = std::vector<std::pair<OrderIndex, Lots>>;

Contents contents_of(const SmallOrders::Table& table, size_t size) {
  Contents out;
  for (const OrderView& o : OrderRange(table, size))
    out.emplace_back(o.o.order_index, o.o.remaining);
  return out;
}

// The list equals `want`, and its chunks are well formed: none empty or over capacity, in index
// order, with their first indices listed.
void expect_list(const SmallOrders& l, const std::map<OrderIndex, Lots>& want) {
  ASSERT_EQ(l.size(), want.size());
  ASSERT_EQ(contents_of(l.chunks(), l.size()), Contents(want.begin(), want.end()));
  ASSERT_EQ(l.firsts().size(), l.chunks().size());
  OrderIndex last = 0;
  for (size_t c = 0; c < l.chunks().size(); ++c) {
    const SmallOrderChunk& ch = *l.chunks()[c];
    ASSERT_GT(ch.n, 0u);
    ASSERT_LE(ch.n, SmallOrderChunk::kCapacity);
    EXPECT_EQ(l.firsts()[c], ch.v[0].o.order_index);
    for (uint32_t i = 0; i < ch.n; ++i) {
      EXPECT_GT(ch.v[i].o.order_index, last);
      last = ch.v[i].o.order_index;
    }
  }
  for (const auto& [id, lots] : want) {
    const OrderView* f = l.find(id);
    ASSERT_NE(f, nullptr) << id;
    EXPECT_EQ(f->o.remaining, lots);
  }
}

// A simulated publisher: each publication is a view (the table as it was) retired with the next
// epoch tag when the following one replaces it; readers hold the last `held` views, so the pool
// may reuse only chunks tagged below the oldest view still held.
struct Publisher {
  struct View {
    SmallOrders::Table table;
    size_t size;
    Contents seen;  // what the view showed when published
    uint64_t tag;   // retired with (0: still current)
  };
  SmallChunkPool pool;
  SmallOrders list;
  uint64_t gen = 1, epoch = 1;
  std::deque<View> views;
  size_t held = 3;

  uint64_t safe() const {
    for (const View& v : views)
      if (v.tag != 0) return v.tag;  // the oldest retired view still held
    return epoch;
  }
  SmallOrders::Ctx ctx() { return {pool, safe(), gen}; }
  void publish() {
    uint64_t tag = 0;
    if (!views.empty()) {
      tag = epoch++;
      views.back().tag = tag;
    }
    views.push_back({list.chunks(), list.size(), contents_of(list.chunks(), list.size()), 0});
    list.published(gen++);
    for (const SmallOrderChunk* c : list.letting_go()) pool.retire(c, tag);
    list.letting_go().clear();
    while (views.size() > held) views.pop_front();
  }
  // Every view still held shows what it showed when published.
  void expect_views_unchanged() const {
    for (const View& v : views) ASSERT_EQ(contents_of(v.table, v.size), v.seen);
  }
};

TEST(SmallOrders, follows_a_map_through_random_changes_and_keeps_published_views_intact) {
  std::mt19937_64 rng(7);
  Publisher p;
  std::map<OrderIndex, Lots> want;
  OrderIndex next_id = 100;
  for (int step = 0; step < 20'000; ++step) {
    const uint64_t kind = rng() % 100;
    if (kind < 45 || want.empty()) {  // a new order: mostly the highest index yet, sometimes not
      OrderIndex id = next_id += 1 + rng() % 3;
      if (kind < 5 && want.size() > 2) {
        id = want.begin()->first + rng() % (next_id - want.begin()->first);
        if (want.contains(id)) continue;
      }
      const Lots lots = 1 + static_cast<Lots>(rng() % 50);
      if (want.size() >= 64) continue;
      p.list.insert(order(id, lots), p.ctx());
      want[id] = lots;
    } else if (kind < 85) {  // a cancel or fill of a random order
      auto it = want.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(rng() % want.size()));
      ASSERT_TRUE(p.list.erase(it->first, p.ctx()));
      want.erase(it);
    } else {  // a partial fill
      auto it = want.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(rng() % want.size()));
      OrderView* w = p.list.writable(it->first, p.ctx());
      ASSERT_NE(w, nullptr);
      w->o.remaining = it->second = 1 + static_cast<Lots>(rng() % 50);
    }
    EXPECT_FALSE(p.list.erase(1, p.ctx()));  // an index never held
    EXPECT_EQ(p.list.writable(2, p.ctx()), nullptr);
    if (rng() % 3 == 0) p.publish();
    ASSERT_NO_FATAL_FAILURE(p.expect_views_unchanged());
    if (step % 97 == 0) {
      ASSERT_NO_FATAL_FAILURE(expect_list(p.list, want));
    }
  }
  p.publish();
  ASSERT_NO_FATAL_FAILURE(expect_list(p.list, want));
  // At most 64 orders: the lists hold no more chunks than a list of 64 in chunks of 2 or more.
  EXPECT_LE(p.list.chunks().size(), 33u);
}

TEST(SmallOrders, a_list_of_steady_size_reuses_its_chunks_once_the_views_let_go) {
  Publisher p;
  OrderIndex id = 1;
  for (; id <= 26; ++id) p.list.insert(order(id, 1), p.ctx());
  p.publish();
  // Each round: one new order, the oldest one cancelled, published; readers hold 3 views.
  for (int round = 0; round < 2'000; ++round) {
    p.list.insert(order(id++, 1), p.ctx());
    ASSERT_TRUE(p.list.erase(p.list.firsts().front(), p.ctx()));
    p.publish();
  }
  const size_t made = p.pool.made();
  for (int round = 0; round < 10'000; ++round) {
    p.list.insert(order(id++, 1), p.ctx());
    ASSERT_TRUE(p.list.erase(p.list.firsts().front(), p.ctx()));
    p.publish();
    ASSERT_NO_FATAL_FAILURE(p.expect_views_unchanged());
  }
  EXPECT_EQ(p.pool.made(), made);  // steady state: no new chunk
  EXPECT_EQ(p.list.size(), 26u);
}

TEST(SmallChunkPool, gives_a_retired_chunk_again_only_once_its_tag_is_safe) {
  SmallChunkPool pool;
  SmallOrderChunk* a = pool.take(1, 1);
  SmallOrderChunk* b = pool.take(1, 1);
  EXPECT_NE(a, b);
  pool.retire(a, 5);
  EXPECT_NE(pool.take(5, 2), a);  // tag 5 is not below 5: a view may still show it
  EXPECT_EQ(pool.take(6, 2), a);
  EXPECT_EQ(a->n, 0u);
  EXPECT_EQ(a->born, 2u);
  pool.retire(b, 0);  // never shown: at once
  EXPECT_EQ(pool.take(1, 3), b);
}

TEST(SmallOrders, assign_sorted_fills_full_chunks_and_a_published_chunk_is_copied_once) {
  Publisher p;
  std::vector<OrderView> sorted;
  std::map<OrderIndex, Lots> want;
  for (OrderIndex id = 10; id < 30; ++id) {
    sorted.push_back(order(id, static_cast<Lots>(id)));
    want[id] = static_cast<Lots>(id);
  }
  p.list.assign_sorted(sorted.begin(), sorted.end(), p.ctx());
  ASSERT_NO_FATAL_FAILURE(expect_list(p.list, want));
  EXPECT_EQ(p.list.chunks().size(), 3u);  // 8 + 8 + 4
  p.publish();

  // Published: a change copies the chunk (the view keeps the old one), then writes in place.
  const SmallOrders::Table shown = p.list.chunks();
  OrderView* w = p.list.writable(15, p.ctx());
  ASSERT_NE(w, nullptr);
  w->o.remaining = 999;
  EXPECT_EQ(p.list.find(15)->o.remaining, 999);
  EXPECT_EQ(OrderRange(shown, 20).find(15)->o.remaining, 15);
  EXPECT_NE(p.list.chunks()[0], shown[0]);
  EXPECT_EQ(p.list.chunks()[1], shown[1]);  // the others shared
  EXPECT_EQ(p.list.letting_go().size(), 1u);
  p.list.writable(16, p.ctx())->o.remaining = 998;  // the copy is private: no second copy
  EXPECT_EQ(p.list.letting_go().size(), 1u);
  p.list.insert(order(17, 997), p.ctx());  // an index held: replaced, not added
  EXPECT_EQ(p.list.size(), 20u);
  EXPECT_EQ(p.list.find(17)->o.remaining, 997);
  OrderView gone;
  ASSERT_TRUE(p.list.erase(18, p.ctx(), &gone));  // the order as it was, handed back
  EXPECT_EQ(gone.o.remaining, 18);
  EXPECT_EQ(p.list.size(), 19u);
  p.publish();

  p.list.clear(p.ctx());
  EXPECT_TRUE(p.list.empty());
  EXPECT_TRUE(p.list.chunks().empty());
  EXPECT_EQ(p.list.find(15), nullptr);
}

// With real reader threads and the real account table: views whose lists the writer keeps
// changing (copy on write, chunks retired with each replaced view's epoch tag and reused once
// safe, as ReadSide does) always read whole: each order is the account's, in index order, as
// many as the view counts, with the index sum the view was published with. (A chunk reused
// while a reader holds a view showing it fails this, and is a data race for TSan.)
TEST(SmallOrders, readers_see_whole_lists_while_the_writer_changes_and_reuses_chunks) {
  constexpr AccountIndex kAccounts = 40;
  pipe::AccountTable table(256, 4);
  SmallChunkPool pool;
  std::vector<SmallOrders> lists(kAccounts);
  std::vector<std::map<OrderIndex, Lots>> want(kAccounts);
  uint64_t gen = 1;
  std::mt19937_64 rng(11);
  OrderIndex next_id = 1;
  auto publish = [&](AccountIndex a, uint64_t version) {
    auto v = table.take_spare();
    if (!v) v = std::make_unique<pipe::AccountView>();
    v->index = v->master = a;
    v->version = version;
    v->small_orders.clear();
    v->small_chunks.assign(lists[a].chunks().begin(), lists[a].chunks().end());
    v->open_order_count = static_cast<uint32_t>(lists[a].size());
    Usdc sum = 0;
    for (const auto& [id, lots] : want[a]) sum += static_cast<Usdc>(id);
    v->collateral = sum;
    uint64_t tag = 0;
    const bool in = table.publish(std::move(v), &tag);
    lists[a].published(gen++);
    for (const SmallOrderChunk* c : lists[a].letting_go()) pool.retire(c, tag);
    lists[a].letting_go().clear();
    return in;
  };
  std::atomic<bool> done{false};
  std::atomic<uint64_t> bad{0}, reads{0};
  auto reader = [&](AccountIndex stride) {
    auto r = table.reader();
    for (uint64_t i = 0; i < 50'000'000 && !(done.load() && i > 0); ++i, ++reads) {
      r.read([&] {
        for (AccountIndex a = i % stride; a < kAccounts; a += stride) {
          const pipe::AccountView* v = table.find(a);
          if (v == nullptr) continue;
          Usdc sum = 0;
          size_t n = 0;
          OrderIndex last = 0;
          for (const OrderView& o : v->order_list()) {
            bad += o.o.account != a || o.o.order_index <= last ||
                   o.o.remaining != static_cast<Lots>(o.o.order_index % 97 + 1);
            last = o.o.order_index;
            sum += static_cast<Usdc>(o.o.order_index);
            ++n;
          }
          bad += n != v->open_order_count || sum != v->collateral;
        }
      });
    }
  };
  std::vector<std::thread> readers;
  for (AccountIndex s : {3, 5, 7}) readers.emplace_back(reader, s);
  uint64_t refused = 0;  // no ASSERT here: the readers must be joined
  for (uint64_t round = 1; round <= 400; ++round) {
    for (AccountIndex a = 0; a < kAccounts; ++a) {
      const SmallOrders::Ctx ctx{pool, table.safe_below_seen(), gen};
      for (int k = 0; k < 3; ++k) {
        auto& w = want[a];
        if (w.size() < 20 || (w.size() < 60 && rng() % 2 == 0)) {
          OrderView o = order(next_id, static_cast<Lots>(next_id % 97 + 1));
          o.o.account = a;
          lists[a].insert(o, ctx);
          w[next_id++] = o.o.remaining;
        } else {
          auto it = w.begin();
          std::advance(it, static_cast<std::ptrdiff_t>(rng() % w.size()));
          lists[a].erase(it->first, ctx);
          w.erase(it);
        }
      }
      refused += !publish(a, round);
    }
    table.collect();
  }
  done.store(true);
  for (auto& t : readers) t.join();
  EXPECT_EQ(refused, 0u);
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_GT(reads.load(), 0u);
  std::printf("small lists: %lu reads, %zu chunks made\n", reads.load(), pool.made());
}

}  // namespace
}  // namespace tachyon::testing
