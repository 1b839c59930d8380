#pragma once
// The server's part in a cluster (docs/ARCHITECTURE.md "Cluster"): its NATS link, the lease, and
// by role
//   primary: holds the lease (renewed every third of the lease time) and publishes the journal
//            (the journal's Replicator), after putting on the stream any txs of this node's
//            journal the stream lacks; losing the lease or being fenced off by the stream steps
//            it down (its journal fails: nothing more is acknowledged);
//   standby: follows the stream through the pipeline's last ingress ring (sequenced txs: the
//            pipeline follows, see PipelineConfig::follower) and takes the lease once it lapses:
//            it reads the stream to its end, then publishes and sequences from the next seq;
//   replica: follows the stream and serves reads; it never takes the lease.
// Owner: the app's main thread (open, start, stop); the cluster thread owns the follow and lease
// loops. role(), status() and not_primary() are any thread's (the api workers').
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "config.hpp"
#include "tachyon/api/json_writer.hpp"
#include "tachyon/api/worker.hpp"
#include "tachyon/cluster/journal_stream.hpp"
#include "tachyon/cluster/lease.hpp"
#include "tachyon/cluster/node_board.hpp"
#include "tachyon/cluster/tx_forward.hpp"
#include "tachyon/core/histogram.hpp"
#include "tachyon/obs/metrics.hpp"
#include "tachyon/pipe/pipeline.hpp"

namespace tachyon::app {

class ClusterNode {
 public:
  // Connects, makes the stream and the lease bucket when they do not exist, and checks this
  // node's journal (recovery left it at `recovered_seq`) against the stream. A primary first
  // takes the lease (waiting for a lapsed holder's to expire) and refuses a stream past its
  // journal (another primary wrote it: start this node as a standby); a follower refuses a
  // journal past the stream (it holds txs the cluster never stored). Every node checks admin txs
  // against the cluster's operator key: a primary records its own when none is recorded; a
  // follower whose key pair its data dir made takes the cluster's (`operator_key` is set to it);
  // a node whose key differs otherwise (configured, or a primary's) refuses to start.
  static Status open(const Config& c, uint64_t recovered_seq, api::PublicKey& operator_key,
                     std::unique_ptr<ClusterNode>& out);
  // Before recovery, a follower whose data dir is empty (no snapshot, no journal) fetches the
  // cluster's newest snapshot into it (cluster/snapshot_stream.hpp): it then starts from that
  // snapshot and reads the stream after it. A cluster without a snapshot: nothing is fetched.
  static Status bootstrap(const Config& c);
  ~ClusterNode();

  bool primary() const { return is_primary_.load(std::memory_order_acquire); }
  std::string role() const;
  // The primary's publisher, running; null on a follower (until it takes over).
  store::Replicator* replicator() { return publisher_.get(); }
  // Once the api listens (`url`: where this node serves): the primary renews its lease; a
  // follower applies the stream through ring `ring` of `p` (and a standby watches the lease).
  void start(pipe::Pipeline& p, uint32_t ring, store::Journal& journal, api::ApiShared& shared,
             uint32_t chain_id, const std::string& url);
  // Why this node takes no txs, naming the primary when known ("" on the primary).
  std::string not_primary() const;
  // A follower: txs its api checked, sent on to the primary (ApiShared::forward_txs). Any thread.
  void forward(std::span<const Tx> txs, bool batch, api::ApiShared::ForwardDone done);
  // The primary, while the stream has not stored its txs for longer than the NATS timeout: why
  // new txs are refused ("" otherwise). What was taken waits and is answered once it is stored.
  std::string replication_refusal() const;
  // The primary wrote a snapshot (the state after tx `seq`): it is published for followers
  // that start empty, once the journal stream holds every tx up to `seq`. Main thread.
  void snapshot_written(const std::string& path, uint64_t seq);
  // /health/ready's cluster fields, with every node's status as the board last heard it.
  void status(api::JsonWriter& w) const;
  // The same as Prometheus gauges (tachyon_cluster_*), read at each scrape.
  void register_metrics(obs::Registry& r) const;
  // This node stopped for good: a follower whose stream is not what it holds, or a primary that
  // stepped down. Why; else "".
  std::string failure() const;
  // Before the pipeline stops: no more txs from the stream.
  void stop_following();
  // After the journal closed: the publisher stops (everything sequenced was acknowledged).
  void stop();

 private:
  explicit ClusterNode(const Config& c) : cfg_(c), configured_role_(c.role) {}
  Status open_primary(uint64_t recovered_seq);
  Status open_follower(uint64_t recovered_seq);
  Status take_lease_at_start();
  Status agree_operator_key(api::PublicKey& pk);
  Status publish_backlog(uint64_t stream_last_tx, uint64_t recovered_seq);
  void follow_loop(uint32_t ring, api::ApiShared& shared, uint32_t chain_id);
  void follow_until_stopped(uint32_t ring, api::ApiShared& shared, uint32_t chain_id);
  // One wait for the stream's next message; false once following failed for good.
  bool follow_step(uint32_t ring, api::ApiShared& shared, uint32_t chain_id, uint64_t& cookie);
  void take_results(uint32_t ring, api::ApiShared& shared);
  // False when it stopped first (stopping, or following failed): it is not the primary.
  bool take_over(uint32_t ring, api::ApiShared& shared, uint32_t chain_id, uint64_t& cookie);
  void lead_loop();
  // The primary takes the txs followers forward, on the api workers in turn.
  void serve_forwarded();
  void step_down(const std::string& why);
  void look_at_tail();
  void reopen(const Status& why);
  void snapshot_loop();
  void publish_commitments(int64_t until_ns);
  bool check_commitments();
  void watch_for_stall(int64_t now_ns);
  uint64_t lag_txs() const;  // a follower's: stream txs not applied here yet
  int64_t lag_ms() const;    // ...and how old the last one applied is, while behind
  void set_holder(const std::string& h);
  void publish_status();  // cluster thread: this node's line on the board
  void fail(const std::string& why);

  const Config& cfg_;
  const std::string configured_role_;
  std::string me_;  // what the lease says of this node: its name and URL
  std::unique_ptr<cluster::NatsLink> link_;
  std::unique_ptr<cluster::Lease> lease_;
  std::unique_ptr<cluster::NodeBoard> board_;  // every node's status
  std::unique_ptr<cluster::JournalPublisher> publisher_;
  std::unique_ptr<cluster::StreamFollower> follower_;
  std::unique_ptr<cluster::TxForwarder> forwarder_;  // a follower's; kept until stop()
  std::unique_ptr<cluster::TxService> tx_service_;   // while primary (main, then cluster thread)
  api::ApiShared* shared_ = nullptr;
  std::atomic<uint32_t> next_worker_{0};    // the worker for the next forwarded request
  std::atomic<uint64_t> forwarded_txs_{0};  // taken from followers (a primary's count)
  uint64_t published_block_ = 0;            // cluster thread: the primary's last block published
  uint64_t checked_block_ = 0;              // cluster thread: the follower's last block checked
  bool checking_ = false;                   // cluster thread: checked_block_ is set
  uint64_t progress_seq_ = 0;               // cluster thread: followed_seq_ when it last moved...
  int64_t progress_ns_ = 0;                 // ...and when
  // The newest snapshot to publish; the "snapshot" thread publishes it.
  std::thread snap_thread_;
  std::condition_variable snap_cv_;
  std::string snap_path_;  // guarded by mu_; "": none waiting
  uint64_t snap_seq_ = 0;  // guarded by mu_
  pipe::Pipeline* pipeline_ = nullptr;
  store::Journal* journal_ = nullptr;
  std::thread thread_;                                // "cluster": follows, takes over, renews
  std::deque<std::pair<Tx, std::string>> in_flight_;  // followed txs and hashes, result pending
  std::atomic<bool> stop_{false};
  std::atomic<bool> is_primary_{false};  // release: a takeover's publisher is set up before it
  // The follower's view, written by the cluster thread (relaxed: figures for a status page).
  std::atomic<uint64_t> followed_seq_{0};     // the last tx seq submitted from the stream
  std::atomic<int64_t> followed_time_ns_{0};  // its time
  std::atomic<uint64_t> stream_last_seq_{0};  // the stream's last tx seq, looked at lately
  std::atomic<bool> stale_{false};            // NATS unreachable: the state shown may be old
  // Replication lag of each followed tx: the primary executed it -> this node published it
  // (one writer, the cluster thread; read by /health/ready).
  tachyon::Histogram lag_ns_;
  mutable std::mutex mu_;
  std::string holder_;   // the lease's holder at the last look; guarded by mu_
  std::string failure_;  // guarded by mu_
};

}  // namespace tachyon::app
