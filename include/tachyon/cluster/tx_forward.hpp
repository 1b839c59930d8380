#pragma once
// Txs a follower takes from its clients, forwarded to the primary over NATS request/reply
// (docs/ARCHITECTURE.md "Cluster": "sendTx on a follower").
//
// The follower has already decoded each tx, verified its signature and dry-run it against its
// own state; the request carries the txs decoded (codec records, each behind a u32 length), so
// the primary neither parses JSON nor verifies a signature again. NATS is the cluster's private
// network: whoever may publish on the subject may submit txs (run NATS with authentication
// wherever others share its network). Header Tachyon-Batch: "1" for a sendTxBatch.
//
// The reply is the primary's HTTP answer: its body, and its status in header Tachyon-Status.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "tachyon/cluster/nats.hpp"

struct __natsSubscription;
struct __natsMsg;
struct __natsInbox;

namespace tachyon::cluster {

// The subject forwarded txs go to: "tachyon.<stream>.txs".
std::string tx_subject(const NatsConfig& c);

// The request body for `txs`, and back. Decoding fails on a damaged body.
std::vector<uint8_t> encode_forwarded(std::span<const Tx> txs);
Status decode_forwarded(std::span<const uint8_t> body, std::vector<Tx>& out);

// The primary's side: a subscription on the subject while this node sequences. `handle` runs on
// libnats's delivery thread and must not block; it answers through its Respond, once, from any
// thread (the subscription may be gone by then: the answer still goes).
class TxService {
 public:
  using Respond = std::function<void(int status, const std::string& body)>;
  using Handler = std::function<void(std::vector<Tx> txs, bool batch, Respond respond)>;
  static Status open(NatsLink& link, Handler h, std::unique_ptr<TxService>& out);
  ~TxService();  // unsubscribes: no handler runs after it returns
  TxService(const TxService&) = delete;
  TxService& operator=(const TxService&) = delete;

 private:
  TxService(NatsLink& link, Handler h);
  static void on_msg(struct __natsConnection*, __natsSubscription*, __natsMsg*, void*);
  NatsLink& link_;
  Handler handle_;
  std::unique_ptr<SubscriptionClosing> closing_;
  __natsSubscription* sub_ = nullptr;
};

// A follower's side: requests out, each answered once: by the primary (its status and body); or
// with status -1 and why when it was not delivered (no primary subscribed, NATS refused it), or
// 0 when no answer came within the timeout (the primary may have taken it).
// Any thread; `done` runs on libnats's delivery thread, or on the caller's for a request that
// could not go out, or on expire()'s.
class TxForwarder {
 public:
  using Done = std::function<void(int status, std::string body)>;
  static Status open(NatsLink& link, int timeout_ms, std::unique_ptr<TxForwarder>& out);
  ~TxForwarder();  // what is pending is answered with status 0
  TxForwarder(const TxForwarder&) = delete;
  TxForwarder& operator=(const TxForwarder&) = delete;

  void forward(std::span<const Tx> txs, bool batch, Done done);
  // Answers the requests past their deadline (call it a few times a second).
  void expire(int64_t now_ns);
  size_t pending() const;

 private:
  TxForwarder(NatsLink& link, int timeout_ms);
  static void on_reply(struct __natsConnection*, __natsSubscription*, __natsMsg*, void*);
  Done take(uint64_t id);
  struct Waiting {
    Done done;
    int64_t deadline_ns;
  };
  NatsLink& link_;
  const int timeout_ms_;
  std::string inbox_;  // replies arrive on inbox_ + ".<id>"
  std::unique_ptr<SubscriptionClosing> closing_;
  __natsSubscription* sub_ = nullptr;
  mutable std::mutex mu_;
  uint64_t next_id_ = 1;                            // guarded by mu_
  absl::flat_hash_map<uint64_t, Waiting> waiting_;  // guarded by mu_
};

}  // namespace tachyon::cluster
