#pragma once
// What the api workers record, registered once at start-up in a MetricRegistrar (the
// app's obs::Registry). Every histogram has one shard per worker (the worker's index picks it);
// counters are shared.
#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "tachyon/core/clock.hpp"
#include "tachyon/core/metrics.hpp"
#include "tachyon/core/reject.hpp"
#include "tachyon/core/trace.hpp"

namespace tachyon::api {

// A tx's life, as the worker that answered it sees it (pipe::Result carries the stamps).
enum class Stage : uint8_t {
  kRecvToDryRun,      // request decoded, dry-run done on the worker
  kDryRunToSeq,       // ingress ring wait until the sequencer took it
  kSeqToExec,         // engine execution
  kExecToApplied,     // apply ring + read-side caches + snapshot publication
  kAppliedToDurable,  // waiting for the journal's group commit (fsync mode)
  kDurableToSent,     // result ring + worker wake-up + reply written
  kRecvToSent,        // the whole life
  kCount
};
// WebSocket channel kinds for freshness (engine time -> api send).
enum class Chan : uint8_t { kOrderBook, kTrade, kAccount, kCount };
// Read-side kinds for cache effectiveness: a read answered from the published snapshot (or the
// worker's copy of it), or a fallback answered another, slower way: the worker's book copy had
// to be reloaded; an account's order list lagged (the dry-run let the tx through); the update
// log was overrun (resync every connection); book history too short for a resume (snapshot).
enum class ReadKind : uint8_t { kWorkerBook, kAccountOrders, kWsLog, kBookHistory, kCount };

class ApiMetrics {
 public:
  ApiMetrics(MetricRegistrar& r, uint32_t workers);
  MetricRegistrar& registry() { return reg_; }

  void dry_run(uint32_t w, int tx_type, uint64_t ns) {
    dry_run_[static_cast<uint8_t>(tx_type)]->record(w, ns);
  }
  void stage(uint32_t w, Stage s, int64_t ns) {
    if (ns >= 0) stages_[static_cast<size_t>(s)]->record(w, static_cast<uint64_t>(ns));
  }
  void freshness(uint32_t w, Chan c, int64_t ns) {
    if (ns >= 0) fresh_[static_cast<size_t>(c)]->record(w, static_cast<uint64_t>(ns));
  }
  void fan_out(uint32_t w, uint64_t ns, uint64_t updates) {
    fanout_ns_->record(w, ns);
    fanout_updates_->record(w, updates);
  }
  // A tx's final outcome (dry-run or sequencer), by type and code.
  void tx_result(int tx_type, uint32_t code);
  // One Ed25519 check of a tx's signature (any thread): counted by type, with `cpu_ns` of CPU
  // when it was timed (0: not timed; timed_check says which are, and scales them).
  void signature_check(int tx_type, uint64_t cpu_ns) {
    const auto t = static_cast<uint8_t>(tx_type);
    checks_[t]->add();
    if (cpu_ns > 0) check_cpu_ns_[t]->add(cpu_ns);
  }
  void read(ReadKind k, bool hit, uint64_t n = 1) {
    if (n > 0) (hit ? reads_ : fallbacks_)[static_cast<size_t>(k)]->add(n);
  }
  tachyon::Counter& slow_resyncs() { return *slow_resyncs_; }
  tachyon::Counter& slow_closes() { return *slow_closes_; }
  tachyon::Counter& stall_resyncs() { return *stall_resyncs_; }
  tachyon::Counter& stall_closes() { return *stall_closes_; }
  tachyon::Counter& budget_closes() { return *budget_closes_; }

  // Bytes in the WebSocket send queues, one slot per worker. Relaxed everywhere: a slot has one
  // writer (its worker, so a plain load and store suffice), nothing else is published through it,
  // and a reader (another worker's budget check, /metrics) only needs a recent estimate; the
  // atomics only keep the reads untorn.
  void ws_queued_add(uint32_t w, int64_t delta) {
    std::atomic<int64_t>& v = ws_queued_[w].bytes;
    v.store(v.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  }
  int64_t ws_queued(uint32_t w) const {
    return ws_queued_[w].bytes.load(std::memory_order_relaxed);
  }
  int64_t ws_queued_total() const {
    int64_t sum = 0;
    for (const auto& s : ws_queued_) sum += s.bytes.load(std::memory_order_relaxed);
    return sum;
  }
  uint32_t workers() const { return static_cast<uint32_t>(ws_queued_.size()); }
  // The worker's flight-recorder track (null until set by the app).
  std::vector<tachyon::Track*> tracks;
  uint16_t ev_dry_run = 0, ev_fan_out = 0, ev_results = 0, ev_slow_tx = 0;
  int64_t slow_tx_dump_ns = 0;  // a tx life longer than this dumps the flight recorder (0: off)

 private:
  void register_by_type(MetricRegistrar& r, size_t shards);

  MetricRegistrar& reg_;
  std::array<tachyon::ShardedHistogram*, 256> dry_run_{};
  std::array<tachyon::ShardedHistogram*, size_t(Stage::kCount)> stages_{};
  std::array<tachyon::ShardedHistogram*, size_t(Chan::kCount)> fresh_{};
  tachyon::ShardedHistogram* fanout_ns_ = nullptr;
  tachyon::ShardedHistogram* fanout_updates_ = nullptr;
  std::array<tachyon::Counter*, 256> ok_{}, rejected_{};
  std::array<tachyon::Counter*, 256> checks_{}, check_cpu_ns_{};
  std::deque<tachyon::Counter> cpu_ns_;                       // check_cpu_ns_'s, exposed in seconds
  absl::flat_hash_map<uint32_t, tachyon::Counter*> rejects_;  // fixed after construction
  tachyon::Counter* reject_other_ = nullptr;
  std::array<tachyon::Counter*, size_t(ReadKind::kCount)> reads_{}, fallbacks_{};
  tachyon::Counter* slow_resyncs_ = nullptr;
  tachyon::Counter* slow_closes_ = nullptr;
  tachyon::Counter* stall_resyncs_ = nullptr;
  tachyon::Counter* stall_closes_ = nullptr;
  tachyon::Counter* budget_closes_ = nullptr;
  struct alignas(tachyon::kFalseSharingRange) QueuedSlot {
    std::atomic<int64_t> bytes{0};
  };
  std::vector<QueuedSlot> ws_queued_;  // one per worker, sized at construction
};

// Runs `check` (an Ed25519 check of a tx of type `tx_type`) and counts it in `m` (when not
// null). Every 8th check on a thread is timed with the thread's CPU clock and counts 8 times, so
// the total estimates the checks' CPU at ~0.1 µs per check (two clock reads per 8 checks).
template <typename F>
bool timed_check(ApiMetrics* m, int tx_type, F&& check) {
  if (m == nullptr) return check();
  thread_local uint32_t n = 0;
  if (n++ % 8 != 0) {
    const bool ok = check();
    m->signature_check(tx_type, 0);
    return ok;
  }
  const int64_t t0 = thread_cpu_ns();
  const bool ok = check();
  m->signature_check(tx_type, static_cast<uint64_t>(thread_cpu_ns() - t0) * 8);
  return ok;
}

}  // namespace tachyon::api
