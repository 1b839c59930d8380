// The NATS connection and the journal stream's reads (include/tachyon/cluster/nats.hpp).
#include "tachyon/cluster/nats.hpp"

#include <nats/nats.h>

#include <chrono>
#include <cstring>
#include <span>

#include "tachyon/codec/codec.hpp"
#include "tachyon/core/crc32c.hpp"
#include "tachyon/store/journal.hpp"

namespace tachyon::cluster {

namespace {

constexpr int64_t kDuplicateWindowNs = 120'000'000'000;  // JetStream's default, made explicit

// The tx range of the message at stream seq `seq`.
Status range_at(NatsLink& link, uint64_t seq, BatchRange& out) {
  natsMsg* m = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  const natsStatus s = js_GetMsg(&m, link.js(), link.config().stream.c_str(), seq, nullptr, &jerr);
  if (s != NATS_OK) return nats_error("reading stream message " + std::to_string(seq), s, jerr);
  out = BatchRange{header_u64(m, "Tachyon-First-Seq"), header_u64(m, "Tachyon-Last-Seq")};
  natsMsg_Destroy(m);
  if (out.first == 0 || out.last < out.first)
    return Status::error("stream message " + std::to_string(seq) + " has no tx range");
  return Status();
}

Status stream_state(NatsLink& link, uint64_t& first, uint64_t& last, int64_t* last_ns = nullptr) {
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  const natsStatus s =
      js_GetStreamInfo(&si, link.js(), link.config().stream.c_str(), nullptr, &jerr);
  if (s != NATS_OK) return nats_error("stream info of " + link.config().stream, s, jerr);
  first = si->State.Msgs == 0 ? 0 : si->State.FirstSeq;
  last = si->State.Msgs == 0 ? 0 : si->State.LastSeq;
  if (last_ns != nullptr) *last_ns = si->State.LastTime;
  jsStreamInfo_Destroy(si);
  return Status();
}

}  // namespace

Status parse_servers(const std::string& csv, std::vector<std::string>& out) {
  out.clear();
  size_t p = 0;
  while (p <= csv.size()) {
    const size_t end = std::min(csv.find(',', p), csv.size());
    std::string url = csv.substr(p, end - p);
    while (!url.empty() && url.front() == ' ') url.erase(0, 1);
    while (!url.empty() && url.back() == ' ') url.pop_back();
    if (!url.empty()) out.push_back(url.find("://") == std::string::npos ? "nats://" + url : url);
    p = end + 1;
  }
  if (out.empty()) return Status::error("no NATS server given (e.g. nats://127.0.0.1:4222)");
  return Status();
}

uint64_t header_u64(natsMsg* m, const char* key) {
  const char* v = nullptr;
  if (natsMsgHeader_Get(m, key, &v) != NATS_OK || v == nullptr) return 0;
  return std::strtoull(v, nullptr, 10);
}

void SubscriptionClosing::on_complete(void* c) {
  auto* self = static_cast<SubscriptionClosing*>(c);
  std::lock_guard lk(self->mu);
  self->done = true;
  self->cv.notify_all();
}

Status subscribe(NatsLink& link, const std::string& subject, MsgHandler h, void* closure,
                 SubscriptionClosing& closing, natsSubscription*& out) {
  natsStatus s = natsConnection_Subscribe(&out, link.conn(), subject.c_str(), h, closure);
  if (s == NATS_OK)
    s = natsSubscription_SetOnCompleteCB(out, &SubscriptionClosing::on_complete, &closing);
  if (s != NATS_OK) return nats_error("subscribing to " + subject, s);
  return Status();
}

void close_subscription(natsSubscription* sub, SubscriptionClosing& closing) {
  if (sub == nullptr) return;
  if (natsSubscription_Unsubscribe(sub) == NATS_OK) {
    std::unique_lock lk(closing.mu);
    closing.cv.wait_for(lk, std::chrono::seconds(10), [&] { return closing.done; });
  }
  natsSubscription_Destroy(sub);
}

Status nats_error(const std::string& what, int status, int js_code) {
  std::string m = what + ": " + natsStatus_GetText(static_cast<natsStatus>(status));
  if (js_code != 0) m += " (JetStream error " + std::to_string(js_code) + ")";
  return Status::error(m);
}

Status NatsLink::connect(const NatsConfig& cfg, std::unique_ptr<NatsLink>& out) {
  if (cfg.servers.empty()) return Status::error("no NATS server given");
  std::unique_ptr<NatsLink> l(new NatsLink(cfg));
  natsOptions* o = nullptr;
  natsStatus s = natsOptions_Create(&o);
  std::vector<const char*> urls;
  for (const auto& u : cfg.servers) urls.push_back(u.c_str());
  if (s == NATS_OK) s = natsOptions_SetServers(o, urls.data(), static_cast<int>(urls.size()));
  if (s == NATS_OK) s = natsOptions_SetName(o, cfg.client_name.c_str());
  if (s == NATS_OK) s = natsOptions_SetTimeout(o, cfg.request_timeout_ms);
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(o, -1);  // forever
  if (s == NATS_OK) s = natsOptions_SetReconnectWait(o, 100);
  if (s == NATS_OK) s = natsConnection_Connect(&l->nc_, o);
  natsOptions_Destroy(o);
  if (s != NATS_OK) {
    return nats_error("connecting to NATS at " + cfg.servers.front() +
                          (cfg.servers.size() > 1 ? " (and the others)" : ""),
                      s);
  }
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = cfg.request_timeout_ms;
  if (s = natsConnection_JetStream(&l->js_, l->nc_, &jo); s != NATS_OK)
    return nats_error("JetStream context", s);
  out = std::move(l);
  return Status();
}

NatsLink::~NatsLink() {
  if (js_ != nullptr) jsCtx_Destroy(js_);
  if (nc_ != nullptr) {
    natsConnection_Close(nc_);
    natsConnection_Destroy(nc_);
  }
}

bool NatsLink::connected() const {
  return natsConnection_Status(nc_) == NATS_CONN_STATUS_CONNECTED;
}

Status ensure_stream(NatsLink& link, const StreamSpec& spec) {
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetStreamInfo(&si, link.js(), spec.name.c_str(), nullptr, &jerr);
  if (s == NATS_OK) {
    jsStreamInfo_Destroy(si);
    return Status();
  }
  if (jerr != JSStreamNotFoundErr) return nats_error("stream info of " + spec.name, s, jerr);
  jsStreamConfig sc;
  jsStreamConfig_Init(&sc);
  const char* subjects[] = {spec.subject.c_str()};
  sc.Name = spec.name.c_str();
  sc.Subjects = subjects;
  sc.SubjectsLen = 1;
  sc.Storage = js_FileStorage;
  sc.Replicas = link.config().replicas;
  sc.MaxMsgs = spec.max_msgs;
  if (spec.duplicates_ns != 0) sc.Duplicates = spec.duplicates_ns;
  s = js_AddStream(&si, link.js(), &sc, nullptr, &jerr);
  if (s != NATS_OK && jerr != JSStreamNameExistErr)  // another node made it meanwhile: fine
    return nats_error("creating stream " + spec.name, s, jerr);
  if (si != nullptr) jsStreamInfo_Destroy(si);
  return Status();
}

Status ensure_stream(NatsLink& link) {
  const NatsConfig& c = link.config();
  return ensure_stream(link, StreamSpec{c.stream, c.subject, -1, kDuplicateWindowNs});
}

Status read_tail(NatsLink& link, StreamTail& out) {
  uint64_t first = 0, last = 0;
  int64_t last_ns = 0;
  if (Status s = stream_state(link, first, last, &last_ns); !s.ok()) return s;
  out = StreamTail{};
  if (last == 0) return Status();
  BatchRange r;
  if (Status s = range_at(link, last, r); !s.ok()) return s;
  out = StreamTail{last, r.last, last_ns};
  return Status();
}

Status find_message_after(NatsLink& link, uint64_t after_tx_seq, uint64_t& stream_seq) {
  stream_seq = 0;
  uint64_t lo = 0, hi = 0;
  if (Status s = stream_state(link, lo, hi); !s.ok() || hi == 0) return s;
  BatchRange oldest, newest;
  if (Status s = range_at(link, lo, oldest); !s.ok()) return s;
  if (oldest.first > after_tx_seq + 1) {
    return Status::error(
        "the journal stream starts at tx seq " + std::to_string(oldest.first) +
        ", after this node's seq " + std::to_string(after_tx_seq) +
        ": the txs between are gone from it (move this node's data dir aside: a follower that "
        "starts empty begins from the cluster's newest snapshot)");
  }
  if (Status s = range_at(link, hi, newest); !s.ok() || newest.last <= after_tx_seq) return s;
  while (lo < hi) {  // the first message whose last tx seq is above after_tx_seq
    const uint64_t mid = lo + (hi - lo) / 2;
    BatchRange r;
    if (Status s = range_at(link, mid, r); !s.ok()) return s;
    if (r.last > after_tx_seq) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  stream_seq = lo;
  return Status();
}

Status decode_batch(const uint8_t* data, size_t n, uint64_t first, uint64_t last,
                    const std::function<void(const Tx&)>& f) {
  uint64_t expect = first;
  size_t off = 0;
  auto bad = [&](const std::string& why) {
    return Status::error("journal stream message for seqs " + std::to_string(first) + "-" +
                         std::to_string(last) + " damaged at offset " + std::to_string(off) + ": " +
                         why);
  };
  while (off < n) {
    if (n - off < store::kFrameHeaderSize) return bad("partial frame header");
    uint32_t len = 0, crc = 0;
    std::memcpy(&len, data + off, 4);
    std::memcpy(&crc, data + off + 4, 4);
    const uint8_t* payload = data + off + store::kFrameHeaderSize;
    if (len == 0 || len > codec::kMaxRecordSize || len > n - off - store::kFrameHeaderSize)
      return bad("impossible record length");
    if (crc32c(payload, len) != crc) return bad("checksum mismatch");
    Tx tx;
    if (const codec::Decoded d = codec::decode(std::span<const uint8_t>(payload, len), tx); !d.ok())
      return bad(std::string(codec::error_message(d.error)));
    if (tx.h.seq != expect) return bad("seq " + std::to_string(tx.h.seq) + " out of order");
    f(tx);
    ++expect;
    off += store::kFrameHeaderSize + len;
  }
  if (expect != last + 1) return bad("ends at seq " + std::to_string(expect - 1));
  return Status();
}

}  // namespace tachyon::cluster
