#include "tachyon/store/commit.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sodium.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "tachyon/codec/codec.hpp"
#include "tachyon/core/alloc.hpp"
#include "tachyon/core/crc32c.hpp"
#include "tachyon/core/huge_page_allocator.hpp"
#include "tachyon/store/disk.hpp"
#include "tachyon/store/journal.hpp"
#include "tachyon/store/snapshot.hpp"

namespace tachyon::store {

namespace {

constexpr size_t kCommitRecord =
    8 * 4 + 4 + 4 + 32 * 3;  // block, first, last, time, count, pad, 3 hashes

class Blake {
 public:
  explicit Blake(size_t out_len = 32) : len_(out_len) {
    crypto_generichash_init(&st_, nullptr, 0, len_);
  }
  Blake& add(const void* p, size_t n) {
    crypto_generichash_update(&st_, static_cast<const unsigned char*>(p), n);
    return *this;
  }
  template <typename T>
  Blake& pod(const T& v) {
    return add(&v, sizeof(T));
  }
  void finish(uint8_t* out) { crypto_generichash_final(&st_, out, len_); }
  Hash32 finish32() {
    Hash32 h;
    finish(h.data());
    return h;
  }

 private:
  crypto_generichash_state st_;
  size_t len_;
};

Hash32 account_leaf(const Account& a) {
  Blake b;
  b.pod(a.index).pod(a.master).pod(a.collateral).pod(a.l1_address).pod(a.cancel_all_at_ms);
  for (const Position& p : a.positions) {
    b.pod(p.market)
        .pod(p.size)
        .pod(p.entry_notional)
        .pod(p.realized_pnl)
        .pod(p.buy_open)
        .pod(p.sell_open)
        .pod(p.imf)
        .pod(p.funding_paid);
  }
  for (const ApiKey& k : a.keys) b.pod(k.index).pod(k.pubkey).pod(k.next_nonce).pod(k.version);
  return b.finish32();
}

Hash32 market_leaf(const Engine& e, MarketId id) {
  const Market* m = e.market(id);
  if (m == nullptr) return Hash32{};
  Blake b;
  b.pod(id)
      .pod(m->params)
      .pod(m->index_price)
      .pod(m->mark_price)
      .pod(m->last_trade_price)
      .pod(m->open_interest);
  b.pod(m->trade_count).pod(m->volume_base).pod(m->volume_quote);
  b.pod(m->premium_sum).pod(m->premium_samples).pod(m->next_funding_ms);
  b.pod(m->last_funding_rate).pod(m->last_funding_ms).pod(m->breaker_level);
  b.pod(m->breaker_until_ms).pod(m->window_start_ms).pod(m->window_ref);
  for (int side = 0; side < 2; ++side) {
    for (size_t i = 0; i < m->book.level_count(side); ++i) {
      const Level& l = m->book.level(side, i);
      b.pod(l.price);
      for (uint32_t s = l.head; s != kNoSlot; s = e.orders()[s].next) {
        const Order& o = e.orders()[s];
        b.pod(o.order_index)
            .pod(o.client_order_index)
            .pod(o.account)
            .pod(o.remaining)
            .pod(o.initial);
        b.pod(o.expiry_ms).pod(o.type).pod(o.tif).pod(o.reduce_only).pod(o.stp).pod(o.child);
      }
    }
  }
  for (const auto* set : {&m->triggers_below, &m->triggers_above}) {  // pending trigger orders
    for (const auto& [key, id] : *set) {
      const Order* o = e.order(id);
      b.pod(o->order_index).pod(o->account).pod(o->price).pod(o->trigger_price).pod(o->remaining);
      b.pod(o->expiry_ms).pod(o->type).pod(o->tif).pod(o->reduce_only).pod(o->is_ask);
    }
  }
  return b.finish32();
}

// Records which accounts and markets each executed tx touched.
class TouchSink final : public UpdateSink {
 public:
  explicit TouchSink(StateRoot& s) : s_(s) {}
  void on_update(const StateUpdate& u) override {
    switch (u.type) {
      case UpdateType::kTxResult: s_.touch_account(u.result.account); break;
      case UpdateType::kOrderAdded:
      case UpdateType::kOrderReduced:
      case UpdateType::kOrderRemoved:
        s_.touch_account(u.order.account);
        s_.touch_market(u.order.market);
        break;
      case UpdateType::kTrade:
        s_.touch_account(u.trade.maker);
        s_.touch_account(u.trade.taker);
        s_.touch_market(u.trade.market);
        break;
      case UpdateType::kPosition: s_.touch_account(u.position.account); break;
      case UpdateType::kBalance: s_.touch_account(u.balance.account); break;
      case UpdateType::kMarkPrice: s_.touch_market(u.mark.market); break;
      case UpdateType::kMarket: s_.touch_market(u.market.market); break;
      case UpdateType::kAccount: s_.touch_account(u.account.account); break;
      case UpdateType::kApiKey: s_.touch_account(u.api_key.account); break;
      case UpdateType::kFunding: s_.touch_market(u.funding.market); break;
      case UpdateType::kRisk:
        s_.touch_account(u.risk.account);
        if (u.risk.market != kAllMarkets) s_.touch_market(u.risk.market);
        break;
    }
  }

 private:
  StateRoot& s_;
};

void encode_commitment(const BlockCommitment& c, uint8_t* out) {
  uint8_t* p = out;
  auto put = [&](const void* v, size_t n) {
    std::memcpy(p, v, n);
    p += n;
  };
  const uint32_t pad = 0;
  put(&c.block, 8);
  put(&c.first_seq, 8);
  put(&c.last_seq, 8);
  put(&c.sealed_time_ns, 8);
  put(&c.tx_count, 4);
  put(&pad, 4);
  put(c.tx_root.data(), 32);
  put(c.state_root.data(), 32);
  put(c.commitment.data(), 32);
}

void decode_commitment(const uint8_t* p, BlockCommitment& c) {
  auto get = [&](void* v, size_t n) {
    std::memcpy(v, p, n);
    p += n;
  };
  get(&c.block, 8);
  get(&c.first_seq, 8);
  get(&c.last_seq, 8);
  get(&c.sealed_time_ns, 8);
  get(&c.tx_count, 4);
  p += 4;
  get(c.tx_root.data(), 32);
  get(c.state_root.data(), 32);
  get(c.commitment.data(), 32);
}

}  // namespace

// ---- Merkle tree ----

void MerkleTree::grow(size_t leaves) {
  size_t cap = std::max<size_t>(cap_, 64);
  while (cap < leaves) cap <<= 1;
  if (cap == cap_) return;
  std::vector<Hash32> next(2 * cap, Hash32{});
  for (size_t i = 0; i < cap_; ++i) next[cap + i] = nodes_[cap_ + i];
  nodes_.swap(next);
  cap_ = cap;
  dirty_.clear();
  for (size_t i = 0; i < cap_; ++i) dirty_.push_back(cap_ + i);  // rebuild every parent once
}

void MerkleTree::set_leaf(size_t i, const Hash32& h) {
  if (i >= cap_) grow(i + 1);
  nodes_[cap_ + i] = h;
  dirty_.push_back(cap_ + i);
}

Hash32 MerkleTree::root() {
  if (cap_ == 0) return Hash32{};
  std::vector<size_t> level = std::move(dirty_);
  dirty_.clear();
  while (!level.empty() && level.front() > 1) {
    for (size_t& i : level) i >>= 1;
    std::sort(level.begin(), level.end());
    level.erase(std::unique(level.begin(), level.end()), level.end());
    for (size_t p : level) {
      Blake b;
      b.add(nodes_[2 * p].data(), 32).add(nodes_[2 * p + 1].data(), 32);
      nodes_[p] = b.finish32();
    }
  }
  return nodes_[1];
}

// ---- state root ----

void StateRoot::touch_all(const Engine& e) {
  for (const Account& a : e.accounts()) touched_accounts_.push_back(a.index);
  for (int m = 0; m < kMaxMarkets; ++m) touched_markets_.push_back(static_cast<MarketId>(m));
}

Hash32 StateRoot::compute(const Engine& e) {
  std::sort(touched_accounts_.begin(), touched_accounts_.end());
  touched_accounts_.erase(std::unique(touched_accounts_.begin(), touched_accounts_.end()),
                          touched_accounts_.end());
  for (AccountIndex idx : touched_accounts_) {
    const Account* a = e.account(idx);
    if (a == nullptr) continue;  // a refused tx from an unknown account
    accounts_.set_leaf(static_cast<size_t>(a - e.accounts().data()), account_leaf(*a));
  }
  std::sort(touched_markets_.begin(), touched_markets_.end());
  touched_markets_.erase(std::unique(touched_markets_.begin(), touched_markets_.end()),
                         touched_markets_.end());
  for (MarketId m : touched_markets_) markets_.set_leaf(m, market_leaf(e, m));
  touched_accounts_.clear();
  touched_markets_.clear();
  const Hash32 a = accounts_.root(), m = markets_.root();
  Blake b;
  b.add(a.data(), 32).add(m.data(), 32);
  b.pod(e.next_order_index())
      .pod(e.next_sub_account())
      .pod(e.next_trade_id())
      .pod(e.operator_next_nonce());
  b.pod(e.total_deposits()).pod(e.total_withdrawals()).pod(e.last_seq());
  return b.finish32();
}

// ---- blocks.log ----

Status read_commitments(const std::string& dir, std::vector<BlockCommitment>& out) {
  out.clear();
  std::vector<uint8_t> data;
  const std::string path = dir + "/blocks.log";
  if (::access(path.c_str(), F_OK) != 0) return Status();
  if (Status s = posix_disk().read(path, data); !s.ok()) return s;
  size_t off = 0;
  while (off + 8 + kCommitRecord <= data.size()) {
    uint32_t len = 0, crc = 0;
    std::memcpy(&len, data.data() + off, 4);
    std::memcpy(&crc, data.data() + off + 4, 4);
    if (len != kCommitRecord || crc32c(data.data() + off + 8, len) != crc) break;  // torn tail
    BlockCommitment c;
    decode_commitment(data.data() + off + 8, c);
    out.push_back(c);
    off += 8 + len;
  }
  if (off != data.size()) return posix_disk().truncate_file(path, off);
  return Status();
}

// ---- committer ----

Committer::Committer(std::string dir, std::unique_ptr<Engine> replica, uint32_t chain_id)
    : dir_(std::move(dir)), replica_(std::move(replica)), chain_id_(chain_id) {}

Committer::Committer(std::string dir, ReplicaFn make_replica, uint64_t catch_up_through,
                     uint32_t chain_id, bool outside_fork)
    : dir_(std::move(dir)),
      make_replica_(std::move(make_replica)),
      catch_up_through_(catch_up_through),
      outside_fork_(outside_fork),
      chain_id_(chain_id) {}

Committer::~Committer() { stop(); }

Status Committer::start() {
  if (sodium_init() < 0) return Status::error("libsodium failed to initialise");
  std::vector<BlockCommitment> prev;
  if (Status s = read_commitments(dir_, prev); !s.ok()) return s;
  if (!prev.empty()) last_ = prev.back();
  {
    std::lock_guard lk(recent_mu_);
    const size_t from = prev.size() > kRecent ? prev.size() - kRecent : 0;
    recent_.assign(prev.begin() + static_cast<std::ptrdiff_t>(from), prev.end());
  }
  const std::string path = dir_ + "/blocks.log";
  if (Status s = posix_disk().open(path, OpenMode::kCreateAppend, fd_); !s.ok()) return s;
  {
    // The sequencer appends to queue_ under mu_: a vector that had to grow would copy the whole
    // backlog on the sequencer's thread, and a replica snapshot lets a backlog build up (~35k
    // txs during a 0.7 s write at 50k tx/s). Reserved up front (virtual memory until used).
    std::lock_guard lk(mu_);
    queue_.reserve(kQueueReserve);
  }
  staged_.reserve(kStageLimit + 1);
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "committer");
    // Nothing of the committer (its replica engine above all) is needed by a snapshot's fork()
    // child: keep it out of the page tables the fork copies.
    const tachyon::ArenaScope arena(outside_fork_ ? tachyon::dontfork_arena() : 0);
    t_big_blocks_outside_fork = outside_fork_;
    {  // started paused: the replica waits too (a server that is still starting keeps the
       // cores); a stop meanwhile still drains what was pushed, as always
      std::unique_lock lk(mu_);
      cv_.wait(lk, [this] { return !paused_ || stop_; });
    }
    const auto t0 = std::chrono::steady_clock::now();
    // The replica faults in with small pages, as the server's engine does at its start, and
    // gets huge pages afterwards (huge_page_allocator.hpp).
    defer_huge_pages();
    Status prepared = prepare();
    (void)promote_deferred_huge_pages();
    prepare_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (prepared.ok()) prepared_.store(true, std::memory_order_release);
    if (Status s = prepared; !s.ok()) {
      std::lock_guard lk(mu_);
      failure_ = s.message();
      return;
    }
    run();
  });
  return Status();
}

// On the committer's thread, before the sequencer's txs: the replica, then the journal txs it
// lags behind, committed block by block. Pushes meanwhile wait in the queue.
Status Committer::prepare() {
  if (make_replica_) {
    if (Status s = make_replica_(replica_); !s.ok()) return s;
    make_replica_ = nullptr;
  }
  state_.touch_all(*replica_);  // the first root covers everything once
  block_first_seq_ = replica_->last_seq() + 1;
  if (catch_up_through_ <= replica_->last_seq()) return Status();
  uint64_t next = replica_->last_seq() + 1;
  JournalScan scan;
  Status gap;
  const Status s = replay_journal(
      dir_, replica_->last_seq(),
      [&](const Tx& tx) {
        if (!gap.ok() || tx.h.seq > catch_up_through_) return;
        if (tx.h.seq != next) {
          gap = Status::error("committer catch-up: journal expected seq " + std::to_string(next) +
                              ", found " + std::to_string(tx.h.seq));
          return;
        }
        apply(Item{false, 0, 0, tx});  // (a tx of the next block commits the one before)
        ++next;
      },
      scan, /*repair=*/false);
  if (!s.ok()) return s;
  if (!gap.ok()) return gap;
  if (next != catch_up_through_ + 1)
    return Status::error("committer catch-up: the journal ends at seq " + std::to_string(next - 1) +
                         ", before seq " + std::to_string(catch_up_through_));
  // The journal's last block stays open: the txs after it (this node's next ones, or the
  // stream's when it follows) show where it ends.
  return Status();
}

std::string Committer::failure() const {
  std::lock_guard lk(mu_);
  return failure_;
}

std::vector<BlockCommitment> Committer::recent(uint64_t from_block, size_t limit) const {
  std::lock_guard lk(recent_mu_);
  std::vector<BlockCommitment> out;
  auto it = std::lower_bound(recent_.begin(), recent_.end(), from_block,
                             [](const BlockCommitment& c, uint64_t b) { return c.block < b; });
  for (; it != recent_.end() && out.size() < limit; ++it) out.push_back(*it);
  return out;
}

uint64_t Committer::committed_through(uint64_t max_seq) const {
  std::lock_guard lk(recent_mu_);
  for (auto it = recent_.rbegin(); it != recent_.rend(); ++it) {
    if (it->last_seq <= max_seq) return it->last_seq;
  }
  return 0;
}

uint64_t Committer::recent_height() const {
  std::lock_guard lk(recent_mu_);
  return recent_.empty() ? 0 : recent_.back().block;
}

void Committer::push(const Tx& tx) {
  staged_.push_back(Item{false, 0, 0, tx});
  staged_count_.store(staged_.size(), std::memory_order_relaxed);
  if (staged_.size() >= kStageLimit) hand_off();
}

void Committer::seal(uint64_t block, int64_t time_ns) {
  staged_.push_back(Item{true, block, time_ns, Tx{}});
  hand_off();
}

// Copied, not swapped: queue_ keeps its reserved capacity, so a lagging committer's backlog
// grows without reallocating on the pusher's thread.
void Committer::hand_off() {
  if (staged_.empty()) return;
  {
    std::lock_guard lk(mu_);
    queue_.insert(queue_.end(), staged_.begin(), staged_.end());
  }
  staged_.clear();
  staged_count_.store(0, std::memory_order_relaxed);
  cv_.notify_one();
}

void Committer::set_paused(bool paused) {
  {
    std::lock_guard lk(mu_);
    paused_ = paused;
  }
  cv_.notify_one();
}

void Committer::stop() {
  hand_off();
  {
    std::lock_guard lk(mu_);
    if (stop_ && !thread_.joinable()) return;
    stop_ = true;
    paused_ = false;
    snap_requested_ = false;  // a stopping server writes its own final snapshot
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) {
    posix_disk().close(fd_);
    fd_ = -1;
  }
}

uint64_t Committer::committed_block() const {
  std::lock_guard lk(mu_);
  return last_.block;
}

BlockCommitment Committer::last() const {
  std::lock_guard lk(mu_);
  return last_;
}

size_t Committer::backlog() const {
  std::lock_guard lk(mu_);
  return queue_.size() + staged_count_.load(std::memory_order_relaxed);
}

void Committer::run() {
  std::vector<Item> batch;
  batch.reserve(kQueueReserve);  // swapped with queue_: both keep this capacity
  for (;;) {
    {
      std::unique_lock lk(mu_);
      // block_txs_ is this thread's own: a requested snapshot is written right away when the
      // replica stands at a block boundary, else at the next seal.
      cv_.wait(lk, [&] {
        return (!queue_.empty() && !paused_) || (stop_ && !paused_) ||
               (snap_requested_ && !paused_ && block_txs_ == 0);
      });
      if (queue_.empty() && stop_) return;
      batch.swap(queue_);
    }
    for (const Item& it : batch) {
      apply(it);
      if (it.seal) maybe_snapshot();
    }
    if (batch.empty()) maybe_snapshot();
    batch.clear();
  }
}

bool Committer::request_snapshot(Journal* journal) {
  {
    std::lock_guard lk(mu_);
    if (snap_requested_ || snap_done_ || stop_) return false;
    snap_requested_ = true;
    snap_journal_ = journal;
  }
  cv_.notify_one();
  return true;
}

bool Committer::snapshot_busy() const {
  std::lock_guard lk(mu_);
  return snap_requested_ || snap_done_;
}

bool Committer::poll_snapshot(Status& result, SnapshotInfo& info, double* seconds) {
  std::lock_guard lk(mu_);
  if (!snap_done_) return false;
  snap_done_ = false;
  result = snap_result_;
  info = snap_info_;
  if (seconds != nullptr) *seconds = snap_seconds_;
  return true;
}

void Committer::maybe_snapshot() {
  Journal* journal = nullptr;
  {
    std::lock_guard lk(mu_);
    if (!snap_requested_ || block_txs_ != 0) return;
    journal = snap_journal_;
  }
  const auto t0 = std::chrono::steady_clock::now();
  SnapshotInfo info;
  Status s;
  if (journal != nullptr && !journal->wait_durable(replica_->last_seq()))
    s = Status::error("snapshot at seq " + std::to_string(replica_->last_seq()) +
                      " not written: the journal failed before it was durable");
  else
    s = write_snapshot(*replica_, dir_, &info);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::lock_guard lk(mu_);
  snap_requested_ = false;
  snap_done_ = true;
  snap_result_ = std::move(s);
  snap_info_ = info;
  snap_seconds_ = secs;
}

// A block ends at its seal, or at the first tx of another block (a follower's blocks, and the
// journal's during catch-up, have no seals); a seal of a block already ended is a no-op.
void Committer::apply(const Item& it) {
  if (it.seal) {
    if (block_txs_ > 0) commit_block(open_block_, it.time_ns);
    return;
  }
  if (block_txs_ > 0 && it.tx.h.block != open_block_) commit_block(open_block_, open_time_ns_);
  open_block_ = it.tx.h.block;
  open_time_ns_ = it.tx.h.time_ns;
  TouchSink sink(state_);
  replica_->execute(it.tx, sink);
  applied_seq_.store(replica_->last_seq(), std::memory_order_release);
  const TxHash h = tx_hash(it.tx, chain_id_);
  Blake b;
  b.add(chain_.data(), 32).add(h.data(), h.size());
  chain_ = b.finish32();
  ++block_txs_;
}

void Committer::commit_block(uint64_t block, int64_t time_ns) {
  BlockCommitment c;
  c.block = block;
  c.first_seq = block_first_seq_;
  c.last_seq = replica_->last_seq();
  c.sealed_time_ns = time_ns;
  c.tx_count = block_txs_;
  c.tx_root = chain_;
  c.state_root = state_.compute(*replica_);
  const BlockCommitment prev = last();
  Blake b;
  b.add(prev.commitment.data(), 32).pod(c.block).pod(c.first_seq).pod(c.last_seq);
  b.add(c.tx_root.data(), 32).add(c.state_root.data(), 32);
  c.commitment = b.finish32();
  uint8_t rec[8 + kCommitRecord];
  const uint32_t len = kCommitRecord;
  encode_commitment(c, rec + 8);
  const uint32_t crc = crc32c(rec + 8, len);
  std::memcpy(rec, &len, 4);
  std::memcpy(rec + 4, &crc, 4);
  // Derivable from the journal: no sync per block, and a failed write is repaired by the next
  // start (read_commitments cuts a torn tail; the replica rebuilds what is missing).
  (void)posix_disk().write(fd_, rec, sizeof(rec));
  chain_ = Hash32{};
  block_txs_ = 0;
  block_first_seq_ = c.last_seq + 1;
  {
    std::lock_guard lk(recent_mu_);
    recent_.push_back(c);
    if (recent_.size() > kRecent) recent_.pop_front();
  }
  std::lock_guard lk(mu_);
  last_ = c;
}

Status open_committer(const std::string& dir, const EngineConfig& cfg, uint32_t chain_id,
                      uint64_t recovered_seq, std::unique_ptr<Committer>& out,
                      CommitterStart& report, bool outside_fork, bool start_paused) {
  report = CommitterStart{};
  std::vector<BlockCommitment> prev;
  if (Status s = read_commitments(dir, prev); !s.ok()) return s;
  size_t keep = prev.size();
  while (keep > 0 && prev[keep - 1].last_seq > recovered_seq) --keep;
  if (keep < prev.size()) {  // records are fixed-size: cut blocks.log after the last kept one
    report.dropped_commits = prev.size() - keep;
    if (Status s = posix_disk().truncate_file(dir + "/blocks.log", keep * (8 + kCommitRecord));
        !s.ok())
      return s;
    prev.resize(keep);
  }
  uint64_t committed = prev.empty() ? 0 : prev.back().last_seq;
  // What the replica will start from, checked now so that a start that cannot work fails at once.
  auto base_of = [&dir](uint64_t seq) {
    for (const SnapshotInfo& snap : list_snapshots(dir)) {
      if (snap.seq <= seq) return snap.seq;
    }
    return uint64_t{0};
  };
  const uint64_t first = first_journal_seq(dir);
  auto rebuildable = [&](uint64_t base) {
    return recovered_seq <= base || (first != 0 && first <= base + 1);
  };
  if (prev.empty() && !rebuildable(base_of(0))) {
    // No commitment yet and no journal from the start (a data dir restored from a snapshot, or
    // written before blocks existed): the chain starts at the recovered state.
    committed = recovered_seq;
    report.chain_starts_at = recovered_seq;
  }
  report.committed_seq = committed;
  report.catch_up_txs = recovered_seq - committed;
  report.replica_from = base_of(committed);
  if (!rebuildable(report.replica_from))
    return Status::error("committer: its last commitment covers seq " + std::to_string(committed) +
                         "; rebuilding it needs the journal from seq " +
                         std::to_string(report.replica_from + 1) +
                         ", but the journal starts at seq " + std::to_string(first) +
                         " (segments it needs are gone)");
  auto make_replica = [dir, cfg, committed](std::unique_ptr<Engine>& replica) {
    RecoveryReport rep;
    // The journal is live by now (the server appends): read it, never repair it.
    if (Status s = recover(dir, cfg, replica, rep,
                           RecoverOptions{.until_seq = committed, .repair = false});
        !s.ok())
      return Status::error("committer replica: " + s.message());
    if (rep.last_seq != committed)
      return Status::error("committer replica: rebuilt seq " + std::to_string(rep.last_seq) +
                           ", the last commitment covers seq " + std::to_string(committed));
    return Status();
  };
  auto c = std::make_unique<Committer>(dir, make_replica, recovered_seq, chain_id, outside_fork);
  if (start_paused) c->set_paused(true);
  if (Status s = c->start(); !s.ok()) return s;
  out = std::move(c);
  return Status();
}

}  // namespace tachyon::store
