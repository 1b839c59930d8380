// sendTx, sendTxBatch and dryRun (REST forms and WS jsonapi/sendtx alike): decode, dry-run on
// this worker against the snapshots, submit to the sequencer, reply when the result is durable.
// Each tx's life is recorded per stage (obs) when the reply leaves.
#include <simdjson.h>

#include "tachyon/api/crypto.hpp"
#include "tachyon/api/form.hpp"
#include "tachyon/api/json_writer.hpp"
#include "tachyon/api/render.hpp"
#include "tachyon/api/tx_info.hpp"
#include "tachyon/api/worker.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/core/reject.hpp"

#include "json_scratch.hpp"

namespace tachyon::api {

namespace {
int64_t now_ns() { return realtime_ns(); }
}  // namespace

bool WorkerLogic::submit(const SignedTx& st, std::function<void(const pipe::Result&)> done,
                         int64_t t_recv_ns, std::string_view hash_hex) {
  const uint64_t cookie = next_cookie_++;
  // Named before the sequencer can see it: a trade of this tx finds its hash on any worker.
  shared_.record_tx_hash(index_, cookie,
                         hash_hex.empty() ? tx_hash_hex(st.tx, cfg_.chain_id) : hash_hex);
  if (!pipe_.submit(index_, st.tx, cookie, t_recv_ns != 0 ? t_recv_ns : now_ns())) return false;
  pending_.emplace(cookie, Pending{std::move(done)});
  return true;
}

HttpReply WorkerLogic::send_tx(RestCall& c, SendKind kind) {
  FormFields f;
  std::string err;
  if (!parse_form(c.req.content_type, c.req.body, f, err)) return error_reply(400, 21501, err);
  if (defer(f, c.req.admin, kind, c.done)) {
    c.deferred = true;
    return HttpReply{};
  }
  return send_form(f, c.req.admin, kind, c.deferred, c.done);
}

bool WorkerLogic::defer(FormFields& f, bool admin, SendKind kind, ReplyFn& done) {
  if (pool_ == nullptr || admin || kind == SendKind::kDryRun) return false;
  deferred_.push_back(Deferred{std::move(f), kind, std::move(done)});
  return true;
}

size_t WorkerLogic::run_deferred() {
  TACHYON_OWNER_ONLY(owner_);
  if (deferred_.empty()) return 0;  // (always, without a pool)
  std::vector<Deferred> batch;
  batch.swap(deferred_);
  std::vector<VerifyPool::Job> jobs;
  std::vector<size_t> ends;  // batch[k]'s jobs end at ends[k]
  if (batch.size() >= pool_->min_batch()) {
    for (const Deferred& d : batch) {
      add_verify_jobs(d, jobs);
      ends.push_back(jobs.size());
    }
    pool_->start(jobs);
  }
  // In arrival order, each as soon as its own checks are done: the ones before a helper's last
  // job are handled while it still runs.
  size_t begin = 0;
  for (size_t k = 0; k < batch.size(); ++k) {
    const size_t end = ends.empty() ? 0 : ends[k];
    for (size_t i = begin; i < end; ++i) pool_->wait(i);
    dry_.set_checked(std::span<const VerifyPool::Job>(jobs).subspan(begin, end - begin));
    begin = end;
    Deferred& d = batch[k];
    bool deferred = false;
    HttpReply r = send_form(d.fields, /*admin=*/false, d.kind, deferred, d.done);
    if (!deferred) d.done(std::move(r));
  }
  dry_.set_checked({});
  pool_->finish();
  return batch.size();
}

// Only what the dry-run will verify: a user tx that decodes, is signed, and names a key its
// account has. Anything else gets its refusal from the dry-run as usual.
void WorkerLogic::add_verify_jobs(const Deferred& d, std::vector<VerifyPool::Job>& jobs) {
  std::vector<int> types;
  std::vector<std::string> infos;
  if (decode_txs(d.fields, d.kind, types, infos)) return;
  for (size_t i = 0; i < types.size(); ++i) {
    SignedTx st;
    std::string err;
    if (!is_user_tx_type(types[i]) || parse_tx_info(types[i], infos[i], st, err) != Reject::kOk ||
        !st.has_sig)
      continue;
    std::optional<PublicKey> pk;
    dry_.account_reader().read([&] {
      const pipe::AccountView* a = dry_.accounts().find(st.tx.h.account);
      const pipe::KeyView* k = a == nullptr ? nullptr : a->key(st.tx.h.api_key_index);
      if (k != nullptr) pk = k->pubkey;
    });
    if (pk)
      jobs.push_back({codec::canonical_tx_bytes(st.tx, cfg_.chain_id), st.sig, *pk, types[i]});
  }
}

// A tx's time in each stage from its receipt to its reply; a dump when it took too long.
void WorkerLogic::record_stages(const pipe::Result& r, int64_t t_dry, int64_t t_sent) {
  ApiMetrics& m = shared_.metrics;
  m.stage(index_, Stage::kRecvToDryRun, t_dry - r.t_recv_ns);
  m.stage(index_, Stage::kDryRunToSeq, r.t_seq_ns - t_dry);
  m.stage(index_, Stage::kSeqToExec, r.t_exec_ns - r.t_seq_ns);
  m.stage(index_, Stage::kExecToApplied, r.t_applied_ns - r.t_exec_ns);
  m.stage(index_, Stage::kAppliedToDurable, r.t_durable_ns - r.t_applied_ns);
  m.stage(index_, Stage::kDurableToSent, t_sent - r.t_durable_ns);
  m.stage(index_, Stage::kRecvToSent, t_sent - r.t_recv_ns);
  tachyon::Track* const track = m.tracks[index_];
  if (track != nullptr && m.slow_tx_dump_ns > 0 && t_sent - r.t_recv_ns > m.slow_tx_dump_ns)
    track->recorder().request_dump(m.ev_slow_tx, static_cast<uint64_t>(t_sent - r.t_recv_ns));
}

// sendTx / sendTxBatch / dryRun once the fields are decoded: every tx checked (decoded, signed
// by the operator on the admin listener, within the account's rate, dry-run clean), then all
// submitted, the reply deferred until each has its durable result.
HttpReply WorkerLogic::send_form(const FormFields& f, bool admin, SendKind kind, bool& deferred,
                                 ReplyFn& done) {
  const int64_t t_recv = now_ns();
  std::vector<int> types;
  std::vector<std::string> infos;
  if (auto bad = decode_txs(f, kind, types, infos)) return std::move(*bad);
  if (kind != SendKind::kDryRun && shared_.storage_refusal) {
    if (const std::string why = shared_.storage_refusal(); !why.empty())
      return error_reply(503, 23003, "storage unavailable: " + why);
  }
  std::vector<SignedTx> txs(types.size());
  if (auto bad = admit(admin, kind, types, infos, txs)) return std::move(*bad);
  // A cluster follower checks a tx as the primary would (above), then forwards it; operator
  // txs go to the primary's own admin listener.
  if (kind != SendKind::kDryRun && shared_.not_primary) {
    if (const std::string why = shared_.not_primary(); !why.empty()) {
      if (!admin && shared_.forward_txs) return forward(txs, kind, deferred, done);
      for (const SignedTx& st : txs)
        if (!admin)
          shared_.inflight.settle(st.tx.h.account, st.tx.h.api_key_index, st.tx.h.nonce, false);
      return error_reply(503, 23004, "not the primary: " + why);
    }
  }
  if (kind == SendKind::kDryRun) {
    HttpReply r;
    JsonWriter w(r.body);
    w.obj().kv_i("code", 200).kv_s("message", "dry run passed");
    w.kv_s("tx_hash", tx_hash_hex(txs[0].tx, cfg_.chain_id)).end_obj();
    return r;
  }
  return submit_all(txs, types, admin, kind, t_recv, deferred, done);
}

// tx_type + tx_info, or (a batch) tx_types + tx_infos as JSON arrays.
std::optional<HttpReply> WorkerLogic::decode_txs(const FormFields& f, SendKind kind,
                                                 std::vector<int>& types,
                                                 std::vector<std::string>& infos) {
  if (kind != SendKind::kBatch) {
    const auto t = field(f, "tx_type");
    const auto info = field(f, "tx_info");
    if (!t || !info) return error_reply(400, 21501, "tx_type and tx_info are required");
    try {
      types.push_back(std::stoi(*t));
    } catch (...) {
      return error_reply(400, 21501, "tx_type must be an integer");
    }
    infos.push_back(*info);
    return std::nullopt;
  }
  const auto ts = field(f, "tx_types");
  const auto is = field(f, "tx_infos");
  if (!ts || !is) return error_reply(400, 21501, "tx_types and tx_infos are required");
  static thread_local JsonScratch jt, ji;  // both documents are read at once
  simdjson::ondemand::document dt, di;
  simdjson::ondemand::array at, ai;
  if (jt.iterate(*ts).get(dt) || dt.get_array().get(at))
    return error_reply(400, 21501, "tx_types must be a JSON array of integers");
  for (auto v : at) {
    int64_t x = 0;
    if (v.get_int64().get(x)) return error_reply(400, 21501, "tx_types must be integers");
    types.push_back(static_cast<int>(x));
  }
  if (ji.iterate(*is).get(di) || di.get_array().get(ai))
    return error_reply(400, 21501, "tx_infos must be a JSON array of strings");
  for (auto v : ai) {
    std::string_view s;
    if (v.get_string().get(s)) return error_reply(400, 21501, "tx_infos must be strings");
    infos.emplace_back(s);
  }
  if (types.size() != infos.size()) return error_reply(400, 21513, "batch length mismatch");
  if (types.size() > 50) return error_reply(400, 21514, "at most 50 txs per batch");
  if (types.empty()) return error_reply(400, 21501, "empty batch");
  return std::nullopt;
}

// Each tx decoded and checked, in order; the first refusal answers the whole request (and
// releases the nonces the txs before it reserved).
std::optional<HttpReply> WorkerLogic::admit(bool admin, SendKind kind,
                                            const std::vector<int>& types,
                                            const std::vector<std::string>& infos,
                                            std::vector<SignedTx>& txs) {
  ApiMetrics& metrics = shared_.metrics;
  const int64_t now_ms = now_ns() / 1'000'000;
  std::string err;
  for (size_t i = 0; i < types.size(); ++i) {
    if (admin != is_operator_tx_type(types[i]))
      return error_reply(400, 21505,
                         admin ? "the admin listener takes operator txs only (types 1, 60, 61, 62)"
                               : "unsupported tx_type " + std::to_string(types[i]));
    if (Reject r = parse_tx_info(types[i], infos[i], txs[i], err); r != Reject::kOk) {
      metrics.tx_result(types[i], reject_code(r));
      return reject_reply(r, err);
    }
    const Tx& tx = txs[i].tx;
    if (admin) {
      if (!txs[i].has_sig || !verify_tx(tx, cfg_.chain_id, txs[i].sig, cfg_.operator_pubkey)) {
        metrics.tx_result(types[i], reject_code(Reject::kInvalidSignature));
        return reject_reply(Reject::kInvalidSignature, "not signed by the operator key");
      }
      continue;
    }
    if (!shared_.account_allow(tx.h.account)) {
      metrics.tx_result(types[i], 23000);
      return error_reply(429, 23000, "too many txs from account " + std::to_string(tx.h.account));
    }
    if (kind == SendKind::kBatch && i > 0 &&
        (tx.h.account != txs[0].tx.h.account || tx.h.api_key_index != txs[0].tx.h.api_key_index))
      return error_reply(400, 21501, "a batch must come from one API key");
    if (auto bad = dry_run(kind, types[i], txs[i], now_ms, std::span(txs.data(), i))) return bad;
  }
  return std::nullopt;
}

// One tx's dry-run: a dryRun request only checks; a tx to submit also reserves its nonce
// (DryRunner::check_and_reserve). A refusal releases the nonces `reserved` holds.
std::optional<HttpReply> WorkerLogic::dry_run(SendKind kind, int type, SignedTx& st, int64_t now_ms,
                                              std::span<const SignedTx> reserved) {
  ApiMetrics& metrics = shared_.metrics;
  tachyon::Track* const track = metrics.tracks[index_];
  std::string msg;
  const int64_t d0 = now_ns();
  const Reject r = kind == SendKind::kDryRun ? dry_.check_only(st, now_ms, msg)
                                             : dry_.check_and_reserve(st, now_ms, msg);
  const int64_t d1 = now_ns();
  metrics.dry_run(index_, type, static_cast<uint64_t>(d1 - d0));
  if (track != nullptr) track->span(metrics.ev_dry_run, d0, d1, static_cast<uint64_t>(type));
  if (r == Reject::kOk) return std::nullopt;
  metrics.tx_result(type, reject_code(r));
  for (const SignedTx& p : reserved)
    shared_.inflight.settle(p.tx.h.account, p.tx.h.api_key_index, p.tx.h.nonce, false);
  return reject_reply(r, msg);
}

// A request's txs in flight: the reply goes once every one has its result.
struct WorkerLogic::SendBatch {
  std::vector<std::string> hashes;
  std::vector<pipe::Result> results;
  size_t left;
  ReplyFn done;
  int64_t t_dry;  // the last dry-run of the request finished
  bool admin;
  bool batch;
  bool settles;  // the nonces were reserved here (InflightNonces)
};

HttpReply WorkerLogic::submit_all(const std::vector<SignedTx>& txs, const std::vector<int>& types,
                                  bool admin, SendKind kind, int64_t t_recv, bool& deferred,
                                  ReplyFn& done, bool forwarded) {
  auto b = std::make_shared<SendBatch>();
  b->left = txs.size();
  b->results.resize(txs.size());
  b->done = done;
  b->t_dry = now_ns();
  b->admin = admin;
  b->batch = kind == SendKind::kBatch;
  b->settles = !admin && !forwarded;  // a forwarded tx's nonce was reserved on its follower
  for (const auto& st : txs) b->hashes.push_back(tx_hash_hex(st.tx, cfg_.chain_id));
  for (size_t i = 0; i < txs.size(); ++i) {
    const Tx tx = txs[i].tx;
    auto on_result = [this, b, i, tx](const pipe::Result& res) { on_sent_result(*b, i, tx, res); };
    if (submit(txs[i], on_result, t_recv, b->hashes[i])) continue;
    shared_.metrics.tx_result(types[i], 23001);
    for (size_t j = i; j < txs.size(); ++j)
      if (b->settles)
        shared_.inflight.settle(txs[j].tx.h.account, txs[j].tx.h.api_key_index, txs[j].tx.h.nonce,
                                false);
    if (i == 0) return error_reply(503, 23001, "busy: the sequencer's ingress ring is full, retry");
    // Part of a batch went in: its results will still arrive; report the rest as refused.
    for (size_t j = i; j < txs.size(); ++j) {
      pipe::Result busy{};
      busy.reject = Reject::kInvalidTxInfo;
      b->results[j] = busy;
      --b->left;
    }
    break;
  }
  deferred = true;
  return {};
}

// Tx i of the batch has its durable result: recorded, its nonce settled; the last one replies.
void WorkerLogic::on_sent_result(SendBatch& b, size_t i, const Tx& tx, const pipe::Result& res) {
  b.results[i] = res;
  shared_.metrics.tx_result(static_cast<int>(tx.h.type), reject_code(res.reject));
  shared_.remember_tx(b.hashes[i],
                      ApiShared::TxRecord{tx, res.seq, res.block, res.t_recv_ns / 1'000'000,
                                          res.t_exec_ns / 1'000'000, res.reject, res.order_index});
  if (b.admin) {
    if (res.reject == Reject::kOk) shared_.operator_nonce_used(tx.h.nonce);
  } else if (b.settles) {
    shared_.inflight.settle(tx.h.account, tx.h.api_key_index, tx.h.nonce,
                            res.reject == Reject::kOk);
  }
  if (--b.left != 0) return;
  HttpReply r;
  JsonWriter w(r.body);
  const pipe::Result* bad = nullptr;
  for (const auto& x : b.results)
    if (x.reject != Reject::kOk && bad == nullptr) bad = &x;
  w.obj().kv_i("code", bad ? static_cast<int>(bad->reject) : 200);
  w.kv_s("message",
         bad ? reject_message(bad->reject) : "{\"ratelimit\": \"didn't use volume quota\"}");
  if (b.batch) {
    w.key("tx_hash").arr();
    for (const auto& h : b.hashes) w.str(h);
    w.end_arr();
  } else {
    w.kv_s("tx_hash", b.hashes[0]);
  }
  w.kv_i("predicted_execution_time_ms", b.results.back().t_exec_ns / 1'000'000);
  w.kv_i("volume_quota_remaining", 1000000);
  w.kv_i("seq", b.results.back().seq).kv_i("block", b.results.back().block);
  w.kv_s("status", bad ? "rejected" : "executed");
  if (!b.batch && b.results[0].order_index != 0) {  // a new order's index (ccxt reads order_id)
    w.kv_i("order_index", b.results[0].order_index);
    w.kv_s("order_id", std::to_string(b.results[0].order_index));
  }
  w.end_obj();
  if (bad) r.status = 400;
  b.done(std::move(r));
  const int64_t sent = now_ns();
  for (const auto& x : b.results) {
    if (x.seq != 0) record_stages(x, b.t_dry, sent);
  }
}

}  // namespace tachyon::api
