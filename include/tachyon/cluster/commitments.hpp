#pragma once
// The primary's block commitments, so every follower checks its own against them
// (docs/ARCHITECTURE.md "Cluster"): stream "<stream>_BLOCKS", one message per block on subject
// "tachyon.<stream>.blocks.<height>", its body "<first seq> <last seq> <state root hex>". The state
// root is compared, not the chained commitment: a node that started from the cluster's snapshot has
// no commitment before it.
#include <cstdint>
#include <string>

#include "tachyon/cluster/nats.hpp"

namespace tachyon::cluster {

struct PublishedBlock {
  uint64_t first_seq = 0, last_seq = 0;
  std::string state_root;  // hex: the state after the block (not chained: a node that started from
                           // a snapshot has the same)
};

// Creates the stream when it does not exist (file storage, the journal stream's replicas, the
// newest million blocks).
Status ensure_commitment_stream(NatsLink& link);
Status publish_commitment(NatsLink& link, uint64_t block, const PublishedBlock& b);
// The newest commitment published for `block`; `found` false when there is none (yet).
Status published_commitment(NatsLink& link, uint64_t block, PublishedBlock& out, bool& found);

}  // namespace tachyon::cluster
