// The primary's lease in a JetStream key-value bucket (include/tachyon/cluster/lease.hpp).
#include "tachyon/cluster/lease.hpp"

#include <nats/nats.h>

namespace tachyon::cluster {

namespace {
constexpr const char* kKey = "primary";
}

Status Lease::open(NatsLink& link, int lease_ms, std::unique_ptr<Lease>& out) {
  std::unique_ptr<Lease> l(new Lease());
  l->lease_ms_ = lease_ms;
  const std::string bucket = link.config().stream + "_LEASE";
  natsStatus s = js_KeyValue(&l->kv_, link.js(), bucket.c_str());
  if (s != NATS_OK) {
    kvConfig kc;
    kvConfig_Init(&kc);
    kc.Bucket = bucket.c_str();
    kc.History = 1;
    kc.TTL = int64_t{lease_ms} * 1'000'000;  // nanoseconds
    kc.Replicas = link.config().replicas;
    s = js_CreateKeyValue(&l->kv_, link.js(), &kc);
    if (s != NATS_OK) return nats_error("lease bucket " + bucket, s);
  }
  out = std::move(l);
  return Status();
}

Lease::~Lease() {
  if (kv_ != nullptr) kvStore_Destroy(kv_);
}

Lease::Result Lease::try_take(const std::string& me) {
  uint64_t rev = 0;
  const natsStatus s = kvStore_CreateString(&rev, kv_, kKey, me.c_str());
  if (s == NATS_OK) {
    revision_ = rev;
    holder_ = me;
    return Result::kHeld;
  }
  return look();  // (lapsed between the two calls: the next try takes it)
}

Lease::Result Lease::look() {
  kvEntry* e = nullptr;
  const natsStatus s = kvStore_Get(&e, kv_, kKey);
  if (s == NATS_NOT_FOUND) {
    holder_.clear();
    return Result::kTaken;
  }
  if (s != NATS_OK) return Result::kNoReply;
  holder_ = kvEntry_ValueString(e);
  kvEntry_Destroy(e);
  return Result::kTaken;
}

Status cluster_operator_key(NatsLink& link, const std::string& mine, bool record,
                            std::string& cluster) {
  const std::string bucket = link.config().stream + "_CONFIG";
  kvStore* kv = nullptr;
  natsStatus s = js_KeyValue(&kv, link.js(), bucket.c_str());
  if (s != NATS_OK) {
    kvConfig kc;
    kvConfig_Init(&kc);
    kc.Bucket = bucket.c_str();
    kc.History = 1;
    kc.Replicas = link.config().replicas;
    s = js_CreateKeyValue(&kv, link.js(), &kc);
    if (s != NATS_OK) return nats_error("config bucket " + bucket, s);
  }
  uint64_t rev = 0;
  if (record && kvStore_CreateString(&rev, kv, "operator", mine.c_str()) == NATS_OK) {
    cluster = mine;
    kvStore_Destroy(kv);
    return Status();
  }
  kvEntry* e = nullptr;
  s = kvStore_Get(&e, kv, "operator");
  kvStore_Destroy(kv);
  if (s == NATS_NOT_FOUND) {
    cluster.clear();
    return Status();
  }
  if (s != NATS_OK) return nats_error("the cluster's operator key", s);
  cluster = kvEntry_ValueString(e);
  kvEntry_Destroy(e);
  return Status();
}

Lease::Result Lease::renew(const std::string& me) {
  uint64_t rev = 0;
  const natsStatus s = kvStore_UpdateString(&rev, kv_, kKey, me.c_str(), revision_);
  if (s == NATS_OK) {
    revision_ = rev;
    return Result::kHeld;
  }
  if (s == NATS_TIMEOUT || s == NATS_NO_RESPONDERS || s == NATS_CONNECTION_CLOSED ||
      s == NATS_CONNECTION_DISCONNECTED)
    return Result::kNoReply;
  // The revision moved (or the key lapsed and another node created it): who holds it now.
  kvEntry* e = nullptr;
  if (kvStore_Get(&e, kv_, kKey) == NATS_OK) {
    holder_ = kvEntry_ValueString(e);
    kvEntry_Destroy(e);
  } else {
    holder_.clear();
  }
  return Result::kLost;
}

}  // namespace tachyon::cluster
