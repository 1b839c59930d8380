// tachyon-feed: the sequencer and the journal without the network. Recovers the data dir
// (newest snapshot + journal), regenerates the seeded tx stream up to the recovered seq and
// checks it lands on the same state, then keeps feeding txs through engine + journal, printing
// "ack <seq>" each time the journal makes txs durable (all txs <= seq). Snapshots are asked for
// every --snapshot-every txs: by fork() (--snapshot-from fork, the default) or written by the
// committer from its replica (--snapshot-from replica), as the server does. Blocks of --block-txs
// txs are committed by a committer thread as in the server (--stall-committer-after B pauses it
// after block B, so it lags). The crash tests kill it with SIGKILL at random points.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <thread>

#include "support/random_stream.hpp"
#include "tachyon/store/commit.hpp"
#include "tachyon/store/journal.hpp"
#include "tachyon/store/snapshot.hpp"

using namespace tachyon;

namespace {

struct Options {
  std::string dir;
  uint64_t seed = 1;
  uint64_t txs = 100'000;  // stop after this seq
  std::string durability = "fsync";
  uint64_t snapshot_every = 0;
  uint64_t segment_bytes = 64ull << 20;
  int accounts = 12;
  int markets = 2;
  bool recover_only = false;
  uint64_t block_txs = 100;
  uint64_t stall_committer_after = 0;  // block number; 0 = never
  std::string snapshot_from = "fork";  // or "replica"
};

constexpr uint32_t kFeedChainId = 1;

testing::StreamConfig stream_config(const Options& o) {
  testing::StreamConfig sc;
  sc.accounts = o.accounts;
  sc.markets = o.markets;
  return sc;
}

// Brings a fresh generator (and a scratch engine it aims with) up to `last_seq`.
struct Feed {
  Feed(const Options& o) : stream(o.seed, stream_config(o)) { stream.set_oracle(&scratch); }
  Tx next() {
    if (genesis_i < genesis.size()) return genesis[genesis_i++];
    return stream.next();
  }
  void catch_up(uint64_t last_seq) {
    for (uint64_t s = 1; s <= last_seq; ++s) {
      const Tx tx = next();
      stream.on_result(tx, scratch.execute(tx, sink));
    }
  }
  Engine scratch;
  NullSink sink;
  testing::RandomStream stream;
  std::vector<Tx> genesis = stream.genesis();
  size_t genesis_i = 0;
};

int run(const Options& o) {
  std::unique_ptr<Engine> engine;
  store::RecoveryReport rep;
  if (Status s = store::recover(o.dir, EngineConfig{}, engine, rep); !s.ok()) {
    std::fprintf(stderr, "recovery failed: %s\n", s.message().c_str());
    return 2;
  }
  for (const auto& why : rep.skipped_snapshots) std::fprintf(stderr, "skipped %s\n", why.c_str());
  if (rep.journal.truncated_tail) std::fprintf(stderr, "%s\n", rep.journal.note.c_str());
  std::printf("recovered seq %llu hash %016llx snapshot %llu replayed %llu in %.3f s\n",
              static_cast<unsigned long long>(rep.last_seq),
              static_cast<unsigned long long>(engine->state_hash()),
              static_cast<unsigned long long>(rep.snapshot_seq),
              static_cast<unsigned long long>(rep.replayed), rep.seconds);
  if (o.recover_only) {
    std::printf("state %llu %016llx\n", static_cast<unsigned long long>(rep.last_seq),
                static_cast<unsigned long long>(engine->state_hash()));
    return 0;
  }
  Feed feed(o);
  feed.catch_up(rep.last_seq);
  if (feed.scratch.state_hash() != engine->state_hash()) {
    std::fprintf(stderr, "recovered state differs from a replay of the same stream\n");
    return 3;
  }
  feed.stream.set_oracle(engine.get());
  store::JournalConfig jc;
  jc.dir = o.dir;
  jc.segment_bytes = o.segment_bytes;
  if (Status s = store::parse_durability(o.durability, jc.durability); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 2;
  }
  std::unique_ptr<store::Journal> journal;
  if (Status s = store::Journal::open(jc, rep.last_seq + 1, journal); !s.ok()) {
    std::fprintf(stderr, "journal: %s\n", s.message().c_str());
    return 2;
  }
  std::unique_ptr<store::Committer> committer;
  store::CommitterStart cs;
  if (Status s =
          store::open_committer(o.dir, EngineConfig{}, kFeedChainId, rep.last_seq, committer, cs);
      !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 2;
  }
  std::printf("committer at seq %llu, catching up %llu txs from snapshot %llu, dropped %llu\n",
              static_cast<unsigned long long>(cs.committed_seq),
              static_cast<unsigned long long>(cs.catch_up_txs),
              static_cast<unsigned long long>(cs.replica_from),
              static_cast<unsigned long long>(cs.dropped_commits));
  journal->set_on_durable([](uint64_t seq) {
    std::printf("ack %llu\n", static_cast<unsigned long long>(seq));
    std::fflush(stdout);
  });
  store::ForkSnapshotter snapshotter;
  const bool from_replica = o.snapshot_from == "replica";
  uint64_t replica_written = 0;
  NullSink sink;
  // As the server's sequencer: a new block after the recovered one; sealed every block_txs txs.
  uint64_t block = engine->last_block() + 1, in_block = 0;
  int64_t last_time = 0;
  auto retire = [&] {
    (void)store::retire_covered(*journal, o.dir,
                                std::max(snapshotter.last_written(), replica_written), 2,
                                committer->committed_through(journal->durable_seq()));
  };
  for (uint64_t seq = rep.last_seq + 1; seq <= o.txs; ++seq) {
    Tx tx = feed.next();
    tx.h.block = block;
    const TxResult r = engine->execute(tx, sink);
    journal->append(tx);  // every sequenced tx, accepted or not: replay is then exact
    committer->push(tx);
    last_time = tx.h.time_ns;
    if (++in_block == o.block_txs) {
      committer->seal(block, last_time);
      if (block == o.stall_committer_after) {  // blocks up to this one committed, then none
        while (committer->committed_block() < block && committer->failure().empty())
          std::this_thread::yield();
        committer->set_paused(true);
      }
      ++block;
      in_block = 0;
    }
    feed.stream.on_result(tx, r);
    Status done;
    if (snapshotter.poll(done)) {  // the child finished: older journal segments may go
      if (!done.ok())
        std::fprintf(stderr, "%s\n", done.message().c_str());
      else
        retire();
    }
    store::SnapshotInfo written;
    if (from_replica && committer->poll_snapshot(done, written)) {
      if (!done.ok()) {
        std::fprintf(stderr, "%s\n", done.message().c_str());
      } else {
        replica_written = std::max(replica_written, written.seq);
        retire();
      }
    }
    if (from_replica && o.snapshot_every != 0 && seq % o.snapshot_every == 0)
      (void)committer->request_snapshot(journal.get());  // false: the last one is not done yet
    if (!from_replica && o.snapshot_every != 0 && seq % o.snapshot_every == 0 &&
        !snapshotter.busy()) {
      // A snapshot must never be ahead of the journal: it may only cover durable txs.
      if (!journal->wait_durable(seq))
        std::fprintf(stderr, "snapshot not taken: the journal failed\n");
      else if (Status s = snapshotter.start(*engine, o.dir); !s.ok())
        std::fprintf(stderr, "%s\n", s.message().c_str());
    }
    if (journal->failed()) {
      std::fprintf(stderr, "journal failed: %s\n", journal->failure().c_str());
      return 4;
    }
  }
  if (snapshotter.busy()) {
    if (Status s = snapshotter.wait(); !s.ok())
      std::fprintf(stderr, "%s\n", s.message().c_str());
    else
      retire();
  }
  if (in_block != 0) committer->seal(block, last_time);
  committer->stop();  // drains: every block is committed
  if (const std::string f = committer->failure(); !f.empty()) {
    std::fprintf(stderr, "%s\n", f.c_str());
    return 5;
  }
  journal->close();
  std::printf("done %llu %016llx\n", static_cast<unsigned long long>(o.txs),
              static_cast<unsigned long long>(engine->state_hash()));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tachyon-feed: engine + journal + snapshots, no network"};
  Options o;
  app.add_option("--data-dir", o.dir, "journal and snapshot directory")->required();
  app.add_option("--seed", o.seed, "tx stream seed");
  app.add_option("--txs", o.txs, "stop after this seq");
  app.add_option("--durability", o.durability, "fsync | write | none");
  app.add_option("--snapshot-every", o.snapshot_every, "snapshot every N txs (0 = never)");
  app.add_option("--segment-bytes", o.segment_bytes, "journal segment size");
  app.add_option("--accounts", o.accounts, "stream accounts");
  app.add_option("--markets", o.markets, "stream markets");
  app.add_flag("--recover-only", o.recover_only, "recover, print the state and exit");
  app.add_option("--block-txs", o.block_txs, "txs per block")->check(CLI::Range(1, 1 << 20));
  app.add_option("--stall-committer-after", o.stall_committer_after,
                 "pause the committer after this block (tests: a lagging committer)");
  app.add_option("--snapshot-from", o.snapshot_from, "fork | replica")
      ->check(CLI::IsMember({"fork", "replica"}));
  CLI11_PARSE(app, argc, argv);
  return run(o);
}
