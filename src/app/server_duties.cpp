// The main loop's periodic duties and the server's parts (src/app/server_parts.hpp).
#include "server_parts.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "history_file.hpp"

namespace tachyon::app {

// The histories as published now, each trade with its taker tx's hash.
void save_history(const Config& c, Server& srv) {
  auto trade_hash = [&shared = *srv.shared](const pipe::TradeRecord& r) {
    return shared.trade_tx_hash(r);
  };
  if (Status s = save_history(c.data_dir, srv.pipeline->read_side(), trade_hash); !s.ok())
    spdlog::warn("market history not saved: {}", s.message());
}

void SnapshotScheduler::take_finished() {
  Status done;
  store::SnapshotInfo written;
  double write_s = 0;
  const bool fork_done = snapshotter_.poll(done);
  const bool replica_done = !fork_done && srv_.committer->poll_snapshot(done, written, &write_s);
  if (replica_done && done.ok()) replica_written_ = std::max(replica_written_, written.seq);
  if (!fork_done && !replica_done) return;
  if (!done.ok()) {  // trading goes on; the journal it would have covered stays
    retry_at_ = std::chrono::steady_clock::now() + kRetryAfterFailure;
    spdlog::error("{}; the journal is kept, next try in {} s", done.message(),
                  kRetryAfterFailure.count());
    return;
  }
  store::Journal& journal = *srv_.journal;
  (void)store::retire_covered(journal, c_.data_dir, covered(), c_.snapshot_keep,
                              srv_.committer->committed_through(journal.durable_seq()));
  if (replica_done)
    spdlog::info("snapshot at seq {} written from the committer's replica in {:.3f} s", written.seq,
                 write_s);
  else
    spdlog::info("snapshot at seq {} written", covered());
  if (srv_.cluster)
    srv_.cluster->snapshot_written(store::snapshot_path(c_.data_dir, covered()), covered());
  // The histories as published now (newer than the snapshot): after a crash, the journal
  // replay from the snapshot adds the rest.
  save_history(c_, srv_);
}

void SnapshotScheduler::start_when_due() {
  // Counted from the newest snapshot, or from the last request: a committer that lags by more
  // than snapshot_every_txs must not be asked for one snapshot after the other.
  const pipe::Pipeline& pipeline = *srv_.pipeline;
  const uint64_t base = std::max(covered(), replica_requested_at_);
  const uint64_t since = pipeline.applied_seq() - std::min(pipeline.applied_seq(), base);
  const bool by_count = c_.snapshot_every_txs != 0 && since >= c_.snapshot_every_txs;
  const bool by_time = c_.snapshot_interval_s != 0 && since > 0 &&
                       std::chrono::steady_clock::now() - last_snap_time_ >=
                           std::chrono::seconds(c_.snapshot_interval_s);
  const bool due = (by_count || by_time) && std::chrono::steady_clock::now() >= retry_at_;
  std::atomic<bool>& requested = srv_.snapshot_requested;
  if (c_.snapshot_from_replica && (due || requested.load()) && !srv_.committer->snapshot_busy()) {
    requested.store(false);
    request_from_replica();
  }
  if (!c_.snapshot_from_replica && (due || requested.exchange(false)) && !snapshotter_.busy())
    fork_on_sequencer();
}

void SnapshotScheduler::request_from_replica() {
  if (srv_.committer->request_snapshot(srv_.journal.get())) {
    replica_requested_at_ = srv_.pipeline->applied_seq();
    spdlog::info(
        "snapshot requested from the committer's replica at seq >= {} (sequencer "
        "not paused)",
        replica_requested_at_);
  }
  last_snap_time_ = std::chrono::steady_clock::now();
}

void SnapshotScheduler::fork_on_sequencer() {
  int64_t pause_ns = 0;
  Status st;
  srv_.pipeline->run_on_sequencer([&](const Engine& e) {
    if (!srv_.journal->wait_durable(e.last_seq()))
      st = Status::error("snapshot not taken: the journal failed");
    else
      st = snapshotter_.start(e, c_.data_dir, &pause_ns);
  });
  last_snap_time_ = std::chrono::steady_clock::now();
  if (!st.ok()) {
    retry_at_ = last_snap_time_ + kRetryAfterFailure;
    spdlog::error("{}; next try in {} s", st.message(), kRetryAfterFailure.count());
    return;
  }
  spdlog::info("snapshot at seq {} started (sequencer paused {} us)", snapshotter_.seq(),
               pause_ns / 1000);
}

namespace {
StreamConfig demo_stream_config() {
  StreamConfig sc;
  sc.start_time_ns = realtime_ns();
  return sc;
}
}  // namespace

DemoLoad::DemoLoad(const Config& c, Server& srv)
    : c_(c),
      srv_(srv),
      local_(*srv.local),
      stream_(c.demo_seed, demo_stream_config()),
      genesis_(c.demo_load_tps > 0 ? stream_.genesis() : std::vector<Tx>{}),
      next_funding_tick_(std::chrono::steady_clock::now() +
                         std::chrono::milliseconds(c.funding_sample_ms)) {}

void DemoLoad::submit_demo_txs() {
  for (uint32_t k = 0; k < c_.demo_load_tps / 100 && local_.in_flight() < 4096; ++k) {
    Tx tx = genesis_i_ < genesis_.size() ? genesis_[genesis_i_++] : stream_.next();
    if (is_operator_tx(tx.h.type) && !is_internal_tx(tx.h)) tx.h.nonce = srv_.op_nonce++;
    sent_.push_back(tx);
    local_.submit(tx);
  }
}

void DemoLoad::submit_funding_tick() {
  if (c_.funding_sample_ms == 0 || std::chrono::steady_clock::now() < next_funding_tick_) return;
  next_funding_tick_ += std::chrono::milliseconds(c_.funding_sample_ms);
  Tx tick;
  tick.h.type = TxType::kFundingTick;
  tick.h.flags = kTxFlagInternal;
  tick.funding.market = kAllMarkets;
  sent_.push_back(tick);
  local_.submit(tick);
}

void DemoLoad::take_results() {
  local_.poll([&](const pipe::Result& r) {
    const Tx tx = sent_.front();
    sent_.pop_front();
    if (is_internal_tx(tx.h)) {
      if (r.reject != Reject::kOk)
        spdlog::warn("funding tick refused: {}", reject_message(r.reject));
      return;
    }
    if (is_operator_tx(tx.h.type) && r.reject != Reject::kOk) --srv_.op_nonce;  // demo txs only
    TxResult tr;
    tr.reject = r.reject;
    tr.order_index = r.order_index;
    stream_.on_result(tx, tr);
  });
}

}  // namespace tachyon::app
