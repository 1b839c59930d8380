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

HttpReply WorkerLogic::send_tx(const HttpRequest& req, bool batch, bool dry, bool& deferred,
                               ReplyFn& done) {
  FormFields f;
  std::string err;
  if (!parse_form(req.content_type, req.body, f, err)) return error_reply(400, 21501, err);
  return send_form(f, req.admin, batch, dry, deferred, done);
}

// sendTx / sendTxBatch / dryRun once the fields are decoded (REST form or WS `data`).
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

HttpReply WorkerLogic::send_form(const FormFields& f, bool admin, bool batch, bool dry,
                                 bool& deferred, ReplyFn& done) {
  const int64_t t_recv = now_ns();
  ApiMetrics& metrics = shared_.metrics;
  tachyon::Track* const track = metrics.tracks[index_];
  std::string err;
  std::vector<int> types;
  std::vector<std::string> infos;
  if (!batch) {
    const auto t = field(f, "tx_type");
    const auto info = field(f, "tx_info");
    if (!t || !info) return error_reply(400, 21501, "tx_type and tx_info are required");
    try {
      types.push_back(std::stoi(*t));
    } catch (...) {
      return error_reply(400, 21501, "tx_type must be an integer");
    }
    infos.push_back(*info);
  } else {
    const auto ts = field(f, "tx_types");
    const auto is = field(f, "tx_infos");
    if (!ts || !is) return error_reply(400, 21501, "tx_types and tx_infos are required");
    simdjson::ondemand::parser p;
    simdjson::padded_string pt(*ts), pi(*is);
    simdjson::ondemand::document dt, di;
    simdjson::ondemand::array at, ai;
    if (p.iterate(pt).get(dt) || dt.get_array().get(at))
      return error_reply(400, 21501, "tx_types must be a JSON array of integers");
    for (auto v : at) {
      int64_t x = 0;
      if (v.get_int64().get(x)) return error_reply(400, 21501, "tx_types must be integers");
      types.push_back(static_cast<int>(x));
    }
    simdjson::ondemand::parser p2;
    if (p2.iterate(pi).get(di) || di.get_array().get(ai))
      return error_reply(400, 21501, "tx_infos must be a JSON array of strings");
    for (auto v : ai) {
      std::string_view s;
      if (v.get_string().get(s)) return error_reply(400, 21501, "tx_infos must be strings");
      infos.emplace_back(s);
    }
    if (types.size() != infos.size()) return error_reply(400, 21513, "batch length mismatch");
    if (types.size() > 50) return error_reply(400, 21514, "at most 50 txs per batch");
    if (types.empty()) return error_reply(400, 21501, "empty batch");
  }
  std::vector<SignedTx> txs(types.size());
  const int64_t now_ms = now_ns() / 1'000'000;
  for (size_t i = 0; i < types.size(); ++i) {
    if (admin != is_operator_tx_type(types[i]))
      return error_reply(400, 21505,
                         admin ? "the admin listener takes operator txs only (types 1, 60, 61, 62)"
                               : "unsupported tx_type " + std::to_string(types[i]));
    if (Reject r = parse_tx_info(types[i], infos[i], txs[i], err); r != Reject::kOk) {
      metrics.tx_result(types[i], reject_code(r));
      return reject_reply(r, err);
    }
    if (admin) {
      if (!txs[i].has_sig ||
          !verify_tx(txs[i].tx, cfg_.chain_id, txs[i].sig, cfg_.operator_pubkey)) {
        metrics.tx_result(types[i], reject_code(Reject::kInvalidSignature));
        return reject_reply(Reject::kInvalidSignature, "not signed by the operator key");
      }
      continue;
    }
    if (!shared_.account_allow(txs[i].tx.h.account)) {
      metrics.tx_result(types[i], 23000);
      return error_reply(429, 23000,
                         "too many txs from account " + std::to_string(txs[i].tx.h.account));
    }
    if (batch && i > 0 &&
        (txs[i].tx.h.account != txs[0].tx.h.account ||
         txs[i].tx.h.api_key_index != txs[0].tx.h.api_key_index))
      return error_reply(400, 21501, "a batch must come from one API key");
    std::string msg;
    const int64_t d0 = now_ns();
    const Reject r = dry ? dry_.check_only(txs[i], now_ms, msg) : dry_.check(txs[i], now_ms, msg);
    const int64_t d1 = now_ns();
    metrics.dry_run(index_, types[i], static_cast<uint64_t>(d1 - d0));
    if (track != nullptr) track->span(metrics.ev_dry_run, d0, d1, static_cast<uint64_t>(types[i]));
    if (r != Reject::kOk) {
      metrics.tx_result(types[i], reject_code(r));
      for (size_t j = 0; j < i; ++j)  // release the nonces this batch reserved
        shared_.inflight.settle(txs[j].tx.h.account, txs[j].tx.h.api_key_index, txs[j].tx.h.nonce,
                                false);
      return reject_reply(r, msg);
    }
  }
  if (dry) {
    HttpReply r;
    JsonWriter w(r.body);
    w.obj().kv_i("code", 200).kv_s("message", "dry run passed");
    w.kv_s("tx_hash", tx_hash_hex(txs[0].tx, cfg_.chain_id)).end_obj();
    return r;
  }
  // Submit; reply once every tx of the request has its result.
  struct Batch {
    std::vector<std::string> hashes;
    std::vector<pipe::Result> results;
    size_t left;
    ReplyFn done;
    int64_t t_dry;  // the last dry-run of the request finished
  };
  auto b = std::make_shared<Batch>();
  b->left = txs.size();
  b->results.resize(txs.size());
  b->done = done;
  b->t_dry = now_ns();
  for (const auto& st : txs) b->hashes.push_back(tx_hash_hex(st.tx, cfg_.chain_id));
  for (size_t i = 0; i < txs.size(); ++i) {
    const Tx tx = txs[i].tx;
    auto on_result = [this, b, i, tx, admin, batch](const pipe::Result& res) {
      b->results[i] = res;
      shared_.metrics.tx_result(static_cast<int>(tx.h.type), reject_code(res.reject));
      shared_.remember_tx(
          b->hashes[i],
          ApiShared::TxRecord{tx, res.seq, res.block, res.t_recv_ns / 1'000'000,
                              res.t_exec_ns / 1'000'000, res.reject, res.order_index});
      if (admin) {
        if (res.reject == Reject::kOk) {
          int64_t cur = shared_.operator_nonce.load();
          while (cur < tx.h.nonce + 1 &&
                 !shared_.operator_nonce.compare_exchange_weak(cur, tx.h.nonce + 1)) {
          }
        }
      } else {
        shared_.inflight.settle(tx.h.account, tx.h.api_key_index, tx.h.nonce,
                                res.reject == Reject::kOk);
      }
      if (--b->left != 0) return;
      HttpReply r;
      JsonWriter w(r.body);
      const pipe::Result* bad = nullptr;
      for (const auto& x : b->results)
        if (x.reject != Reject::kOk && bad == nullptr) bad = &x;
      w.obj().kv_i("code", bad ? static_cast<int>(bad->reject) : 200);
      w.kv_s("message",
             bad ? reject_message(bad->reject) : "{\"ratelimit\": \"didn't use volume quota\"}");
      if (batch) {
        w.key("tx_hash").arr();
        for (const auto& h : b->hashes) w.str(h);
        w.end_arr();
      } else {
        w.kv_s("tx_hash", b->hashes[0]);
      }
      w.kv_i("predicted_execution_time_ms", b->results.back().t_exec_ns / 1'000'000);
      w.kv_i("volume_quota_remaining", 1000000);
      w.kv_i("seq", b->results.back().seq).kv_i("block", b->results.back().block);
      w.kv_s("status", bad ? "rejected" : "executed");
      if (!batch && b->results[0].order_index != 0)
        w.kv_i("order_index", b->results[0].order_index);
      w.end_obj();
      if (bad) r.status = 400;
      b->done(std::move(r));
      const int64_t sent = now_ns();
      for (const auto& x : b->results) {
        if (x.seq != 0) record_stages(x, b->t_dry, sent);
      }
    };
    if (!submit(txs[i], on_result, t_recv, b->hashes[i])) {
      metrics.tx_result(types[i], 23001);
      for (size_t j = i; j < txs.size(); ++j)
        if (!admin)
          shared_.inflight.settle(txs[j].tx.h.account, txs[j].tx.h.api_key_index, txs[j].tx.h.nonce,
                                  false);
      if (i == 0)
        return error_reply(503, 23001, "busy: the sequencer's ingress ring is full, retry");
      // Part of a batch went in: its results will still arrive; report the rest as refused.
      for (size_t j = i; j < txs.size(); ++j) {
        pipe::Result busy{};
        busy.reject = Reject::kInvalidTxInfo;
        b->results[j] = busy;
        --b->left;
      }
      break;
    }
  }
  deferred = true;
  return {};
}

}  // namespace tachyon::api
