#include "tachyon/pipe/pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>

#include "tachyon/core/alloc.hpp"
#include "tachyon/core/assert.hpp"
#include "tachyon/core/cache_warm.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/pipe/placement.hpp"

namespace tachyon::pipe {

namespace {
// The account table holds at most 70% of its slots: sized for the recovered accounts and room
// to grow (a quarter as many again, at least 64k; the power of two above gives 25-150%), never
// below the configured size. At 1M accounts: 2M slots (32 MB, room for 468k more), where half as
// many again took 4M (64 MB, zeroed before the first view goes in).
ReadSideConfig sized_for(ReadSideConfig c, size_t accounts) {
  const size_t want = (accounts + std::max<size_t>(accounts / 4, 65536)) * 10 / 7 + 1;
  size_t slots = 1;
  while (slots < want) slots <<= 1;
  c.account_capacity = std::max(c.account_capacity, slots);
  return c;
}
}  // namespace

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
    ApplyItem it{u, worker, exec_ns, cookie, t_recv_ns};
    it.u.origin_worker = static_cast<uint8_t>(worker);
    it.u.origin_cookie = static_cast<uint32_t>(cookie);
    while (!p_.apply_ring_->try_push(it)) {
      p_.apply_bell_.ring();
      _mm_pause();
    }
    // A parked apply thread holding part of this tx publishes once it is whole: wake it now, not
    // at the end of the sequencer's round (one load when it is not asleep).
    if (last) p_.apply_bell_.ring();
  }
  uint32_t worker = 0;
  uint64_t cookie = 0;
  int64_t t_recv_ns = 0;
  int64_t exec_done_ns = 0;  // when the last tx's result passed: its engine time ends there

 private:
  Pipeline& p_;
};

Pipeline::Pipeline(const PipelineConfig& cfg, std::unique_ptr<Engine> engine,
                   store::Journal* journal, store::Committer* committer, AccountBase base)
    : read_arena_(cfg.read_side_outside_fork ? tachyon::dontfork_arena() : 0),
      ctor_arena_(read_arena_),
      cfg_(cfg),
      engine_(std::move(engine)),
      journal_(journal),
      committer_(committer),
      read_(sized_for(cfg.read, engine_->accounts().size())),
      // room for the restored books and a quarter more before a new chunk of nodes is needed
      nodes_(std::max<size_t>(16384, engine_->orders().live_count() * 5 / 4)) {
  for (uint32_t w = 0; w < cfg.workers; ++w) {
    ingress_.push_back(std::make_unique<SpscRing<Ingress>>(cfg.ingress_capacity));
    results_.push_back(std::make_unique<SpscRing<Result>>(cfg.result_capacity));
    result_bells_.push_back(std::make_unique<Doorbell>());
  }
  apply_ring_ = std::make_unique<SpscRing<ApplyItem>>(cfg.apply_capacity);
  deltas_ = std::vector<std::atomic<BroadcastLog<BookDeltaRecord>*>>(kMaxMarkets);
  caches_.resize(kMaxMarkets);
  in_collect_pending_.assign(kMaxMarkets, 0);
  collect_pending_.reserve(kMaxMarkets);
  for (int m = 0; m < kMaxMarkets; ++m) {
    books_.push_back(std::make_unique<Published<BookSnapshot>>(cfg.max_readers));
    books_.back()->enable_recycling();
  }
  batch_samples_.reserve(cfg.batch_samples);
  block_ = engine_->last_block() + 1;
  // What the read side shows from the start: the engine as restored (snapshot plus replay).
  applied_seq_.store(engine_->last_seq(), std::memory_order_release);
  last_result_seq_ = engine_->last_seq();
  // The read side starts from the engine's current books, stamped with the time they were restored.
  const int64_t restored_ns = realtime_ns();
  // The account and market views are built meanwhile on a second thread: the two touch nothing
  // in common (the engine is only read), and a start at 1M accounts and 1M orders waits for both.
  // The accounts go in chunks to whichever thread is free: the seeder from the start, this one
  // once the books are built.
  // With a base, the accounts it holds (the engine's first ones, in the same order: accounts are
  // only ever appended) start without a view, unless the replay changed them.
  const size_t n_accounts = engine_->accounts().size();
  const SavedAccounts* saved = base.saved.get();
  if (saved != nullptr && (saved->size() > n_accounts ||
                           (saved->size() > 0 && saved->index_at(saved->size() - 1) !=
                                                     engine_->accounts()[saved->size() - 1].index)))
    saved = nullptr;  // not the snapshot this engine was loaded from: every view at start
  if (saved != nullptr)
    read_.accounts().set_base(base.saved, restored_ns, cfg.read.orders_in_view, read_arena_);
  std::atomic<size_t> next_account{saved != nullptr ? saved->size() : 0};
  auto seed_accounts = [this, restored_ns, n_accounts, &next_account] {
    constexpr size_t kChunk = 4096;
    for (;;) {
      const size_t b = next_account.fetch_add(kChunk, std::memory_order_relaxed);
      if (b >= n_accounts) return;
      read_.seed_accounts(*engine_, restored_ns, b, std::min(n_accounts, b + kChunk));
    }
  };
  // The books' caches are built on this thread, a market at a time, each book's orders in
  // consecutive nodes; they are made findable by order index (nodes_.index) on the other thread,
  // a book as soon as it is built (`built`: how many of `books` are; `ends`: where each book's
  // nodes end), which halves the books' part of a start at 1M orders. Every node is allocated
  // from the chunks reserved above, so the two threads never share a write.
  std::vector<MarketId> books;
  for (int m = 0; m < kMaxMarkets; ++m)
    if (engine_->market(static_cast<MarketId>(m)) != nullptr)
      books.push_back(static_cast<MarketId>(m));
  std::vector<uint32_t> ends(books.size(), 0);
  std::atomic<size_t> built{0};
  std::atomic<bool> abandoned{false};  // this thread left the loop below by an exception
  auto fill_resting = [this, &books, &ends, &built, &abandoned] {
    uint32_t s = 0;
    for (size_t i = 0; i < books.size(); ++i) {
      while (built.load(std::memory_order_acquire) <= i) {
        if (abandoned.load(std::memory_order_acquire)) return;
        std::this_thread::yield();
      }
      // Each cell prefetched 16 orders ahead: an insert is otherwise a cache (and TLB) miss into
      // a ring sized for every order.
      for (uint32_t k = s; k < std::min(ends[i], s + 16); ++k)
        nodes_.prefetch(nodes_[k].o.order_index);
      for (; s < ends[i]; ++s) {
        if (s + 16 < ends[i]) nodes_.prefetch(nodes_[s + 16].o.order_index);
        nodes_.index(nodes_[s].o.order_index, s);
      }
    }
  };
  std::jthread seeder([this, restored_ns, &seed_accounts, &fill_resting] {
    const tachyon::ArenaScope arena(read_arena_);
    read_.seed_markets(*engine_, restored_ns);
    fill_resting();
    seed_accounts();
  });
  struct Abandon {  // lets the seeder go (and the constructor fail) if a book throws
    std::atomic<bool>& flag;
    ~Abandon() { flag.store(true, std::memory_order_release); }
  } abandon{abandoned};
  for (MarketId m : books) {
    const Market* mk = engine_->market(m);
    caches_[m].engine_ts_ns = restored_ns;
    // Book nonces never go backwards across a restart: each publish adds one and needs at least
    // one tx, so starting from the last seq stays above every nonce published before.
    caches_[m].nonce = engine_->last_seq();
    caches_[m].changed = true;  // every market starts with a published (maybe empty) snapshot
    changed_.push_back(m);
    // What rest_order() does per order, built a level at a time: the engine's levels already
    // hold their totals and counts, and their orders oldest first.
    BookCache& c = caches_[m];
    for (int side = 0; side < 2; ++side) {
      Side& sd = side ? c.asks : c.bids;
      sd.levels.reserve(mk->book.level_count(side));
      sd.fifo.reserve(mk->book.level_count(side));
      for (size_t i = 0; i < mk->book.level_count(side); ++i) {
        const Level& l = mk->book.level(side, i);
        sd.levels.push_back(PriceLevel{l.price, l.total, l.count});
        c.touched.emplace_back(static_cast<uint8_t>(side), l.price);
        Fifo f;
        for (uint32_t s = l.head; s != kNoSlot; s = engine_->orders()[s].next) {
          const Order& o = engine_->orders()[s];
          const uint32_t n = nodes_.allocate(o.order_index);
          nodes_[n] = OrderNodes::Node{
              BookOrder{o.order_index, o.account, o.price, o.remaining, o.initial, o.expiry_ms},
              f.tail, OrderNodes::kNone, m, o.is_ask};
          if (f.tail != OrderNodes::kNone) nodes_[f.tail].next = n;
          if (f.head == OrderNodes::kNone) f.head = n;
          f.tail = n;
          last_rested_ = std::max(last_rested_, o.order_index);
        }
        sd.fifo.push_back(f);
      }
      // kept worst first (level_pos)
      std::reverse(sd.levels.begin(), sd.levels.end());
      std::reverse(sd.fifo.begin(), sd.fifo.end());
    }
    ends[built.load(std::memory_order_relaxed)] = static_cast<uint32_t>(nodes_.size());
    built.fetch_add(1, std::memory_order_release);
  }
  publish_changed();
  seed_accounts();
  seeder.join();
  if (saved != nullptr) {  // those made since the snapshot already have theirs (the range above)
    std::erase_if(base.replayed,
                  [saved](AccountIndex a) { return saved->position(a) == SIZE_MAX; });
    read_.seed_listed(*engine_, restored_ns, base.replayed);
  }
  read_.seed_done(restored_ns);
  ctor_arena_.restore();
}

Pipeline::~Pipeline() {
  stop();
  for (auto& d : deltas_) delete d.load();
}

void Pipeline::start() {
  // A journal commit wakes the apply thread: results waiting on durability can go.
  if (journal_ != nullptr) journal_->set_on_durable([this](uint64_t) { apply_bell_.ring(); });
  {
    std::lock_guard lk(placement_mu_);
    placed_ = 0;
  }
  sequencer_ = std::thread([this] { sequencer_loop(); });
  applier_ = std::thread([this] { apply_loop(); });
  // Both placed (pinned, named, scheduled) before the caller goes on: it reports the placement,
  // and the caller's next threads must not take their cores first.
  // (Bounded: a hot thread that cannot get its core, e.g. behind a SCHED_FIFO spinner there, must
  // not hang the start; the placement line then lacks it.)
  std::unique_lock lk(placement_mu_);
  if (!placed_cv_.wait_for(lk, std::chrono::seconds(5), [this] { return placed_ == 2; }))
    placement_ += "a hot thread had not placed itself 5 s after the start; ";
}

void Pipeline::stop() {
  if (!sequencer_.joinable()) return;
  stop_.store(true, std::memory_order_release);
  seq_bell_.ring();
  sequencer_.join();
  apply_bell_.ring();
  applier_.join();
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

void Pipeline::sequencer_loop() {
  if (read_arena_ != 0) tachyon::disable_thread_cache();
  {
    const Placement pl = place_this_thread("sequencer", cfg_.sequencer_core, cfg_.fifo_priority,
                                           cfg_.wait == WaitStrategy::kSpin);
    std::lock_guard lk(placement_mu_);
    placement_ += pl.report + "; ";
    ++placed_;
    placed_cv_.notify_all();
  }
  RingSink sink(*this);
  Idler idler(cfg_.wait, seq_bell_);
  PipeMetrics* const m = cfg_.metrics;
  tachyon::Track* const track = m != nullptr ? m->seq_track : nullptr;
  const bool detail = m != nullptr && m->detail;
  const uint64_t* const allocated = detail ? tachyon::thread_allocated_counter() : nullptr;
  const int64_t interval_ns = int64_t{cfg_.block_interval_ms} * 1'000'000;
  uint32_t idle_rounds = 0;
  for (;;) {
    size_t work = 0;
    int64_t round_start = 0;  // the first tx's time: an idle round reads no clock
    for (uint32_t w = 0; w < cfg_.workers; ++w) {  // fair: each ring gets at most drain_limit
      work += ingress_[w]->drain(
          [&](const Ingress& in) {
            Tx tx = in.tx;
            tx.h.seq = engine_->last_seq() + 1;
            tx.h.block = block_;
            tx.h.time_ns = realtime_ns();
            if (round_start == 0) round_start = tx.h.time_ns;
            sink.worker = w;
            sink.cookie = in.cookie;
            sink.t_recv_ns = in.t_recv_ns;
            const uint64_t alloc0 = allocated != nullptr ? *allocated : 0;
            engine_->execute(tx, sink);
            if (!detail) {
              if (journal_ != nullptr) journal_->append(tx);
              if (committer_ != nullptr) committer_->push(tx);
            } else {
              const int64_t t1 = realtime_ns();
              if (journal_ != nullptr) journal_->append(tx);
              const int64_t t2 = realtime_ns();
              if (committer_ != nullptr) committer_->push(tx);
              if (m->journal_append_ns) m->journal_append_ns->record(uint64_t(t2 - t1));
              if (m->commit_push_ns) m->commit_push_ns->record(uint64_t(realtime_ns() - t2));
              if (allocated != nullptr && m->seq_alloc_bytes != nullptr)
                m->seq_alloc_bytes->add_single(*allocated - alloc0);
            }
            if (m != nullptr) {  // no clock read of its own: the result's stamp ends it
              const int64_t done = sink.exec_done_ns;
              if (m->queue_ns && in.t_recv_ns > 0 && tx.h.time_ns > in.t_recv_ns)
                m->queue_ns->record(uint64_t(tx.h.time_ns - in.t_recv_ns));
              if (m->execute_ns) m->execute_ns->record(uint64_t(done - tx.h.time_ns));
              if (detail && track) track->span(m->ev_execute, tx.h.time_ns, done, tx.h.seq);
            }
            if (txs_in_block_++ == 0) block_start_ns_ = tx.h.time_ns;
            if (txs_in_block_ >= cfg_.block_max_txs) {
              if (committer_ != nullptr) committer_->seal(block_, tx.h.time_ns);
              ++block_;
              txs_in_block_ = 0;
            }
          },
          cfg_.drain_limit);
    }
    if (work > 0) {  // (each tx's result woke the apply thread: RingSink)
      if (track) {   // a span per drain round (per tx and the apply ring's depth with the detail)
        const int64_t now = realtime_ns();
        if (!detail) {
          track->span(m->ev_sequence, round_start, now, work);
        } else {  // the depth reads the consumer's line: a cache miss per round
          track->counter(m->ev_apply_depth, now, apply_ring_->size_approx());
        }
      }
    }
    if (task_pending_.load(std::memory_order_acquire)) {
      std::lock_guard lk(task_mu_);
      (*task_)(*engine_);
      task_ = nullptr;
      task_pending_.store(false, std::memory_order_release);
      task_cv_.notify_all();
    }
    // The block interval needs the clock; while spinning idle, look every 32nd round only (a
    // clock read per spin was 5% of the server's CPU under perf); parked rounds are 1 ms apart.
    idle_rounds = work > 0 ? 0 : idle_rounds + 1;
    const bool look = work > 0 || idle_rounds % 32 == 0 || idle_rounds > 256;
    if (txs_in_block_ > 0 && look && realtime_ns() - block_start_ns_ >= interval_ns) {
      if (committer_ != nullptr) committer_->seal(block_, realtime_ns());
      ++block_;
      txs_in_block_ = 0;
    }
    if (work == 0 && stop_.load(std::memory_order_acquire) && !ingress_pending()) break;
    idler.idle(work, [&] { return ingress_pending() || stop_.load() || task_pending_.load(); });
  }
  if (txs_in_block_ > 0 && committer_ != nullptr) committer_->seal(block_++, realtime_ns());
  sequencer_done_.store(true, std::memory_order_release);
}

// Results leave only once durable (per the journal's setting), in seq order.
size_t Pipeline::release_results() {
  const uint64_t durable = journal_ != nullptr ? journal_->durable_seq() : UINT64_MAX;
  size_t n = 0;
  int64_t now = 0;  // read once, and only when something is released
  // Only results whose tx is published: a client never reads a view without its own tx.
  while (releasable_ > 0 && !pending_.empty() && pending_.front().r.seq <= durable) {
    if (now == 0) now = realtime_ns();
    Pending& p = pending_.front();
    p.r.t_durable_ns = now;
    if (!results_[p.worker]->try_push(p.r)) break;  // the worker is slow: keep it, retry
    result_bells_[p.worker]->ring();
    pending_.pop_front();
    --releasable_;
    ++n;
  }
  return n;
}

namespace {
int64_t thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

// What the next batch most likely touches, read into this core's cache: the levels of the books
// published last (a publish copies those past the lowest change) and the spare snapshot it copies
// them into, both ends of each side's queue (the top orders and the touch), and the read side's
// part (ReadSide::keep_warm). Not the apply ring's next slots: the sequencer writes those, and a
// copy here would only cost it an invalidation. Changes nothing; stops once updates arrive.
void Pipeline::keep_warm() {
  // Stops as soon as the next updates are in the ring: warming must not delay them.
  auto work_waiting = [this] { return apply_ring_->size_approx() > 0; };
  uint64_t x = 0;
  for (const int16_t m : recent_books_) {
    if (m < 0) continue;
    if (work_waiting()) return;
    BookCache& c = caches_[m];
    warm_lines(c.bids.levels.data(), c.bids.levels.size() * sizeof(PriceLevel));
    warm_lines(c.asks.levels.data(), c.asks.levels.size() * sizeof(PriceLevel));
    // Each side's top kWarmQueueDepth orders, a slice of whole levels per call (most orders rest
    // and most cancels and fills happen near the touch): the nodes an insert or removal there
    // links, and their cells of the order index.
    for (int side = 0; side < 2; ++side) {
      if (work_waiting()) return;
      const Side& sd = side ? c.asks : c.bids;
      warm_lines(sd.fifo.data(), sd.fifo.size() * sizeof(Fifo));
      if (c.warm_depth[side] >= kWarmQueueDepth || c.warm_level[side] >= sd.levels.size())
        c.warm_depth[side] = c.warm_level[side] = 0;
      uint32_t k = 0;
      size_t lv = c.warm_level[side];
      for (; k < kWarmQueueSlice && lv < sd.levels.size(); ++lv)
        for (uint32_t s = sd.fifo[sd.levels.size() - 1 - lv].head; s != OrderNodes::kNone;
             s = nodes_[s].next, ++k) {
          x += static_cast<uint64_t>(nodes_[s].o.remaining);
          nodes_.prefetch(nodes_[s].o.order_index);  // where a fill or cancel of it looks first
        }
      const bool more = lv < sd.levels.size();
      c.warm_depth[side] = more ? c.warm_depth[side] + k : 0;
      c.warm_level[side] = more ? static_cast<uint32_t>(lv) : 0;
    }
    books_[m]->keep_warm();
    if (const BookSnapshot* s = books_[m]->peek_spare()) {  // the levels near the touch, which
      for (const LevelArray* l : {&s->bids, &s->asks}) {    // the next publish rewrites
        const std::vector<PriceLevel>& v = l->worst_first();
        const size_t n = std::min<size_t>(v.size(), 128);
        warm_lines(v.data() + (v.size() - n), n * sizeof(PriceLevel));
      }
    }
  }
  for (OrderIndex i = last_rested_ + 1; i <= last_rested_ + 4; ++i) nodes_.prefetch(i);
  keep_value(x);
  read_.keep_warm(work_waiting);
}

void Pipeline::apply_loop() {
  const tachyon::ArenaScope arena(read_arena_);
  const WaitStrategy wait = cfg_.apply_wait.value_or(cfg_.wait);
  {
    const Placement pl = place_this_thread("apply", cfg_.apply_core, cfg_.fifo_priority,
                                           wait == WaitStrategy::kSpin);
    std::lock_guard lk(placement_mu_);
    placement_ += pl.report + "; ";
    ++placed_;
    placed_cv_.notify_all();
  }
  Idler idler(wait, apply_bell_);
  const uint32_t warm_every = wait == WaitStrategy::kSpin ? cfg_.keep_warm_rounds : 0;
  uint32_t idle_rounds = 0;
  PipeMetrics* const m = cfg_.metrics;
  tachyon::Track* const track = m != nullptr ? m->apply_track : nullptr;
  const bool detail = m != nullptr && m->detail;
  const uint64_t* const allocated = detail ? tachyon::thread_allocated_counter() : nullptr;
  // A batch is published only once its last tx is whole (its kTxResult, the last update the
  // engine emits for it, applied): the sequencer pushes a tx's updates one at a time, and a
  // publish in between would show readers a state that never was (a sweep half done, a modified
  // order gone). A batch ends at the first tx boundary past apply_batch_updates (by default
  // 4096, the most one round drains) updates.
  const size_t batch_cap = cfg_.apply_batch_updates > 0 ? cfg_.apply_batch_updates : 4096;
  struct Batch {  // the batch in progress, over as many drain rounds as its last tx takes
    size_t n = 0;
    int64_t t0 = 0, cpu0 = 0;
    int64_t drain_ns = 0;  // in the rounds that took updates (not waiting for the rest of a tx)
    uint64_t alloc0 = 0;
  } b;
  bool mid_tx = false;  // the last update applied was not a tx's last
  auto take = [&](const ApplyItem& it) {
    apply(it);
    ++b.n;
    mid_tx = it.u.type != UpdateType::kTxResult;
    return mid_tx || b.n < batch_cap;
  };
  for (;;) {
    int64_t d0 = 0;  // this round's drain starts (0: the ring looked empty)
    if (b.n == 0) {
      // The clock only when there is work: an idle round (spinning before it parks) reads none.
      // (The CPU clock, a system call of ~0.5 us here, is read outside the batch's wall time.)
      const bool work = apply_ring_->size_approx() > 0;
      b.cpu0 = cfg_.batch_samples > 0 && work ? thread_cpu_ns() : 0;
      b.t0 = work ? realtime_ns() : 0;
      d0 = b.t0;
      b.drain_ns = 0;
      b.alloc0 = allocated != nullptr ? *allocated : 0;
    } else if (apply_ring_->size_approx() > 0) {  // more of a tx: its drain time counts
      d0 = realtime_ns();
    }
    size_t n = 0;
    if (!detail) {
      n = apply_ring_->drain_until(take, 4096);
    } else {
      n = apply_ring_->drain_until(
          [&](const ApplyItem& it) {
            const int64_t a = realtime_ns();
            const bool more = take(it);
            tachyon::Histogram* h =
                m->apply_update_ns[static_cast<size_t>(it.u.type) % kUpdateTypeSlots];
            if (h != nullptr) h->record(uint64_t(realtime_ns() - a));
            return more;
          },
          4096);
    }
    if (n > 0 && b.t0 == 0) {  // the first update landed after the look
      b.t0 = realtime_ns();
      if (cfg_.batch_samples > 0) b.cpu0 = thread_cpu_ns();
    }
    const bool whole = b.n > 0 && !mid_tx;  // a batch to publish
    const bool idle_publish =
        b.n == 0 && n == 0 && (read_.history_dirty() || read_.orders_pending());
    const int64_t now = whole || idle_publish ? realtime_ns() : 0;
    if (n > 0 && d0 != 0) b.drain_ns += (whole ? now : realtime_ns()) - d0;
    if (whole) {
      // This batch's results follow the published ones still waiting for durability.
      const size_t pending_before = releasable_;
      const int64_t t0 = b.t0, cpu0 = b.cpu0, drain_ns = b.drain_ns;
      const uint64_t alloc0 = b.alloc0;
      n = b.n;
      b.n = 0;
      publish_changed();
      const int64_t t_books = cfg_.batch_samples > 0 ? realtime_ns() : 0;
      read_.publish(now, false);
      // Every result pending now belongs to a published tx; applied_seq moves with the views.
      releasable_ = pending_.size();
      applied_seq_.store(last_result_seq_, std::memory_order_release);
      apply_batches_.fetch_add(1, std::memory_order_relaxed);
      const int64_t t1 = realtime_ns();
      // Results of this batch were applied (caches updated, snapshots published) by now.
      for (size_t i = pending_before; i < pending_.size(); ++i) {
        Result& r = pending_.at(i).r;
        r.t_applied_ns = t1;
        if (m != nullptr && m->exec_to_applied_ns && t1 > r.t_exec_ns)
          m->exec_to_applied_ns->record(uint64_t(t1 - r.t_exec_ns));
      }
      if (batch_samples_.size() < cfg_.batch_samples) {
        const int64_t cpu = cpu0 != 0 ? thread_cpu_ns() - cpu0 : 0;
        auto u32 = [](int64_t v) {
          return static_cast<uint32_t>(std::clamp<int64_t>(v, 0, UINT32_MAX));
        };
        batch_samples_.push_back(BatchSample{u32(t1 - t0), static_cast<uint32_t>(n), u32(cpu),
                                             u32(drain_ns), u32(t_books - now), u32(t1 - t_books),
                                             u32(now - t0 - drain_ns)});
      }
      if (m != nullptr) {
        // The apply time: the wall time less its waits for the rest of a tx (BatchSample).
        if (m->apply_batch_ns) m->apply_batch_ns->record(uint64_t(drain_ns + (t1 - now)));
        if (m->apply_batch_updates) m->apply_batch_updates->record(n);
        if (m->publish_ns) m->publish_ns->record(uint64_t(t1 - now));
        if (track) {
          track->span(m->ev_batch, t0, now, n);
          track->span(m->ev_publish, now, t1, n);
        }
        if (m->apply_batch_dump_ns > 0 && t1 - t0 > m->apply_batch_dump_ns && track)
          track->recorder().request_dump(m->ev_batch, uint64_t(t1 - t0));
        if (allocated != nullptr && m->apply_alloc_bytes != nullptr)
          m->apply_alloc_bytes->add_single(*allocated - alloc0);
      }
    } else if (idle_publish) {
      // idle: the history now; held-back order lists when their interval is due
      read_.publish(now, true);
    }
    // Only the books that still hold retired snapshots: scanning all kMaxMarkets every round cost
    // 15% of the server's CPU at 6k tx/s (perf), cache misses on idle books.
    size_t kept = 0;
    for (MarketId m : collect_pending_) {
      if (books_[m]->collect() > 0) {
        collect_pending_[kept++] = m;
      } else {
        in_collect_pending_[m] = 0;
      }
    }
    collect_pending_.resize(kept);
    const int64_t r0 = track != nullptr ? realtime_ns() : 0;
    const size_t routed = release_results();
    if (routed > 0 && track != nullptr) track->span(m->ev_route, r0, realtime_ns(), routed);
    if ((whole || routed > 0) && notify_) notify_();
    if (n == 0 && sequencer_done_.load(std::memory_order_acquire) &&
        apply_ring_->size_approx() == 0) {
      TACHYON_ASSERT(b.n == 0, "the sequencer ends every tx with its result");
      if (pending_.empty()) {
        read_.publish(realtime_ns(), true, true);  // the last state, order lists included
        break;
      }
      if (journal_ != nullptr) journal_->wait_durable(pending_.back().r.seq);
      continue;
    }
    if (n + routed > 0) {
      idle_rounds = 0;
    } else if (warm_every > 0 && !mid_tx && ++idle_rounds % warm_every == 0) {
      keep_warm();
    }
    idler.idle(n + routed, [&] {
      if (!mid_tx && read_.history_dirty()) return true;
      return apply_ring_->size_approx() > 0 ||
             (releasable_ > 0 && !pending_.empty() &&
              (journal_ == nullptr || pending_.front().r.seq <= journal_->durable_seq()));
    });
  }
}

std::string Pipeline::placement_report() const {
  std::lock_guard lk(placement_mu_);
  return placement_;
}

Pipeline::Stats Pipeline::stats() const {
  return Stats{ring_full_.load(), apply_batches_.load(), snapshots_.load()};
}

}  // namespace tachyon::pipe
