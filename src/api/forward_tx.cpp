// sendTx in a cluster (docs/ARCHITECTURE.md "Cluster"): a follower forwards the txs it checked to
// the primary and answers once it applied them itself (read-your-writes on that node); the
// primary submits what followers forwarded.
#include <simdjson.h>

#include "tachyon/api/crypto.hpp"
#include "tachyon/api/json_writer.hpp"
#include "tachyon/api/render.hpp"
#include "tachyon/api/worker.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/core/reject.hpp"

namespace tachyon::api {

namespace {

// How long a forwarded tx's answer waits for this node to apply it: past this, the primary's
// answer goes as it is (the tx executed; this node's reads may not show it yet).
constexpr int64_t kReadYourWritesWaitNs = 10'000'000'000;

struct PrimaryAnswer {
  int64_t code = 0;
  uint64_t seq = 0;
};

PrimaryAnswer read_answer(const std::string& body) {
  PrimaryAnswer a;
  simdjson::dom::parser p;
  simdjson::dom::element e;
  if (p.parse(body).get(e)) return a;
  if (e["code"].get_int64().get(a.code)) a.code = 0;
  int64_t seq = 0;
  if (!e["seq"].get_int64().get(seq) && seq > 0) a.seq = static_cast<uint64_t>(seq);
  return a;
}

}  // namespace

HttpReply WorkerLogic::forward(const std::vector<SignedTx>& txs, SendKind kind, bool& deferred,
                               ReplyFn& done) {
  std::vector<Tx> plain;
  std::vector<std::string> hashes;
  for (const SignedTx& st : txs) {
    plain.push_back(st.tx);
    hashes.push_back(tx_hash_hex(st.tx, cfg_.chain_id));
  }
  // The answer comes on a NATS thread; it is taken on this worker's.
  ApiShared* shared = &shared_;
  const uint32_t w = index_;
  auto answer = [shared, w, plain, hashes, done](int status, std::string body) mutable {
    shared->post_to_worker(w, [plain = std::move(plain), hashes = std::move(hashes), status,
                               body = std::move(body), done = std::move(done)](WorkerLogic& l) {
      l.forwarded_answer(plain, hashes, status, body, done);
    });
  };
  shared_.forward_txs(plain, kind == SendKind::kBatch, std::move(answer));
  deferred = true;
  return {};
}

// The primary's answer (or none): the nonces this node reserved are settled, and the answer goes
// once this node applied the txs' seq.
void WorkerLogic::forwarded_answer(const std::vector<Tx>& txs,
                                   const std::vector<std::string>& hashes, int status,
                                   std::string body, ReplyFn done) {
  TACHYON_OWNER_ONLY(owner_);
  const PrimaryAnswer a = status > 0 ? read_answer(body) : PrimaryAnswer{};
  // Accepted txs keep their nonces reserved until this node applied them (its view's nonce lags
  // until then); refused ones free theirs at once.
  const bool wait = status == 200 && a.seq != 0 && pipe_.applied_seq() < a.seq;
  for (const Tx& tx : txs) {
    if (!wait) shared_.inflight.settle(tx.h.account, tx.h.api_key_index, tx.h.nonce, status == 200);
    shared_.metrics.tx_result(static_cast<int>(tx.h.type),
                              status > 0 ? static_cast<uint32_t>(a.code) : 23004u);
  }
  if (status <= 0) {
    const bool unknown = status == 0;
    HttpReply r = error_reply(
        503, unknown ? 23005 : 23004,
        unknown ? "forwarded to the primary, which did not answer (" + body +
                      "): the tx may have executed; look it up by tx_hash"
                : "not the primary, and the tx could not be forwarded: " + body + "; retry");
    r.body.pop_back();  // the closing brace: the hash goes in
    r.body += ",\"tx_hash\":\"" + hashes.front() + "\"}";
    done(std::move(r));
    return;
  }
  HttpReply r;
  r.status = status;
  r.body = std::move(body);
  if (!wait) {
    done(std::move(r));
    return;
  }
  awaiting_.push_back(
      Awaiting{a.seq, realtime_ns() + kReadYourWritesWaitNs, std::move(r), std::move(done), txs});
  refresh_publish_interest();
  release_awaiting(/*expire=*/false);  // its seq may have been published before the line above
}

void WorkerLogic::release_awaiting(bool expire) {
  if (awaiting_.empty()) return;
  const uint64_t applied = pipe_.applied_seq();
  const int64_t now = expire ? realtime_ns() : 0;
  for (auto it = awaiting_.begin(); it != awaiting_.end();) {
    if (it->seq > applied && (!expire || it->deadline_ns > now)) {
      ++it;
      continue;
    }
    for (const Tx& tx : it->txs)
      shared_.inflight.settle(tx.h.account, tx.h.api_key_index, tx.h.nonce, true);
    it->done(std::move(it->reply));
    it = awaiting_.erase(it);
  }
  refresh_publish_interest();
}

void WorkerLogic::take_forwarded(std::vector<Tx> txs, bool batch, ReplyFn done) {
  TACHYON_OWNER_ONLY(owner_);
  if (shared_.not_primary) {
    if (const std::string why = shared_.not_primary(); !why.empty())
      return done(error_reply(503, 23004, "not the primary: " + why));
  }
  if (shared_.storage_refusal) {
    if (const std::string why = shared_.storage_refusal(); !why.empty())
      return done(error_reply(503, 23003, "storage unavailable: " + why));
  }
  if (txs.size() > 50 || (!batch && txs.size() != 1))
    return done(error_reply(400, 21514, "at most 50 txs per batch, one without a batch"));
  std::vector<SignedTx> st(txs.size());
  std::vector<int> types;
  for (size_t i = 0; i < txs.size(); ++i) {
    types.push_back(static_cast<int>(txs[i].h.type));
    if (is_operator_tx_type(types.back()))
      return done(error_reply(400, 21505, "operator txs are not forwarded"));
    st[i].tx = txs[i];
  }
  bool deferred = false;
  HttpReply r = submit_all(st, types, /*admin=*/false, batch ? SendKind::kBatch : SendKind::kTx,
                           realtime_ns(), deferred, done, /*forwarded=*/true);
  if (!deferred) done(std::move(r));
}

}  // namespace tachyon::api
