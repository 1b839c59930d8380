// The apply thread's resting-order nodes (pipe/order_nodes.hpp): every order added and not yet
// removed is found by its index, with its own node, whether its ring cell was free or taken by an
// older order still resting; removed ones are not found, and their nodes are reused.
#include "tachyon/pipe/order_nodes.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

namespace tachyon::testing {
namespace {

using pipe::OrderNodes;

TEST(OrderNodes, finds_what_was_added_and_not_what_was_removed) {
  OrderNodes nodes(16);
  const uint32_t a = nodes.add(7);
  const uint32_t b = nodes.add(8);
  nodes[a].o.remaining = 70;
  nodes[b].o.remaining = 80;
  EXPECT_NE(a, b);
  EXPECT_EQ(nodes.find(7), a);
  EXPECT_EQ(nodes.find(8), b);
  EXPECT_EQ(nodes.find(9), OrderNodes::kNone);
  EXPECT_EQ(nodes.size(), 2u);
  nodes.remove(a);
  EXPECT_EQ(nodes.find(7), OrderNodes::kNone);
  EXPECT_EQ(nodes.find(8), b);
  EXPECT_EQ(nodes[b].o.remaining, 80);
  EXPECT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes.add(9), a);  // the freed node first
}

// Orders whose indices are a ring's size apart share a cell: the later one goes to the overflow
// map, and either can leave first.
TEST(OrderNodes, orders_sharing_a_cell_are_both_found) {
  OrderNodes nodes(16);  // a ring of 64k cells
  const OrderIndex ring = OrderIndex{1} << 16;
  const uint32_t old = nodes.add(5);
  const uint32_t young = nodes.add(5 + ring);
  const uint32_t youngest = nodes.add(5 + 2 * ring);
  EXPECT_EQ(nodes.overflowed(), 2u);
  EXPECT_EQ(nodes.find(5), old);
  EXPECT_EQ(nodes.find(5 + ring), young);
  EXPECT_EQ(nodes.find(5 + 2 * ring), youngest);
  nodes.remove(old);  // the cell's own leaves first: the others stay found
  EXPECT_EQ(nodes.find(5), OrderNodes::kNone);
  EXPECT_EQ(nodes.find(5 + ring), young);
  EXPECT_EQ(nodes.find(5 + 2 * ring), youngest);
  nodes.remove(youngest);
  EXPECT_EQ(nodes.find(5 + ring), young);
  EXPECT_EQ(nodes.find(5 + 2 * ring), OrderNodes::kNone);
  EXPECT_EQ(nodes.overflowed(), 1u);
  const uint32_t next = nodes.add(5 + 3 * ring);  // the free cell again
  EXPECT_EQ(nodes.find(5 + 3 * ring), next);
  EXPECT_EQ(nodes.find(5 + ring), young);
}

// A random life of ~100k orders against a std::map: indices grow, old orders rest long (many
// shared cells), the node count grows past its first chunks, and every node keeps its own fields.
TEST(OrderNodes, a_random_life_matches_a_map) {
  OrderNodes nodes(100);
  std::map<OrderIndex, uint32_t> live;  // index -> node
  std::mt19937_64 rng(42);
  OrderIndex next = 1;
  for (int step = 0; step < 200'000; ++step) {
    if (live.empty() || rng() % 100 < 52) {
      // mostly the next index; sometimes a jump of about a ring's size
      next += rng() % 50 == 0 ? (OrderIndex{1} << 16) - rng() % 8 : 1 + rng() % 3;
      ASSERT_EQ(nodes.find(next), OrderNodes::kNone);
      const uint32_t s = nodes.add(next);
      nodes[s].o.remaining = static_cast<Lots>(next * 3);
      ASSERT_TRUE(live.emplace(next, s).second);
    } else {
      // the oldest a third of the time, else a random one
      auto it = live.begin();
      if (rng() % 3 != 0) std::advance(it, static_cast<long>(rng() % live.size()));
      ASSERT_EQ(nodes.find(it->first), it->second);
      nodes.remove(it->second);
      ASSERT_EQ(nodes.find(it->first), OrderNodes::kNone);
      live.erase(it);
    }
    ASSERT_EQ(nodes.size(), live.size());
    if (step % 997 == 0) {
      std::set<uint32_t> distinct;
      for (const auto& [id, s] : live) {
        ASSERT_EQ(nodes.find(id), s) << id;
        ASSERT_EQ(nodes[s].o.order_index, id);
        ASSERT_EQ(nodes[s].o.remaining, static_cast<Lots>(id * 3));
        ASSERT_TRUE(distinct.insert(s).second);
      }
    }
  }
  EXPECT_GT(nodes.capacity(), 4096u);  // it grew past its first chunk
}

}  // namespace
}  // namespace tachyon::testing
