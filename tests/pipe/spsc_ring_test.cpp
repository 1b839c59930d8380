// SpscRing: single-thread semantics, wrap-around, batch drain limits, and a two-thread stress
// that checks every item arrives once, in order (run under TSan by scripts/test.sh too).
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "tachyon/pipe/spsc_ring.hpp"

namespace tachyon::pipe {
namespace {

struct Item {
  uint64_t seq;
  uint64_t check;  // a function of seq: a torn or stale slot shows up
};

TEST(SpscRing, capacity_rounds_up_to_a_power_of_two) {
  EXPECT_EQ(SpscRing<int>(1).capacity(), 2u);
  EXPECT_EQ(SpscRing<int>(5).capacity(), 8u);
  EXPECT_EQ(SpscRing<int>(1024).capacity(), 1024u);
}

TEST(SpscRing, push_until_full_reports_full_and_pop_returns_items_in_order) {
  SpscRing<int> r(4);
  int out = 0;
  EXPECT_FALSE(r.try_pop(out));
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(r.try_push(i));
  EXPECT_FALSE(r.try_push(99)) << "full must be reported, never overwrite";
  EXPECT_EQ(r.size_approx(), 4u);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(r.try_pop(out));
    EXPECT_EQ(out, i);
  }
  EXPECT_FALSE(r.try_pop(out));
  EXPECT_EQ(r.size_approx(), 0u);
}

TEST(SpscRing, indices_wrap_around_the_slots_many_times) {
  SpscRing<uint64_t> r(8);
  uint64_t next_in = 0, next_out = 0, v = 0;
  for (int round = 0; round < 10'000; ++round) {
    const int n = 1 + round % 8;  // varying fill levels, crossing the wrap at every offset
    for (int i = 0; i < n; ++i) ASSERT_TRUE(r.try_push(next_in++));
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(r.try_pop(v));
      ASSERT_EQ(v, next_out++);
    }
  }
  EXPECT_EQ(next_out, next_in);
}

TEST(SpscRing, drain_hands_out_at_most_the_limit_in_order) {
  SpscRing<int> r(16);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(r.try_push(i));
  std::vector<int> got;
  EXPECT_EQ(r.drain([&](int v) { got.push_back(v); }, 4), 4u);
  EXPECT_EQ(r.drain([&](int v) { got.push_back(v); }, 100), 6u);
  EXPECT_EQ(r.drain([&](int v) { got.push_back(v); }, 100), 0u);
  ASSERT_EQ(got.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(got[i], i);
  for (int i = 0; i < 16; ++i) EXPECT_TRUE(r.try_push(i)) << "drained slots are free again";
}

// drain_until takes the item its function refuses to go past, and frees exactly what it took.
TEST(SpscRing, drain_until_stops_after_the_item_that_says_stop) {
  SpscRing<int> r(8);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(r.try_push(i));
  std::vector<int> got;
  auto until = [&](int stop) {
    return [&got, stop](int v) {
      got.push_back(v);
      return v != stop;
    };
  };
  EXPECT_EQ(r.drain_until(until(2), 100), 3u);  // 0, 1, 2
  EXPECT_EQ(r.drain_until(until(99), 2), 2u);   // the limit: 3, 4
  for (int i = 8; i < 13; ++i) EXPECT_TRUE(r.try_push(i));
  EXPECT_FALSE(r.try_push(13)) << "only the five taken slots were freed";
  size_t more = 0;  // 5 .. 12, across the wrap (a stale cached tail may take two rounds)
  for (size_t n = 1; n > 0; more += n) n = r.drain_until(until(99), 100);
  EXPECT_EQ(more, 8u);
  ASSERT_EQ(got.size(), 13u);
  for (int i = 0; i < 13; ++i) EXPECT_EQ(got[i], i);
}

TEST(SpscRing, two_threads_move_every_item_exactly_once_in_order) {
  constexpr uint64_t kItems = 2'000'000;
  SpscRing<Item> r(1024);
  uint64_t full_events = 0;
  std::thread producer([&] {
    for (uint64_t s = 1; s <= kItems; ++s) {
      const Item it{s, s * 0x9e3779b97f4a7c15ULL};
      while (!r.try_push(it)) ++full_events;
    }
  });
  uint64_t expect = 1, sum = 0;
  bool ordered = true;
  while (expect <= kItems) {
    r.drain(
        [&](const Item& it) {
          ordered &= it.seq == expect && it.check == it.seq * 0x9e3779b97f4a7c15ULL;
          sum += it.seq;
          ++expect;
        },
        64);
  }
  producer.join();
  EXPECT_TRUE(ordered);
  EXPECT_EQ(sum, kItems * (kItems + 1) / 2);
  Item extra;
  EXPECT_FALSE(r.try_pop(extra));
  std::printf("ring stress: %llu items, producer saw the ring full %llu times\n",
              static_cast<unsigned long long>(kItems),
              static_cast<unsigned long long>(full_events));
}

}  // namespace
}  // namespace tachyon::pipe
