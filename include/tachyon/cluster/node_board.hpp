#pragma once
// Every node's status, as each one publishes it on core NATS subject "tachyon.<stream>.nodes"
// (docs/ARCHITECTURE.md "Cluster"; a follower twice a second, the primary at each lease renewal):
// its role, the last tx seq it applied and its lag behind the stream. Not on a stream: a status
// is worth only its freshness, which the time since it was heard says. /health/ready and the
// console show the board.
// Body: "<role> <applied seq> <lag txs> <lag ms> <node>" (the node: the lease's name and URL).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tachyon/cluster/nats.hpp"

namespace tachyon::cluster {

struct NodeStatus {
  std::string node, role;
  uint64_t applied_seq = 0, lag_txs = 0;
  int64_t lag_ms = 0;
  int64_t heard_ns = 0;  // when this node received it (its own: when it published it)
};

// Owner: the cluster thread publishes; libnats's delivery thread records what arrives; nodes()
// is any thread's.
class NodeBoard {
 public:
  static Status open(NatsLink& link, const std::string& stream, std::unique_ptr<NodeBoard>& out);
  ~NodeBoard();
  NodeBoard(const NodeBoard&) = delete;
  NodeBoard& operator=(const NodeBoard&) = delete;

  // This node's status to every node (itself included); lost while NATS is away.
  void publish(const NodeStatus& mine);
  // What each node said last, by node name.
  std::vector<NodeStatus> nodes() const;
  // Parses a body; false when it is not one.
  static bool parse(std::string_view body, NodeStatus& out);

 private:
  NodeBoard(NatsLink& link, std::string subject) : link_(link), subject_(std::move(subject)) {}
  static void on_msg(__natsConnection*, __natsSubscription*, __natsMsg* m, void* closure);

  NatsLink& link_;
  const std::string subject_;
  SubscriptionClosing closing_;
  __natsSubscription* sub_ = nullptr;
  mutable std::mutex mu_;
  std::map<std::string, NodeStatus> nodes_;  // guarded by mu_
};

}  // namespace tachyon::cluster
