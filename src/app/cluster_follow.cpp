// A follower's side of the cluster (cluster_node.hpp): reading the journal stream into the
// pipeline, the tx index of what it applied, its watch on the stream, and the check of its block
// commitments against the primary's. All on the cluster thread.
#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

#include "cluster_node.hpp"
#include "tachyon/api/crypto.hpp"
#include "tachyon/cluster/commitments.hpp"
#include "tachyon/core/clock.hpp"

namespace tachyon::app {

// The stream's end, for the lag: looked at about twice a second.
void ClusterNode::look_at_tail() {
  cluster::StreamTail tail;
  const Status s = cluster::read_tail(*link_, tail);
  stale_.store(!s.ok() || !link_->connected(), std::memory_order_relaxed);
  if (s.ok()) stream_last_seq_.store(tail.last_tx_seq, std::memory_order_relaxed);
}

// A consumer that delivers nothing while the stream is ahead of this node for 3 s (a lost
// subscription the client library did not notice) is opened again after the last tx applied.
void ClusterNode::watch_for_stall(int64_t now) {
  const uint64_t at = followed_seq_.load(std::memory_order_relaxed);
  if (at != progress_seq_ || stream_last_seq_.load(std::memory_order_relaxed) <= at) {
    progress_seq_ = at;
    progress_ns_ = now;
    return;
  }
  if (now - progress_ns_ < 3'000'000'000) return;
  progress_ns_ = now;
  reopen(
      Status::error("no message for 3 s while the stream is ahead of seq " + std::to_string(at)));
}

// The results of followed txs, in order: each goes into the api's tx index as the primary's
// did (looked up by hash on any node).
void ClusterNode::take_results(uint32_t ring, api::ApiShared& shared) {
  pipeline_->poll_results_inline(ring, [&](const pipe::Result& r) {
    const auto& [tx, hash] = in_flight_.front();
    const int64_t ms = tx.h.time_ns / 1'000'000;
    shared.remember_tx(
        hash, api::ApiShared::TxRecord{tx, r.seq, r.block, ms, ms, r.reject, r.order_index});
    // The operator's next nonce, as the engine counts it (/admin/nextNonce, and this node's
    // own once it takes over).
    if (r.reject == Reject::kOk && is_operator_tx(tx.h.type) && !is_internal_tx(tx.h))
      shared.operator_nonce_used(tx.h.nonce);
    if (r.t_applied_ns > tx.h.time_ns)
      lag_ns_.record(static_cast<uint64_t>(r.t_applied_ns - tx.h.time_ns));
    in_flight_.pop_front();  // (tx and hash refer into it)
  });
}

bool ClusterNode::follow_step(uint32_t ring, api::ApiShared& shared, uint32_t chain_id,
                              uint64_t& cookie) {
  pipe::Pipeline& p = *pipeline_;
  bool got = false;
  const Status s = follower_->next(
      50,
      [&](const Tx& tx) {
        std::string hash = api::tx_hash_hex(tx, chain_id);
        shared.record_tx_hash(ring, ++cookie, hash);
        while (!p.submit(ring, tx, cookie, realtime_ns())) {
          take_results(ring, shared);
          std::this_thread::yield();
        }
        in_flight_.emplace_back(tx, std::move(hash));
        followed_seq_.store(tx.h.seq, std::memory_order_relaxed);
        followed_time_ns_.store(tx.h.time_ns, std::memory_order_relaxed);
      },
      got);
  take_results(ring, shared);
  forwarder_->expire(realtime_ns());
  if (!s.ok() && follower_->damaged()) {
    fail("following stopped: " + s.message());
    return false;
  }
  if (!s.ok()) reopen(s);
  return true;
}

void ClusterNode::follow_loop(uint32_t ring, api::ApiShared& shared, uint32_t chain_id) {
  follow_until_stopped(ring, shared, chain_id);
  // The results still due (the pipeline stops after this thread): taken, so none waits for a
  // reader that is gone.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!in_flight_.empty() && std::chrono::steady_clock::now() < until) {
    take_results(ring, shared);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void ClusterNode::follow_until_stopped(uint32_t ring, api::ApiShared& shared, uint32_t chain_id) {
  uint64_t cookie = 0;
  int64_t tail_ns = 0, lease_ns = 0;
  const bool standby = configured_role_ == "standby";
  const int64_t lease_every = int64_t{cfg_.lease_ms} * 1'000'000 / (standby ? 4 : 1);
  while (!stop_.load(std::memory_order_acquire)) {
    if (!follow_step(ring, shared, chain_id, cookie)) return;
    const int64_t now = realtime_ns();
    if (now - tail_ns > 500'000'000) {
      look_at_tail();
      publish_status();
      if (!check_commitments()) return;
      watch_for_stall(now);
      tail_ns = now;
    }
    if (now - lease_ns < lease_every) continue;
    lease_ns = now;
    if (!standby) {
      if (lease_->look() != cluster::Lease::Result::kNoReply) set_holder(lease_->holder());
      continue;
    }
    const cluster::Lease::Result r = lease_->try_take(me_);
    if (r == cluster::Lease::Result::kHeld) {
      if (take_over(ring, shared, chain_id, cookie)) lead_loop();
      return;
    }
    if (r == cluster::Lease::Result::kTaken) set_holder(lease_->holder());
  }
}

// A follower: its newest commitments against the primary's. A block the primary has not
// published yet is looked at again next round, until it is 64 blocks old (a primary's restart
// leaves a few unpublished). Equal seqs and another state root: this node's state diverged, it
// stops (false). Other seqs: a failover cut the old primary's block short; not comparable.
bool ClusterNode::check_commitments() {
  const uint64_t height = shared_->current_height();
  if (!checking_) {  // the blocks committed from this node's start on
    checking_ = true;
    checked_block_ = height;
  }
  for (const codec::BlockCommitment& b : shared_->blocks(checked_block_ + 1, 64)) {
    cluster::PublishedBlock p;
    bool found = false;
    if (!cluster::published_commitment(*link_, b.block, p, found).ok()) return true;
    if (!found && b.block + 64 > height) return true;  // not yet
    checked_block_ = b.block;
    if (!found) continue;
    const std::string mine = codec::to_hex(b.state_root.data(), b.state_root.size());
    if (p.first_seq != b.first_seq || p.last_seq != b.last_seq) {
      spdlog::warn(
          "cluster: block {} holds seqs {}-{} here and {}-{} on the primary that "
          "published it (a failover cut it short); not compared",
          b.block, b.first_seq, b.last_seq, p.first_seq, p.last_seq);
    } else if (p.state_root != mine) {
      fail("block " + std::to_string(b.block) + " (seqs " + std::to_string(b.first_seq) + "-" +
           std::to_string(b.last_seq) + "): this node's state root " + mine +
           " differs from the primary's " + p.state_root + ": its state diverged");
      return false;
    }
  }
  return true;
}

// NATS went away under the follower: it is read again from the last tx applied, once NATS
// answers (meanwhile this node serves what it has, marked stale).
void ClusterNode::reopen(const Status& why) {
  stale_.store(true, std::memory_order_relaxed);
  spdlog::warn("cluster: reading the stream failed ({}); reading it again after seq {}",
               why.message(), followed_seq_.load());
  for (int wait_ms = 100; !stop_.load(std::memory_order_acquire);
       wait_ms = std::min(wait_ms * 2, 2000)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    forwarder_->expire(realtime_ns());  // NATS away: forwarded txs time out meanwhile too
    std::unique_ptr<cluster::StreamFollower> f;
    if (cluster::StreamFollower::open(*link_, followed_seq_.load(), f).ok()) {
      follower_ = std::move(f);
      stale_.store(false, std::memory_order_relaxed);
      spdlog::info("cluster: following the stream again from seq {}", followed_seq_.load());
      return;
    }
  }
}

}  // namespace tachyon::app
