// The chunked, shared order list of a big account (pipe/order_list.hpp): every version equals
// the account's orders, and a version shares every chunk whose orders did not change.
#include "tachyon/pipe/order_list.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
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
