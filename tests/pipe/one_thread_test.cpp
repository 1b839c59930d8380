// The pipeline on one thread (PipelineConfig::one_thread): the sequencer's and the apply loop's
// work interleaved on the thread that also runs the journal's group commits. Checked: every
// submission answered once and only once durable, a burst far larger than the apply ring (the
// thread makes the room itself), a task that waits for the journal to hold the engine's last tx
// (a fork snapshot's), and a journal replay to the same state.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "store/store_support.hpp"
#include "tachyon/pipe/commit_linger.hpp"
#include "tachyon/pipe/pipeline.hpp"
#include "tachyon/store/sim_disk.hpp"

namespace tachyon::testing {
namespace {

std::unique_ptr<Engine> funded(TxBuilder& b, uint64_t& seq, std::vector<Tx>& genesis) {
  auto e = std::make_unique<Engine>();
  NullSink sink;
  MarketParams mp = demo_market_params();
  mp.max_orders_per_account = 1 << 20;
  genesis = {b.create_market(0, mp, 300000)};
  for (AccountIndex a = 100; a < 110; ++a) genesis.push_back(b.deposit(a, 1'000'000 * kUsdcScale));
  for (Tx& tx : genesis) {
    tx.h.seq = ++seq;
    EXPECT_TRUE(e->execute(tx, sink).ok());
  }
  return e;
}

// The journal the pipeline runs on (its group commits on the pipeline thread), holding the
// genesis txs the engine was built from; null when it cannot be opened.
std::unique_ptr<store::Journal> genesis_journal(store::JournalConfig jc,
                                                const std::vector<Tx>& genesis) {
  jc.group_commit = store::GroupCommit::kFlusher;
  std::unique_ptr<store::Journal> journal;
  if (!store::Journal::open(jc, 1, journal).ok()) return nullptr;
  for (const Tx& tx : genesis) journal->append(tx);
  if (!journal->flush().ok()) return nullptr;
  return journal;
}

// Orders stamped by the sequencer with real time: their expiries must be ahead of it.
TxBuilder now_builder() {
  return TxBuilder(std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count());
}

TEST(OneThreadPipeline, answers_every_tx_once_durable_through_bursts_and_a_journal_waiting_task) {
  TempDir dir;
  TxBuilder b;
  uint64_t seq = 0;
  std::vector<Tx> genesis;
  auto engine = funded(b, seq, genesis);
  store::JournalConfig jc{dir.path(), store::Durability::kFsync};
  jc.max_pending_bytes = 4096;  // a round of 256 orders hands over several times
  auto journal = genesis_journal(jc, genesis);
  ASSERT_NE(journal, nullptr);
  pipe::PipelineConfig pc;
  pc.workers = 1;
  pc.one_thread = true;
  pc.ingress_capacity = 8192;
  pc.apply_capacity = 256;  // one round of 256 orders emits more updates than this holds
  pipe::Pipeline p(pc, std::move(engine), journal.get(), nullptr);
  TxBuilder wb = now_builder();
  std::vector<int64_t> nonce(10, 0);
  std::vector<uint8_t> answered;
  uint64_t bad = 0, got = 0, sent = 0;
  auto take = [&] {
    got += p.poll_results(0, [&](const pipe::Result& r) {
      if (r.cookie >= answered.size() || answered[r.cookie]++ != 0) ++bad;
      if (r.seq > journal->durable_seq() || r.reject != Reject::kOk) ++bad;
    });
  };
  for (int burst = 0; burst < 3; ++burst) {
    const uint64_t until = sent + 8000;
    answered.resize(until, 0);
    while (sent < until) {  // submitted in one go: the thread sequences while it applies
      const AccountIndex a = 100 + sent % 10;
      const bool ask = sent % 2;
      if (p.submit(0, wb.limit(a, nonce[a - 100], 0, ask, 300000 + (ask ? 100 : -100), 1), sent,
                   0)) {
        ++nonce[a - 100];
        ++sent;
      } else {
        take();
      }
    }
    // The first burst waited in the ring: the thread's very first round stages more than the
    // journal's bound before any group commit ran, and must not wait for room only it can make.
    if (burst == 0) {
      p.start();
      EXPECT_NE(p.placement_report().find("pipeline"), std::string::npos) << p.placement_report();
    }
    // A task on the pipeline thread that waits for the journal to hold the engine's last tx: the
    // thread commits what it handed off before it runs the task.
    uint64_t task_seq = 0;
    bool durable = false;
    p.run_on_sequencer([&](const Engine& e) {
      task_seq = e.last_seq();
      durable = journal->wait_durable(e.last_seq());
    });
    EXPECT_TRUE(durable);
    EXPECT_GE(journal->durable_seq(), task_seq);
  }
  while (got < sent) take();
  p.stop();
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(got, sent);
  EXPECT_EQ(p.engine().last_seq(), seq + sent);
  EXPECT_EQ(p.applied_seq(), seq + sent);
  journal->close();
  std::unique_ptr<Engine> rec;
  store::RecoveryReport rep;
  ASSERT_TRUE(store::recover(dir.path(), EngineConfig{}, rec, rep).ok());
  EXPECT_EQ(rec->state_hash(), p.engine().state_hash());
}

// A full disk on the one thread that both sequences and commits: it takes no more txs (the ingress
// ring fills, submit refuses) instead of waiting for room only it could make, retries the commit,
// and goes on by itself once there is space; nothing answered is lost.
TEST(OneThreadPipeline, a_full_disk_stops_the_intake_and_trading_resumes_when_space_returns) {
  store::SimDisk disk(11);
  TxBuilder b;
  uint64_t seq = 0;
  std::vector<Tx> genesis;
  auto engine = funded(b, seq, genesis);
  store::JournalConfig jc{"/data", store::Durability::kFsync};
  jc.disk = &disk;
  jc.space_retry_ms = 5;
  jc.max_pending_bytes = 16 << 10;  // less than one full ingress ring of records
  auto journal = genesis_journal(jc, genesis);
  ASSERT_NE(journal, nullptr);
  pipe::PipelineConfig pc;
  pc.workers = 1;
  pc.one_thread = true;
  pc.ingress_capacity = 512;
  pipe::Pipeline p(pc, std::move(engine), journal.get(), nullptr);
  p.start();
  TxBuilder wb = now_builder();
  std::vector<int64_t> nonce(10, 0);
  uint64_t sent = 0, got = 0, bad = 0;
  auto submit = [&] {
    const AccountIndex a = 100 + sent % 10;
    const bool ask = sent % 2;
    if (!p.submit(0, wb.limit(a, nonce[a - 100], 0, ask, 300000 + (ask ? 100 : -100), 1), sent, 0))
      return false;
    ++nonce[a - 100];
    ++sent;
    return true;
  };
  auto take = [&] {
    got += p.poll_results(0, [&](const pipe::Result& r) {
      if (r.seq > journal->durable_seq() || r.reject != Reject::kOk) ++bad;
    });
  };
  disk.set_capacity(disk.used_bytes() + 3000);  // a few group commits, then full
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  uint64_t refused = 0;  // submits refused once the disk is full
  while (refused < 1000 && std::chrono::steady_clock::now() < deadline) {
    if (!submit() && journal->out_of_space()) {
      ++refused;
      std::this_thread::yield();
    }
    take();
  }
  ASSERT_GE(refused, 1000u) << "the intake never stopped";
  EXPECT_TRUE(journal->out_of_space());
  EXPECT_FALSE(journal->failed());
  EXPECT_LT(got, sent);           // txs wait for the disk, unanswered
  disk.set_capacity(UINT64_MAX);  // the operator made room
  while (sent < 4000 && std::chrono::steady_clock::now() < deadline) {
    if (!submit()) std::this_thread::yield();
    take();
  }
  while (got < sent && std::chrono::steady_clock::now() < deadline) take();
  p.stop();
  EXPECT_EQ(got, sent);
  EXPECT_EQ(bad, 0u);
  EXPECT_FALSE(journal->out_of_space());
  journal->close();
  store::RecoverOptions opt;
  opt.disk = &disk;
  std::unique_ptr<Engine> rec;
  store::RecoveryReport rep;
  ASSERT_TRUE(store::recover("/data", EngineConfig{}, rec, rep, opt).ok());
  EXPECT_EQ(rec->state_hash(), p.engine().state_hash());
}

TEST(CommitLinger, holds_only_while_txs_come_faster_than_one_per_two_lingers) {
  pipe::CommitLinger off(0), l(300'000);
  EXPECT_FALSE(l.hold());  // nothing seen yet
  int64_t t = 1'000'000'000;
  for (int i = 0; i < 80; ++i, t += 100'000) {  // one tx per 100 µs
    l.sequenced(1, t);
    off.sequenced(1, t);
  }
  EXPECT_TRUE(l.hold());
  EXPECT_FALSE(off.hold());
  EXPECT_NEAR(static_cast<double>(l.mean_gap_ns()), 100'000.0, 5'000.0);
  for (int i = 0; i < 40; ++i, t += 500'000) l.sequenced(1, t);  // one per 500 µs
  EXPECT_TRUE(l.hold());
  for (int i = 0; i < 40; ++i, t += 1'000'000) l.sequenced(1, t);  // one per ms
  EXPECT_FALSE(l.hold());
  l.sequenced(0, t + 1);  // an empty round changes nothing
  EXPECT_FALSE(l.hold());
  for (int i = 0; i < 40; ++i, t += 1'000'000) l.sequenced(20, t);  // 20 per ms, together
  EXPECT_TRUE(l.hold());
}

// With a commit linger, txs that come one at a time faster than the linger share group commits
// (written, not synced: without the linger each would have its own), and each is still answered
// once, only once durable, and replays to the same state.
TEST(OneThreadPipeline, a_commit_linger_groups_txs_that_come_one_at_a_time) {
  TempDir dir;
  TxBuilder b;
  uint64_t seq = 0;
  std::vector<Tx> genesis;
  auto engine = funded(b, seq, genesis);
  auto journal = genesis_journal({dir.path(), store::Durability::kWrite}, genesis);
  ASSERT_NE(journal, nullptr);
  const uint64_t commits_before = journal->stats().commits;
  pipe::PipelineConfig pc;
  pc.workers = 1;
  pc.one_thread = true;
  pc.wait = pipe::WaitStrategy::kPark;
  pc.commit_linger_us = 2000;
  pipe::Pipeline p(pc, std::move(engine), journal.get(), nullptr);
  p.start();
  TxBuilder wb = now_builder();
  std::vector<int64_t> nonce(10, 0);
  uint64_t bad = 0, got = 0;
  constexpr uint64_t kTxs = 600;
  auto take = [&] {
    p.poll_results(0, [&](const pipe::Result& r) {
      if (r.cookie != ++got || r.seq > journal->durable_seq() || r.reject != Reject::kOk) ++bad;
    });
  };
  for (uint64_t i = 1; i <= kTxs; ++i) {  // one every 50 µs, far faster than the linger
    const AccountIndex a = 100 + i % 10;
    const bool ask = i % 2;
    ASSERT_TRUE(
        p.submit(0, wb.limit(a, nonce[a - 100]++, 0, ask, 300000 + (ask ? 100 : -100), 1), i, 0));
    take();
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  while (got < kTxs) take();
  p.stop();
  EXPECT_EQ(bad, 0u);
  const uint64_t commits = journal->stats().commits - commits_before;
  EXPECT_LT(commits * 4, kTxs) << commits << " group commits for " << kTxs << " txs";
  journal->close();
  std::unique_ptr<Engine> rec;
  store::RecoveryReport rep;
  ASSERT_TRUE(store::recover(dir.path(), EngineConfig{}, rec, rep).ok());
  EXPECT_EQ(rec->state_hash(), p.engine().state_hash());
}

}  // namespace
}  // namespace tachyon::testing
