#pragma once
// Leadership (docs/ARCHITECTURE.md "Cluster"): a lease in a JetStream key-value bucket. The bucket
// ages every entry out after the lease time (a bucket-wide TTL); the holder renews by
// compare-and-set on the entry's revision, so a renewal after another node took the lease fails.
// A node takes a lapsed lease by creating the key, which fails while it exists. The key's value
// names the holder and where it serves.
//
// Owner: one thread (the node's cluster thread); no method is thread-safe.
#include <cstdint>
#include <memory>
#include <string>

#include "tachyon/cluster/nats.hpp"
#include "tachyon/core/status.hpp"

struct __kvStore;

namespace tachyon::cluster {

class Lease {
 public:
  // Binds the bucket "<stream>_LEASE", making it (TTL = lease_ms, the stream's replicas) when it
  // does not exist.
  static Status open(NatsLink& link, int lease_ms, std::unique_ptr<Lease>& out);
  ~Lease();

  enum class Result : uint8_t {
    kHeld,     // this node holds the lease (taken or renewed)
    kTaken,    // another node holds it (holder() names it)
    kLost,     // renewing: another node took it since
    kNoReply,  // NATS did not answer: nothing is known
  };
  // Takes the lease if it lapsed; `me` is what the key will say (name and URLs).
  Result try_take(const std::string& me);
  // Renews a lease this node holds.
  Result renew(const std::string& me);
  // Only looks: who holds it (holder()), without taking a lapsed one (a replica's view).
  Result look();
  // Who held it at the last look ("" when it had lapsed).
  const std::string& holder() const { return holder_; }
  int lease_ms() const { return lease_ms_; }

 private:
  Lease() = default;
  __kvStore* kv_ = nullptr;
  uint64_t revision_ = 0;  // of this node's last write, while it holds the lease
  std::string holder_;
  int lease_ms_ = 0;
};

// The operator's public key (hex) the cluster runs with, in the bucket "<stream>_CONFIG" (key
// "operator", kept forever): with `record` (a primary) `mine` becomes the cluster's when none is
// recorded yet. `cluster` gets the one recorded ("" when none is).
Status cluster_operator_key(NatsLink& link, const std::string& mine, bool record,
                            std::string& cluster);

}  // namespace tachyon::cluster
