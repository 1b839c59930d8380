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

#include "random_stream.hpp"
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

app::StreamConfig stream_config(const Options& o) {
  app::StreamConfig sc;
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
  app::RandomStream stream;
  std::vector<Tx> genesis = stream.genesis();
  size_t genesis_i = 0;
};

struct Recovered {
  std::unique_ptr<Engine> engine;
  store::RecoveryReport rep;
};

// Recovers the data dir (the newest snapshot, then the journal after it) and prints what it found.
// False (printed) when it cannot be recovered.
bool recover(const Options& o, Recovered& rec) {
  store::RecoveryReport& rep = rec.rep;
  if (Status s = store::recover(o.dir, EngineConfig{}, rec.engine, rep); !s.ok()) {
    std::fprintf(stderr, "recovery failed: %s\n", s.message().c_str());
    return false;
  }
  for (const auto& why : rep.skipped_snapshots) std::fprintf(stderr, "skipped %s\n", why.c_str());
  if (rep.journal.truncated_tail) std::fprintf(stderr, "%s\n", rep.journal.note.c_str());
  std::printf("recovered seq %llu hash %016llx snapshot %llu replayed %llu in %.3f s\n",
              static_cast<unsigned long long>(rep.last_seq),
              static_cast<unsigned long long>(rec.engine->state_hash()),
              static_cast<unsigned long long>(rep.snapshot_seq),
              static_cast<unsigned long long>(rep.replayed), rep.seconds);
  return true;
}

struct Store {
  std::unique_ptr<store::Journal> journal;
  std::unique_ptr<store::Committer> committer;
};

// The journal, appending after the recovered seq and printing "ack <seq>" as txs become durable,
// and the committer. False (printed) when one of them cannot be opened.
bool open_store(const Options& o, const Recovered& rec, Store& st) {
  store::JournalConfig jc;
  jc.dir = o.dir;
  jc.segment_bytes = o.segment_bytes;
  if (Status s = store::parse_durability(o.durability, jc.durability); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return false;
  }
  if (Status s = store::Journal::open(jc, rec.rep.last_seq + 1, st.journal); !s.ok()) {
    std::fprintf(stderr, "journal: %s\n", s.message().c_str());
    return false;
  }
  store::CommitterStart cs;
  if (Status s = store::open_committer(o.dir, EngineConfig{}, kFeedChainId, rec.rep.last_seq,
                                       st.committer, cs);
      !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return false;
  }
  std::printf("committer at seq %llu, catching up %llu txs from snapshot %llu, dropped %llu\n",
              static_cast<unsigned long long>(cs.committed_seq),
              static_cast<unsigned long long>(cs.catch_up_txs),
              static_cast<unsigned long long>(cs.replica_from),
              static_cast<unsigned long long>(cs.dropped_commits));
  st.journal->set_on_durable([](uint64_t seq) {
    std::printf("ack %llu\n", static_cast<unsigned long long>(seq));
    std::fflush(stdout);
  });
  return true;
}

// As the server's sequencer: every tx executed, journaled and pushed to the committer; a new
// block after the recovered one, sealed every block_txs txs; a snapshot every snapshot_every txs.
class Sequencer {
 public:
  Sequencer(const Options& o, Engine& engine, Store& st, Feed& feed)
      : o_(o),
        engine_(engine),
        journal_(*st.journal),
        committer_(*st.committer),
        feed_(feed),
        from_replica_(o.snapshot_from == "replica"),
        block_(engine.last_block() + 1) {}

  // Seqs `first` to o.txs. 0, or 4 (printed) when the journal failed.
  int feed(uint64_t first) {
    for (uint64_t seq = first; seq <= o_.txs; ++seq) {
      sequence(feed_.next());
      take_finished_snapshots();
      if (o_.snapshot_every != 0 && seq % o_.snapshot_every == 0) snapshot(seq);
      if (journal_.failed()) {
        std::fprintf(stderr, "journal failed: %s\n", journal_.failure().c_str());
        return 4;
      }
    }
    return 0;
  }

  // The last snapshot finished, the last block sealed and committed, the journal closed. 0, or 5
  // (printed) when the committer failed.
  int finish() {
    if (snapshotter_.busy()) {
      if (Status s = snapshotter_.wait(); !s.ok())
        std::fprintf(stderr, "%s\n", s.message().c_str());
      else
        retire();
    }
    if (in_block_ != 0) committer_.seal(block_, last_time_);
    committer_.stop();  // drains: every block is committed
    if (const std::string f = committer_.failure(); !f.empty()) {
      std::fprintf(stderr, "%s\n", f.c_str());
      return 5;
    }
    journal_.close();
    std::printf("done %llu %016llx\n", static_cast<unsigned long long>(o_.txs),
                static_cast<unsigned long long>(engine_.state_hash()));
    return 0;
  }

 private:
  void sequence(Tx tx) {
    tx.h.block = block_;
    const TxResult r = engine_.execute(tx, sink_);
    journal_.append(tx);  // every sequenced tx, accepted or not: replay is then exact
    committer_.push(tx);
    last_time_ = tx.h.time_ns;
    if (++in_block_ == o_.block_txs) {
      committer_.seal(block_, last_time_);
      if (block_ == o_.stall_committer_after) {  // blocks up to this one committed, then none
        while (committer_.committed_block() < block_ && committer_.failure().empty())
          std::this_thread::yield();
        committer_.set_paused(true);
      }
      ++block_;
      in_block_ = 0;
    }
    feed_.stream.on_result(tx, r);
  }

  void take_finished_snapshots() {
    Status done;
    if (snapshotter_.poll(done)) {  // the child finished: older journal segments may go
      if (!done.ok())
        std::fprintf(stderr, "%s\n", done.message().c_str());
      else
        retire();
    }
    store::SnapshotInfo written;
    if (from_replica_ && committer_.poll_snapshot(done, written)) {
      if (!done.ok()) {
        std::fprintf(stderr, "%s\n", done.message().c_str());
      } else {
        replica_written_ = std::max(replica_written_, written.seq);
        retire();
      }
    }
  }

  void snapshot(uint64_t seq) {
    if (from_replica_) {
      (void)committer_.request_snapshot(&journal_);  // false: the last one is not done yet
      return;
    }
    if (snapshotter_.busy()) return;
    // A snapshot must never be ahead of the journal: it may only cover durable txs.
    if (!journal_.wait_durable(seq))
      std::fprintf(stderr, "snapshot not taken: the journal failed\n");
    else if (Status s = snapshotter_.start(engine_, o_.dir); !s.ok())
      std::fprintf(stderr, "%s\n", s.message().c_str());
  }

  void retire() {
    (void)store::retire_covered(journal_, o_.dir,
                                std::max(snapshotter_.last_written(), replica_written_), 2,
                                committer_.committed_through(journal_.durable_seq()));
  }

  const Options& o_;
  Engine& engine_;
  store::Journal& journal_;
  store::Committer& committer_;
  Feed& feed_;
  store::ForkSnapshotter snapshotter_;
  const bool from_replica_;
  uint64_t replica_written_ = 0;
  NullSink sink_;
  uint64_t block_, in_block_ = 0;
  int64_t last_time_ = 0;
};

int run(const Options& o) {
  Recovered rec;
  if (!recover(o, rec)) return 2;
  if (o.recover_only) {
    std::printf("state %llu %016llx\n", static_cast<unsigned long long>(rec.rep.last_seq),
                static_cast<unsigned long long>(rec.engine->state_hash()));
    return 0;
  }
  Feed feed(o);
  feed.catch_up(rec.rep.last_seq);
  if (feed.scratch.state_hash() != rec.engine->state_hash()) {
    std::fprintf(stderr, "recovered state differs from a replay of the same stream\n");
    return 3;
  }
  feed.stream.set_oracle(rec.engine.get());
  Store st;
  if (!open_store(o, rec, st)) return 2;
  Sequencer sequencer(o, *rec.engine, st, feed);
  if (const int code = sequencer.feed(rec.rep.last_seq + 1); code != 0) return code;
  return sequencer.finish();
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
