// The chunked, shared order list of a big account (pipe/order_list.hpp): every version equals
// the account's orders, and a version shares every chunk whose orders did not change.
#include "tachyon/pipe/order_list.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include <absl/container/btree_map.h>

namespace tachyon::testing {
namespace {

using pipe::OrderList;
using pipe::OrderRange;
using pipe::OrderView;
using Orders = absl::btree_map<OrderIndex, OrderView>;

OrderView order(OrderIndex id, Lots remaining) {
  OrderView v;
  v.o.order_index = id;
  v.o.remaining = remaining;
  return v;
}

// The list holds exactly `all`, in index order, in chunks of 1..kMax with correct first keys.
void expect_equal(const OrderList& l, const Orders& all) {
  ASSERT_EQ(l.size(), all.size());
  std::vector<std::pair<OrderIndex, Lots>> got, want;
  for (const OrderView& o : OrderRange(l)) got.emplace_back(o.o.order_index, o.o.remaining);
  for (const auto& [id, o] : all) want.emplace_back(id, o.o.remaining);
  ASSERT_EQ(got, want);
  for (const auto& c : l.chunks()) {
    ASSERT_FALSE(c->empty());
    EXPECT_LE(c->size(), OrderList::kMax);
  }
  for (const auto& [id, o] : all) {
    const OrderView* f = l.find(id);
    ASSERT_NE(f, nullptr) << id;
    EXPECT_EQ(f->o.order_index, id);
  }
  EXPECT_EQ(l.find(0), nullptr);
}

TEST(OrderList, a_rebuild_copies_only_the_chunks_whose_orders_changed) {
  Orders all;
  for (OrderIndex id = 1000; id < 1000 + 100'000; ++id) all.emplace(id, order(id, 5));
  std::vector<OrderIndex> changed;
  const auto first = OrderList::rebuild(nullptr, all, changed);
  expect_equal(*first, all);
  const size_t chunks = first->chunks().size();
  EXPECT_GE(chunks, 100'000 / OrderList::kMax);

  // Three orders change: a fill in the middle, a cancel near the front, a new order at the end.
  all[50'000].o.remaining = 2;
  changed.push_back(50'000);
  all.erase(1'010);
  changed.push_back(1'010);
  all.emplace(200'000, order(200'000, 7));
  changed.push_back(200'000);
  const auto second = OrderList::rebuild(first.get(), all, changed);
  expect_equal(*second, all);
  EXPECT_TRUE(changed.empty());
  size_t shared = 0;
  std::set<const OrderList::Chunk*> before;
  for (const auto& c : first->chunks()) before.insert(c.get());
  for (const auto& c : second->chunks()) shared += before.count(c.get());
  EXPECT_EQ(shared, chunks - 3) << "all chunks but the three that changed are shared";
  // The first version is untouched (a reader may still hold it).
  EXPECT_EQ(first->size(), 100'000u);
  EXPECT_EQ(first->find(50'000)->o.remaining, 5);
  EXPECT_NE(first->find(1'010), nullptr);
  EXPECT_EQ(second->find(50'000)->o.remaining, 2);
  EXPECT_EQ(second->find(1'010), nullptr);
}

TEST(OrderList, random_changes_keep_every_version_equal_to_the_orders_and_chunks_bounded) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    Orders all;
    OrderIndex next = 1;
    for (int i = 0; i < 3000; ++i, ++next) all.emplace(next, order(next, 1));
    std::vector<OrderIndex> changed;
    std::shared_ptr<const OrderList> l = OrderList::rebuild(nullptr, all, changed);
    for (int round = 0; round < 300 && !::testing::Test::HasFatalFailure(); ++round) {
      // A batch: new orders at the end, removals and fills anywhere, sometimes a mass cancel.
      const int ops = static_cast<int>(rng() % 40);
      for (int k = 0; k < ops; ++k) {
        const uint64_t r = rng() % 10;
        if (r < 4 || all.empty()) {
          all.emplace(next, order(next, 1));
          changed.push_back(next++);
        } else {
          auto it = all.lower_bound(rng() % next);
          if (it == all.end()) it = all.begin();
          changed.push_back(it->first);
          if (r < 8) {
            all.erase(it);
          } else {
            it->second.o.remaining += 1;
          }
        }
      }
      if (round % 97 == 96) {  // cancel a whole range: chunks empty out and merge
        auto it = all.lower_bound(rng() % next);
        for (int k = 0; k < 700 && it != all.end(); ++k) {
          changed.push_back(it->first);
          it = all.erase(it);
        }
      }
      l = OrderList::rebuild(l.get(), all, changed);
      expect_equal(*l, all);
    }
  }
}

// One value over a whole version: its orders in index order (0 if out of order or if the chunks'
// sizes do not add up to size()).
uint64_t digest(const OrderList& l) {
  uint64_t h = 1469598103934665603ull, n = 0;
  OrderIndex prev = 0;
  for (const auto& c : l.chunks()) {
    for (const OrderView& o : *c) {
      if (o.o.order_index <= prev) return 0;
      prev = o.o.order_index;
      h = (h ^
           (static_cast<uint64_t>(o.o.order_index) * 31 + static_cast<uint64_t>(o.o.remaining))) *
          1099511628211ull;
      ++n;
    }
  }
  return n == l.size() ? h : 0;
}

// Versions are shared with readers on other threads (the workers) while the apply thread builds
// the next ones from the chunks they share: a version a reader holds never changes under it, and
// every version it can load is whole. Under ThreadSanitizer, a write to a shared chunk is a race.
TEST(OrderList, readers_hold_whole_unchanging_versions_while_the_writer_rebuilds) {
  std::mt19937_64 rng(9);
  Orders all;
  OrderIndex next = 1;
  for (int i = 0; i < 4000; ++i, ++next) all.emplace(next, order(next, 1));
  std::vector<OrderIndex> changed;
  // The hand-over itself is not under test: a mutex (libstdc++'s atomic<shared_ptr> hides its
  // lock from ThreadSanitizer).
  std::mutex mu;
  std::shared_ptr<const OrderList> latest = OrderList::rebuild(nullptr, all, changed);
  auto current = [&] {
    std::lock_guard lk(mu);
    return latest;
  };
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> reads{0}, broken{0};
  auto reader = [&] {
    while (!stop.load(std::memory_order_acquire)) {
      const std::shared_ptr<const OrderList> v = current();
      const uint64_t before = digest(*v);
      std::this_thread::yield();  // the writer moves on meanwhile
      if (before == 0 || digest(*v) != before) broken.fetch_add(1);
      reads.fetch_add(1);
    }
  };
  std::vector<std::thread> readers;
  for (int i = 0; i < 3; ++i) readers.emplace_back(reader);
  for (int round = 0; round < 1500; ++round) {
    for (int k = 0, ops = static_cast<int>(rng() % 30); k < ops; ++k) {
      auto it = all.lower_bound(rng() % next);
      if (rng() % 3 == 0 || it == all.end()) {
        all.emplace(next, order(next, 1));
        changed.push_back(next++);
      } else {
        changed.push_back(it->first);
        if (rng() % 2 == 0)
          all.erase(it);
        else
          it->second.o.remaining += 1;
      }
    }
    std::shared_ptr<const OrderList> next_version =
        OrderList::rebuild(current().get(), all, changed);
    std::lock_guard lk(mu);
    latest = std::move(next_version);
  }
  stop.store(true, std::memory_order_release);
  for (std::thread& t : readers) t.join();
  expect_equal(*current(), all);
  EXPECT_EQ(broken.load(), 0u) << "of " << reads.load() << " reads";
  EXPECT_GT(reads.load(), 0u);
}

TEST(OrderRange, iterates_a_small_list_and_an_empty_one) {
  std::vector<OrderView> small{order(3, 1), order(9, 2)};
  std::vector<OrderIndex> got;
  for (const OrderView& o : OrderRange(small)) got.push_back(o.o.order_index);
  EXPECT_EQ(got, (std::vector<OrderIndex>{3, 9}));
  EXPECT_EQ(OrderRange(small).find(9)->o.remaining, 2);
  EXPECT_EQ(OrderRange(small).find(4), nullptr);
  const std::vector<OrderView> none;
  EXPECT_TRUE(OrderRange(none).begin() == OrderRange(none).end());
  const auto empty = OrderList::from_sorted(none);
  EXPECT_TRUE(OrderRange(*empty).begin() == OrderRange(*empty).end());
  EXPECT_EQ(OrderRange(*empty).size(), 0u);
}

}  // namespace
}  // namespace tachyon::testing
