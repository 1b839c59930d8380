#include "tachyon/pipe/pipeline.hpp"

#include <algorithm>
#include <chrono>

#include "tachyon/core/alloc.hpp"
#include "tachyon/core/assert.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/pipe/placement.hpp"

namespace tachyon::pipe {

// An apply loop's own state (the apply thread's, or the one pipeline thread's).
struct Pipeline::ApplyLoop {
  ApplyLoop(Pipeline& p, WaitStrategy wait)
      : probe(p.cfg_.metrics, &p.batch_samples_, p.cfg_.batch_samples),
        warm_every(wait == WaitStrategy::kSpin ? p.cfg_.keep_warm_rounds : 0) {}
  ApplyProbe probe;
  const uint32_t warm_every;
  uint32_t idle_rounds = 0;
};

// Sequencer thread: every update the engine emits goes into the apply ring, tagged with the
// submitting worker and cookie. A full ring waits for the apply thread (it never waits on us).
class Pipeline::RingSink final : public UpdateSink {
 public:
  explicit RingSink(Pipeline& p) : p_(p) {}
  void on_update(const StateUpdate& u) override {
    uint32_t exec_ns = 0;
    const bool last = u.type == UpdateType::kTxResult;
    if (last) {  // the last update of a tx: the engine is done with it
      exec_done_ns = realtime_ns();
      exec_ns = static_cast<uint32_t>(std::clamp<int64_t>(exec_done_ns - u.time_ns, 0, UINT32_MAX));
    }
    ApplyItem it{u, seq, worker, exec_ns, cookie, t_recv_ns};
    it.u.origin_worker = static_cast<uint8_t>(worker);
    it.u.origin_cookie = static_cast<uint32_t>(cookie);
    while (!p_.apply_ring_->try_push(it)) {
      if (p_.one_apply_ != nullptr) {  // one thread: it makes the room itself
        p_.drain_durable(p_.one_apply_->probe);
        continue;
      }
      p_.apply_bell_.ring();
      _mm_pause();
    }
  }
  uint64_t seq = 0;
  uint32_t worker = 0;
  uint64_t cookie = 0;
  int64_t t_recv_ns = 0;
  int64_t tx_time_ns = 0;    // the tx being executed: its time
  int64_t exec_done_ns = 0;  // when the last tx's result passed: its engine time ends there

 private:
  Pipeline& p_;
};

// A sequencer loop's own state.
struct Pipeline::SeqLoop {
  explicit SeqLoop(Pipeline& p) : sink(p), probe(p.cfg_.metrics) {}
  RingSink sink;
  SequencerProbe probe;
  uint32_t idle_rounds = 0;
  int64_t round_first_ns = 0;  // the last round's first tx: its time (0: the round had none)
};

Pipeline::Pipeline(const PipelineConfig& cfg, std::unique_ptr<Engine> engine,
                   store::Journal* journal, store::Committer* committer, AccountBase base)
    : read_arena_(cfg.read_side_outside_fork ? tachyon::dontfork_arena() : 0),
      ctor_arena_(read_arena_),
      cfg_(cfg),
      engine_(std::move(engine)),
      output_(journal, committer),
      one_thread_(cfg.one_thread && !cfg.read_side_outside_fork),
      apply_door_(one_thread_ ? &seq_bell_ : &apply_bell_),
      model_(ReadModelConfig{cfg.read, cfg.max_readers, cfg.book_history}, *engine_,
             std::move(base), read_arena_),
      wakes_(cfg.workers, int64_t{cfg.push_interval_us} * 1000),
      hosted_(cfg.hosted && one_thread_) {
  // Hosted, the host sleeps in its event loop, which watches the bell's eventfd.
  if (hosted_) {
    TACHYON_ASSERT(seq_bell_.use_eventfd(), "a hosted pipeline needs an eventfd");
    cfg_.wait = WaitStrategy::kPark;
  }
  for (uint32_t w = 0; w < cfg.workers; ++w) {
    ingress_.push_back(std::make_unique<SpscRing<Ingress>>(cfg.ingress_capacity));
    results_.push_back(std::make_unique<SpscRing<Result>>(cfg.result_capacity));
  }
  apply_ring_ = std::make_unique<SpscRing<ApplyItem>>(cfg.apply_capacity);
  block_ = engine_->last_block() + 1;
  following_.store(cfg.follower, std::memory_order_relaxed);
  // What the read side shows from the start: the engine as restored (snapshot plus replay).
  applied_seq_.store(engine_->last_seq(), std::memory_order_release);
  last_result_seq_ = engine_->last_seq();
  ctor_arena_.restore();
}

Pipeline::~Pipeline() { stop(); }

void Pipeline::HeldResults::grow() {
  std::vector<HeldResult> next(buf_.size() * 2);
  for (size_t i = 0; i < n_; ++i) next[i] = buf_[(head_ + i) % buf_.size()];
  buf_.swap(next);
  head_ = 0;
}

void Pipeline::start() {
  // A journal commit wakes the apply thread: results waiting on durability can go.
  output_.set_on_durable([this](uint64_t) { apply_door_->ring(); });
  {
    std::lock_guard lk(placement_mu_);
    placed_ = 0;
  }
  if (hosted_) {
    TACHYON_ASSERT(host_state_.load() == kNoHost, "a hosted pipeline starts once");
    host_started_.store(true, std::memory_order_release);
    seq_bell_.ring();  // a host asleep since before the start
    placement_ += "pipeline loop on api worker 0's thread; ";
    return;
  }
  if (one_thread_) {
    sequencer_ = std::thread([this] { one_thread_loop(); });
  } else {
    sequencer_ = std::thread([this] { sequencer_loop(); });
    applier_ = std::thread([this] { apply_loop(); });
  }
  // Both placed (pinned, named, scheduled) before the caller goes on: it reports the placement,
  // and the caller's next threads must not take their cores first.
  // (Bounded: a hot thread that cannot get its core, e.g. behind a SCHED_FIFO spinner there, must
  // not hang the start; the placement line then lacks it.)
  std::unique_lock lk(placement_mu_);
  const int hot = one_thread_ ? 1 : 2;
  if (!placed_cv_.wait_for(lk, std::chrono::seconds(5), [&] { return placed_ == hot; }))
    placement_ += "a hot thread had not placed itself 5 s after the start; ";
}

void Pipeline::stop() {
  if (hosted_) return stop_hosted();
  if (!sequencer_.joinable()) return;
  stop_.store(true, std::memory_order_release);
  seq_bell_.ring();
  sequencer_.join();
  apply_bell_.ring();
  if (applier_.joinable()) applier_.join();
  release_owners();
}

// The threads are gone: a later start()'s threads own their state anew.
void Pipeline::release_owners() {
  seq_owner_.release();
  output_.owner().release();
  output_.flusher_owner().release();
  apply_owner_.release();
  model_.release_owner();
}

void Pipeline::run_on_sequencer(const std::function<void(const Engine&)>& f) {
  std::unique_lock lk(task_mu_);
  task_cv_.wait(lk, [&] { return task_ == nullptr; });
  task_ = &f;
  task_pending_.store(true, std::memory_order_release);
  seq_bell_.ring();
  task_cv_.wait(lk, [&] { return !task_pending_.load(std::memory_order_acquire); });
}

bool Pipeline::submit(uint32_t w, const Tx& tx, uint64_t cookie, int64_t t_recv_ns) {
  if (!ingress_[w]->try_push(Ingress{tx, cookie, t_recv_ns})) {
    ring_full_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  seq_bell_.ring();
  return true;
}

bool Pipeline::ingress_pending() const {
  for (const auto& r : ingress_)
    if (r->size_approx() > 0) return true;
  return false;
}

void Pipeline::place_hot_thread(const char* name, int core, bool spins) {
  const Placement pl = place_this_thread(name, core, cfg_.fifo_priority, spins);
  std::lock_guard lk(placement_mu_);
  placement_ += pl.report + "; ";
  ++placed_;
  placed_cv_.notify_all();
}

void Pipeline::sequencer_loop() {
  if (read_arena_ != 0) tachyon::disable_thread_cache();
  place_hot_thread("sequencer", cfg_.sequencer_core, cfg_.wait == WaitStrategy::kSpin);
  SeqLoop s(*this);
  Idler idler(cfg_.wait, seq_bell_);
  for (;;) {
    const size_t work = sequencer_round(s);
    if (work == 0 && sequencer_may_end()) break;
    idler.idle(
        work, [&] { return sequencer_work_waiting(); }, seal_wait_us());
  }
  sequencer_end();
}

// One round: every ingress ring drained (fair: at most drain_limit each), the round's txs handed
// to the journal at once, a waiting task run, a due block sealed. Returns the txs sequenced.
size_t Pipeline::sequencer_round(SeqLoop& s) {
  size_t work = 0;
  int64_t round_start = 0;  // the first tx's time: an idle round reads no clock
  for (uint32_t w = 0; w < cfg_.workers; ++w) {
    work += ingress_[w]->drain(
        [&](const Ingress& in) {
          sequence(w, in, s.sink, s.probe);
          if (round_start == 0) round_start = s.sink.tx_time_ns;
        },
        cfg_.drain_limit);
  }
  // The apply thread is woken for the round's txs when it takes them now (durable already) or
  // runs the group commit itself.
  if (work > 0 && output_.end_round(engine_->last_seq())) apply_door_->ring();
  s.round_first_ns = round_start;
  s.probe.round_end(work, round_start, [this] { return apply_ring_->size_approx(); });
  if (task_pending_.load(std::memory_order_acquire) && task_may_run()) run_task();
  maybe_seal_block(work > 0, s.idle_rounds);
  return work;
}

bool Pipeline::sequencer_may_end() const {
  return stop_.load(std::memory_order_acquire) && !ingress_pending();
}

// seq_cst loads: the re-check after the Idler announced its sleep must not move before the
// announcement (Doorbell: a ring in between is then never missed).
bool Pipeline::sequencer_work_waiting() const {
  return ingress_pending() || stop_.load() || task_pending_.load();
}

void Pipeline::sequencer_end() {
  // (A follower leaves its block open: the stream's may go on past it.)
  if (txs_in_block_ > 0 && !followed_) output_.seal(block_++, realtime_ns());
  output_.finish();
  sequencer_done_.store(true, std::memory_order_release);
}

// A task waits for the journal to hold the engine's last tx (fork snapshots): on one thread that
// also runs the group commits, they are run first; a disk that is full defers the task.
bool Pipeline::task_may_run() {
  if (one_apply_ == nullptr) return true;
  while (output_.group_due() && output_.commit_group()) {
  }
  return !output_.group_due();
}

// Both loops on one thread (PipelineConfig::one_thread): a tx's group commit, apply and publish
// follow its execution with no wake-up in between. The sequencer's part ends first, then the
// apply part once everything is routed (finish).
struct Pipeline::OneThread {
  OneThread(Pipeline& p, uint32_t linger_us)
      : s(p), a(p, p.cfg_.wait), linger(int64_t{linger_us} * 1000) {}
  SeqLoop s;
  ApplyLoop a;
  CommitLinger linger;
  bool sequencing = true;
  bool space_wait = false;  // the last round found the disk full
  bool finished = false;
  bool hosted = false;       // rounds run by a host between its passes over its sockets (host_step)
  bool held = false;         // hosted: the last round held its group commit back
  bool held_asleep = false;  // ... and the host sleeps out the linger first (host_linger_us)
};

void Pipeline::one_thread_loop() {
  place_hot_thread("pipeline", cfg_.sequencer_core, cfg_.wait == WaitStrategy::kSpin);
  std::unique_ptr<OneThread> t = one_thread_begin(cfg_.commit_linger_us);
  one_thread_run(*t);
}

// Rounds until the loop finished (stop(), then every ring drained and every result routed).
void Pipeline::one_thread_run(OneThread& t) {
  Idler idler(cfg_.wait, seq_bell_);
  for (;;) {
    const size_t work = one_thread_round(t);
    if (t.finished) break;
    idler.idle(
        work, [&] { return one_thread_work_waiting(t); },
        std::min(seal_wait_us(), apply_wait_us()));
  }
  one_apply_ = nullptr;
}

// On the thread that runs the loop from now on, before its first round.
std::unique_ptr<Pipeline::OneThread> Pipeline::one_thread_begin(uint32_t linger_us) {
  auto t = std::make_unique<OneThread>(*this, linger_us);
  one_thread_adopt(*t);
  return t;
}

// The calling thread runs `t`'s rounds from now on: it runs the group commits (before its first
// hand-off: a hand-off must never wait for room only its own thread makes) and drains a full
// apply ring itself.
void Pipeline::one_thread_adopt(OneThread& t) {
  output_.claim_group_commit();
  one_apply_ = &t.a;
}

size_t Pipeline::one_thread_round(OneThread& t) {
  size_t work = 0;
  // While the disk is full the journal holds what it has and takes nothing more: the ingress
  // rings fill and the api answers "busy" (handing more over would wait for room only this
  // thread can make).
  t.space_wait = output_.waiting_for_space();
  if (t.sequencing && !t.space_wait) {
    work += sequencer_round(t.s);
    t.linger.sequenced(work, t.s.round_first_ns);
    if (work > 0 && !t.held && t.linger.hold()) {
      // Hosted, the host reads its sockets first (a small round: after sleeping out the linger);
      // the next round sequences what came meanwhile, and its group commit takes both rounds'.
      if (t.hosted) {
        t.held = true;
        t.held_asleep = work < CommitLinger::kHostedGroup;
        return work;
      }
      work += linger_round(t.s, t.linger);
    }
    if (work == 0 && sequencer_may_end()) {
      sequencer_end();
      t.sequencing = false;
    }
  }
  t.held = false;
  work += apply_round(t.a, t.finished);
  return work;
}

bool Pipeline::one_thread_work_waiting(const OneThread& t) {
  return (t.sequencing && !t.space_wait && sequencer_work_waiting()) || apply_work_waiting();
}

// ---- Hosted (PipelineConfig::hosted): the one-thread loop run by api worker 0's thread between
// its socket handlers (front.hpp says how the host calls it), and its stop.

// Host thread. Its first round after start() claims the loop, unless stop() did first.
size_t Pipeline::host_step() {
  if (!host_loop_) {
    if (!host_started_.load(std::memory_order_acquire)) return 0;
    int expected = kNoHost;
    if (!host_state_.compare_exchange_strong(expected, kHosting)) return 0;
    host_loop_ = one_thread_begin(cfg_.commit_linger_us);
    host_loop_->hosted = true;
  }
  if (host_loop_->finished) return 0;
  const size_t work = one_thread_round(*host_loop_);
  if (host_loop_->finished) {
    std::lock_guard lk(host_mu_);
    host_state_.store(kDone);
    host_cv_.notify_all();
  }
  return work;
}

// Host thread, after host_step: the linger to sleep out, unannounced, before the next pass over
// its sockets (0: none). The host's sockets wait meanwhile, as the txs held do.
long Pipeline::host_linger_us() const {
  const bool asleep = host_loop_ && host_loop_->held && host_loop_->held_asleep;
  return asleep ? host_loop_->linger.linger_ns() / 1000 : 0;
}

// Host thread: the sleep is announced to the bell first (a ring from then on makes its eventfd
// readable), then the work re-checked.
bool Pipeline::host_may_sleep(long& timeout_us) {
  const bool running = host_loop_ && !host_loop_->finished;
  timeout_us = running ? std::min(seal_wait_us(), apply_wait_us()) : kParkedIdleUs;
  return seq_bell_.announce([&] {
    if (running) return one_thread_work_waiting(*host_loop_);
    return !host_loop_ && host_started_.load() && host_state_.load() == kNoHost;
  });
}

// Host thread, for good. A loop it runs and has not finished goes to stop(), which runs the rest
// on its own thread (the owners are released for it).
void Pipeline::host_leave() {
  std::lock_guard lk(host_mu_);
  if (host_state_.load() != kHosting) return;
  if (host_loop_ && !host_loop_->finished) release_owners();
  host_state_.store(host_loop_ && host_loop_->finished ? kDone : kLeft);
  host_cv_.notify_all();
}

// Any thread but the host's: what the host runs, it finishes (every ring drained, every result
// routed); what it never ran or left, this thread finishes.
void Pipeline::stop_hosted() {
  if (!host_started_.load(std::memory_order_acquire)) return;
  stop_.store(true, std::memory_order_release);
  seq_bell_.ring();
  {
    std::unique_lock lk(host_mu_);
    int expected = kNoHost;
    host_state_.compare_exchange_strong(expected, kLeft);
    host_cv_.wait(lk, [&] { return host_state_.load() != kHosting; });
  }
  if (host_state_.load() == kLeft) {
    if (host_loop_) {
      one_thread_adopt(*host_loop_);
      host_loop_->hosted = false;  // a held commit goes in the next round
    } else {
      host_loop_ = one_thread_begin(cfg_.commit_linger_us);
    }
    one_thread_run(*host_loop_);
    host_state_.store(kDone);
  }
  host_started_.store(false, std::memory_order_release);
  release_owners();
}

// The commit linger (commit_linger.hpp): a sleep not announced to the doorbell (a submit meanwhile
// wakes nobody), then a round for what arrived; the group commit that follows takes both rounds.
size_t Pipeline::linger_round(SeqLoop& s, CommitLinger& linger) {
  std::this_thread::sleep_for(std::chrono::nanoseconds(linger.linger_ns()));
  const size_t n = sequencer_round(s);
  linger.sequenced(n, s.round_first_ns);
  return n;
}

// One tx from worker w's ring: stamped, executed (its updates go to the apply ring through the
// sink), handed to the output port, counted into its block.
void Pipeline::sequence(uint32_t w, const Ingress& in, RingSink& sink, SequencerProbe& probe) {
  TACHYON_OWNER_ONLY(seq_owner_);
  Tx tx = in.tx;
  stamp(tx);
  sink.worker = w;
  sink.cookie = in.cookie;
  sink.t_recv_ns = in.t_recv_ns;
  sink.tx_time_ns = tx.h.time_ns;
  sink.seq = tx.h.seq;
  probe.tx_begin();
  engine_->execute(tx, sink);
  output_.write(tx, probe);
  probe.tx_end(tx, in.t_recv_ns, sink.exec_done_ns);
  if (txs_in_block_++ == 0) block_start_ns_ = tx.h.time_ns;
  if (!followed_ && txs_in_block_ >= cfg_.block_max_txs) {
    output_.seal(block_, tx.h.time_ns);
    ++block_;
    txs_in_block_ = 0;
  }
}

void Pipeline::stamp(Tx& tx) {
  TACHYON_OWNER_ONLY(seq_owner_);
  const bool follow = following_.load(std::memory_order_acquire);
  if (follow) {
    TACHYON_ASSERT(tx.h.seq == engine_->last_seq() + 1, "a followed tx comes in seq order");
    if (txs_in_block_ > 0 && tx.h.block != block_) {  // the stream's block ended before it
      output_.seal(block_, last_tx_time_ns_);
      txs_in_block_ = 0;
    }
    block_ = tx.h.block;
  } else {
    if (followed_) {  // taking over: the followed block ends here, ours start after it
      if (txs_in_block_ > 0) output_.seal(block_, last_tx_time_ns_);
      txs_in_block_ = 0;
      block_ = engine_->last_block() + 1;
    }
    tx.h.seq = engine_->last_seq() + 1;
    tx.h.block = block_;
    tx.h.time_ns = realtime_ns();
  }
  followed_ = follow;
  last_tx_time_ns_ = tx.h.time_ns;
}

// A block also ends block_interval_ms after its first tx. The interval needs the clock; while
// spinning idle, look every 32nd round only (a clock read per spin was 5% of the server's CPU
// under perf); parked rounds are 1 ms apart.
void Pipeline::maybe_seal_block(bool work, uint32_t& idle_rounds) {
  if (followed_) return;  // the stream's blocks end where its next one starts
  idle_rounds = work ? 0 : idle_rounds + 1;
  // Parked rounds end when something rang or the seal is due (seal_wait_us): each looks.
  const bool look =
      work || idle_rounds % 32 == 0 || idle_rounds > 256 || cfg_.wait == WaitStrategy::kPark;
  const int64_t interval_ns = int64_t{cfg_.block_interval_ms} * 1'000'000;
  if (txs_in_block_ > 0 && look && realtime_ns() - block_start_ns_ >= interval_ns) {
    output_.seal(block_, realtime_ns());
    ++block_;
    txs_in_block_ = 0;
  }
}

// How long a parked sequencer may sleep: until its open block's seal is due, else kParkedIdleUs
// (a tx, a task or the stop rings it).
long Pipeline::seal_wait_us() const {
  if (followed_ || txs_in_block_ == 0) return kParkedIdleUs;
  const int64_t due = block_start_ns_ + int64_t{cfg_.block_interval_ms} * 1'000'000;
  return static_cast<long>(std::clamp<int64_t>((due - realtime_ns()) / 1000, 50, kParkedIdleUs));
}

// How long a parked apply thread may sleep: 1 ms while it polls (results held for a full worker
// ring, retired book snapshots readers still hold, a batch waiting for its journal commit), else
// kParkedIdleUs (updates, a commit and the stop ring it).
long Pipeline::apply_wait_us() const {
  const bool polling = !held_.empty() || batch_ > 0 || model_.collecting();
  const long wait = polling ? 1000 : kParkedIdleUs;
  // The disk was full: the next group commit is tried then.
  if (const long retry = output_.group_retry_us(); retry > 0) return std::min(retry, wait);
  // A paced wake-up is due then (1 µs at least: the round that wakes it comes next).
  if (wakes_.waiting()) {
    const int64_t due_us = wakes_.due_in_ns(realtime_ns()) / 1000;
    return std::clamp<long>(static_cast<long>(due_us), 1, wait);
  }
  return wait;
}

// The workers due a wake-up (worker_wakes.hpp), rung through the notify callback.
void Pipeline::wake_workers(int64_t now) {
  TACHYON_OWNER_ONLY(apply_owner_);
  const uint64_t workers = wakes_.take(now);
  if (workers != 0 && notify_) notify_(workers);
}

void Pipeline::run_task() {
  std::lock_guard lk(task_mu_);
  (*task_)(*engine_);
  task_ = nullptr;
  task_pending_.store(false, std::memory_order_release);
  task_cv_.notify_all();
}

// Results leave in seq order once their tx is published, which is once it is durable
// (batch_publishable): a client never reads a view without its own tx.
size_t Pipeline::release_results() {
  size_t n = 0;
  int64_t now = 0;  // read once, and only when something is released
  while (releasable_ > 0 && !held_.empty()) {
    if (now == 0) now = realtime_ns();
    HeldResult& p = held_.front();
    p.r.t_durable_ns = now;
    if (!results_[p.worker]->try_push(p.r)) break;  // the worker is slow: keep it, retry
    wakes_.routed(p.worker);
    held_.pop_front();
    --releasable_;
    ++n;
  }
  return n;
}

// A batch is published only once its last tx is whole (its kTxResult, the last update the
// engine emits for it, applied) and durable (docs/ARCHITECTURE.md "Durability and visibility"):
// the sequencer pushes a tx's updates one at a time, and a publish in between would show readers
// a state that never was (a sweep half done, a modified order gone); a publish before the journal
// holds the tx would show what a crash may erase. A batch ends at the first tx boundary past
// apply_batch_updates (by default 4096, the most one round drains) updates.
void Pipeline::apply_loop() {
  const tachyon::ArenaScope arena(read_arena_);
  const WaitStrategy wait = cfg_.apply_wait.value_or(cfg_.wait);
  place_hot_thread("apply", cfg_.apply_core, wait == WaitStrategy::kSpin);
  output_.claim_group_commit();
  Idler idler(wait, apply_bell_);
  ApplyLoop a(*this, wait);
  for (;;) {
    bool finished = false;
    const size_t work = apply_round(a, finished);
    if (finished) break;
    idler.idle(
        work, [this] { return apply_work_waiting(); }, apply_wait_us());
  }
}

// One round: a group commit (GroupCommit::kFlusher: what the sequencer handed off, written and
// synced first so the drain finds it durable), the durable updates applied, a whole batch
// published, results routed. Returns the work done; `finished` once everything is routed after
// the sequencer ended.
size_t Pipeline::apply_round(ApplyLoop& a, bool& finished) {
  ApplyProbe& probe = a.probe;
  const size_t committed = output_.commit_group() ? 1 : 0;
  probe.round_begin(batch_ > 0, apply_ring_->size_approx() > 0);
  const size_t n = drain_durable(probe);
  const bool whole = batch_publishable();
  const bool idle_publish = batch_ == 0 && n == 0 && model_.idle_publish_due();
  const int64_t now = whole || idle_publish ? realtime_ns() : 0;
  probe.drained(n, whole, now);
  if (whole) {
    publish_batch(now, probe);
  } else if (idle_publish) {
    model_.publish_idle(now);
  }
  model_.collect();
  if (whole) wakes_.published();
  const size_t routed = probe.route([this] { return release_results(); });
  if (wakes_.waiting()) wake_workers(now != 0 ? now : realtime_ns());
  // Acquire: pairs with the sequencer's release after its last push, so an empty ring then
  // means everything was applied. After a journal failure, what is left never becomes durable:
  // it is never shown.
  if (n == 0 && sequencer_done_.load(std::memory_order_acquire) &&
      (apply_ring_->size_approx() == 0 || output_.failed()) && finish()) {
    finished = true;
    return 0;
  }
  if (n + routed + committed > 0) {
    a.idle_rounds = 0;
  } else if (a.warm_every > 0 && !mid_tx_ && ++a.idle_rounds % a.warm_every == 0) {
    // Stops as soon as the next updates are in the ring: warming must not delay them.
    model_.keep_warm([this] { return apply_ring_->size_approx() > 0; });
  }
  return n + routed + committed;
}

// Takes the ring's updates up to the durable frontier: a tx once it is durable, a tx begun to its
// end, and a tx not yet durable when the ring is more than half full (one whose updates could
// fill the ring before its journal append, which follows its execution, would otherwise never
// be taken). What is taken is published only once durable (batch_publishable).
size_t Pipeline::drain_durable(ApplyProbe& probe) {
  const uint64_t durable = output_.durable_seq();
  const size_t cap = cfg_.apply_batch_updates > 0 ? cfg_.apply_batch_updates : 4096;
  auto admit = [&](const ApplyItem& it) {
    return mid_tx_ || it.seq <= durable || apply_ring_->size_approx() * 2 > cfg_.apply_capacity;
  };
  auto take = [&](const ApplyItem& it) {
    apply(it);
    ++batch_;
    mid_tx_ = it.u.type != UpdateType::kTxResult;
    return mid_tx_ || batch_ < cap;
  };
  if (!probe.detail()) return apply_ring_->drain_while(admit, take, 4096);
  return apply_ring_->drain_while(
      admit,
      [&](const ApplyItem& it) { return probe.timed_update(it.u.type, [&] { return take(it); }); },
      4096);
}

void Pipeline::apply(const ApplyItem& it) {
  const StateUpdate& u = it.u;
  model_.apply(u);
  if (u.type != UpdateType::kTxResult) return;
  const TxResultUpdate& t = u.result;
  held_.push_back(
      HeldResult{it.worker, Result{it.cookie, t.seq, t.block, t.order_index, t.reject, it.t_recv_ns,
                                   u.time_ns, u.time_ns + int64_t{it.exec_ns}, 0, 0}});
  last_result_seq_ = t.seq;  // applied_seq moves once the batch is published
}

// Whole txs applied, the last of them durable.
bool Pipeline::batch_publishable() const {
  return batch_ > 0 && !mid_tx_ && output_.covers(last_result_seq_);
}

// The batch applied so far, read at `now`: the read model published, applied_seq moved with the
// views, and this batch's held results stamped (they follow the published ones still waiting
// for the worker's ring).
void Pipeline::publish_batch(int64_t now, ApplyProbe& probe) {
  TACHYON_OWNER_ONLY(apply_owner_);
  const size_t held_before = releasable_;
  int64_t t_books = 0;
  model_.publish(now, last_result_seq_, probe.sampling() ? &t_books : nullptr);
  releasable_ = held_.size();  // every held result now belongs to a published tx
  applied_seq_.store(last_result_seq_, std::memory_order_release);
  apply_batches_.fetch_add(1, std::memory_order_relaxed);
  const int64_t t1 = realtime_ns();
  for (size_t i = held_before; i < held_.size(); ++i) {
    Result& r = held_.at(i).r;
    r.t_applied_ns = t1;
    probe.result_applied(r.t_exec_ns, t1);
  }
  probe.batch_end(batch_, now, t_books, t1);
  batch_ = 0;
}

// The sequencer is done and everything it sent is applied: true once the last results are
// routed (the last state published, order lists included), or the journal failed (nothing more
// can become durable); until then, waits for the last batch to be durable (a flusher commits it
// in its next round).
bool Pipeline::finish() {
  TACHYON_ASSERT(!mid_tx_, "the sequencer ends every tx with its result");
  if (batch_ > 0 && output_.flusher()) return output_.failed();
  if (batch_ > 0) return !output_.wait_durable(last_result_seq_);
  if (!held_.empty()) return false;  // published: routed as the workers' rings free up
  model_.publish_final(realtime_ns());
  return true;
}

// For the idler: a group commit to run, a history to publish, a batch that became durable, an
// update that may be taken, or a result that may be routed.
bool Pipeline::apply_work_waiting() {
  if (output_.group_due() && output_.group_retry_us() == 0) return true;
  if (batch_ == 0 && model_.history_dirty()) return true;
  if (batch_publishable()) return true;
  if (const ApplyItem* next = apply_ring_->peek())
    if (mid_tx_ || output_.covers(next->seq) ||
        apply_ring_->size_approx() * 2 > cfg_.apply_capacity)
      return true;
  return releasable_ > 0 && !held_.empty();
}

std::string Pipeline::placement_report() const {
  std::lock_guard lk(placement_mu_);
  return placement_;
}

Pipeline::Stats Pipeline::stats() const {
  return Stats{ring_full_.load(std::memory_order_relaxed),
               apply_batches_.load(std::memory_order_relaxed), model_.books().publications()};
}

}  // namespace tachyon::pipe
