#pragma once
// The server's part in a cluster (docs/ARCHITECTURE.md "Cluster"): its NATS link, and by role
//   primary: the journal publisher (the journal's Replicator), after it has put on the stream any
//            txs of this node's journal the stream lacks;
//   standby, replica: a follower thread that applies the stream through the pipeline's last
//            ingress ring (sequenced txs: the pipeline follows, see PipelineConfig::follower).
// Owner: the app's main thread (open, follow, stop); the follower thread owns its loop. status()
// and not_primary() are any thread's (the api workers').
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "config.hpp"
#include "tachyon/api/json_writer.hpp"
#include "tachyon/api/worker.hpp"
#include "tachyon/cluster/journal_stream.hpp"
#include "tachyon/pipe/pipeline.hpp"

namespace tachyon::app {

class ClusterNode {
 public:
  // Connects, makes the stream when it does not exist, and checks this node's journal (which
  // recovery left at `recovered_seq`) against it. A primary refuses a stream past its journal
  // (another primary wrote it: start this node as a standby); a follower refuses a journal past
  // the stream (it holds txs the cluster never stored).
  static Status open(const Config& c, uint64_t recovered_seq, std::unique_ptr<ClusterNode>& out);
  ~ClusterNode();

  bool primary() const { return role_ == "primary"; }
  const std::string& role() const { return role_; }
  // The primary's publisher, running; null on a follower.
  store::Replicator* replicator() { return publisher_.get(); }
  // A follower: starts applying the stream through ring `ring` of `p`.
  void follow(pipe::Pipeline& p, uint32_t ring, api::ApiShared& shared, uint32_t chain_id);
  // Why this node takes no txs ("" on the primary).
  std::string not_primary() const;
  // /health/ready's cluster fields.
  void status(api::JsonWriter& w) const;
  // A follower that stopped for good (the stream is not what this node holds): why; else "".
  std::string failure() const;
  // Before the pipeline stops: no more txs from the stream.
  void stop_following();
  // After the journal closed: the publisher stops (everything sequenced was acknowledged).
  void stop();

 private:
  explicit ClusterNode(const Config& c) : cfg_(c), role_(c.role) {}
  Status open_primary(uint64_t recovered_seq);
  Status open_follower(uint64_t recovered_seq);
  Status publish_backlog(uint64_t stream_last_tx, uint64_t recovered_seq);
  void follow_loop(pipe::Pipeline& p, uint32_t ring, api::ApiShared& shared, uint32_t chain_id);
  void look_at_tail();
  void reopen(const Status& why);

  const Config& cfg_;
  const std::string role_;
  std::unique_ptr<cluster::NatsLink> link_;
  std::unique_ptr<cluster::JournalPublisher> publisher_;
  std::unique_ptr<cluster::StreamFollower> follower_;
  std::thread follow_thread_;
  std::atomic<bool> stop_{false};
  // The follower's view, written by its thread (relaxed: figures for a status page).
  std::atomic<uint64_t> followed_seq_{0};        // the last tx seq submitted from the stream
  std::atomic<int64_t> followed_time_ns_{0};     // its time
  std::atomic<uint64_t> stream_last_seq_{0};     // the stream's last tx seq, looked at lately
  std::atomic<int64_t> stream_last_time_ns_{0};  // when that message was stored
  std::atomic<bool> stale_{false};               // NATS unreachable: the state shown may be old
  pipe::Pipeline* pipeline_ = nullptr;
  mutable std::mutex mu_;
  std::string failure_;  // guarded by mu_
};

}  // namespace tachyon::app
