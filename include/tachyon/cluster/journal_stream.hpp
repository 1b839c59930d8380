#pragma once
// The journal through JetStream (docs/ARCHITECTURE.md "Cluster"): the primary's publisher, which
// makes a replicated journal durable, and the follower that reads the stream back in seq order.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tachyon/cluster/nats.hpp"
#include "tachyon/core/thread_owner.hpp"
#include "tachyon/store/journal.hpp"

struct __natsSubscription;

namespace tachyon::cluster {

// The primary's side of a replicated journal: each group commit the journal sends becomes part
// of a message on the stream, published with the stream seq it expects to follow (a writer the
// stream has moved past is refused: JetStream fences a deposed primary) and a message id of this
// writer's term and the tx range (a retry after a lost ack is de-duplicated). One message is in
// flight at a time; what arrives meanwhile is coalesced into the next, so a round trip carries
// every group commit made during the one before.
//
// A publish that times out or finds no responders (NATS away, a stream leader being elected) is
// retried, the same message, until it is stored: acknowledgements pause and resume by themselves.
// A refusal of the expected seq is final: the journal fails with "not the primary".
//
// Owner: its own thread ("replicator"); send() is the journal writer's, the rest any thread's.
class JournalPublisher final : public store::Replicator {
 public:
  struct Config {
    uint64_t expected_stream_seq = 0;       // the stream's last seq when this writer starts
    std::string term;                       // this writer's name in message ids (unique per start)
    uint64_t stream_tx_seq = 0;             // the last tx seq on the stream then
    size_t max_message_bytes = 900u << 10;  // under nats-server's default 1 MiB max_payload
    size_t max_queued_bytes = 64u << 20;    // send() blocks past this (NATS away for long)
    int retry_ms = 100;                     // between attempts while NATS does not answer
  };
  JournalPublisher(NatsLink& link, Config cfg);
  ~JournalPublisher() override;
  // Before start(), on the starting thread: publishes frames of seqs [first, last] at once (a
  // node's journal tail the stream lacks), retrying up to `attempts` times.
  Status publish_now(const std::vector<uint8_t>& frames, uint64_t first, uint64_t last,
                     int attempts);
  void start();
  // Stops the thread; what is still queued is not published (and was never acknowledged).
  void stop();

  void send(store::Journal& journal, uint64_t first, uint64_t last, const uint8_t* frames,
            size_t n) override;

  struct Stats {
    uint64_t messages = 0;  // stored (duplicates of a retry included once)
    uint64_t retries = 0;   // attempts that timed out or found no responders
    uint64_t last_stream_seq = 0;
    uint64_t replicated_seq = 0;  // the last tx seq stored
    int64_t waiting_ms = 0;       // how long the oldest unstored batch has waited (0: none)
    bool fenced = false;
    std::string last_error;
  };
  Stats stats() const;

 private:
  struct Batch {
    uint64_t first, last;
    std::vector<uint8_t> frames;
    int64_t queued_ns;
  };
  enum class Outcome : uint8_t { kStored, kRetry, kFenced };
  void run();
  // Builds the next message from the queue's front: how many batches it takes.
  size_t take(std::vector<uint8_t>& payload, uint64_t& first, uint64_t& last);
  Outcome publish(const std::vector<uint8_t>& payload, uint64_t first, uint64_t last);
  void stored(size_t batches, uint64_t last);

  NatsLink& link_;
  Config cfg_;
  ThreadOwner owner_{"replicator"};
  mutable std::mutex mu_;
  std::condition_variable work_cv_, space_cv_;
  std::deque<Batch> queue_;            // guarded by mu_
  size_t queued_bytes_ = 0;            // guarded by mu_
  bool stop_ = false;                  // guarded by mu_
  store::Journal* journal_ = nullptr;  // set by the first send(), before the batch is queued
  Stats stats_;                        // guarded by mu_
  uint64_t last_stream_seq_ = 0;       // the owner's
  std::thread thread_;
};

// A reader of the journal stream from a given tx seq on, in seq order (an ordered consumer:
// JetStream redelivers from where a gap appeared). Owner: the thread that calls next().
class StreamFollower {
 public:
  // Reads the txs after `after_tx_seq` (the ones a node already has are skipped).
  static Status open(NatsLink& link, uint64_t after_tx_seq, std::unique_ptr<StreamFollower>& out);
  ~StreamFollower();
  // Waits up to `timeout_ms` for the next message and calls `f` for each new tx in it, in seq
  // order. `got` says whether a message came. After an error, damaged() says whether it is final
  // (the stream is not what this node has); else NATS was away: open a follower again.
  Status next(int timeout_ms, const std::function<void(const Tx&)>& f, bool& got);
  uint64_t last_seq() const { return last_seq_; }
  uint64_t stream_seq() const { return stream_seq_; }
  // The last error was the stream's content (damaged, a gap, out of order), not NATS being away:
  // reading again will not help.
  bool damaged() const { return damaged_; }

 private:
  StreamFollower() = default;
  NatsLink* link_ = nullptr;
  __natsSubscription* sub_ = nullptr;
  uint64_t last_seq_ = 0;    // the last tx seq handed out
  uint64_t stream_seq_ = 0;  // the stream seq of the last message read
  bool started_ = false;     // false until a subscription exists (the stream was empty)
  bool damaged_ = false;
  ThreadOwner owner_{"follower"};
  Status subscribe(uint64_t from_stream_seq);
};

}  // namespace tachyon::cluster
