// The deterministic storage simulation (docs/ARCHITECTURE.md "Storage and the simulated disk"):
// the engine, the journal, snapshots and recovery on a SimDisk, under a seeded schedule of txs,
// power cuts, process crashes and I/O faults (EIO on a sync, a full disk, a failed snapshot).
// Every run is reproducible from its seed; a failure prints it.
//
// Invariants, checked after every restart:
// - every tx acknowledged (durable under fsync) survives;
// - recovery never refuses what a cut leaves (torn tails included);
// - the recovered state is a whole prefix of what was executed: its state hash equals a fresh
//   engine's after the same stream up to the recovered seq (nothing half-applied);
// and before every acknowledgement, a copy of the disk holding only what a power cut must keep
// (durable names, synced bytes) already holds the tx: the sync ran before the ack.
//
// TACHYON_SIM_SEEDS (default 100) seeds of TACHYON_SIM_EPOCHS (default 40) restarts each;
// TACHYON_SIM_SEED runs one seed.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "store/store_support.hpp"
#include "support/rng.hpp"
#include "tachyon/store/journal.hpp"
#include "tachyon/store/sim_disk.hpp"
#include "tachyon/store/snapshot.hpp"

namespace tachyon {
namespace {

using store::SimDisk;

const char* const kDir = "/data";

int64_t env_or(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoll(v) : fallback;
}

struct Totals {
  uint64_t power_cuts = 0, crashes = 0, sync_failures = 0, full_disks = 0, snapshot_failures = 0;
  uint64_t acked = 0, torn_tails = 0, snapshots = 0, scattered = 0;
};

// The fault that ends an epoch, or (a full disk) interrupts it.
enum class Fault { kPowerCut, kCrash, kSyncEio, kFullDisk, kSnapshotFault };

// One seed: epochs of (recover, check, trade until the planned fault).
class Simulation {
 public:
  Simulation(uint64_t seed, Totals& totals)
      : seed_(seed), disk_(seed), rng_(seed * 31 + 7), t_(totals) {}

  uint64_t scattered_restores() const { return disk_.scattered_restores(); }

  void run(int epochs) {
    for (int epoch = 0; epoch < epochs; ++epoch) {
      SCOPED_TRACE("seed " + std::to_string(seed_) + " epoch " + std::to_string(epoch));
      ASSERT_NO_FATAL_FAILURE(recover_and_check());
      ASSERT_NO_FATAL_FAILURE(trade_until_fault(plan()));
    }
  }

 private:
  Fault plan() {
    const uint64_t r = rng_.below(100);
    if (r < 65) return Fault::kPowerCut;
    if (r < 72) return Fault::kCrash;
    if (r < 82) return Fault::kSyncEio;
    if (r < 91) return Fault::kFullDisk;
    return Fault::kSnapshotFault;
  }

  void recover_and_check() {
    store::RecoverOptions opt;
    opt.disk = &disk_;
    store::RecoveryReport rep;
    engine_.reset();
    const Status s = store::recover(kDir, EngineConfig{}, engine_, rep, opt);
    ASSERT_TRUE(s.ok()) << "recovery refused: " << s.message();
    if (rep.journal.truncated_tail) ++t_.torn_tails;
    const uint64_t seq = engine_->last_seq();
    ASSERT_GE(seq, acked_) << "an acknowledged tx was lost";
    ASSERT_LE(seq, executed_) << "recovered past what was executed";
    clients_ = std::make_unique<testing::StreamReplayer>(seed_);
    clients_->run_to(seq);
    ASSERT_EQ(engine_->state_hash(), clients_->engine().state_hash())
        << "recovered state is not the stream's state at seq " << seq;
    executed_ = seq;
    store::JournalConfig jc;
    jc.dir = kDir;
    jc.durability = store::Durability::kFsync;
    jc.segment_bytes = 4096 * (1 + rng_.below(8));
    jc.preallocate = rng_.chance(50);  // version 2 segments, written over (or version 1)
    jc.disk = &disk_;
    jc.group_commit = store::GroupCommit::kAppender;
    const Status o = store::Journal::open(jc, seq + 1, journal_);
    ASSERT_TRUE(o.ok()) << o.message();
    acked_ = seq;  // what recovery read is synced again before anything builds on it
    ASSERT_NO_FATAL_FAILURE(check_durable(seq));
  }

  // The sync ran before the ack: what a power cut must keep already holds `seq`.
  void check_durable(uint64_t seq) {
    const std::unique_ptr<SimDisk> kept = disk_.durable_copy();
    store::JournalScan scan;
    const Status s = store::replay_journal(
        kDir, UINT64_MAX, [](const Tx&) {}, scan, false, *kept);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_GE(scan.last_seq, seq) << "acknowledged before its sync";
  }

  void execute_batch() {
    const uint64_t n = 1 + rng_.below(16);
    for (uint64_t i = 0; i < n; ++i) {
      const Tx tx = clients_->step();
      ASSERT_EQ(tx.h.seq, engine_->last_seq() + 1);
      engine_->execute(tx, sink_);
      journal_->append(tx);
      executed_ = tx.h.seq;
    }
  }

  // A snapshot of a durable state (the server's rule too): right after a group commit.
  void snapshot() {
    store::SnapshotInfo info;
    const Status s = store::write_snapshot(*engine_, kDir, &info, disk_);
    if (!s.ok()) {
      ++t_.snapshot_failures;
      return;  // trading goes on; no journal segment is retired
    }
    ++t_.snapshots;
    const Status r = store::retire_covered(*journal_, kDir, info.seq, 2);
    ASSERT_TRUE(r.ok() || disk_.powered_off()) << r.message();
  }

  // Ends the process: what the disk keeps is what the fault left.
  void end_epoch() {
    const bool cut = disk_.powered_off();
    disk_.stop_process();
    journal_.reset();  // its destructor's flush fails: a dead process writes nothing more
    if (cut) {
      disk_.restart_after_power_cut();
      ++t_.power_cuts;
    } else {
      disk_.crash();
    }
  }

  void arm(Fault f) {
    switch (f) {
      case Fault::kPowerCut: disk_.cut_power_after(1 + rng_.below(300)); break;
      case Fault::kSyncEio: sync_fault_in_ = 1 + rng_.below(40); break;
      case Fault::kFullDisk: disk_.set_capacity(disk_.used_bytes() + rng_.below(6000)); break;
      case Fault::kSnapshotFault: snapshot_fault_in_ = 1 + rng_.below(5); break;
      case Fault::kCrash: break;
    }
  }

  void trade_until_fault(Fault f) {
    arm(f);
    const uint64_t steps = 10 + rng_.below(90);
    bool full = false;
    for (uint64_t step = 0; step < steps || f == Fault::kPowerCut; ++step) {
      if (f == Fault::kSyncEio && --sync_fault_in_ == 0) disk_.fail_next(SimDisk::Call::kSync, EIO);
      if (!full) {  // a full disk: the front door refuses new txs
        ASSERT_NO_FATAL_FAILURE(execute_batch());
      }
      const Status s = journal_->flush();
      if (s.ok()) {
        ASSERT_NO_FATAL_FAILURE(check_durable(journal_->durable_seq()));
        acked_ = journal_->durable_seq();
        ++t_.acked;
        if (full) {  // the disk had room again, and the waiting records were written
          full = false;
          ASSERT_FALSE(journal_->out_of_space());
        }
        const bool snap_fault = f == Fault::kSnapshotFault && --snapshot_fault_in_ == 0;
        if (snap_fault)
          disk_.fail_next(rng_.chance(50) ? SimDisk::Call::kSync : SimDisk::Call::kWrite,
                          rng_.chance(50) ? EIO : ENOSPC);
        if (snap_fault || rng_.below(25) == 0) {
          ASSERT_NO_FATAL_FAILURE(snapshot());
        }
        continue;
      }
      if (store::out_of_space(s)) {
        ASSERT_TRUE(journal_->out_of_space());
        ASSERT_FALSE(journal_->failed());
        if (!full) ++t_.full_disks;
        full = true;
        if (rng_.below(4) == 0) disk_.set_capacity(UINT64_MAX);  // the operator made room
        continue;
      }
      ASSERT_TRUE(journal_->failed()) << s.message();
      ASSERT_EQ(journal_->durable_seq(), acked_)
          << "acknowledged past a failed write or sync: " << s.message();
      if (!disk_.powered_off()) ++t_.sync_failures;
      break;  // the process exits; systemd restarts it into recovery
    }
    if (f == Fault::kCrash) ++t_.crashes;
    disk_.set_capacity(UINT64_MAX);
    end_epoch();
  }

  const uint64_t seed_;
  SimDisk disk_;
  testing::Rng rng_;
  Totals& t_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<store::Journal> journal_;
  std::unique_ptr<testing::StreamReplayer> clients_;
  NullSink sink_;
  uint64_t acked_ = 0, executed_ = 0;
  uint64_t sync_fault_in_ = 0, snapshot_fault_in_ = 0;
};

TEST(PowerCutSimulation, acknowledged_txs_survive_every_cut_crash_and_disk_fault) {
  const int64_t one = env_or("TACHYON_SIM_SEED", 0);
  const int64_t seeds = one != 0 ? 1 : env_or("TACHYON_SIM_SEEDS", 100);
  const int epochs = static_cast<int>(env_or("TACHYON_SIM_EPOCHS", 40));
  Totals t;
  for (int64_t i = 0; i < seeds; ++i) {
    const uint64_t seed = one != 0 ? static_cast<uint64_t>(one) : static_cast<uint64_t>(i + 1);
    Simulation sim(seed, t);
    sim.run(epochs);
    t.scattered += sim.scattered_restores();
    if (::testing::Test::HasFatalFailure()) {
      ADD_FAILURE() << "reproduce with TACHYON_SIM_SEED=" << seed;
      return;
    }
  }
  std::printf(
      "simulated %lld seeds x %d restarts: %llu power cuts (%llu torn tails truncated), %llu "
      "crashes, %llu failed syncs, %llu full disks, %llu failed snapshots survived; %llu group "
      "commits acknowledged, %llu snapshots; %llu files came back with pages out of order\n",
      static_cast<long long>(seeds), epochs, (unsigned long long)t.power_cuts,
      (unsigned long long)t.torn_tails, (unsigned long long)t.crashes,
      (unsigned long long)t.sync_failures, (unsigned long long)t.full_disks,
      (unsigned long long)t.snapshot_failures, (unsigned long long)t.acked,
      (unsigned long long)t.snapshots, (unsigned long long)t.scattered);
  EXPECT_GT(t.power_cuts, 0u);
  EXPECT_GT(t.torn_tails, 0u);
  EXPECT_GT(t.sync_failures, 0u);
  EXPECT_GT(t.full_disks, 0u);
  EXPECT_GT(t.snapshot_failures, 0u);
  if (seeds >= 20) {
    EXPECT_GT(t.scattered, 0u);
  }
}

}  // namespace
}  // namespace tachyon
