// The journal through JetStream against real nats-servers (tests/support/nats_server.hpp): a
// replicated journal acknowledges only what the stream stored, a follower rebuilds the same state
// from the stream, acknowledgements pause while NATS is away and resume by themselves with
// nothing lost or duplicated, and a writer the stream moved past is fenced off.
#include <gtest/gtest.h>
#include <nats/nats.h>

#include <chrono>
#include <thread>

#include "store/store_support.hpp"
#include "support/nats_server.hpp"
#include "tachyon/cluster/journal_stream.hpp"
#include "tachyon/codec/codec.hpp"
#include "tachyon/store/snapshot.hpp"

namespace tachyon {
namespace {

using testing::NatsServers;
using testing::StreamReplayer;
using testing::TempDir;

std::unique_ptr<cluster::NatsLink> link_to(const NatsServers& ns, int replicas = 1) {
  cluster::NatsConfig c;
  c.servers = ns.urls();
  c.replicas = replicas;
  std::unique_ptr<cluster::NatsLink> l;
  const Status s = cluster::NatsLink::connect(c, l);
  EXPECT_TRUE(s.ok()) << s.message();
  // JetStream's meta leader takes a moment after a start: the stream is made once it answers.
  Status made;
  for (int i = 0; i < 100; ++i) {
    if ((made = cluster::ensure_stream(*l)).ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(made.ok()) << made.message();
  return l;
}

// A primary's journal: replicated durability through a publisher that starts at the stream's
// current tail.
struct Primary {
  Primary(cluster::NatsLink& link, const std::string& dir, const std::string& term,
          size_t max_message_bytes = cluster::JournalPublisher::Config{}.max_message_bytes) {
    cluster::StreamTail tail;
    const Status t = cluster::read_tail(link, tail);
    EXPECT_TRUE(t.ok()) << t.message();
    cluster::JournalPublisher::Config pc{tail.stream_seq, term, tail.last_tx_seq};
    pc.max_message_bytes = max_message_bytes;
    pub = std::make_unique<cluster::JournalPublisher>(link, pc);
    pub->start();
    store::JournalConfig jc{dir, store::Durability::kReplicated};
    jc.replicator = pub.get();
    const Status s = store::Journal::open(jc, tail.last_tx_seq + 1, journal);
    EXPECT_TRUE(s.ok()) << s.message();
  }
  ~Primary() {
    pub->stop();  // first: a journal closing waits for nothing the publisher holds
    journal->close();
  }
  std::unique_ptr<cluster::JournalPublisher> pub;
  std::unique_ptr<store::Journal> journal;
};

// Waits, up to 60 s, until the primary's journal made `seq` durable; says why not when it did not.
::testing::AssertionResult durable_within(Primary& p, uint64_t seq) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (p.journal->durable_seq() < seq && !p.journal->failed() &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (p.journal->durable_seq() >= seq) return ::testing::AssertionSuccess();
  const auto st = p.pub->stats();
  return ::testing::AssertionFailure()
         << "seq " << seq << " not durable: durable " << p.journal->durable_seq() << ", stored "
         << st.replicated_seq << " in " << st.messages << " messages, waiting " << st.waiting_ms
         << " ms, fenced " << st.fenced << ", last error '" << st.last_error << "', journal "
         << (p.journal->failed() ? p.journal->failure() : std::string("ok"));
}

// Every tx of the stream, through a follower, into a fresh engine; returns its state hash.
uint64_t follow_all(cluster::NatsLink& link, uint64_t through, uint64_t* txs = nullptr) {
  std::unique_ptr<cluster::StreamFollower> f;
  Status s;
  for (int i = 0; i < 100; ++i) {  // after a server was killed, JetStream may need a moment
    if ((s = cluster::StreamFollower::open(link, 0, f)).ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(s.ok()) << s.message();
  if (!s.ok()) return 0;
  Engine e;
  NullSink sink;
  uint64_t n = 0;
  // Bounded: a consumer that delivers nothing for 5 s is opened again; nothing for 60 s fails.
  auto progress = std::chrono::steady_clock::now(), reopened = progress;
  uint64_t progress_seq = 0;
  while (f->last_seq() < through) {
    const auto now = std::chrono::steady_clock::now();
    if (f->last_seq() != progress_seq) progress_seq = f->last_seq(), progress = reopened = now;
    if (now - progress > std::chrono::seconds(60)) {
      ADD_FAILURE() << "the stream delivered nothing for 60 s at seq " << f->last_seq();
      break;
    }
    if (now - reopened > std::chrono::seconds(5)) {
      reopened = now;
      if (!cluster::StreamFollower::open(link, f->last_seq(), f).ok()) continue;
    }
    bool got = false;
    const Status r = f->next(
        1000,
        [&](const Tx& tx) {
          e.execute(tx, sink);
          ++n;
        },
        got);
    if (!r.ok() && !f->damaged()) {  // NATS away: read again from where it stopped
      const uint64_t at = f->last_seq();
      if (!cluster::StreamFollower::open(link, at, f).ok())
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    EXPECT_TRUE(r.ok()) << r.message();
    if (!r.ok()) break;
  }
  if (txs != nullptr) *txs = n;
  return e.state_hash();
}

// The stream's messages' tx ranges, in stream order, read one by one.
std::vector<cluster::BatchRange> ranges(cluster::NatsLink& link) {
  std::vector<cluster::BatchRange> out;
  jsStreamInfo* si = nullptr;
  EXPECT_EQ(js_GetStreamInfo(&si, link.js(), "TACHYON", nullptr, nullptr), NATS_OK);
  for (uint64_t q = si->State.FirstSeq; si->State.Msgs > 0 && q <= si->State.LastSeq; ++q) {
    natsMsg* m = nullptr;
    EXPECT_EQ(js_GetMsg(&m, link.js(), "TACHYON", q, nullptr, nullptr), NATS_OK);
    const char* a = nullptr;
    const char* b = nullptr;
    natsMsgHeader_Get(m, "Tachyon-First-Seq", &a);
    natsMsgHeader_Get(m, "Tachyon-Last-Seq", &b);
    out.push_back({std::strtoull(a, nullptr, 10), std::strtoull(b, nullptr, 10)});
    natsMsg_Destroy(m);
  }
  jsStreamInfo_Destroy(si);
  return out;
}

void expect_contiguous(const std::vector<cluster::BatchRange>& r, uint64_t through) {
  uint64_t next = 1;
  for (const auto& b : r) {
    EXPECT_EQ(b.first, next) << "a gap or a duplicate in the stream";
    next = b.last + 1;
  }
  EXPECT_EQ(next, through + 1);
}

TEST(JournalStream, a_follower_rebuilds_the_primary_state_from_what_it_acknowledged) {
  NatsServers ns(1);
  auto link = link_to(ns);
  TempDir dir;
  StreamReplayer feed(7);
  constexpr uint64_t kTxs = 20000;
  {
    Primary p(*link, dir.path(), "a");
    for (uint64_t i = 1; i <= kTxs; ++i) {
      p.journal->append(feed.step());
      // The durable seq never runs ahead of what the stream stored (read first: both only grow).
      const uint64_t durable = p.journal->durable_seq();
      ASSERT_LE(durable, p.pub->stats().replicated_seq);
    }
    ASSERT_TRUE(durable_within(p, kTxs));
    const auto st = p.pub->stats();
    EXPECT_EQ(st.replicated_seq, kTxs);
    EXPECT_LT(st.messages, kTxs / 4) << "group commits are coalesced, not one message per tx";
    EXPECT_FALSE(st.fenced);
  }
  uint64_t n = 0;
  EXPECT_EQ(follow_all(*link, kTxs, &n), feed.engine().state_hash());
  EXPECT_EQ(n, kTxs);
  expect_contiguous(ranges(*link), kTxs);
  // The local journal holds the same txs.
  std::unique_ptr<Engine> e;
  store::RecoveryReport rep;
  ASSERT_TRUE(store::recover(dir.path(), EngineConfig{}, e, rep).ok());
  EXPECT_EQ(e->state_hash(), feed.engine().state_hash());
}

// A group commit larger than a message (here 2 KiB, ~16 frames; a burst the sequencer took in
// one round can be megabytes, over nats-server's payload limit) goes as several messages, cut
// between frames: every tx is stored, in order, and the follower rebuilds the same state.
TEST(JournalStream, a_group_commit_larger_than_a_message_goes_as_several) {
  NatsServers ns(1);
  auto link = link_to(ns);
  TempDir dir;
  StreamReplayer feed(11);
  constexpr uint64_t kTxs = 3000;
  constexpr size_t kMax = 2048;
  uint64_t bytes = 0;
  {
    Primary p(*link, dir.path(), "a", kMax);
    for (uint64_t i = 1; i <= kTxs; ++i) {
      const Tx tx = feed.step();
      bytes += store::kFrameHeaderSize + codec::encoded_size(tx);
      p.journal->append(tx);
    }
    ASSERT_TRUE(durable_within(p, kTxs));
    const auto st = p.pub->stats();
    EXPECT_EQ(st.replicated_seq, kTxs);
    EXPECT_GE(st.messages, bytes / kMax) << "no message may hold more than " << kMax << " bytes";
  }
  uint64_t n = 0;
  EXPECT_EQ(follow_all(*link, kTxs, &n), feed.engine().state_hash());
  EXPECT_EQ(n, kTxs);
  expect_contiguous(ranges(*link), kTxs);
}

TEST(JournalStream, acknowledgements_pause_while_nats_is_away_and_resume_with_nothing_lost) {
  NatsServers ns(1);
  auto link = link_to(ns);
  TempDir dir;
  StreamReplayer feed(11);
  Primary p(*link, dir.path(), "a");
  for (int i = 0; i < 3000; ++i) p.journal->append(feed.step());
  ASSERT_TRUE(durable_within(p, 3000));
  ns.kill(0);
  for (int i = 0; i < 3000; ++i) p.journal->append(feed.step());
  // Written and synced here, but not stored by the stream: not acknowledged, while the publisher
  // tries again and again.
  while (p.pub->stats().retries < 2) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(p.journal->durable_seq(), 3000u);
  EXPECT_GT(p.pub->stats().waiting_ms, 0);
  EXPECT_NE(p.pub->stats().last_error.find("publishing seqs 3001-"), std::string::npos)
      << p.pub->stats().last_error;
  ns.start(0);
  ASSERT_TRUE(durable_within(p, 6000));  // resumes by itself
  EXPECT_FALSE(p.journal->failed());
  auto reader = link_to(ns);
  EXPECT_EQ(follow_all(*reader, 6000), feed.engine().state_hash());
  expect_contiguous(ranges(*reader), 6000);
}

TEST(JournalStream, a_writer_the_stream_moved_past_is_fenced_and_acknowledges_nothing) {
  NatsServers ns(1);
  auto link = link_to(ns);
  TempDir a_dir, b_dir;
  StreamReplayer a_feed(3), b_feed(3);
  // Both start at the same tail: B is a deposed primary that has not noticed yet.
  Primary a(*link, a_dir.path(), "a");
  Primary b(*link, b_dir.path(), "b");
  for (int i = 0; i < 500; ++i) a.journal->append(a_feed.step());
  ASSERT_TRUE(durable_within(a, 500));
  for (int i = 0; i < 500; ++i) b.journal->append(b_feed.step());
  EXPECT_FALSE(b.journal->wait_durable(500));
  EXPECT_TRUE(b.journal->failed());
  EXPECT_NE(b.journal->failure().find("not the primary"), std::string::npos)
      << b.journal->failure();
  EXPECT_EQ(b.journal->durable_seq(), 0u);
  EXPECT_TRUE(b.pub->stats().fenced);
  expect_contiguous(ranges(*link), 500);  // only A's
}

// Which of the servers n0, n1, n2 leads the stream (-1: none said).
int stream_leader(cluster::NatsLink& link) {
  jsStreamInfo* si = nullptr;
  if (js_GetStreamInfo(&si, link.js(), "TACHYON", nullptr, nullptr) != NATS_OK) return -1;
  const int leader =
      si->Cluster != nullptr && si->Cluster->Leader != nullptr ? si->Cluster->Leader[1] - '0' : -1;
  jsStreamInfo_Destroy(si);
  return leader;
}

// The stream's leader among three nats-servers killed: publishes find no leader until JetStream
// elects another (seconds), then go on; every acknowledged tx is there once.
TEST(JournalStream, three_servers_survive_the_stream_leader_killed) {
  NatsServers ns(3);
  auto link = link_to(ns, 3);
  TempDir dir;
  StreamReplayer feed(5);
  Primary p(*link, dir.path(), "a");
  for (int i = 0; i < 2000; ++i) p.journal->append(feed.step());
  ASSERT_TRUE(durable_within(p, 2000));
  const int leader = stream_leader(*link);
  ASSERT_GE(leader, 0);
  ns.kill(leader);
  for (int i = 0; i < 2000; ++i) p.journal->append(feed.step());
  ASSERT_TRUE(durable_within(p, 4000));
  EXPECT_FALSE(p.journal->failed());
  EXPECT_EQ(follow_all(*link, 4000), feed.engine().state_hash());
  expect_contiguous(ranges(*link), 4000);
}

// One of three servers killed, not the stream's leader: acknowledgements go on (a quorum is
// left); all three killed: nothing is acknowledged until they are back, then everything is, once.
TEST(JournalStream, three_servers_with_a_follower_killed_then_all_killed_lose_nothing) {
  NatsServers ns(3);
  auto link = link_to(ns, 3);
  TempDir dir;
  StreamReplayer feed(9);
  Primary p(*link, dir.path(), "a");
  for (int i = 0; i < 1000; ++i) p.journal->append(feed.step());
  ASSERT_TRUE(durable_within(p, 1000));
  const int leader = stream_leader(*link);
  ASSERT_GE(leader, 0);
  const int follower = (leader + 1) % 3;
  ns.kill(follower);
  for (int i = 0; i < 1000; ++i) p.journal->append(feed.step());
  ASSERT_TRUE(durable_within(p, 2000));
  ns.start(follower);
  for (int n = 0; n < 3; ++n) ns.kill(n);
  for (int i = 0; i < 1000; ++i) p.journal->append(feed.step());
  while (p.pub->stats().retries < 2) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(p.journal->durable_seq(), 2000u);  // written and synced here, not stored there
  for (int n = 0; n < 3; ++n) ns.start(n);
  ASSERT_TRUE(durable_within(p, 3000));  // resumes by itself once a leader is elected
  EXPECT_FALSE(p.journal->failed());
  EXPECT_EQ(follow_all(*link, 3000), feed.engine().state_hash());
  expect_contiguous(ranges(*link), 3000);
}

}  // namespace
}  // namespace tachyon
