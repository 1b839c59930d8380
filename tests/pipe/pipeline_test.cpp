// The whole hot path with real threads: two api-worker threads submit into their rings, the
// sequencer executes and journals, the apply thread publishes book snapshots and routes results
// back once durable. Checked: every submission answered exactly once, results never before the
// journal has them, the journal replays to the same state, the snapshots show the engine's book.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <thread>

#include "store/store_support.hpp"
#include "tachyon/pipe/pipeline.hpp"
#include "tachyon/store/sim_disk.hpp"

namespace tachyon::testing {
namespace {

constexpr uint64_t kPerWorker = 20'000;

MarketParams roomy_market() {
  MarketParams p = demo_market_params();
  p.max_orders_per_account = 1 << 20;  // the workers' orders pile up; no per-account limit here
  return p;
}

std::unique_ptr<Engine> funded_engine(TxBuilder& b, uint64_t& seq) {
  auto e = std::make_unique<Engine>();
  NullSink sink;
  std::vector<Tx> genesis = {b.create_market(0, roomy_market(), 300000)};
  for (AccountIndex a = 100; a < 120; ++a) genesis.push_back(b.deposit(a, 1'000'000 * kUsdcScale));
  for (Tx& tx : genesis) {
    tx.h.seq = ++seq;
    EXPECT_TRUE(e->execute(tx, sink).ok());
  }
  return e;
}

TEST(Pipeline, two_workers_get_every_result_once_after_it_is_durable_and_state_replays) {
  TempDir dir;
  TxBuilder b;
  uint64_t seq = 0;
  auto engine = funded_engine(b, seq);
  // The genesis txs go into the journal first, so the journal alone replays to the same state.
  store::JournalConfig jc{dir.path(), store::Durability::kWrite};
  std::unique_ptr<store::Journal> journal;
  ASSERT_TRUE(store::Journal::open(jc, 1, journal).ok());
  {
    TxBuilder g;
    uint64_t s = 0;
    Engine scratch;
    NullSink sink;
    std::vector<Tx> genesis = {g.create_market(0, roomy_market(), 300000)};
    for (AccountIndex a = 100; a < 120; ++a)
      genesis.push_back(g.deposit(a, 1'000'000 * kUsdcScale));
    for (Tx& tx : genesis) {
      tx.h.seq = ++s;
      scratch.execute(tx, sink);
      journal->append(tx);
    }
  }
  pipe::PipelineConfig pc;
  pc.workers = 2;
  pc.ingress_capacity = 256;
  pc.sequencer_core = 0;  // placement is exercised here too; refusals only degrade
  pc.apply_core = 1;
  pipe::Pipeline p(pc, std::move(engine), journal.get(), nullptr);
  p.start();
  std::atomic<uint64_t> bad{0};
  auto worker = [&](uint32_t w) {
    TxBuilder wb(
        std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::system_clock::now().time_since_epoch())
            .count());  // the sequencer stamps real time: order expiries must be ahead of it
    std::vector<int64_t> nonce(10, 0);
    std::vector<uint8_t> answered(kPerWorker, 0);
    uint64_t sent = 0, got = 0, last_seq = 0, busy = 0;
    while (got < kPerWorker) {
      if (sent < kPerWorker) {
        const AccountIndex a = 100 + w * 10 + sent % 10;
        const bool ask = (sent / 10) % 2;
        const Ticks px = 300000 + (ask ? 1 : -1) * static_cast<Ticks>(sent % 7) * 100 +
                         (sent % 13 == 0 ? (ask ? -300 : 300) : 0);
        Tx tx = wb.limit(a, nonce[a - 100 - w * 10], 0, ask, px, 1 + sent % 5);
        if (p.submit(w, tx, sent, 0)) {
          ++nonce[a - 100 - w * 10];  // orders here are never refused: enough margin, valid fields
          ++sent;
        } else {
          ++busy;
        }
      }
      got += p.poll_results(w, [&](const pipe::Result& r) {
        if (r.cookie >= kPerWorker || answered[r.cookie]++ != 0) bad.fetch_add(1);
        if (r.seq <= last_seq || r.seq > journal->durable_seq()) bad.fetch_add(1);
        if (r.reject != Reject::kOk && bad.fetch_add(1) < 3)
          std::printf("worker %u cookie %llu refused: %u\n", w,
                      static_cast<unsigned long long>(r.cookie), reject_code(r.reject));
        last_seq = r.seq;
      });
    }
  };
  std::thread w0(worker, 0), w1(worker, 1);
  w0.join();
  w1.join();
  p.stop();
  EXPECT_NE(p.placement_report().find("sequencer:"), std::string::npos);
  EXPECT_NE(p.placement_report().find("apply:"), std::string::npos);
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_EQ(p.engine().last_seq(), 21 + 2 * kPerWorker);
  EXPECT_EQ(p.engine().validate(), "");
  // The snapshots show exactly the engine's book.
  const Market* m = p.engine().market(0);
  auto reader = p.book(0).reader();
  reader.read([&](const pipe::BookSnapshot* s) {
    EXPECT_NE(s, nullptr);
    for (int side = 0; side < 2; ++side) {
      const auto& levels = side ? s->asks : s->bids;
      EXPECT_EQ(levels.size(), m->book.level_count(side));
      if (levels.size() != m->book.level_count(side)) continue;
      for (size_t i = 0; i < levels.size(); ++i) {
        EXPECT_EQ(levels[i].price, m->book.level(side, i).price);
        EXPECT_EQ(levels[i].size, m->book.level(side, i).total);
        EXPECT_EQ(levels[i].orders, m->book.level(side, i).count);
      }
    }
    return 0;
  });
  journal->close();
  std::unique_ptr<Engine> rec;
  store::RecoveryReport rep;
  ASSERT_TRUE(store::recover(dir.path(), EngineConfig{}, rec, rep).ok());
  EXPECT_EQ(rec->state_hash(), p.engine().state_hash());
  EXPECT_GT(p.stats().book_publications, 0u);
}

TEST(Pipeline, a_full_ingress_ring_answers_busy_instead_of_blocking) {
  TxBuilder b;
  uint64_t seq = 0;
  pipe::PipelineConfig pc;
  pc.workers = 1;
  pc.ingress_capacity = 8;
  pipe::Pipeline p(pc, funded_engine(b, seq), nullptr, nullptr);  // not started: nobody drains
  int accepted = 0;
  for (int i = 0; i < 20; ++i) accepted += p.submit(0, b.limit(100, i, 0, false, 299000, 1), i, 0);
  EXPECT_EQ(accepted, 8);
  EXPECT_EQ(p.stats().ring_full, 12u);
}

// The book caches keep each side worst first (the touch at the back): a pipeline started on a book
// publishes it best first, and new best and worst levels, a swept best level and a canceled middle
// level keep every snapshot equal to the engine's book, level by level.
TEST(Pipeline, book_snapshots_stay_best_first_through_new_and_emptied_levels) {
  TxBuilder b(realtime_ns());  // the sequencer stamps the real time: orders stay unexpired
  uint64_t seq = 0;
  auto engine = funded_engine(b, seq);
  NullSink sink;
  std::vector<int64_t> nonce(20, 0);
  auto run = [&](Engine& e, Tx tx) {
    tx.h.seq = ++seq;
    const TxResult r = e.execute(tx, sink);
    EXPECT_TRUE(r.ok());
    ++nonce[tx.h.account - 100];
    return r.order_index;
  };
  OrderIndex middle_bid = 0;
  for (Ticks d : {5, 1, 9, 3, 7}) {  // five levels a side, out of price order
    const OrderIndex bid = run(*engine, b.limit(100, nonce[0], 0, false, 300000 - 10 * d, 2));
    run(*engine, b.limit(101, nonce[1], 0, true, 300000 + 10 * d, 2));
    if (d == 5) middle_bid = bid;
  }
  pipe::PipelineConfig pc;
  pc.workers = 1;
  pipe::Pipeline p(pc, std::move(engine), nullptr, nullptr);
  auto same_as_engine = [&](const char* when) {
    const Market* m = p.engine().market(0);
    auto reader = p.book(0).reader();
    reader.read([&](const pipe::BookSnapshot* s) {
      EXPECT_NE(s, nullptr) << when;
      if (s == nullptr) return 0;
      for (int side = 0; side < 2; ++side) {
        const auto& levels = side ? s->asks : s->bids;
        EXPECT_EQ(levels.size(), m->book.level_count(side)) << when;
        for (size_t i = 0; i < std::min(levels.size(), m->book.level_count(side)); ++i) {
          EXPECT_EQ(levels[i].price, m->book.level(side, i).price) << when << " level " << i;
          EXPECT_EQ(levels[i].size, m->book.level(side, i).total) << when << " level " << i;
        }
      }
      return 0;
    });
  };
  same_as_engine("at start");
  EXPECT_EQ(p.engine().market(0)->book.level_count(0), 5u);
  p.start();
  const Tx txs[] = {
      b.limit(102, nonce[2]++, 0, false, 299995, 1),   // a new best bid
      b.limit(102, nonce[2]++, 0, false, 299000, 1),   // a new worst bid
      b.market(103, nonce[3]++, 0, false, 300010, 2),  // sweeps the best ask level
      b.cancel(100, nonce[0]++, 0, middle_bid),        // empties a middle bid level
      b.limit(103, nonce[3]++, 0, true, 300005, 3),    // a new best ask
  };
  uint64_t sent = 0, got = 0;
  for (const Tx& tx : txs) {
    while (!p.submit(0, tx, sent, 0)) std::this_thread::yield();
    ++sent;
  }
  while (got < sent) {
    got += p.poll_results(0, [&](const pipe::Result& r) { EXPECT_EQ(r.reject, Reject::kOk); });
    std::this_thread::yield();
  }
  p.stop();
  EXPECT_EQ(p.engine().market(0)->book.level_count(0), 6u);  // 5 + best + worst - middle
  EXPECT_EQ(p.engine().market(0)->book.level_count(1), 5u);  // 5 - swept + new best
  same_as_engine("after the txs");
}

// The top orders of each side come from the previous snapshot when a batch touched no level at or
// better than its last one shown (publish_changed). A random stream, one tx at a time, over a book
// with more and fewer orders a side than BookSnapshot::kTopOrders, with cancels deep and near the
// touch, fills and new levels: after every tx the snapshot shows a mirror engine's book, levels and
// top orders, given the same txs.
TEST(Pipeline, book_snapshots_show_the_top_orders_of_the_engine_after_every_tx) {
  TxBuilder b(realtime_ns());
  std::vector<Tx> genesis = {b.create_market(0, roomy_market(), 300000)};
  for (AccountIndex a = 100; a < 120; ++a) genesis.push_back(b.deposit(a, 1'000'000 * kUsdcScale));
  auto engine = std::make_unique<Engine>();
  Engine mirror;
  uint64_t seq = 0;
  NullSink sink;
  std::mt19937_64 rng(11);
  auto pick = [&](uint64_t n) { return static_cast<uint64_t>(rng() % n); };
  std::vector<int64_t> nonce(20, 0);
  auto on_both = [&](Tx tx) {
    tx.h.seq = ++seq;
    EXPECT_TRUE(engine->execute(tx, sink).ok());
    EXPECT_TRUE(mirror.execute(tx, sink).ok());
  };
  for (const Tx& tx : genesis) on_both(tx);
  // 250 asks and 70 bids (fewer than kTopOrders: any change there is among them, until the stream
  // has added more) over ~60 levels a side.
  for (int i = 0; i < 320; ++i) {
    const AccountIndex a = 100 + static_cast<AccountIndex>(pick(20));
    const bool ask = i < 250;
    const Ticks away = 10 * static_cast<Ticks>(1 + pick(60));
    on_both(b.limit(a, nonce[a - 100]++, 0, ask, ask ? 300000 + away : 300000 - away,
                    1 + static_cast<Lots>(pick(4))));
  }
  pipe::PipelineConfig pc;
  pc.workers = 1;
  pipe::Pipeline p(pc, std::move(engine), nullptr, nullptr);
  auto same_as_mirror = [&](int step) {
    const Market* m = mirror.market(0);
    auto reader = p.book(0).reader();
    reader.read([&](const pipe::BookSnapshot* s) {
      EXPECT_NE(s, nullptr);
      if (s == nullptr) return 0;
      for (int side = 0; side < 2; ++side) {
        const auto& levels = side ? s->asks : s->bids;
        EXPECT_EQ(levels.size(), m->book.level_count(side)) << "step " << step;
        for (size_t i = 0; i < std::min(levels.size(), m->book.level_count(side)); ++i) {
          EXPECT_EQ(levels[i].price, m->book.level(side, i).price) << "step " << step;
          EXPECT_EQ(levels[i].size, m->book.level(side, i).total) << "step " << step;
        }
        std::vector<pipe::BookOrder> want;
        for (size_t i = 0; i < m->book.level_count(side) && want.size() < s->kTopOrders; ++i) {
          for (uint32_t slot = m->book.level(side, i).head;
               slot != kNoSlot && want.size() < s->kTopOrders; slot = mirror.orders()[slot].next) {
            const Order& o = mirror.orders()[slot];
            want.push_back(pipe::BookOrder{o.order_index, o.account, o.price, o.remaining,
                                           o.initial, o.expiry_ms});
          }
        }
        const auto& shown = side ? s->ask_orders : s->bid_orders;
        EXPECT_EQ(shown.size(), want.size()) << "step " << step << " side " << side;
        for (size_t k = 0; k < std::min(shown.size(), want.size()); ++k) {
          const pipe::BookOrder& x = shown[k];
          const pipe::BookOrder& y = want[k];
          EXPECT_TRUE(x.order_index == y.order_index && x.owner == y.owner && x.price == y.price &&
                      x.remaining == y.remaining && x.initial == y.initial &&
                      x.expiry_ms == y.expiry_ms)
              << "step " << step << " side " << side << " order " << k << ": shows "
              << x.order_index << " @" << x.price << " x" << x.remaining << ", the engine has "
              << y.order_index << " @" << y.price << " x" << y.remaining;
        }
      }
      return 0;
    });
  };
  // The mirror's, so that a refused tx (the pipeline must refuse it too) leaves nothing out of
  // step.
  auto next_nonce = [&](AccountIndex a) { return mirror.account(a)->keys.at(0).next_nonce; };
  p.start();
  uint64_t cookie = 0, refused = 0;
  std::array<int, 2> few_steps{}, many_steps{};  // per side: fewer / at least kTopOrders orders
  int deep_cancels = 0, top_cancels = 0, fills = 0;
  for (int step = 0; step < 1500 && !::testing::Test::HasFailure(); ++step) {
    const AccountIndex a = 100 + static_cast<AccountIndex>(pick(20));
    const bool ask = pick(2) == 1;
    const uint64_t kind = pick(100);
    Tx tx;
    if (kind < 50) {  // a limit order, now and then through the touch; bids first grow
      const bool ask = step < 700 ? pick(4) == 0 : pick(2) == 1;
      const Ticks away = 10 * (static_cast<Ticks>(pick(70)) - 3);
      tx = b.limit(a, next_nonce(a), 0, ask, ask ? 300000 + away : 300000 - away,
                   1 + static_cast<Lots>(pick(4)));
    } else if (kind < 88) {  // a cancel of a resting order, at any depth
      const Market* m = mirror.market(0);
      if (m->book.level_count(ask) == 0) continue;
      const size_t level = pick(m->book.level_count(ask));
      uint32_t slot = m->book.level(ask, level).head;
      for (uint64_t k = pick(m->book.level(ask, level).count); k > 0; --k)
        slot = mirror.orders()[slot].next;
      const Order& o = mirror.orders()[slot];
      (level < 3 ? top_cancels : deep_cancels) += 1;
      tx = b.cancel(o.account, next_nonce(o.account), 0, o.order_index);
    } else {  // a market order sweeping a few lots
      tx =
          b.market(a, next_nonce(a), 0, ask, ask ? 299000 : 301000, 1 + static_cast<Lots>(pick(8)));
      ++fills;
    }
    Tx mirrored = tx;
    mirrored.h.seq = ++seq;
    const TxResult want = mirror.execute(mirrored, sink);
    ASSERT_TRUE(p.submit(0, tx, ++cookie, 0));
    size_t got = 0;
    while (got == 0) {
      got = p.poll_results(0, [&](const pipe::Result& r) {
        EXPECT_EQ(r.reject, want.reject) << "step " << step;
        refused += r.reject != Reject::kOk;
        EXPECT_EQ(r.order_index, want.order_index) << "step " << step;
      });
      if (got == 0) std::this_thread::yield();
    }
    same_as_mirror(step);
    for (int side = 0; side < 2; ++side) {
      uint64_t n = 0;
      for (size_t i = 0; i < mirror.market(0)->book.level_count(side); ++i)
        n += mirror.market(0)->book.level(side, i).count;
      (n < pipe::BookSnapshot::kTopOrders ? few_steps : many_steps)[side] += 1;
    }
  }
  p.stop();
  EXPECT_GT(deep_cancels, 100);
  EXPECT_GT(top_cancels, 50);
  EXPECT_GT(fills, 100);
  EXPECT_LT(refused, 50u);
  std::printf("steps with fewer than kTopOrders bids: %d, asks: %d\n", few_steps[0], few_steps[1]);
  EXPECT_GT(few_steps[0] + few_steps[1], 100);
  EXPECT_GT(many_steps[0], 100);
  EXPECT_GT(many_steps[1], 100);
}

// The sequencer hands a tx's updates to the apply thread one at a time; a reader must still only
// ever see books as they were between two txs (a sweep half done, a modified order missing, are
// states that never were). A reader thread records every snapshot the apply thread publishes
// while sweeps and modifies stream through as fast as the rings take them; each must equal a
// mirror engine's book after the tx the snapshot names (BookSnapshot::seq), and none be crossed.
TEST(Pipeline, readers_see_books_only_as_they_were_between_txs) {
  auto fingerprint = [](auto&& level_at, size_t bids, size_t asks) {
    uint64_t h = 1469598103934665603ULL;
    auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ULL; };
    for (int side = 0; side < 2; ++side) {
      const size_t n = side ? asks : bids;
      mix(0xabcdef00u + static_cast<uint64_t>(side) * 7 + n);
      for (size_t i = 0; i < n; ++i) {
        const auto [price, size] = level_at(side, i);
        mix(static_cast<uint64_t>(price));
        mix(static_cast<uint64_t>(size));
      }
    }
    return h;
  };
  TxBuilder b1(realtime_ns()), b2(realtime_ns());
  uint64_t seq1 = 0, seq2 = 0;
  auto engine = funded_engine(b1, seq1);
  auto mirror = funded_engine(b2, seq2);
  ASSERT_EQ(seq1, seq2);
  NullSink sink;
  std::mt19937_64 rng(23);
  auto pick = [&](uint64_t n) { return static_cast<uint64_t>(rng() % n); };
  auto mirror_fp = [&] {
    const Market* m = mirror->market(0);
    return fingerprint(
        [&](int side, size_t i) {
          const Level& l = m->book.level(side, i);
          return std::pair<Ticks, Lots>{l.price, l.total};
        },
        m->book.level_count(0), m->book.level_count(1));
  };
  std::vector<uint64_t> fp_at(seq1 + 1, 0);  // by seq: the book after that tx
  fp_at[seq1] = mirror_fp();
  auto next_nonce = [&](AccountIndex a) { return mirror->account(a)->keys.at(0).next_nonce; };
  // Rounds of resting orders on both sides, a modify of one of them, and a market order sweeping
  // several levels (each fill several updates: the maker's order, a trade, two positions, two
  // balances).
  std::vector<Tx> stream;
  uint64_t sweeps = 0, modifies = 0;
  for (int round = 0; round < 400; ++round) {
    auto run = [&](Tx tx) {
      Tx m = tx;
      m.h.seq = ++seq2;
      mirror->execute(m, sink);
      fp_at.push_back(mirror_fp());
      stream.push_back(tx);
    };
    for (int k = 0; k < 12; ++k) {
      const AccountIndex a = 100 + static_cast<AccountIndex>(pick(20));
      const bool ask = k % 2 == 1;
      const Ticks away = 10 * static_cast<Ticks>(1 + pick(8));
      run(b2.limit(a, next_nonce(a), 0, ask, ask ? 300000 + away : 300000 - away,
                   1 + static_cast<Lots>(pick(3))));
    }
    const Market* m = mirror->market(0);
    if (m->book.level_count(0) > 0) {  // move the best bid's first order one tick away
      const Order& o = mirror->orders()[m->book.level(0, 0).head];
      run(b2.modify(o.account, next_nonce(o.account), 0, o.order_index, o.remaining, o.price - 10));
      ++modifies;
    }
    const AccountIndex t = 100 + static_cast<AccountIndex>(pick(20));
    const bool ask = round % 2 == 1;
    run(b2.market(t, next_nonce(t), 0, ask, ask ? 299000 : 301000, 8 + static_cast<Lots>(pick(8))));
    ++sweeps;
  }
  pipe::PipelineConfig pc;
  pc.workers = 1;
  pc.apply_batch_updates = 8;  // many publishes, each at the first tx boundary past 8 updates
  pc.book_history = 1 << 16;   // every publish's delta stays in the log
  pipe::Pipeline p(pc, std::move(engine), nullptr, nullptr);
  p.start();
  // The book before the stream, the base every published delta applies to.
  std::map<Ticks, Lots> book[2];
  uint64_t nonce0 = 0;
  for (bool have = false; !have;) {
    p.book(0).reader().read([&](const pipe::BookSnapshot* s) {
      if (s == nullptr) return 0;
      have = true;
      nonce0 = s->nonce;
      EXPECT_EQ(s->seq, seq1);
      for (const pipe::PriceLevel& l : s->bids) book[0][l.price] = l.size;
      for (const pipe::PriceLevel& l : s->asks) book[1][l.price] = l.size;
      return 0;
    });
    if (!have) std::this_thread::yield();
  }
  struct Seen {
    uint64_t seq, fp;
    bool crossed;
  };
  std::vector<Seen> seen;
  seen.reserve(1 << 20);
  std::atomic<bool> done{false};
  std::thread reader([&] {
    auto r = p.book(0).reader();
    uint64_t last_nonce = 0;
    while (!done.load(std::memory_order_acquire)) {
      r.read([&](const pipe::BookSnapshot* s) {
        if (s == nullptr || s->nonce == last_nonce || seen.size() == seen.capacity()) return 0;
        last_nonce = s->nonce;
        const bool crossed =
            !s->bids.empty() && !s->asks.empty() && s->bids.front().price >= s->asks.front().price;
        seen.push_back(Seen{s->seq,
                            fingerprint(
                                [&](int side, size_t i) {
                                  const pipe::PriceLevel& l = side ? s->asks[i] : s->bids[i];
                                  return std::pair<Ticks, Lots>{l.price, l.size};
                                },
                                s->bids.size(), s->asks.size()),
                            crossed});
        return 0;
      });
    }
  });
  uint64_t sent = 0, got = 0, early = 0;
  while (got < stream.size()) {
    while (sent < stream.size() && p.submit(0, stream[sent], sent, 0)) ++sent;
    // A result leaves only once its tx is published: the views a client reads next show it.
    const size_t n = p.poll_results(
        0, [&](const pipe::Result& r) { early += p.applied_seq() < r.seq || r.t_applied_ns == 0; });
    got += n;
    if (n == 0) std::this_thread::yield();
  }
  done.store(true, std::memory_order_release);
  reader.join();
  p.stop();
  ASSERT_EQ(p.applied_seq(), seq2);
  EXPECT_EQ(early, 0u) << "results released before their tx was published";
  // Every publish, from the delta log: each book it leaves must be the mirror's after some tx, in
  // tx order.
  std::vector<pipe::BookDelta> deltas;
  ASSERT_TRUE(p.book_deltas(0, nonce0, UINT64_MAX, deltas));
  auto book_fp = [&] {
    std::vector<std::pair<Ticks, Lots>> bids(book[0].rbegin(), book[0].rend());
    std::vector<std::pair<Ticks, Lots>> asks(book[1].begin(), book[1].end());
    return fingerprint([&](int side, size_t i) { return side ? asks[i] : bids[i]; }, bids.size(),
                       asks.size());
  };
  ASSERT_EQ(book_fp(), fp_at[seq1]);
  size_t at = seq1, torn_publishes = 0;
  for (const pipe::BookDelta& d : deltas) {
    for (int side = 0; side < 2; ++side)
      for (const pipe::PriceLevel& l : side ? d.asks : d.bids) {
        if (l.size == 0) {
          book[side].erase(l.price);
        } else {
          book[side][l.price] = l.size;
        }
      }
    const uint64_t fp = book_fp();
    size_t j = at;
    while (j < fp_at.size() && fp_at[j] != fp) ++j;
    if (j == fp_at.size()) {
      ++torn_publishes;  // no tx boundary shows this book: the next delta goes on from here
    } else {
      at = j;
    }
  }
  std::printf("%zu publishes in the delta log\n", deltas.size());
  EXPECT_GT(deltas.size(), 400u);
  EXPECT_EQ(torn_publishes, 0u) << "publishes showing part of a tx";
  EXPECT_EQ(at, seq2) << "the last publish shows the last tx";
  size_t torn = 0, crossed = 0;
  for (const Seen& s : seen) {
    ASSERT_LT(s.seq, fp_at.size());
    torn += s.fp != fp_at[s.seq];
    crossed += s.crossed;
  }
  std::printf("%zu snapshots seen over %llu txs (%llu sweeps, %llu modifies)\n", seen.size(),
              static_cast<unsigned long long>(stream.size()),
              static_cast<unsigned long long>(sweeps), static_cast<unsigned long long>(modifies));
  EXPECT_GT(seen.size(), 0u);
  EXPECT_EQ(torn, 0u) << "snapshots showing part of a tx";
  EXPECT_EQ(crossed, 0u);
}

// The newest seq a reader is shown: the applied seq, or a book snapshot's.
template <typename BookReader>
uint64_t shown_seq(pipe::Pipeline& p, BookReader& book) {
  uint64_t shown = p.applied_seq();
  book.read([&](const pipe::BookSnapshot* s) {
    if (s != nullptr) shown = std::max(shown, s->seq);
  });
  return shown;
}

// The ways a pipeline runs its group commits: on the journal's writer thread, on the apply thread
// between its batches (the server's default), and on the one thread that runs both loops.
struct Shape {
  store::GroupCommit group_commit;
  bool one_thread;
  const char* name;
};
constexpr Shape kShapes[] = {
    {store::GroupCommit::kWriterThread, false, "group commits on the journal's writer thread"},
    {store::GroupCommit::kFlusher, false, "group commits on the apply thread"},
    {store::GroupCommit::kFlusher, true, "one pipeline thread, group commits on it"},
};

// Durability before visibility: no reader sees a tx (applied_seq, a book snapshot) before the
// journal holds it. Under fsync each group commit is a real fdatasync, so without the rule the
// apply thread publishes well ahead of it; the reader samples what it is shown, then what is
// durable, so a durable_seq read after the shown seq can only be higher.
void readers_never_see_a_tx_before_the_journal_holds_it(const Shape& shape) {
  TempDir dir;
  TxBuilder b;
  uint64_t seq = 0;
  auto engine = funded_engine(b, seq);
  store::JournalConfig jc{dir.path(), store::Durability::kFsync};
  jc.group_commit = shape.group_commit;
  std::unique_ptr<store::Journal> journal;
  ASSERT_TRUE(store::Journal::open(jc, seq + 1, journal).ok());
  pipe::PipelineConfig pc;
  pc.workers = 1;
  pc.one_thread = shape.one_thread;
  pipe::Pipeline p(pc, std::move(engine), journal.get(), nullptr);
  p.start();
  std::atomic<bool> done{false};
  std::atomic<uint64_t> samples{0}, ahead{0}, shown_max{0};
  std::thread reader([&] {
    auto book = p.book(0).reader();
    auto sample = [&] {
      const uint64_t shown = shown_seq(p, book);
      if (shown > journal->durable_seq()) ahead.fetch_add(1);
      shown_max.store(std::max(shown_max.load(), shown));
      samples.fetch_add(1);
    };
    while (!done.load(std::memory_order_acquire)) sample();
    sample();  // after the last result: its tx is published
  });
  TxBuilder wb(std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count());
  constexpr uint64_t kTxs = 3000;
  uint64_t sent = 0, got = 0;
  std::vector<int64_t> nonce(10, 0);
  bool waited = false;
  while (got < kTxs) {
    // Halfway, the reader has sampled a while (on a busy machine it may not have run yet).
    if (sent == kTxs / 2 && !waited) {
      waited = true;
      while (samples.load() < 20) std::this_thread::yield();
    }
    const AccountIndex a = 100 + sent % 10;
    if (sent < kTxs &&
        p.submit(0, wb.limit(a, nonce[a - 100], 0, sent % 2, 300000 + (sent % 2 ? 100 : -100), 1),
                 sent, 0)) {
      ++nonce[a - 100];
      ++sent;
    }
    got += p.poll_results(0, [&](const pipe::Result& r) {
      EXPECT_LE(r.seq, journal->durable_seq());
      EXPECT_EQ(r.reject, Reject::kOk);
    });
  }
  done.store(true, std::memory_order_release);
  reader.join();
  p.stop();
  journal->close();
  EXPECT_EQ(ahead.load(), 0u) << "of " << samples.load() << " samples";
  EXPECT_GT(samples.load(), 10u);
  EXPECT_EQ(shown_max.load(), seq + kTxs);  // the reader saw the last tx once it was durable
}

TEST(Pipeline, readers_never_see_a_tx_before_the_journal_holds_it) {
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(shape.name);
    readers_never_see_a_tx_before_the_journal_holds_it(shape);
  }
}

// The same rule across a power cut: the pipeline's journal (fsync, either way of running its group
// commits) on a SimDisk whose power goes off at a seeded moment under load. What a reader was
// shown (applied seq, book snapshots) and every result handed out before the cut are all in the
// state recovered from what the cut left of the disk.
TEST(Pipeline, what_readers_were_shown_before_a_power_cut_is_there_after_recovery) {
  uint64_t cuts = 0, shown_total = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const Shape& shape = kShapes[seed % 3];
    SCOPED_TRACE("seed " + std::to_string(seed) + ", " + shape.name);
    store::SimDisk disk(seed);
    TxBuilder b;
    uint64_t seq = 0;
    auto engine = funded_engine(b, seq);
    ASSERT_TRUE(store::write_snapshot(*engine, "/data", nullptr, disk).ok());
    store::JournalConfig jc{"/data", store::Durability::kFsync};
    jc.segment_bytes = 8192;
    jc.disk = &disk;
    jc.group_commit = shape.group_commit;
    std::unique_ptr<store::Journal> journal;
    ASSERT_TRUE(store::Journal::open(jc, seq + 1, journal).ok());
    pipe::PipelineConfig pc;
    pc.workers = 1;
    pc.one_thread = shape.one_thread;
    pipe::Pipeline p(pc, std::move(engine), journal.get(), nullptr);
    p.start();
    std::atomic<bool> done{false};
    std::atomic<uint64_t> shown_max{0};
    std::thread reader([&] {
      auto book = p.book(0).reader();
      auto sample = [&] { shown_max.store(std::max(shown_max.load(), shown_seq(p, book))); };
      while (!done.load(std::memory_order_acquire)) sample();
      sample();  // after the cut: what is shown now is all it will ever show
    });
    TxBuilder wb(1'700'000'000'000'000'000);
    std::vector<int64_t> nonce(10, 0);
    uint64_t sent = 0, answered = 0, acked_max = 0;
    bool armed = false;
    const uint64_t cut_after = 200 + seed * 97 % 800;  // results before the power goes off
    while (!journal->failed()) {
      const AccountIndex a = 100 + sent % 10;
      if (p.submit(0, wb.limit(a, nonce[a - 100], 0, sent % 2, 300000 + (sent % 2 ? 100 : -100), 1),
                   sent, 0)) {
        ++nonce[a - 100];
        ++sent;
      }
      answered +=
          p.poll_results(0, [&](const pipe::Result& r) { acked_max = std::max(acked_max, r.seq); });
      if (answered >= cut_after && !armed) {
        disk.cut_power_after(1 + seed % 5);
        armed = true;
      }
    }
    done.store(true, std::memory_order_release);
    reader.join();
    disk.stop_process();  // nothing more reaches the disk
    // The apply thread hands out the results it published before it ends: keep taking them
    // (on this thread, their consumer) while another thread stops the pipeline.
    std::atomic<bool> stopped{false};
    std::thread stopper([&] {
      p.stop();
      stopped.store(true, std::memory_order_release);
    });
    while (!stopped.load(std::memory_order_acquire)) p.poll_results(0, [](const pipe::Result&) {});
    stopper.join();
    journal.reset();
    disk.restart_after_power_cut();
    store::RecoverOptions opt;
    opt.disk = &disk;
    std::unique_ptr<Engine> recovered;
    store::RecoveryReport rep;
    const Status s = store::recover("/data", EngineConfig{}, recovered, rep, opt);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_GE(recovered->last_seq(), shown_max.load()) << "a reader was shown a tx the cut erased";
    EXPECT_GE(recovered->last_seq(), acked_max)
        << "a result was handed out for a tx the cut erased";
    EXPECT_GT(shown_max.load(), seq);
    ++cuts;
    shown_total += shown_max.load() - seq;
  }
  std::printf("%llu power cuts under load: every shown tx (%llu in all) recovered\n",
              static_cast<unsigned long long>(cuts), static_cast<unsigned long long>(shown_total));
}

}  // namespace
}  // namespace tachyon::testing

namespace tachyon::testing {
namespace {

// Runs `txs` through a pipeline (follower: as sequenced; else stamped by it) from worker 0 and
// waits for every result.
void run_through(pipe::Pipeline& p, const std::vector<Tx>& txs) {
  size_t sent = 0, got = 0;
  while (got < txs.size()) {
    if (sent < txs.size() && p.submit(0, txs[sent], sent, 0)) ++sent;
    got += p.poll_results(0, [&](const pipe::Result& r) { EXPECT_EQ(r.reject, Reject::kOk); });
  }
}

std::vector<Tx> orders(TxBuilder& b, int64_t& nonce, int n) {
  std::vector<Tx> v;
  for (int i = 0; i < n; ++i) {
    const bool ask = i % 2 == 1;
    v.push_back(b.limit(100 + i % 2, nonce + i / 2, 0, ask, 300000 + (ask ? 100 : -100), 1));
  }
  nonce += n / 2;
  return v;
}

// A follower's pipeline executes a leader's txs with the leader's seqs, blocks and times, and its
// committer ends each block where the leader's did; once it leads, it stamps the txs after them
// with the next seqs in a new block.
TEST(Pipeline, a_follower_commits_the_leaders_blocks_then_leads_from_the_next_seq) {
  TempDir ldir, fdir;
  TxBuilder b(std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count());
  int64_t nonce = 0;
  auto genesis = [] {  // the same funded engine each time (its own operator nonces)
    TxBuilder g;
    uint64_t s = 0;
    return funded_engine(g, s);
  };
  std::vector<Tx> led;  // the leader's txs as its journal holds them
  {
    store::JournalConfig jc{ldir.path(), store::Durability::kWrite};
    std::unique_ptr<store::Journal> journal;
    ASSERT_TRUE(store::Journal::open(jc, 22, journal).ok());
    store::Committer committer(ldir.path(), genesis(), 304);
    ASSERT_TRUE(committer.start().ok());
    pipe::PipelineConfig pc;
    pc.workers = 1;
    pc.block_max_txs = 7;
    pipe::Pipeline p(pc, genesis(), journal.get(), &committer);
    p.start();
    run_through(p, orders(b, nonce, 100));
    p.stop();
    committer.stop();
    journal->close();
    store::JournalScan scan;
    ASSERT_TRUE(store::replay_journal(
                    ldir.path(), 0, [&](const Tx& tx) { led.push_back(tx); }, scan)
                    .ok());
  }
  ASSERT_EQ(led.size(), 100u);
  store::JournalConfig jc{fdir.path(), store::Durability::kWrite};
  std::unique_ptr<store::Journal> journal;
  ASSERT_TRUE(store::Journal::open(jc, 22, journal).ok());
  store::Committer committer(fdir.path(), genesis(), 304);
  ASSERT_TRUE(committer.start().ok());
  pipe::PipelineConfig pc;
  pc.workers = 1;
  pc.block_max_txs = 3;  // not the leader's: a follower's blocks are the stream's
  pc.follower = true;
  pipe::Pipeline p(pc, genesis(), journal.get(), &committer);
  p.start();
  run_through(p, led);
  EXPECT_TRUE(p.following());
  p.lead();
  run_through(p, orders(b, nonce, 10));
  p.stop();
  committer.stop();
  journal->close();
  EXPECT_EQ(p.engine().last_seq(), 21u + 110u);
  std::vector<store::BlockCommitment> lc, fc;
  ASSERT_TRUE(store::read_commitments(ldir.path(), lc).ok());
  ASSERT_TRUE(store::read_commitments(fdir.path(), fc).ok());
  ASSERT_GT(fc.size(), lc.size());
  for (size_t i = 0; i < lc.size(); ++i) {
    EXPECT_EQ(fc[i].block, lc[i].block);
    EXPECT_EQ(fc[i].last_seq, lc[i].last_seq);
    EXPECT_EQ(fc[i].commitment, lc[i].commitment) << "block " << lc[i].block;
  }
  EXPECT_EQ(fc[lc.size()].block, lc.back().block + 1);  // its own, after the leader's
  EXPECT_EQ(fc[lc.size()].first_seq, lc.back().last_seq + 1);
  EXPECT_EQ(fc.back().last_seq, 21u + 110u);
}

}  // namespace
}  // namespace tachyon::testing
