// Txs forwarded from a follower to the primary (include/tachyon/cluster/tx_forward.hpp).
#include "tachyon/cluster/tx_forward.hpp"

#include <nats/nats.h>

#include <chrono>
#include <condition_variable>
#include <cstring>

#include "tachyon/codec/codec.hpp"
#include "tachyon/core/clock.hpp"

namespace tachyon::cluster {

namespace {

std::string header(natsMsg* m, const char* key) {
  const char* v = nullptr;
  if (natsMsgHeader_Get(m, key, &v) != NATS_OK || v == nullptr) return "";
  return v;
}

}  // namespace

std::string tx_subject(const NatsConfig& c) { return "tachyon." + c.stream + ".txs"; }

std::vector<uint8_t> encode_forwarded(std::span<const Tx> txs) {
  std::vector<uint8_t> out;
  for (const Tx& tx : txs) {
    uint8_t rec[codec::kMaxRecordSize];
    const size_t n = codec::encode(tx, rec);
    out.insert(out.end(), rec, rec + n);
  }
  return out;
}

Status decode_forwarded(std::span<const uint8_t> body, std::vector<Tx>& out) {
  out.clear();
  size_t off = 0;
  while (off < body.size()) {
    Tx tx;
    const codec::Decoded d = codec::decode(body.subspan(off), tx);
    if (!d.ok()) {
      return Status::error("forwarded tx " + std::to_string(out.size()) + " at offset " +
                           std::to_string(off) + ": " + std::string(codec::error_message(d.error)));
    }
    out.push_back(tx);
    off += d.consumed;
  }
  if (out.empty()) return Status::error("a forwarded request without txs");
  return Status();
}

// ---- TxService ----

Status TxService::open(NatsLink& link, Handler h, std::unique_ptr<TxService>& out) {
  std::unique_ptr<TxService> s(new TxService(link, std::move(h)));
  if (Status st = subscribe(link, tx_subject(link.config()), &TxService::on_msg, s.get(),
                            *s->closing_, s->sub_);
      !st.ok())
    return st;
  out = std::move(s);
  return Status();
}

TxService::TxService(NatsLink& link, Handler h)
    : link_(link), handle_(std::move(h)), closing_(std::make_unique<SubscriptionClosing>()) {}

TxService::~TxService() { close_subscription(sub_, *closing_); }

// Replies go straight to the request's inbox, from whichever thread answers.
void TxService::on_msg(natsConnection* nc, natsSubscription*, natsMsg* m, void* closure) {
  auto* self = static_cast<TxService*>(closure);
  const char* reply_to = natsMsg_GetReply(m);
  const std::string reply = reply_to != nullptr ? reply_to : "";
  const bool batch = header(m, "Tachyon-Batch") == "1";
  std::vector<Tx> txs;
  const Status s = decode_forwarded(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(natsMsg_GetData(m)),
                               static_cast<size_t>(natsMsg_GetDataLength(m))),
      txs);
  natsMsg_Destroy(m);
  if (reply.empty()) return;  // nobody to answer: nothing is taken
  Respond respond = [nc, reply](int status, const std::string& body) {
    natsMsg* r = nullptr;
    if (natsMsg_Create(&r, reply.c_str(), nullptr, body.data(), static_cast<int>(body.size())) !=
        NATS_OK)
      return;
    (void)natsMsgHeader_Set(r, "Tachyon-Status", std::to_string(status).c_str());
    (void)natsConnection_PublishMsg(nc, r);  // lost with NATS: the follower times out
    natsMsg_Destroy(r);
  };
  if (!s.ok()) {
    respond(400, "{\"code\":21501,\"message\":\"" + s.message() + "\"}");
    return;
  }
  self->handle_(std::move(txs), batch, std::move(respond));
}

// ---- TxForwarder ----

Status TxForwarder::open(NatsLink& link, int timeout_ms, std::unique_ptr<TxForwarder>& out) {
  std::unique_ptr<TxForwarder> f(new TxForwarder(link, timeout_ms));
  natsInbox* inbox = nullptr;
  if (natsStatus s = natsInbox_Create(&inbox); s != NATS_OK) return nats_error("an inbox", s);
  f->inbox_ = inbox;
  natsInbox_Destroy(inbox);
  if (Status st =
          subscribe(link, f->inbox_ + ".*", &TxForwarder::on_reply, f.get(), *f->closing_, f->sub_);
      !st.ok())
    return st;
  out = std::move(f);
  return Status();
}

TxForwarder::TxForwarder(NatsLink& link, int timeout_ms)
    : link_(link), timeout_ms_(timeout_ms), closing_(std::make_unique<SubscriptionClosing>()) {}

TxForwarder::~TxForwarder() {
  close_subscription(sub_, *closing_);
  absl::flat_hash_map<uint64_t, Waiting> left;
  {
    std::lock_guard lk(mu_);
    left.swap(waiting_);
  }
  for (auto& [id, w] : left) w.done(0, "this node stopped before the primary answered");
}

void TxForwarder::forward(std::span<const Tx> txs, bool batch, Done done) {
  const std::vector<uint8_t> body = encode_forwarded(txs);
  uint64_t id = 0;
  {
    std::lock_guard lk(mu_);
    id = next_id_++;
    waiting_.emplace(id,
                     Waiting{std::move(done), realtime_ns() + int64_t{timeout_ms_} * 1'000'000});
  }
  const std::string reply = inbox_ + "." + std::to_string(id);
  natsMsg* m = nullptr;
  natsStatus s =
      natsMsg_Create(&m, tx_subject(link_.config()).c_str(), reply.c_str(),
                     reinterpret_cast<const char*>(body.data()), static_cast<int>(body.size()));
  if (s == NATS_OK && batch) s = natsMsgHeader_Set(m, "Tachyon-Batch", "1");
  if (s == NATS_OK) s = natsConnection_PublishMsg(link_.conn(), m);
  if (m != nullptr) natsMsg_Destroy(m);
  if (s == NATS_OK) return;
  if (Done d = take(id))
    d(-1, std::string("NATS does not take the request: ") + natsStatus_GetText(s));
}

TxForwarder::Done TxForwarder::take(uint64_t id) {
  std::lock_guard lk(mu_);
  auto it = waiting_.find(id);
  if (it == waiting_.end()) return nullptr;
  Done d = std::move(it->second.done);
  waiting_.erase(it);
  return d;
}

void TxForwarder::on_reply(natsConnection*, natsSubscription*, natsMsg* m, void* closure) {
  auto* self = static_cast<TxForwarder*>(closure);
  const char* subj = natsMsg_GetSubject(m);
  const char* dot = subj != nullptr ? std::strrchr(subj, '.') : nullptr;
  const uint64_t id = dot != nullptr ? std::strtoull(dot + 1, nullptr, 10) : 0;
  Done d = self->take(id);
  if (d == nullptr) {  // answered already (expired)
    natsMsg_Destroy(m);
    return;
  }
  if (natsMsg_IsNoResponders(m)) {
    natsMsg_Destroy(m);
    d(-1, "no primary takes txs now");
    return;
  }
  const int status = std::atoi(header(m, "Tachyon-Status").c_str());
  std::string body(natsMsg_GetData(m), static_cast<size_t>(natsMsg_GetDataLength(m)));
  natsMsg_Destroy(m);
  if (status == 0) {
    d(0, "the primary's answer has no status");
    return;
  }
  d(status, std::move(body));
}

void TxForwarder::expire(int64_t now_ns) {
  std::vector<Done> late;
  {
    std::lock_guard lk(mu_);
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      if (it->second.deadline_ns > now_ns) {
        ++it;
        continue;
      }
      late.push_back(std::move(it->second.done));
      waiting_.erase(it++);
    }
  }
  for (Done& d : late)
    d(0, "the primary did not answer within " + std::to_string(timeout_ms_) + " ms");
}

size_t TxForwarder::pending() const {
  std::lock_guard lk(mu_);
  return waiting_.size();
}

}  // namespace tachyon::cluster
