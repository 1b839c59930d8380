#pragma once
// The server process's parts (src/app/server_main.cpp wires them): the recovered state
// (server_recover.cpp), what build() makes of it, the server's own submitter, and the main loop's
// periodic duties (snapshots, the demo load and the funding clock; server_duties.cpp). Owner: the
// app's main thread.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <absl/container/flat_hash_set.h>

#include "cluster_node.hpp"
#include "config.hpp"
#include "history_file.hpp"
#include "observability.hpp"
#include "random_stream.hpp"
#include "tachyon/api/crypto.hpp"
#include "tachyon/api/server.hpp"
#include "tachyon/core/alloc.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/pipe/pipeline.hpp"
#include "tachyon/pipe/read_model.hpp"
#include "tachyon/store/commit.hpp"
#include "tachyon/store/snapshot.hpp"

namespace tachyon::app {

// Submits through the server's own ingress ring (the last one) and waits for the result.
class LocalSubmitter {
 public:
  LocalSubmitter(pipe::Pipeline& p, uint32_t ring, api::ApiShared& shared, uint32_t chain_id)
      : p_(p), ring_(ring), shared_(shared), chain_id_(chain_id) {}
  bool submit(const Tx& tx) {
    ++cookie_;  // named like an api worker's txs, so its trades carry their tx hash too
    shared_.record_tx_hash(ring_, cookie_, api::tx_hash_hex(tx, chain_id_));
    while (!p_.submit(ring_, tx, cookie_, realtime_ns())) std::this_thread::yield();
    ++in_flight_;
    return true;
  }
  template <typename F>
  void poll(F&& f) {
    in_flight_ -= p_.poll_results_inline(ring_, f);
  }
  template <typename F>
  void drain(F&& f) {
    while (in_flight_ > 0) {
      poll(f);
      if (in_flight_ > 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  uint64_t in_flight() const { return in_flight_; }

 private:
  pipe::Pipeline& p_;
  uint32_t ring_;
  api::ApiShared& shared_;
  uint32_t chain_id_;
  uint64_t cookie_ = 0;
  uint64_t in_flight_ = 0;
};

// What build() makes of the recovered state. With fork() snapshots, all of it (committer,
// pipeline and read side, api, obs) is never touched by a snapshot's fork() child, which reads
// only the engine: while outside_fork lives, this thread allocates from an arena the fork leaves
// out, so the sequencer's pause is the engine's page tables, not the server's. Safe because the
// server forks only on the sequencer thread, whose thread cache is off (see
// PipelineConfig::read_side_outside_fork). Replica snapshots fork nothing: the default arenas
// (huge pages, fewer page faults while the read side is built).
struct Server {
  explicit Server(const Config& c)
      : fork_snapshots(!c.snapshot_from_replica),
        outside_fork(fork_snapshots ? tachyon::dontfork_arena() : 0) {}

  const bool fork_snapshots;
  const tachyon::ArenaScope outside_fork;
  api::PublicKey op_key{};
  std::unique_ptr<store::Journal> journal;
  std::unique_ptr<store::Committer> committer;
  std::optional<Observability> obs;
  int64_t op_nonce = 0;        // the operator's next nonce (the markets, then the demo load)
  uint64_t recovered_seq = 0;  // the engine's last seq after recovery
  double read_side_s = 0;      // the time the read side took to build
  tachyon::AllocStats mem_before_read_side, mem_after_read_side;
  std::optional<pipe::Pipeline> pipeline;
  std::optional<api::ApiShared> shared;
  std::atomic<bool> snapshot_requested{false};  // by the admin api
  std::optional<api::ApiServer> api;
  std::optional<LocalSubmitter> local;   // the markets and the demo load (not on a follower)
  std::unique_ptr<ClusterNode> cluster;  // null on a single node
};

// The trades and funding payments of the replayed txs: the market histories (recent trades,
// candles) are restored from history.bin plus these (ReadSide::restore_history), and each
// trade keeps its taker tx's hash and its sides (read from the engine as it emits the trade).
struct ReplayedHistory final : UpdateSink {
  const Engine* engine = nullptr;
  std::vector<StateUpdate> updates;
  std::vector<pipe::TradeSides> sides;  // by index in updates
  size_t named = 0;                     // updates[named..] belong to the tx being replayed
  // The accounts the replay changed: they get their read-side view at start, the others when
  // first used (pipe::AccountBase).
  absl::flat_hash_set<AccountIndex> changed;
  void on_update(const StateUpdate& u) override {
    for_each_account_of(u, [&](AccountIndex a) { changed.insert(a); });
    if (u.type != UpdateType::kTrade && !(u.type == UpdateType::kFunding && u.funding.settled))
      return;
    updates.push_back(u);
    updates.back().origin_worker = 0;
    updates.back().origin_cookie = 0;
    sides.push_back(u.type == UpdateType::kTrade ? pipe::trade_sides(u.trade, *engine)
                                                 : pipe::TradeSides{});
  }
};

struct Recovered {
  std::unique_ptr<Engine> engine;
  store::RecoveryReport rep;
  // The txs replayed from the journal (the newest ones) stay findable by hash (GET /api/v1/tx).
  std::deque<std::pair<Tx, TxResult>> replayed_txs;
  ReplayedHistory replayed_history;
  // Trade id and taker tx hash of the replayed trades (restore_history() adds history.bin's).
  TradeHashes trade_hashes;
  pipe::AccountBase account_base;
  // The recovered state hash (for the log) is computed on a helper thread while the main thread
  // builds the read side: both only read the engine, and the sequencer starts after the join.
  uint64_t state_hash = 0;
  std::jthread hasher;
};

// The engine from the newest snapshot and the journal after it (server_recover.cpp). False
// (logged) when the data dir cannot be recovered.
bool recover(const Config& c, Recovered& rec);

// The histories as published now, each trade with its taker tx's hash (history.bin).
void save_history(const Config& c, Server& srv);

// Periodic snapshots: every snapshot_every_txs txs or snapshot_interval_s seconds, or when the
// admin api asks for one. With snapshot_from = "fork" a child forked on the sequencer thread
// writes the engine; with "replica" the committer writes its replica. Once one is written, the
// journal it covers is retired and the market histories are saved.
class SnapshotScheduler {
 public:
  SnapshotScheduler(const Config& c, Server& srv, uint64_t recovered_snapshot_seq)
      : c_(c), srv_(srv), recovered_snapshot_seq_(recovered_snapshot_seq) {}

  // Once a round of the main loop: takes a finished snapshot, starts the next one when due.
  void poll() {
    take_finished();
    start_when_due();
  }
  // The newest seq a snapshot on disk covers.
  uint64_t covered() const {
    return std::max({recovered_snapshot_seq_, snapshotter_.last_written(), replica_written_});
  }
  // A snapshot child started on the sequencer thread dies with that thread (PR_SET_PDEATHSIG):
  // the shutdown lets it finish first.
  void wait_for_child() {
    if (snapshotter_.busy()) (void)snapshotter_.wait();
  }

 private:
  void take_finished();
  void start_when_due();
  // Written by the committer's thread from its replica: the sequencer does not stop.
  void request_from_replica();
  // On the sequencer thread, between two txs; never ahead of the journal.
  void fork_on_sequencer();

  const Config& c_;
  Server& srv_;
  const uint64_t recovered_snapshot_seq_;  // the snapshot the recovery started from
  store::ForkSnapshotter snapshotter_;
  uint64_t replica_written_ = 0;       // the newest snapshot the committer wrote from its replica
  uint64_t replica_requested_at_ = 0;  // the applied seq when the last one was asked for
  std::chrono::steady_clock::time_point last_snap_time_ = std::chrono::steady_clock::now();
  // A snapshot that failed (a full or failing disk) is tried again after a pause, not at once.
  static constexpr std::chrono::seconds kRetryAfterFailure{10};
  std::chrono::steady_clock::time_point retry_at_{};
};

// The seeded demo stream (demo.load_tps) and the funding clock, both through the server's own
// ingress ring.
class DemoLoad {
 public:
  DemoLoad(const Config& c, Server& srv);
  // Once a round of the main loop (10 ms with a demo load, else 100 ms): submits, then takes the
  // results that are in.
  void poll() {
    submit_demo_txs();
    submit_funding_tick();
    take_results();
  }

 private:
  // Demo load: tps/100 txs per 10 ms tick through the server's own ring.
  void submit_demo_txs();
  // The funding clock: an internal tx samples every market's premium (and pays funding when
  // an interval boundary has passed). Journaled, so a replay pays exactly the same.
  void submit_funding_tick();
  void take_results();

  const Config& c_;
  Server& srv_;
  LocalSubmitter& local_;
  RandomStream stream_;
  std::vector<Tx> genesis_;
  size_t genesis_i_ = 0;
  std::deque<Tx> sent_;  // in submission order: demo txs and the funding clock's ticks
  std::chrono::steady_clock::time_point next_funding_tick_;
};

}  // namespace tachyon::app
