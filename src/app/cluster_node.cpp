// The server's part in a cluster (cluster_node.hpp).
#include "cluster_node.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>
#include <filesystem>

#include "tachyon/api/crypto.hpp"
#include "tachyon/cluster/commitments.hpp"
#include "tachyon/cluster/snapshot_stream.hpp"
#include "tachyon/codec/codec.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/core/crc32c.hpp"
#include "tachyon/store/journal.hpp"

namespace tachyon::app {

namespace {

// A journal frame for tx, as Journal::append writes it.
void append_frame(const Tx& tx, std::vector<uint8_t>& out) {
  uint8_t rec[codec::kMaxRecordSize];
  const size_t len = codec::encode(tx, rec);
  const uint32_t l32 = static_cast<uint32_t>(len), crc = crc32c(rec, len);
  const size_t at = out.size();
  out.resize(at + store::kFrameHeaderSize + len);
  std::memcpy(out.data() + at, &l32, 4);
  std::memcpy(out.data() + at + 4, &crc, 4);
  std::memcpy(out.data() + at + store::kFrameHeaderSize, rec, len);
}

std::string node_term(const Config& c) {
  const std::string name =
      c.node_name.empty() ? c.listen_address + ":" + std::to_string(c.port) : c.node_name;
  return name + "@" + std::to_string(realtime_ns());
}

// Connected, with the journal and snapshot streams made when they did not exist.
Status connect(const Config& c, std::unique_ptr<cluster::NatsLink>& link) {
  cluster::NatsConfig nc;
  if (Status s = cluster::parse_servers(c.nats, nc.servers); !s.ok()) return s;
  nc.stream = c.stream;
  nc.subject = "tachyon." + c.stream + ".journal";
  nc.replicas = static_cast<int>(c.stream_replicas);
  nc.request_timeout_ms = static_cast<int>(c.nats_timeout_ms);
  nc.client_name = "tachyon " + c.role;
  if (Status s = cluster::NatsLink::connect(nc, link); !s.ok()) return s;
  // JetStream answers a moment after its servers start (a meta leader is elected): retry.
  Status made;
  for (int i = 0; i < 100; ++i) {
    made = cluster::ensure_stream(*link);
    if (made.ok()) made = cluster::ensure_snapshot_stream(*link);
    if (made.ok()) made = cluster::ensure_commitment_stream(*link);
    if (made.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return made;
}

// No snapshot and no journal segment: nothing of the state is here yet.
bool empty_data_dir(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("snapshot-", 0) == 0 || name.rfind("journal-", 0) == 0) return false;
  }
  return true;
}

}  // namespace

Status ClusterNode::bootstrap(const Config& c) {
  if (c.role != "standby" && c.role != "replica") return Status();
  if (!empty_data_dir(c.data_dir)) return Status();
  std::unique_ptr<cluster::NatsLink> link;
  if (Status s = connect(c, link); !s.ok()) return s;
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t seq = 0, bytes = 0;
  std::error_code ec;
  std::filesystem::create_directories(c.data_dir, ec);
  Status got;
  for (int attempt = 0; attempt < 5; ++attempt) {  // the primary may be purging or writing one
    if ((got = cluster::fetch_snapshot(*link, c.data_dir, seq, bytes)).ok()) break;
    spdlog::warn("cluster: fetching the cluster's snapshot: {}; again in 1 s", got.message());
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  if (!got.ok()) return Status::error("fetching the cluster's snapshot: " + got.message());
  if (seq == 0) {
    spdlog::info("cluster: no snapshot in the cluster yet; this node reads the stream from seq 1");
    return Status();
  }
  spdlog::info(
      "cluster: an empty data dir: starting from the cluster's snapshot at seq {} ({} bytes, "
      "fetched in {:.3f} s)",
      seq, bytes, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return Status();
}

Status ClusterNode::open(const Config& c, uint64_t recovered_seq, api::PublicKey& operator_key,
                         std::unique_ptr<ClusterNode>& out) {
  std::unique_ptr<ClusterNode> n(new ClusterNode(c));
  if (Status s = connect(c, n->link_); !s.ok()) return s;
  if (Status s = n->agree_operator_key(operator_key); !s.ok()) return s;
  if (Status s = cluster::Lease::open(*n->link_, static_cast<int>(c.lease_ms), n->lease_); !s.ok())
    return s;
  if (Status s = cluster::NodeBoard::open(*n->link_, c.stream, n->board_); !s.ok()) return s;
  n->me_ = c.node_name.empty() ? c.listen_address + ":" + std::to_string(c.port) : c.node_name;
  if (Status s =
          c.role == "primary" ? n->open_primary(recovered_seq) : n->open_follower(recovered_seq);
      !s.ok())
    return s;
  out = std::move(n);
  return Status();
}

ClusterNode::~ClusterNode() { stop(); }

Status ClusterNode::agree_operator_key(api::PublicKey& pk) {
  const std::string mine = api::to_hex(pk.data(), pk.size());
  std::string theirs;
  const bool primary = cfg_.role == "primary";
  if (Status s = cluster::cluster_operator_key(*link_, mine, primary, theirs); !s.ok()) return s;
  if (theirs.empty() && !primary) {
    spdlog::warn(
        "operator key: the cluster has none recorded yet (no primary started): this node checks "
        "admin txs against its own ({}); start the primary first",
        mine);
  }
  if (theirs.empty() || theirs == mine) return Status();
  if (primary || !cfg_.operator_pubkey.empty()) {
    return Status::error("this node's operator key " + mine + " is not the cluster's " + theirs +
                         ": give every node the same server.operator_pubkey (a primary signs "
                         "with the operator.key of its data dir)");
  }
  if (!api::from_hex(theirs, pk.data(), pk.size()))
    return Status::error("the cluster's operator key is not 64 hex characters: " + theirs);
  spdlog::info("operator key: the cluster's ({}), not the one this data dir made", theirs);
  return Status();
}

// A lease still held (by another primary, or by this node before a restart) lapses within the
// lease time unless renewed: wait that long, twice over, before saying who holds it.
Status ClusterNode::take_lease_at_start() {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(2 * cfg_.lease_ms + 1000);
  for (;;) {
    const cluster::Lease::Result r = lease_->try_take(me_);
    if (r == cluster::Lease::Result::kHeld) return Status();
    if (std::chrono::steady_clock::now() > until) {
      return Status::error(r == cluster::Lease::Result::kNoReply
                               ? std::string("the lease bucket does not answer")
                               : "the lease is held by " + lease_->holder() +
                                     ", which renews it: a primary runs; start this node as a "
                                     "standby");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(cfg_.lease_ms / 4));
  }
}

Status ClusterNode::open_primary(uint64_t recovered_seq) {
  if (Status s = take_lease_at_start(); !s.ok()) return s;
  is_primary_.store(true, std::memory_order_release);
  cluster::StreamTail tail;
  if (Status s = cluster::read_tail(*link_, tail); !s.ok()) return s;
  if (tail.last_tx_seq > recovered_seq) {
    return Status::error("the journal stream holds txs up to seq " +
                         std::to_string(tail.last_tx_seq) + ", past this node's journal (seq " +
                         std::to_string(recovered_seq) +
                         "): another primary wrote them; start this node as a standby");
  }
  publisher_ = std::make_unique<cluster::JournalPublisher>(
      *link_,
      cluster::JournalPublisher::Config{tail.stream_seq, node_term(cfg_), tail.last_tx_seq});
  if (tail.last_tx_seq < recovered_seq) {
    if (Status s = publish_backlog(tail.last_tx_seq, recovered_seq); !s.ok()) return s;
  }
  publisher_->start();
  set_holder(me_);
  spdlog::info("cluster: primary on stream {} (stream seq {}, tx seq {})", cfg_.stream,
               publisher_->stats().last_stream_seq, recovered_seq);
  return Status();
}

// The txs this node's journal holds past the stream's end (its last group commits before a stop
// or crash, never acknowledged under "replicated"): they are in its state, so they go on the
// stream first, in messages of at most ~900 KiB.
Status ClusterNode::publish_backlog(uint64_t stream_last_tx, uint64_t recovered_seq) {
  std::vector<uint8_t> frames;
  uint64_t first = stream_last_tx + 1, next = first;
  Status failed;
  auto flush = [&] {
    if (frames.empty() || !failed.ok()) return;
    failed = publisher_->publish_now(frames, first, next - 1, 50);
    frames.clear();
    first = next;
  };
  store::JournalScan scan;
  const Status s = store::replay_journal(
      cfg_.data_dir, stream_last_tx,
      [&](const Tx& tx) {
        if (tx.h.seq != next)
          failed = Status::error("journal seq " + std::to_string(tx.h.seq) + " where " +
                                 std::to_string(next) + " was due");
        append_frame(tx, frames);
        ++next;
        if (frames.size() >= (900u << 10)) flush();
      },
      scan, /*repair=*/false);
  flush();
  if (!s.ok()) return s;
  if (!failed.ok())
    return Status::error("publishing this node's journal tail: " + failed.message());
  if (next != recovered_seq + 1) {
    return Status::error("the journal stream ends at tx seq " + std::to_string(stream_last_tx) +
                         " and this node's journal does not reach back to it (it starts later)");
  }
  spdlog::info("cluster: published this node's journal tail, seqs {}-{}", stream_last_tx + 1,
               recovered_seq);
  return Status();
}

Status ClusterNode::open_follower(uint64_t recovered_seq) {
  cluster::StreamTail tail;
  if (Status s = cluster::read_tail(*link_, tail); !s.ok()) return s;
  if (tail.last_tx_seq < recovered_seq && tail.stream_seq != 0) {
    return Status::error("this node's journal holds txs up to seq " +
                         std::to_string(recovered_seq) + ", past the journal stream (seq " +
                         std::to_string(tail.last_tx_seq) +
                         "): they were never stored by the cluster; move its data dir aside");
  }
  if (Status s = cluster::StreamFollower::open(*link_, recovered_seq, follower_); !s.ok()) return s;
  if (Status s =
          cluster::TxForwarder::open(*link_, static_cast<int>(cfg_.nats_timeout_ms), forwarder_);
      !s.ok())
    return s;
  followed_seq_.store(recovered_seq);
  stream_last_seq_.store(tail.last_tx_seq);
  if (lease_->look() != cluster::Lease::Result::kNoReply) set_holder(lease_->holder());
  spdlog::info("cluster: {} following stream {} from seq {} (the stream is at {})",
               configured_role_, cfg_.stream, recovered_seq, tail.last_tx_seq);
  return Status();
}

std::string ClusterNode::role() const {
  return primary() ? std::string("primary") : configured_role_;
}

void ClusterNode::start(pipe::Pipeline& p, uint32_t ring, store::Journal& journal,
                        api::ApiShared& shared, uint32_t chain_id, const std::string& url) {
  pipeline_ = &p;
  journal_ = &journal;
  shared_ = &shared;
  me_ = cfg_.node_name.empty() ? url : cfg_.node_name + " " + url;
  if (primary()) serve_forwarded();
  snap_thread_ = std::thread([this] {
    (void)pthread_setname_np(pthread_self(), "snapshot-pub");
    snapshot_loop();
  });
  thread_ = std::thread([this, ring, &shared, chain_id] {
    (void)pthread_setname_np(pthread_self(), "cluster");
    if (primary()) {
      lead_loop();
    } else {
      follow_loop(ring, shared, chain_id);
    }
  });
}

// The lease lapsed and this standby holds it now: it applies the stream to its end, then its
// journal publishes and its pipeline sequences from the next seq. A primary the stream moved
// past during these steps fences this one off (its first publish is refused) and it steps down.
bool ClusterNode::take_over(uint32_t ring, api::ApiShared& shared, uint32_t chain_id,
                            uint64_t& cookie) {
  {
    std::lock_guard lk(mu_);
    spdlog::warn("cluster: taking over as primary (the lease lapsed; last holder: {})",
                 holder_.empty() ? "unknown" : holder_);
  }
  cluster::StreamTail tail;
  while (!cluster::read_tail(*link_, tail).ok()) {
    if (stop_.load()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  while (followed_seq_.load() < tail.last_tx_seq && !stop_.load()) {
    if (!follow_step(ring, shared, chain_id, cookie)) return false;
  }
  while (!in_flight_.empty() && !stop_.load()) {  // every followed tx applied and indexed
    take_results(ring, shared);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (stop_.load()) return false;
  publisher_ = std::make_unique<cluster::JournalPublisher>(
      *link_,
      cluster::JournalPublisher::Config{tail.stream_seq, node_term(cfg_), tail.last_tx_seq});
  publisher_->start();
  journal_->replicate_from_now(publisher_.get(), cfg_.durability == store::Durability::kReplicated);
  is_primary_.store(true, std::memory_order_release);
  pipeline_->lead();
  serve_forwarded();
  forwarder_->expire(INT64_MAX);  // sent to the primary this node replaces: outcome unknown
  set_holder(me_);
  spdlog::warn("cluster: primary from seq {} on (stream seq {})", tail.last_tx_seq + 1,
               tail.stream_seq);
  return true;
}

// The primary's lease, renewed every third of the lease time. Taken by another node, it steps
// down. Unrenewed because NATS does not answer: under "replicated" nothing is acknowledged
// without the stream anyway, so it waits (txs are refused once the stream stored nothing for
// the NATS timeout) and, once NATS answers, renews or takes the lease again if nobody else took
// it (its publisher's fencing refuses it if another primary appended meanwhile); under fsync or
// write it would acknowledge alone, so after a whole lease time it steps down.
void ClusterNode::lead_loop() {
  auto last_ok = std::chrono::steady_clock::now();
  const auto lease = std::chrono::milliseconds(cfg_.lease_ms);
  const bool waits = cfg_.durability == store::Durability::kReplicated;
  bool away = false;
  published_block_ = shared_->current_height();  // a restart: its last ones again
  published_block_ -= std::min<uint64_t>(published_block_, 16);
  while (!stop_.load(std::memory_order_acquire)) {
    std::this_thread::sleep_for(lease / 3);
    publish_status();  // the primary's line on the board, at each renewal
    if (forwarder_) forwarder_->expire(realtime_ns());  // a standby's, sent before it took over
    cluster::Lease::Result r = lease_->renew(me_);
    if (r == cluster::Lease::Result::kLost && lease_->holder().empty()) r = lease_->try_take(me_);
    if (r == cluster::Lease::Result::kHeld) {
      if (away) spdlog::info("cluster: NATS answers again; the lease is renewed");
      away = false;
      set_holder(me_);  // as the lease now says (with the URL the api listens at)
      last_ok = std::chrono::steady_clock::now();
    } else if (r == cluster::Lease::Result::kTaken || r == cluster::Lease::Result::kLost) {
      step_down("the lease was taken by " +
                (lease_->holder().empty() ? std::string("another node") : lease_->holder()));
      return;
    } else if (std::chrono::steady_clock::now() - last_ok > lease) {
      if (!waits) {
        step_down("the lease could not be renewed for " + std::to_string(cfg_.lease_ms) +
                  " ms (NATS does not answer); another node may hold it now");
        return;
      }
      if (!away) {
        spdlog::warn(
            "cluster: the lease could not be renewed for {} ms (NATS does not answer); "
            "nothing is acknowledged until the stream stores again",
            cfg_.lease_ms);
      }
      away = true;
    }
    if (!away) publish_commitments(realtime_ns() + int64_t{cfg_.lease_ms} * 1'000'000 / 6);
  }
}

// The primary: the blocks its committer committed since the last round, for followers to check,
// until `until_ns` (the lease's renewal comes first; the rest goes next round).
void ClusterNode::publish_commitments(int64_t until_ns) {
  for (const codec::BlockCommitment& b : shared_->blocks(published_block_ + 1, 256)) {
    if (realtime_ns() > until_ns) return;
    const cluster::PublishedBlock p{b.first_seq, b.last_seq,
                                    codec::to_hex(b.state_root.data(), b.state_root.size())};
    if (!cluster::publish_commitment(*link_, b.block, p).ok()) return;  // again next round
    published_block_ = b.block;
  }
}

void ClusterNode::snapshot_written(const std::string& path, uint64_t seq) {
  if (!primary()) return;
  {
    std::lock_guard lk(mu_);
    snap_path_ = path;
    snap_seq_ = seq;
  }
  snap_cv_.notify_one();
}

// Publishes the newest snapshot written, once the journal stream holds its txs (under fsync or
// write the journal may be ahead of the stream); a newer one written meanwhile replaces it.
void ClusterNode::snapshot_loop() {
  for (;;) {
    std::string path;
    uint64_t seq = 0;
    {
      std::unique_lock lk(mu_);
      snap_cv_.wait(lk, [&] { return stop_.load() || !snap_path_.empty(); });
      if (stop_.load()) return;
      path.swap(snap_path_);
      seq = snap_seq_;
    }
    while (!stop_.load() && primary() && publisher_->stats().replicated_seq < seq)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (stop_.load() || !primary()) continue;
    const auto t0 = std::chrono::steady_clock::now();
    if (Status s = cluster::publish_snapshot(*link_, path, seq, &stop_); !s.ok()) {
      spdlog::warn("cluster: the snapshot at seq {} is not published: {}", seq, s.message());
      continue;
    }
    spdlog::info("cluster: the snapshot at seq {} is published for followers ({:.3f} s)", seq,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
}

void ClusterNode::serve_forwarded() {
  auto handle = [this](std::vector<Tx> txs, bool batch, cluster::TxService::Respond respond) {
    forwarded_txs_.fetch_add(txs.size(), std::memory_order_relaxed);
    const uint32_t w = next_worker_.fetch_add(1, std::memory_order_relaxed);
    shared_->post_to_worker(w, [txs = std::move(txs), batch,
                                respond = std::move(respond)](api::WorkerLogic& l) mutable {
      l.take_forwarded(std::move(txs), batch,
                       [respond](api::HttpReply r) { respond(r.status, r.body); });
    });
  };
  if (Status s = cluster::TxService::open(*link_, handle, tx_service_); !s.ok())
    spdlog::error("cluster: the txs followers forward are not taken: {}", s.message());
}

void ClusterNode::forward(std::span<const Tx> txs, bool batch, api::ApiShared::ForwardDone done) {
  if (forwarder_ == nullptr) return done(-1, "this node forwards no txs");
  forwarder_->forward(txs, batch, std::move(done));
}

void ClusterNode::step_down(const std::string& why) {
  is_primary_.store(false, std::memory_order_release);
  tx_service_.reset();
  set_holder(lease_->holder());
  const std::string msg = "not the primary: " + why + "; stepping down";
  spdlog::critical("cluster: {}", msg);
  if (journal_ != nullptr) journal_->replication_failed(msg);  // nothing more is acknowledged
  fail(msg);
}

void ClusterNode::set_holder(const std::string& h) {
  std::lock_guard lk(mu_);
  holder_ = h;
}

void ClusterNode::fail(const std::string& why) {
  std::lock_guard lk(mu_);
  if (failure_.empty()) failure_ = why;
}

std::string ClusterNode::not_primary() const {
  if (primary()) return "";
  std::lock_guard lk(mu_);
  return "this node is a " + configured_role_ + " and takes no txs; send them to the primary" +
         (holder_.empty() ? std::string() : " (" + holder_ + ")");
}

std::string ClusterNode::replication_refusal() const {
  if (!primary() || publisher_ == nullptr) return "";
  const int64_t waiting = publisher_->stats().waiting_ms;
  if (waiting <= static_cast<int64_t>(cfg_.nats_timeout_ms)) return "";
  return "the journal stream has stored nothing for " + std::to_string(waiting) +
         " ms (NATS unreachable?); txs are taken again once it does";
}

void ClusterNode::status(api::JsonWriter& w) const {
  w.key("cluster").obj().kv_s("role", role()).kv_s("stream", cfg_.stream);
  {
    std::lock_guard lk(mu_);
    w.kv_s("primary", holder_);
  }
  if (primary() && publisher_ != nullptr) {
    const auto st = publisher_->stats();
    w.kv_i("stream_seq", static_cast<int64_t>(st.last_stream_seq));
    w.kv_i("replicated_seq", static_cast<int64_t>(st.replicated_seq));
    w.kv_i("replication_wait_ms", st.waiting_ms).kv_b("fenced", st.fenced);
  } else {
    w.kv_i("stream_last_seq",
           static_cast<int64_t>(stream_last_seq_.load(std::memory_order_relaxed)));
    w.kv_i("lag_txs", static_cast<int64_t>(lag_txs())).kv_i("lag_ms", lag_ms());
    w.kv_b("stale", stale_.load(std::memory_order_relaxed));
    // Since start: the primary executed a tx -> this node published it.
    const HistogramSnapshot h = lag_ns_.snapshot();
    w.key("replication_lag_us").obj().kv_i("count", static_cast<int64_t>(h.count));
    w.kv_i("p50", static_cast<int64_t>(h.quantile(0.5) / 1000));
    w.kv_i("p99", static_cast<int64_t>(h.quantile(0.99) / 1000)).end_obj();
  }
  w.key("nodes").arr();
  const int64_t now = realtime_ns();
  for (const cluster::NodeStatus& n : board_->nodes()) {
    w.obj().kv_s("node", n.node).kv_s("role", n.role);
    w.kv_i("applied_seq", static_cast<int64_t>(n.applied_seq));
    w.kv_i("lag_txs", static_cast<int64_t>(n.lag_txs)).kv_i("lag_ms", n.lag_ms);
    w.kv_i("heard_ms_ago", (now - n.heard_ns) / 1'000'000).end_obj();
  }
  w.end_arr();
  w.end_obj();
}

void ClusterNode::publish_status() {
  cluster::NodeStatus mine;
  mine.node = me_;
  mine.role = role();
  mine.applied_seq = pipeline_ != nullptr ? pipeline_->applied_seq() : 0;
  if (!primary()) {
    mine.lag_txs = lag_txs();
    mine.lag_ms = lag_ms();
  }
  board_->publish(mine);
}

uint64_t ClusterNode::lag_txs() const {
  const uint64_t applied = pipeline_ != nullptr ? pipeline_->applied_seq() : 0;
  const uint64_t end = stream_last_seq_.load(std::memory_order_relaxed);
  return end > applied ? end - applied : 0;
}

int64_t ClusterNode::lag_ms() const {
  const int64_t t = followed_time_ns_.load(std::memory_order_relaxed);
  return lag_txs() == 0 || t == 0 ? 0 : (realtime_ns() - t) / 1'000'000;
}

void ClusterNode::register_metrics(obs::Registry& r) const {
  r.gauge_fn("tachyon_cluster_primary", "1 while this node is the cluster's primary", "",
             [this] { return primary() ? 1.0 : 0.0; });
  r.gauge_fn("tachyon_cluster_replicated_seq", "Primary: the last tx seq the journal stream stored",
             "", [this] {
               return primary() && publisher_ ? double(publisher_->stats().replicated_seq) : 0.0;
             });
  r.gauge_fn("tachyon_cluster_replication_wait_seconds",
             "Primary: how long the oldest batch has waited for the journal stream", "", [this] {
               return primary() && publisher_ ? double(publisher_->stats().waiting_ms) / 1e3 : 0.0;
             });
  r.gauge_fn("tachyon_cluster_lag_txs", "Follower: txs on the stream not yet applied here", "",
             [this] { return primary() ? 0.0 : double(lag_txs()); });
  r.gauge_fn("tachyon_cluster_lag_seconds",
             "Follower: how long ago the primary executed the last tx applied here, while behind",
             "", [this] { return primary() ? 0.0 : double(lag_ms()) / 1e3; });
  r.counter_fn("tachyon_cluster_forwarded_txs",
               "Primary: txs taken from followers (checked there, forwarded over NATS)", "",
               [this] { return double(forwarded_txs_.load(std::memory_order_relaxed)); });
  r.gauge_fn("tachyon_cluster_stale", "Follower: 1 while NATS does not answer (reads may be old)",
             "", [this] { return stale_.load(std::memory_order_relaxed) ? 1.0 : 0.0; });
}

std::string ClusterNode::failure() const {
  std::lock_guard lk(mu_);
  return failure_;
}

void ClusterNode::stop_following() {
  stop_.store(true, std::memory_order_release);
  {
    std::lock_guard lk(mu_);  // the snapshot thread waits on mu_: it sees stop_ or the wake-up
  }
  snap_cv_.notify_all();
  if (snap_thread_.joinable()) snap_thread_.join();
  if (thread_.joinable()) thread_.join();
  tx_service_.reset();
  // Forwarded txs still unanswered: their outcome is unknown (the workers still run to say so).
  if (forwarder_) forwarder_->expire(INT64_MAX);
}

// The api workers are stopped: the forwarder's last answers go nowhere.
void ClusterNode::stop() {
  stop_following();
  if (publisher_) publisher_->stop();
  forwarder_.reset();
}

}  // namespace tachyon::app
