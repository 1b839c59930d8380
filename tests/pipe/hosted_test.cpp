// A hosted pipeline (PipelineConfig::hosted): no thread of its own; a host thread runs its rounds
// in an event loop of its own (here ppoll on the bell's eventfd, as an api worker's epoll would).
// Checked: every tx of the host and of another submitting thread answered once and only once
// durable, a task run on the host thread, the stop finished by the host, or by stop() when the
// host left first or never came, and a journal replay to the same state.
#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "store/store_support.hpp"
#include "tachyon/pipe/pipeline.hpp"

namespace tachyon::testing {
namespace {

constexpr AccountIndex kFirst = 100, kAccounts = 10;

// Whether pred() becomes true within 30 s: a deadline for a condition, never a timing under test.
template <typename P>
bool eventually(P&& pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

std::unique_ptr<Engine> funded_engine(TxBuilder& b, std::vector<Tx>& genesis) {
  auto e = std::make_unique<Engine>();
  NullSink sink;
  MarketParams mp = demo_market_params();
  mp.max_orders_per_account = 1 << 20;
  genesis = {b.create_market(0, mp, 300000)};
  for (AccountIndex a = kFirst; a < kFirst + kAccounts; ++a)
    genesis.push_back(b.deposit(a, 1'000'000 * kUsdcScale));
  uint64_t seq = 0;
  for (Tx& tx : genesis) {
    tx.h.seq = ++seq;
    EXPECT_TRUE(e->execute(tx, sink).ok());
  }
  return e;
}

// The pipeline, its journal (fsync, group commits on the loop's thread) holding the genesis txs,
// and the orders each submitter sends: worker w trades accounts of its own, so the two
// submitters' nonces never meet.
struct Hosted {
  // max_pending_bytes: the journal's bound on records handed off and not yet written (0: its
  // default).
  explicit Hosted(uint32_t workers, size_t max_pending_bytes = 0, uint32_t linger_us = 2000) {
    TxBuilder b;
    auto engine = funded_engine(b, genesis);
    store::JournalConfig jc{dir.path(), store::Durability::kFsync};
    jc.group_commit = store::GroupCommit::kFlusher;
    if (max_pending_bytes > 0) jc.max_pending_bytes = max_pending_bytes;
    EXPECT_TRUE(store::Journal::open(jc, 1, journal).ok());
    for (const Tx& tx : genesis) journal->append(tx);
    EXPECT_TRUE(journal->flush().ok());
    pipe::PipelineConfig pc;
    pc.workers = workers;
    pc.one_thread = true;
    pc.hosted = true;
    pc.commit_linger_us = linger_us;  // held rounds while txs come faster than one per linger
    p = std::make_unique<pipe::Pipeline>(pc, std::move(engine), journal.get(), nullptr);
  }
  Tx order(uint32_t w, uint64_t i) {
    const AccountIndex a = kFirst + w * (kAccounts / 2) + i % (kAccounts / 2);
    const bool ask = i % 2;
    return wb[w].limit(a, nonce[a - kFirst]++, 0, ask, 300000 + (ask ? 100 : -100), 1);
  }
  // Worker w's results so far: each cookie once, durable, accepted.
  void take(uint32_t w) {
    while (size_t n = p->poll_results(w, [&](const pipe::Result& r) {
      if (r.cookie != got_cookie[w]++ || r.seq > journal->durable_seq() || r.reject != Reject::kOk)
        ++bad;
    }))
      got[w] += n;
  }
  // After stop: the journal replays to the engine's state.
  void expect_replay_equal() {
    journal->close();
    std::unique_ptr<Engine> rec;
    store::RecoveryReport rep;
    ASSERT_TRUE(store::recover(dir.path(), EngineConfig{}, rec, rep).ok());
    EXPECT_EQ(rec->state_hash(), p->engine().state_hash());
    EXPECT_EQ(p->engine().last_seq(), genesis.size() + got[0] + got[1]);
  }

  TempDir dir;
  std::vector<Tx> genesis;
  std::unique_ptr<store::Journal> journal;
  std::unique_ptr<pipe::Pipeline> p;
  // A builder a submitter (it stamps each tx with its clock); order expiries ahead of real time.
  static int64_t now() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  TxBuilder wb[2] = {TxBuilder(now()), TxBuilder(now())};
  std::vector<int64_t> nonce = std::vector<int64_t>(kAccounts, 0);
  uint64_t got[2] = {0, 0}, got_cookie[2] = {0, 0};
  std::atomic<uint64_t> bad{0};
};

// A host's event loop: its own work (`own`: false once it has none), a round whenever something
// was done, the commit linger slept out after a round that held its commit (counted in
// `lingers`), else a sleep on the bell's eventfd when the pipeline allows it (in `sleeps`).
template <typename Own>
void host_loop(pipe::Pipeline& p, std::atomic<bool>& leave, Own&& own,
               std::atomic<uint64_t>* sleeps = nullptr, uint64_t* lingers = nullptr) {
  while (!leave.load()) {
    size_t work = own() ? 1 : 0;
    work += p.host_step();
    if (const long us = p.host_linger_us(); us > 0) {
      if (lingers != nullptr) ++*lingers;
      std::this_thread::sleep_for(std::chrono::microseconds(us));
    }
    if (work > 0) continue;
    long timeout_us = 0;
    if (p.host_may_sleep(timeout_us)) {
      if (sleeps != nullptr) ++*sleeps;
      pollfd fd{p.host_bell_fd(), POLLIN, 0};
      timespec ts{timeout_us / 1'000'000, (timeout_us % 1'000'000) * 1000};
      ::ppoll(&fd, 1, &ts, nullptr);
    }
    p.host_woke();
  }
  p.host_leave();
}

TEST(HostedPipeline, the_host_runs_the_loop_between_its_own_work_and_finishes_it_at_stop) {
  Hosted h(2);
  ASSERT_TRUE(h.p->hosted());
  ASSERT_GE(h.p->host_bell_fd(), 0);
  constexpr uint64_t kEach = 3000;
  std::atomic<bool> leave{false};
  std::atomic<uint64_t> task_on_host{0};
  uint64_t sent0 = 0;
  std::thread::id host_id;
  std::atomic<uint64_t> sleeps{0};
  // The host submits as worker 0, in bursts of 50, and takes its results.
  std::thread host([&] {
    host_id = std::this_thread::get_id();
    host_loop(
        *h.p, leave,
        [&] {
          h.take(0);
          if (sent0 == kEach) return false;
          for (int i = 0; i < 50 && sent0 < kEach; ++i)
            if (h.p->submit(0, h.order(0, sent0), sent0, 0)) ++sent0;
          return true;
        },
        &sleeps);
  });
  ASSERT_TRUE(eventually([&] { return sleeps.load() > 0; }));  // asleep: start() rings it
  h.p->start();
  // Another thread submits as worker 1, a tx at a time, and every 8th waits for its answers: the
  // host runs out of work and sleeps, and the next submit rings it awake.
  std::thread worker1([&] {
    for (uint64_t i = 0; i < kEach;) {
      if (h.p->submit(1, h.order(1, i), i, 0) && ++i % 8 == 0) {
        if (!eventually([&] {
              h.take(1);
              return h.got[1] == i;
            }))
          break;
      }
      h.take(1);
    }
    eventually([&] {
      h.take(1);
      return h.got[1] >= kEach;
    });
  });
  h.p->run_on_sequencer([&](const Engine& e) {
    task_on_host.store(std::this_thread::get_id() == host_id ? e.last_seq() : 0);
  });
  worker1.join();
  h.p->stop();  // the host finishes the loop: every ring drained, every result routed
  leave.store(true);
  host.join();
  h.take(0);
  EXPECT_EQ(h.got[0], kEach);
  EXPECT_EQ(h.got[1], kEach);
  EXPECT_EQ(h.bad.load(), 0u);
  EXPECT_GT(task_on_host.load(), 0u) << "the task ran on the host thread";
  EXPECT_GT(sleeps.load(), 1u) << "the host slept during the run";
  EXPECT_EQ(h.p->applied_seq(), h.p->engine().last_seq());
  h.expect_replay_equal();
}

// The host stops first (an api that stops before the pipeline): stop() runs the rest of the loop
// on its own thread, and answers what was submitted after the host left. The journal's bound on
// pending records is small, so stop()'s rounds hand off more than it holds: the thread that runs
// the loop runs the group commits too, or it would wait for room nobody makes.
TEST(HostedPipeline, what_a_host_leaves_unfinished_stop_finishes) {
  Hosted h(2, 4096);
  std::atomic<bool> leave{false};
  std::thread host([&] { host_loop(*h.p, leave, [] { return false; }); });
  h.p->start();
  uint64_t sent = 0;
  for (; sent < 500; ++sent) ASSERT_TRUE(h.p->submit(1, h.order(1, sent), sent, 0));
  ASSERT_TRUE(eventually([&] {  // the host is running the loop
    h.take(1);
    return h.got[1] >= 200;
  }));
  leave.store(true);
  h.p->submit(0, h.order(0, 0), 0, 0);  // (rings the host awake if it sleeps)
  host.join();
  for (; sent < 1000; ++sent) ASSERT_TRUE(h.p->submit(1, h.order(1, sent), sent, 0));
  h.p->stop();
  h.take(0);
  h.take(1);
  EXPECT_EQ(h.got[0], 1u);
  EXPECT_EQ(h.got[1], sent);
  EXPECT_EQ(h.bad.load(), 0u);
  h.expect_replay_equal();
}

// Txs the host reads one at a time, far faster than one per linger: a round that sequenced one
// holds its group commit, the host sleeps out the linger and submits what came meanwhile, and
// the next round commits them together. Each is still answered once, only once durable.
TEST(HostedPipeline, a_commit_linger_holds_a_rounds_commit_for_what_the_host_reads_meanwhile) {
  Hosted h(1);
  constexpr uint64_t kTxs = 600;
  const uint64_t commits_before = h.journal->stats().commits;
  std::atomic<bool> leave{false};
  std::atomic<uint64_t> answered{0};  // h.got[0], for this thread
  uint64_t sent = 0, lingers = 0;
  const auto begin = std::chrono::steady_clock::now();
  std::thread host([&] {
    host_loop(
        *h.p, leave,
        [&] {
          h.take(0);
          answered.store(h.got[0]);
          // One due every 50 µs: what came during a linger is read after it, all at once.
          const uint64_t due = std::min<uint64_t>(
              kTxs, (std::chrono::steady_clock::now() - begin) / std::chrono::microseconds(50));
          const uint64_t before = sent;
          while (sent < due && h.p->submit(0, h.order(0, sent), sent, 0)) ++sent;
          return sent > before || sent < kTxs;
        },
        nullptr, &lingers);
  });
  h.p->start();
  const bool all = eventually([&] { return answered.load() == kTxs; });
  leave.store(true);
  host.join();
  ASSERT_TRUE(all);
  h.p->stop();
  h.take(0);
  EXPECT_EQ(h.got[0], kTxs);
  EXPECT_EQ(h.bad.load(), 0u);
  // (A host too slow to see txs one at a time, as under a sanitizer, groups them without holding:
  // a_lone_tx_is_held... checks the holds themselves.)
  const uint64_t commits = h.journal->stats().commits - commits_before;
  EXPECT_LT(commits * 4, kTxs) << commits << " group commits for " << kTxs << " txs, " << lingers
                               << " held";
  h.expect_replay_equal();
}

// Which rounds hold their commit, the test's thread hosting, while txs come faster than one per
// linger (100 ms here: this thread's pauses never reach it): one that sequenced a single tx, for
// the linger; one that brought a group of its own, without a sleep, until the next round; never
// the round after a held one.
TEST(HostedPipeline, a_lone_tx_is_held_for_the_linger_and_a_group_until_the_next_pass) {
  Hosted h(1, 0, 100'000);
  h.p->start();
  uint64_t sent = 0;
  auto submit = [&](int n) {
    for (int i = 0; i < n; ++i, ++sent) ASSERT_TRUE(h.p->submit(0, h.order(0, sent), sent, 0));
  };
  auto step = [&] {
    h.p->host_step();
    return h.p->host_linger_us();
  };
  for (int i = 0; i < 4; ++i) {  // the gaps between txs: far below the linger
    submit(1);
    step();
    step();
  }
  auto commits = [&] { return h.journal->stats().commits; };
  submit(1);
  uint64_t before = commits();
  EXPECT_EQ(step(), 100'000) << "a lone tx waits for company";
  EXPECT_EQ(commits(), before);
  EXPECT_EQ(step(), 0) << "then it is committed";
  EXPECT_EQ(commits(), before + 1);
  submit(5);
  before = commits();
  EXPECT_EQ(step(), 0) << "a round that brings a group holds it without a sleep";
  EXPECT_EQ(commits(), before);
  submit(2);
  EXPECT_EQ(step(), 0);
  EXPECT_EQ(commits(), before + 1) << "the next round commits both rounds' txs at once";
  ASSERT_TRUE(eventually([&] {
    step();
    h.take(0);
    return h.got[0] == sent;
  }));
  h.p->host_leave();
  h.p->stop();
  EXPECT_EQ(h.bad.load(), 0u);
  h.expect_replay_equal();
}

// No host ever came: stop() runs the whole loop.
TEST(HostedPipeline, without_a_host_stop_runs_the_loop_itself) {
  Hosted h(2);
  h.p->start();
  for (uint64_t i = 0; i < 300; ++i) ASSERT_TRUE(h.p->submit(1, h.order(1, i), i, 0));
  EXPECT_EQ(h.p->applied_seq(), h.genesis.size());  // nothing runs the loop yet
  h.p->stop();
  h.take(1);
  EXPECT_EQ(h.got[1], 300u);
  EXPECT_EQ(h.bad.load(), 0u);
  h.expect_replay_equal();
}

}  // namespace
}  // namespace tachyon::testing
