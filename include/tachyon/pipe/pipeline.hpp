#pragma once
// The hot path (ARCHITECTURE.md): api workers -> one SPSC ring per worker -> the sequencer thread
// (stamps seq/block/time, executes on the engine, journals, hands txs to the committer) -> one
// SPSC ring of state updates -> the apply thread (read-side book caches, one immutable
// BookSnapshot per changed market per batch, tx results routed back to the submitting worker's
// result ring once the journal made them durable).
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "tachyon/core/alloc.hpp"
#include "tachyon/engine/engine.hpp"
#include "tachyon/pipe/book_snapshot.hpp"
#include "tachyon/pipe/front.hpp"
#include "tachyon/pipe/order_nodes.hpp"
#include "tachyon/pipe/pipe_metrics.hpp"
#include "tachyon/pipe/published.hpp"
#include "tachyon/pipe/read_side.hpp"
#include "tachyon/pipe/spsc_ring.hpp"
#include "tachyon/pipe/wait.hpp"
#include "tachyon/store/commit.hpp"
#include "tachyon/store/journal.hpp"

namespace tachyon::pipe {

struct PipelineConfig {
  uint32_t workers = 2;
  size_t ingress_capacity = 4096;  // per worker
  size_t apply_capacity = 1 << 16;
  size_t result_capacity = 8192;  // per worker
  size_t drain_limit = 256;       // items per ring per loop round
  size_t book_history = 1024;     // delta records kept per market (resume, orderBookUpdates)
  size_t batch_samples = 0;       // > 0: record the apply time of up to this many batches
  WaitStrategy wait = WaitStrategy::kSpinThenPark;
  std::optional<WaitStrategy> apply_wait{};  // the apply thread's, when not `wait`
  // A busy-polling (spin) apply thread, while idle, reads what its next batch most likely touches
  // every keep_warm_rounds idle rounds (~2-3 µs): the books, accounts and markets that changed
  // last (ReadSide::keep_warm). 0: never. Only with the spin strategy.
  uint32_t keep_warm_rounds = 64;
  // The apply thread publishes only between txs (a reader never sees part of one) and ends a
  // batch at the first tx boundary after this many updates, so a burst is published in steps
  // rather than all at its end. 0: 4096 (the most one drain round takes).
  uint32_t apply_batch_updates = 0;
  uint32_t block_max_txs = 1000;
  uint32_t block_interval_ms = 100;
  uint32_t max_readers = 16;  // reader threads per book snapshot
  int sequencer_core = -1;    // -1: unpinned
  int apply_core = -1;
  int fifo_priority = 0;  // 0: normal scheduling
  ReadSideConfig read;
  PipeMetrics* metrics = nullptr;  // histograms and trace tracks (owned by the app)
  // The read side (built here and by the apply thread) in an arena that fork() leaves out
  // (tachyon::dontfork_arena): a snapshot's fork then copies the engine's page tables, not the read
  // side's. The sequencer's thread cache is off, so the engine never reuses read-side memory.
  // Only for a process whose forks all happen on the sequencer thread (the server): any other
  // thread may get read-side memory back from its thread cache and hand it to a fork child.
  bool read_side_outside_fork = false;
};

// Where the read side's account views come from at a start from a snapshot (AccountTable): the
// snapshot the engine was loaded from, and the accounts the journal replay after it changed.
struct AccountBase {
  std::shared_ptr<const SavedAccounts> saved;
  std::vector<AccountIndex> replayed;  // any order, repeats allowed
};

// The whole pipeline, for the app. The api workers see it as a Front (front.hpp).
class Pipeline final : public Front {
 public:
  // journal and committer may be null (tests and benchmarks without durability). With a `base`,
  // only the accounts it does not hold as they are now get a view at start (the ones made or
  // changed since the snapshot); the others get theirs on first use (AccountTable::set_base).
  Pipeline(const PipelineConfig& cfg, std::unique_ptr<Engine> engine, store::Journal* journal,
           store::Committer* committer, AccountBase base = {});
  ~Pipeline();
  void start();
  // Drains every ring, routes the last results, joins the threads.
  void stop();

  // Front (front.hpp says what each does).
  bool submit(uint32_t w, const Tx& tx, uint64_t cookie, int64_t t_recv_ns) override;
  size_t poll_results(uint32_t w, absl::FunctionRef<void(const Result&)> f,
                      size_t limit = 256) override {
    return results_[w]->drain(f, limit);
  }
  // The same without the indirect call (the app's own submitter).
  template <typename F>
  size_t poll_results_inline(uint32_t w, F&& f, size_t limit = 256) {
    return results_[w]->drain(f, limit);
  }
  Doorbell& result_bell(uint32_t w) override { return *result_bells_[w]; }
  void set_notify(std::function<void()> f) override { notify_ = std::move(f); }
  ReadSide& read_side() override { return read_; }
  Published<BookSnapshot>& book(MarketId m) override { return *books_[m]; }
  uint64_t applied_seq() const override { return applied_seq_.load(std::memory_order_acquire); }
  bool book_deltas(MarketId m, uint64_t since_nonce, uint64_t until_nonce,
                   std::vector<BookDelta>& out) const override;
  // The sequencer's engine: only while stopped.
  const Engine& engine() const { return *engine_; }
  // Runs f(engine) on the sequencer thread between two txs and waits for it (snapshots fork
  // there: the engine is consistent and nothing mutates it while f runs). Not while stopped.
  void run_on_sequencer(const std::function<void(const Engine&)>& f);

  struct Stats {
    uint64_t ring_full = 0;  // submits refused
    uint64_t apply_batches = 0;
    uint64_t snapshots = 0;
  };
  Stats stats() const;
  // What thread placement did and what it was refused (both threads report when they start).
  std::string placement_report() const;
  // With batch_samples > 0, after stop(): each recorded batch's apply time (drain, read-side
  // updates, snapshot publication) in ns, its number of updates, and the apply thread's CPU time
  // in it (CLOCK_THREAD_CPUTIME_ID: the wall time less what preemption took), and the wall time
  // of its three phases: draining the ring into the caches, publishing the changed books, and
  // publishing the read side (markets, accounts, history). A batch ends only once its last tx is
  // whole: wait_ns is the time it waited (ring empty) for the rest of a tx the sequencer was still
  // executing, part of ns and not of drain_ns; ns - wait_ns is the time spent applying.
  struct BatchSample {
    uint32_t ns;
    uint32_t updates;
    uint32_t cpu_ns;
    uint32_t drain_ns = 0, books_ns = 0, read_ns = 0;
    uint32_t wait_ns = 0;
  };
  const std::vector<BatchSample>& batch_samples() const { return batch_samples_; }

 private:
  struct ApplyItem {
    StateUpdate u;
    uint32_t worker;
    uint32_t exec_ns;  // kTxResult: executed this long after its seq time
    uint64_t cookie;
    int64_t t_recv_ns;
  };
  // The lowest level index each of the last kSideHistory publishes changed, by nonce: a recycled
  // snapshot published at nonce K then needs only the levels from the lowest of (K, now] copied.
  static constexpr uint64_t kSideHistory = 16;
  // A level's resting orders, oldest first (nodes_, linked through prev / next).
  struct Fifo {
    uint32_t head = OrderNodes::kNone, tail = OrderNodes::kNone;
  };
  struct Side {
    std::vector<PriceLevel> levels;  // worst first: the touch is at the back
    std::vector<Fifo> fifo;          // each level's orders, at the same index as the level
    uint32_t changed_from = 0;       // the lowest index changed since the last publish
    std::array<uint32_t, kSideHistory> changed_at{};
  };
  struct BookCache {
    Side bids, asks;
    std::vector<std::pair<uint8_t, Ticks>> touched;  // levels changed since the last publish
    uint64_t nonce = 0;
    int64_t engine_ts_ns = 0;
    bool changed = false;
    // Bids', asks' top orders: +1 at each publish that changed them (BookSnapshot::top_version).
    std::array<uint64_t, 2> top_version{};
    // keep_warm's walk of each side's top kWarmQueueDepth orders, at least kWarmQueueSlice per
    // call (whole levels): the level it goes on from (counted from the touch) and how deep it is.
    std::array<uint32_t, 2> warm_level{};
    std::array<uint32_t, 2> warm_depth{};
  };
  static constexpr uint32_t kWarmQueueDepth = 1024, kWarmQueueSlice = 64;
  void rest_order(const OrderUpdate& o);
  // Resting order `s` now has `remaining` left, or (`removed`) leaves its book.
  void unrest(uint32_t s, Lots remaining, bool removed);
  // The level that `price` was just changed at (index `i` of its side): noted for the publish.
  void level_changed(MarketId m, Side& sd, size_t i, bool is_ask, Ticks price);
  struct Pending {
    uint32_t worker;
    Result r;
  };
  class RingSink;

  void sequencer_loop();
  void apply_loop();
  void apply(const ApplyItem& it);
  void keep_warm();
  void publish_changed();
  static std::array<bool, 2> top_orders_changed(const BookCache& c, const BookSnapshot* prev);
  void top_orders(const BookCache& c, bool is_ask, const std::vector<BookOrder>* prev,
                  std::vector<BookOrder>& out);
  static void copy_levels(Side& sd, uint64_t nonce, uint64_t had, LevelArray& out);
  void record_delta(MarketId m, uint64_t begin_nonce, uint64_t nonce);
  size_t release_results();
  bool ingress_pending() const;

  unsigned read_arena_;             // 0: the default arenas
  tachyon::ArenaScope ctor_arena_;  // the constructor builds the read side in read_arena_
  PipelineConfig cfg_;
  std::unique_ptr<Engine> engine_;
  store::Journal* journal_;
  store::Committer* committer_;
  std::vector<std::unique_ptr<SpscRing<Ingress>>> ingress_;
  std::unique_ptr<SpscRing<ApplyItem>> apply_ring_;
  std::vector<std::unique_ptr<SpscRing<Result>>> results_;
  std::vector<std::unique_ptr<Doorbell>> result_bells_;
  Doorbell seq_bell_, apply_bell_;
  std::vector<std::unique_ptr<Published<BookSnapshot>>> books_;
  // Per market, made by the apply thread on first use and kept until destruction.
  std::vector<std::atomic<BroadcastLog<BookDeltaRecord>*>> deltas_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> sequencer_done_{false};
  std::atomic<uint64_t> applied_seq_{0};
  std::atomic<uint64_t> ring_full_{0}, apply_batches_{0}, snapshots_{0};
  // apply thread only
  std::vector<BookCache> caches_;
  ReadSide read_;
  std::function<void()> notify_;
  std::vector<BatchSample> batch_samples_;  // apply thread; reserved up front
  OrderNodes nodes_;                        // every resting order of every book
  OrderIndex last_rested_ = 0;              // order indices grow: the next ones to rest follow it
  uint64_t last_result_seq_ = 0;  // the last tx whose result was applied (maybe not yet published)
  size_t releasable_ = 0;         // results at the front of pending_ whose tx is published
  // Results waiting for durability, oldest first: a ring that grows only when more txs than ever
  // before wait on the journal at once (a deque would allocate and free blocks continuously).
  class PendingQueue {
   public:
    explicit PendingQueue(size_t cap) : buf_(cap) {}
    bool empty() const { return n_ == 0; }
    Pending& front() { return buf_[head_]; }
    size_t size() const { return n_; }
    Pending& at(size_t i) { return buf_[(head_ + i) % buf_.size()]; }
    Pending& back() { return buf_[(head_ + n_ - 1) % buf_.size()]; }
    void pop_front() {
      head_ = (head_ + 1) % buf_.size();
      --n_;
    }
    void push_back(const Pending& p) {
      if (n_ == buf_.size()) grow();
      buf_[(head_ + n_++) % buf_.size()] = p;
    }

   private:
    void grow() {
      std::vector<Pending> next(buf_.size() * 2);
      for (size_t i = 0; i < n_; ++i) next[i] = buf_[(head_ + i) % buf_.size()];
      buf_.swap(next);
      head_ = 0;
    }
    std::vector<Pending> buf_;
    size_t head_ = 0, n_ = 0;
  };
  PendingQueue pending_{1 << 14};
  std::vector<MarketId> changed_;
  std::array<int16_t, 4> recent_books_{-1, -1, -1, -1};  // published last (keep_warm), a ring
  uint32_t recent_book_pos_ = 0;
  std::vector<MarketId> collect_pending_;    // books holding retired snapshots
  std::vector<uint8_t> in_collect_pending_;  // per market: listed in collect_pending_
  // run_on_sequencer hand-off
  std::mutex task_mu_;
  std::condition_variable task_cv_;
  const std::function<void(const Engine&)>* task_ = nullptr;
  std::atomic<bool> task_pending_{false};
  // sequencer thread only
  uint64_t block_ = 1;
  uint32_t txs_in_block_ = 0;
  int64_t block_start_ns_ = 0;
  std::thread sequencer_, applier_;
  mutable std::mutex placement_mu_;
  std::condition_variable placed_cv_;
  int placed_ = 0;  // hot threads that placed themselves (start() waits for both)
  std::string placement_;
};

}  // namespace tachyon::pipe
