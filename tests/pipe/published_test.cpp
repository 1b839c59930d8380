// Published<T>: readers always see a whole, consistent object and never a freed one while a
// writer publishes as fast as it can (ASan and TSan builds run this too); retired objects are
// freed once no reader holds them.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tachyon/pipe/book_snapshot.hpp"
#include "tachyon/pipe/published.hpp"

namespace tachyon::pipe {
namespace {

std::unique_ptr<BookSnapshot> make(uint64_t nonce) {
  auto s = std::make_unique<BookSnapshot>();
  s->nonce = nonce;
  s->begin_nonce = nonce - 1;
  const size_t depth = 1 + nonce % 40;
  for (size_t i = 0; i < depth; ++i) {
    s->bids.push_worse({static_cast<Ticks>(100000 - i), static_cast<Lots>(nonce + i), 1});
    s->asks.push_worse({static_cast<Ticks>(100001 + i), static_cast<Lots>(nonce * 3 + i), 1});
  }
  return s;
}

bool consistent(const BookSnapshot& s) {
  const size_t depth = 1 + s.nonce % 40;
  if (s.bids.size() != depth || s.asks.size() != depth || s.begin_nonce + 1 != s.nonce)
    return false;
  for (size_t i = 0; i < depth; ++i) {
    if (s.bids[i].size != static_cast<Lots>(s.nonce + i)) return false;
    if (s.asks[i].size != static_cast<Lots>(s.nonce * 3 + i)) return false;
  }
  return true;
}

TEST(Published, readers_see_nothing_before_the_first_publish_then_the_latest) {
  Published<BookSnapshot> p(2);
  auto r = p.reader();
  EXPECT_EQ(r.read([](const BookSnapshot* s) { return s; }), nullptr);
  p.publish(make(1));
  p.publish(make(2));
  EXPECT_EQ(r.read([](const BookSnapshot* s) { return s->nonce; }), 2u);
  EXPECT_EQ(p.collect(), 0u) << "nobody reads: every retired snapshot is freed";
}

TEST(Published, a_reader_inside_read_keeps_its_snapshot_alive) {
  Published<BookSnapshot> p(2);
  p.publish(make(1));
  auto r = p.reader();
  r.read([&](const BookSnapshot* held) {
    for (uint64_t n = 2; n < 50; ++n) p.publish(make(n));
    EXPECT_GE(p.collect(), 1u) << "the snapshot the reader holds must wait";
    EXPECT_TRUE(consistent(*held));  // still intact (ASan would catch a free)
    EXPECT_EQ(held->nonce, 1u);
    return 0;
  });
  EXPECT_EQ(p.collect(), 0u);
}

TEST(Published, readers_and_a_fast_writer_never_see_a_torn_or_freed_snapshot) {
  constexpr uint64_t kVersions = 100'000;
  Published<BookSnapshot> p(4, make(1));
  std::atomic<bool> done{false};
  std::atomic<uint64_t> bad{0}, reads{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      auto r = p.reader();
      uint64_t last = 0, n = 0;
      while (!done.load(std::memory_order_acquire)) {
        r.read([&](const BookSnapshot* s) {
          if (!consistent(*s) || s->nonce < last) bad.fetch_add(1);
          last = s->nonce;
          return 0;
        });
        ++n;
      }
      reads.fetch_add(n);
    });
  }
  for (uint64_t v = 2; v <= kVersions; ++v) p.publish(make(v));
  done.store(true, std::memory_order_release);
  for (auto& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_GT(reads.load(), 0u);
  EXPECT_EQ(p.collect(), 0u);
}

}  // namespace
}  // namespace tachyon::pipe

namespace tachyon::pipe {
namespace {

// The same stress with recycling: the writer refills objects that came back from readers, so a
// reader that could still see one being refilled would catch a torn snapshot (or TSan a race).
TEST(Published, recycled_snapshots_are_refilled_only_once_no_reader_holds_them) {
  constexpr uint64_t kVersions = 100'000;
  Published<BookSnapshot> p(4, make(1));
  p.enable_recycling();
  std::atomic<bool> done{false};
  std::atomic<uint64_t> bad{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      auto r = p.reader();
      while (!done.load(std::memory_order_acquire)) {
        r.read([&](const BookSnapshot* s) {
          if (!consistent(*s)) bad.fetch_add(1);
          return 0;
        });
      }
    });
  }
  uint64_t reused = 0;
  for (uint64_t v = 2; v <= kVersions; ++v) {
    std::unique_ptr<BookSnapshot> s = p.take_spare();
    if (s) {
      ++reused;
      const auto fresh = make(v);
      s->nonce = fresh->nonce;
      s->begin_nonce = fresh->begin_nonce;
      s->bids = fresh->bids;
      s->asks = fresh->asks;
    } else {
      s = make(v);
    }
    p.publish(std::move(s));
  }
  done.store(true, std::memory_order_release);
  for (auto& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_GT(reused, kVersions / 2) << "most publications should reuse a snapshot";
}

}  // namespace
}  // namespace tachyon::pipe
