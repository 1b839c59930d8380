#pragma once
// The cluster's one door to NATS JetStream (docs/ARCHITECTURE.md "Cluster"): a connection with
// its JetStream context, the journal stream's layout, and the reads every role makes of it.
//
// The journal stream holds one message per group commit (or several coalesced): the journal's
// frames exactly as written to a segment (u32 length, u32 crc32c, codec record), with headers
// Tachyon-First-Seq and Tachyon-Last-Seq (the tx seqs it holds) and a Nats-Msg-Id naming the
// writer's term and the range, so a retried publish is de-duplicated by JetStream and a
// different writer's message for the same range never is.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tachyon/core/status.hpp"
#include "tachyon/engine/tx.hpp"

struct __natsConnection;
struct __jsCtx;
struct __natsMsg;
struct __natsSubscription;

namespace tachyon::cluster {

struct NatsConfig {
  std::vector<std::string> servers;  // nats://host:port, one per server of the NATS cluster
  std::string stream = "TACHYON";    // the journal stream
  std::string subject = "tachyon.journal";
  int replicas = 1;               // the stream's replicas: 1 for one nats-server, 3 in a cluster
  int request_timeout_ms = 2000;  // a publish's or an API request's wait for its answer
  std::string client_name = "tachyon";
};

// "nats://a:1,nats://b:2" (or host:port without the scheme) -> the list; empty is an error.
Status parse_servers(const std::string& csv, std::vector<std::string>& out);

// One connection with its JetStream context. It reconnects by itself, forever, to any of the
// servers; calls made while it is away fail (with a timeout or "no responders") and are retried
// by their callers. Any thread: libnats serializes what it must.
class NatsLink {
 public:
  static Status connect(const NatsConfig& cfg, std::unique_ptr<NatsLink>& out);
  ~NatsLink();
  NatsLink(const NatsLink&) = delete;
  NatsLink& operator=(const NatsLink&) = delete;

  __natsConnection* conn() const { return nc_; }
  __jsCtx* js() const { return js_; }
  const NatsConfig& config() const { return cfg_; }
  bool connected() const;

 private:
  explicit NatsLink(NatsConfig cfg) : cfg_(std::move(cfg)) {}
  NatsConfig cfg_;
  __natsConnection* nc_ = nullptr;
  __jsCtx* js_ = nullptr;
};

// An asynchronous subscription's handler may use its closure until close_subscription()
// returns: libnats calls the completion callback once the subscription is closed and its
// handler has returned.
struct SubscriptionClosing {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  static void on_complete(void* c);
};
using MsgHandler = void (*)(__natsConnection*, __natsSubscription*, __natsMsg*, void* closure);
// A subscription whose handler runs on libnats's delivery thread, with `closure`.
Status subscribe(NatsLink& link, const std::string& subject, MsgHandler h, void* closure,
                 SubscriptionClosing& closing, __natsSubscription*& out);
// Unsubscribes and waits (at most 10 s) until the handler will not run again; null: nothing.
void close_subscription(__natsSubscription* sub, SubscriptionClosing& closing);

// A message header holding a number (0 when absent or not a number).
uint64_t header_u64(__natsMsg* m, const char* key);

// "what: <libnats's text> (JetStream error N)" for a failed call.
Status nats_error(const std::string& what, int status, int js_code = 0);

// A stream of the cluster's: file storage with the link's replicas.
struct StreamSpec {
  std::string name, subject;
  int64_t max_msgs = -1;      // the oldest go beyond this (-1: no limit)
  int64_t duplicates_ns = 0;  // the de-duplication window (0: JetStream's default)
};
// Creates the stream when it does not exist; an existing one is used as it is.
Status ensure_stream(NatsLink& link, const StreamSpec& spec);
// The journal stream (cfg.stream on cfg.subject, a two-minute de-duplication window).
Status ensure_stream(NatsLink& link);

// The stream's last message: its stream seq, and the last tx seq it holds (0, 0: empty).
struct StreamTail {
  uint64_t stream_seq = 0;
  uint64_t last_tx_seq = 0;
  int64_t stored_ns = 0;  // when the last message was stored (UTC ns)
};
Status read_tail(NatsLink& link, StreamTail& out);

// The stream seq of the first message holding a tx seq above `after_tx_seq` (a binary search on
// the messages' headers); 0 when none does yet. Fails when the stream's oldest message starts
// past after_tx_seq + 1: the txs between are not in the stream (bootstrap from a snapshot).
Status find_message_after(NatsLink& link, uint64_t after_tx_seq, uint64_t& stream_seq);

// Decodes one message's frames (each CRC-checked, seqs consecutive from `first` to `last`) and
// calls `f` for each tx. Damage is an error naming the offset: a message is stored whole or not.
Status decode_batch(const uint8_t* data, size_t n, uint64_t first, uint64_t last,
                    const std::function<void(const Tx&)>& f);

// A message's tx range, from its headers.
struct BatchRange {
  uint64_t first = 0, last = 0;
};

}  // namespace tachyon::cluster
