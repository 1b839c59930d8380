#pragma once
// The hot path (docs/ARCHITECTURE.md "The path of one signed tx"): api workers -> one SPSC ring
// per worker -> the sequencer thread (stamps seq/block/time, executes on the engine, hands each
// tx to its output port: journal and committer) -> one SPSC ring of state updates -> the apply
// thread (the read model: views and books, published between txs; tx results routed back to the
// submitting worker's result ring once the output port says they are durable).
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tachyon/core/alloc.hpp"
#include "tachyon/core/thread_owner.hpp"
#include "tachyon/engine/engine.hpp"
#include "tachyon/pipe/book_snapshot.hpp"
#include "tachyon/pipe/commit_linger.hpp"
#include "tachyon/pipe/front.hpp"
#include "tachyon/pipe/pipe_metrics.hpp"
#include "tachyon/pipe/probes.hpp"
#include "tachyon/pipe/published.hpp"
#include "tachyon/pipe/read_model.hpp"
#include "tachyon/pipe/spsc_ring.hpp"
#include "tachyon/pipe/tx_output.hpp"
#include "tachyon/pipe/wait.hpp"
#include "tachyon/pipe/worker_wakes.hpp"

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
  // An api worker is woken for published updates at most once per this interval; its fan-out
  // then carries every publish since (worker_wakes.hpp). Results wake their worker at once. 0:
  // after every publish.
  uint32_t push_interval_us = 0;
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
  // A follower (a standby or replica node, docs/ARCHITECTURE.md "Cluster"): every tx arrives
  // sequenced, with the seq, block and time the primary gave it (from the journal stream), and a
  // block ends where the stream's next block starts. lead() makes it sequence from then on.
  bool follower = false;
  // The sequencer's and the apply thread's loops on one thread ("pipeline"): a tx's group commit,
  // apply and publish follow its execution without a wake-up (fewer context switches on a small
  // machine; docs/ARCHITECTURE.md "Threads on a small machine"). Not with read_side_outside_fork
  // (the two parts allocate from different arenas): two threads then.
  bool one_thread = false;
  // One thread only: while txs arrive faster than one per this many µs, a round that sequenced
  // something is followed by a sleep this long and a second round before the group commit
  // (commit_linger.hpp). 0: never.
  uint32_t commit_linger_us = 0;
  // One thread only: the loop has no thread of its own. The thread of api worker 0 runs its
  // rounds between its socket handlers and sleeps in its own event loop (Front::host_step), so a
  // tx that worker reads is sequenced, made durable, published and answered with no wake-up
  // between threads (docs/ARCHITECTURE.md "Threads on a small machine"). The group commit's
  // fdatasync then holds that worker's sockets, and so does the commit linger: a held round ends
  // the step, and the host sleeps out the linger before its next pass (Front::host_linger_us).
  // The loop parks (never spins) between rounds.
  bool hosted = false;
};

// The whole pipeline, for the app. The api workers see it as a Front (front.hpp).
// Owner: the thread that builds it (start, stop, engine()); the sequencer and apply threads it
// starts own their loops' state, marked below; Front's methods as front.hpp says.
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
  void set_notify(std::function<void(uint64_t)> f) override { notify_ = std::move(f); }
  void want_publishes(uint32_t w, bool yes) override { wakes_.want_publishes(w, yes); }
  bool hosted() const override { return hosted_; }
  int host_bell_fd() const override { return seq_bell_.fd(); }
  size_t host_step() override;
  long host_linger_us() const override;
  bool host_may_sleep(long& timeout_us) override;
  void host_woke() override { seq_bell_.withdraw(); }
  void host_leave() override;
  ReadSide& read_side() override { return model_.read_side(); }
  Published<BookSnapshot>& book(MarketId m) override { return model_.books().book(m); }
  // Acquire: pairs with the apply thread's release once the views up to it are published.
  uint64_t applied_seq() const override { return applied_seq_.load(std::memory_order_acquire); }
  bool book_deltas(MarketId m, uint64_t since_nonce, uint64_t until_nonce,
                   std::vector<BookDelta>& out) const override {
    return model_.books().book_deltas(m, since_nonce, until_nonce, out);
  }
  // The sequencer's engine: only while stopped.
  const Engine& engine() const { return *engine_; }
  // Runs f(engine) on the sequencer thread between two txs and waits for it (fork snapshots
  // start there: the engine is consistent and nothing mutates it while f runs). Not while
  // stopped.
  void run_on_sequencer(const std::function<void(const Engine&)>& f);
  // A follower takes over (any thread; after the last followed tx was submitted): the sequencer
  // seals the block it followed and stamps every tx after it itself.
  void lead() { following_.store(false, std::memory_order_release); }
  bool following() const { return following_.load(std::memory_order_acquire); }

  struct Stats {
    uint64_t ring_full = 0;  // submits refused
    uint64_t apply_batches = 0;
    uint64_t book_publications = 0;
  };
  Stats stats() const;
  // What thread placement did and what it was refused (both threads report when they start).
  std::string placement_report() const;
  // With batch_samples > 0, after stop(): each recorded batch (probes.hpp).
  const std::vector<BatchSample>& batch_samples() const { return batch_samples_; }

 private:
  struct ApplyItem {
    StateUpdate u;
    uint64_t seq;  // the tx's
    uint32_t worker;
    uint32_t exec_ns;  // kTxResult: executed this long after its seq time
    uint64_t cookie;
    int64_t t_recv_ns;
  };
  // A tx result held by the apply thread until its tx is published and durable.
  struct HeldResult {
    uint32_t worker;
    Result r;
  };
  // Held results, oldest first: a ring that grows only when more txs than ever before wait on
  // the journal at once (a deque would allocate and free blocks continuously).
  class HeldResults {
   public:
    explicit HeldResults(size_t cap) : buf_(cap) {}
    bool empty() const { return n_ == 0; }
    HeldResult& front() { return buf_[head_]; }
    const HeldResult& front() const { return buf_[head_]; }
    size_t size() const { return n_; }
    HeldResult& at(size_t i) { return buf_[(head_ + i) % buf_.size()]; }
    HeldResult& back() { return buf_[(head_ + n_ - 1) % buf_.size()]; }
    void pop_front() {
      head_ = (head_ + 1) % buf_.size();
      --n_;
    }
    void push_back(const HeldResult& p) {
      if (n_ == buf_.size()) grow();
      buf_[(head_ + n_++) % buf_.size()] = p;
    }

   private:
    void grow();
    std::vector<HeldResult> buf_;
    size_t head_ = 0, n_ = 0;
  };
  class RingSink;
  struct SeqLoop;    // a sequencer loop's own state (pipeline.cpp)
  struct ApplyLoop;  // an apply loop's own state (pipeline.cpp)
  struct OneThread;  // both, on one thread (pipeline.cpp)

  void place_hot_thread(const char* name, int core, bool spins);
  void sequencer_loop();
  size_t sequencer_round(SeqLoop& s);
  size_t linger_round(SeqLoop& s, CommitLinger& linger);
  bool sequencer_may_end() const;
  bool sequencer_work_waiting() const;
  void sequencer_end();
  bool task_may_run();
  void one_thread_loop();
  std::unique_ptr<OneThread> one_thread_begin(uint32_t linger_us);
  void one_thread_adopt(OneThread& t);
  size_t one_thread_round(OneThread& t);
  bool one_thread_work_waiting(const OneThread& t);
  void one_thread_run(OneThread& t);
  void release_owners();
  void stop_hosted();
  void sequence(uint32_t w, const Ingress& in, RingSink& sink, SequencerProbe& probe);
  // Stamps tx: as it came when following, else with the next seq, this block and now.
  void stamp(Tx& tx);
  void maybe_seal_block(bool work, uint32_t& idle_rounds);
  // The most a parked thread sleeps when nothing it waits for is timed.
  static constexpr long kParkedIdleUs = 50'000;
  long seal_wait_us() const;   // sequencer thread
  long apply_wait_us() const;  // apply thread
  void run_task();
  void apply_loop();
  size_t apply_round(ApplyLoop& a, bool& finished);
  size_t drain_durable(ApplyProbe& probe);
  void apply(const ApplyItem& it);
  bool batch_publishable() const;
  void publish_batch(int64_t now, ApplyProbe& probe);
  bool finish();
  bool apply_work_waiting();
  size_t release_results();
  bool ingress_pending() const;

  unsigned read_arena_;             // 0: the default arenas
  tachyon::ArenaScope ctor_arena_;  // the constructor builds the read model in read_arena_
  PipelineConfig cfg_;
  std::unique_ptr<Engine> engine_;
  TxOutput output_;
  std::vector<std::unique_ptr<SpscRing<Ingress>>> ingress_;
  std::unique_ptr<SpscRing<ApplyItem>> apply_ring_;
  std::vector<std::unique_ptr<SpscRing<Result>>> results_;
  Doorbell seq_bell_, apply_bell_;
  const bool one_thread_;
  // Where a producer rings the apply side: its own thread's doorbell, or with one thread the
  // sequencer's, which that thread sleeps on.
  Doorbell* const apply_door_;
  ApplyLoop* one_apply_ = nullptr;  // one thread: its apply state (a full apply ring drains it)
  // Release/acquire: stop_ and sequencer_done_ hand over "no more input" between threads;
  // applied_seq_ is released after the views up to it are published.
  std::atomic<bool> stop_{false};
  std::atomic<bool> sequencer_done_{false};
  std::atomic<uint64_t> applied_seq_{0};
  std::atomic<bool> following_{false};  // release by lead(): the txs submitted before it
  std::atomic<uint64_t> ring_full_{0}, apply_batches_{0};  // statistics only: relaxed
  // apply thread only
  ThreadOwner apply_owner_{"apply"};
  ReadModel model_;
  std::function<void(uint64_t)> notify_;
  WorkerWakes wakes_;  // (want_publishes: each worker, for itself)
  void wake_workers(int64_t now);
  std::vector<BatchSample> batch_samples_;
  uint64_t last_result_seq_ = 0;  // the last tx whose result was applied (maybe not yet published)
  size_t batch_ = 0;       // updates applied and not yet published (whole txs unless mid_tx_)
  bool mid_tx_ = false;    // the last update applied was not its tx's last
  size_t releasable_ = 0;  // held results at the front whose tx is published
  HeldResults held_{1 << 14};
  // run_on_sequencer hand-off: task_pending_ is released by the caller after task_ is set and by
  // the sequencer after the task ran; the mutex orders task_ itself.
  std::mutex task_mu_;
  std::condition_variable task_cv_;
  const std::function<void(const Engine&)>* task_ = nullptr;
  std::atomic<bool> task_pending_{false};
  // sequencer thread only
  ThreadOwner seq_owner_{"sequencer"};
  uint64_t block_ = 1;
  uint32_t txs_in_block_ = 0;
  bool followed_ = false;  // the last tx sequenced was a followed one
  int64_t last_tx_time_ns_ = 0;
  int64_t block_start_ns_ = 0;
  std::thread sequencer_, applier_;
  // Hosted (PipelineConfig::hosted): the host thread's loop, made at its first round after
  // start(). host_state_ says who runs it: kNoHost until the host's first round claims it
  // (kHosting), or stop() does (kLeft); the host ends it with kDone, or leaves it unfinished
  // (kLeft) and stop() finishes it. Changes away from kHosting are made under host_mu_.
  enum HostState : int { kNoHost, kHosting, kLeft, kDone };
  const bool hosted_;
  std::atomic<bool> host_started_{false};  // release by start(): the loop may run
  std::atomic<int> host_state_{kNoHost};
  std::unique_ptr<OneThread> host_loop_;  // the host thread's (then stop()'s, after kLeft)
  std::mutex host_mu_;
  std::condition_variable host_cv_;
  mutable std::mutex placement_mu_;
  std::condition_variable placed_cv_;
  int placed_ = 0;  // hot threads that placed themselves (start() waits for both)
  std::string placement_;
};

}  // namespace tachyon::pipe
