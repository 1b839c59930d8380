#include "tachyon/api/api_metrics.hpp"

#include <string>

#include "tachyon/api/ed25519.hpp"

namespace tachyon::api {

namespace {
const char* tx_type_name(int t) {
  switch (t) {
    case 1: return "deposit";
    case 8: return "change_pub_key";
    case 9: return "create_sub_account";
    case 12: return "transfer";
    case 13: return "withdraw";
    case 14: return "create_order";
    case 15: return "cancel_order";
    case 16: return "cancel_all_orders";
    case 17: return "modify_order";
    case 20: return "update_leverage";
    case 28: return "create_grouped_orders";
    case 29: return "update_margin";
    case 60: return "set_index_price";
    default: return nullptr;
  }
}
const char* const kStageNames[] = {
    "recv_to_dry_run",    "dry_run_to_sequenced", "sequenced_to_executed", "executed_to_applied",
    "applied_to_durable", "durable_to_sent",      "recv_to_sent"};
const char* const kChanNames[] = {"order_book", "trade", "account"};
const char* const kReadNames[] = {"worker_book_copy", "account_orders", "ws_update_log",
                                  "book_history"};
}  // namespace

// Per tx type: dry-run time, outcomes, signature checks and their CPU. The types without a name
// share one "other" series (registered for the first of them).
void ApiMetrics::register_by_type(MetricRegistrar& r, size_t shards) {
  auto one = [&](int t, const std::string& l) {
    dry_run_[t] =
        &r.histogram("tachyon_api_dry_run", "Dry-run time on the api worker by tx type", l, shards);
    ok_[t] = &r.counter("tachyon_txs", "Txs answered, by type and result", l + ",result=\"ok\"");
    rejected_[t] =
        &r.counter("tachyon_txs", "Txs answered, by type and result", l + ",result=\"rejected\"");
    checks_[t] =
        &r.counter("tachyon_signature_checks", "Ed25519 checks of tx signatures, by tx type", l);
    tachyon::Counter& cpu = cpu_ns_.emplace_back();
    r.counter_fn(
        "tachyon_signature_check_cpu_seconds",
        "CPU the signature checks took, by tx type (every 8th check timed, counted 8 times)", l,
        [&cpu] { return double(cpu.value()) * 1e-9; });
    check_cpu_ns_[t] = &cpu;
  };
  int other = -1;
  for (int t = 0; t < 256; ++t) {
    if (const char* n = tx_type_name(t)) {
      one(t, std::string("type=\"") + n + "\"");
    } else if (other < 0) {
      one(other = t, "type=\"other\"");
    } else {
      dry_run_[t] = dry_run_[other];
      ok_[t] = ok_[other];
      rejected_[t] = rejected_[other];
      checks_[t] = checks_[other];
      check_cpu_ns_[t] = check_cpu_ns_[other];
    }
  }
}

ApiMetrics::ApiMetrics(MetricRegistrar& r, uint32_t workers)
    : reg_(r), ws_queued_(workers == 0 ? 1 : workers) {
  const size_t shards = workers == 0 ? 1 : workers;
  register_by_type(r, shards);
  using ed25519::cache_totals;
  r.counter_fn("tachyon_signature_key_table_hits",
               "Signature checks done with the key's tables (every checking thread)", "",
               [] { return double(cache_totals().hits); });
  r.counter_fn("tachyon_signature_key_table_misses",
               "Signature checks left to libsodium: the key had no tables on that thread", "",
               [] { return double(cache_totals().misses); });
  r.counter_fn("tachyon_signature_key_tables_built",
               "Key tables built (a key accepted by libsodium, its slot free or missed twice)", "",
               [] { return double(cache_totals().builds); });
  r.gauge_fn("tachyon_signature_key_tables", "Key tables held, all checking threads (~7.5 KB each)",
             "", [] { return double(cache_totals().keys); });
  for (size_t s = 0; s < size_t(Stage::kCount); ++s) {
    stages_[s] = &r.histogram("tachyon_tx_stage",
                              "A tx's life by stage (stamps from api receipt to the reply sent)",
                              std::string("stage=\"") + kStageNames[s] + "\"", shards);
  }
  for (size_t c = 0; c < size_t(Chan::kCount); ++c) {
    fresh_[c] = &r.histogram("tachyon_ws_freshness",
                             "Engine time of an update to the api worker sending it, by channel",
                             std::string("channel=\"") + kChanNames[c] + "\"", shards);
  }
  fanout_ns_ =
      &r.histogram("tachyon_ws_fanout", "One fan-out round of new updates on a worker", "", shards);
  fanout_updates_ = &r.histogram("tachyon_ws_fanout_updates", "Updates handled per fan-out round",
                                 "", shards, tachyon::Unit::kCount);
  for (uint32_t code = 21000; code < 22000; ++code) {
    if (reject_message(static_cast<Reject>(code)) == "unknown reject") continue;
    rejects_[code] = &r.counter("tachyon_rejects", "Rejected txs by code",
                                "code=\"" + std::to_string(code) + "\"");
  }
  for (uint32_t code : {21513u, 21514u, 23000u, 23001u}) {  // batch shape, rate limit, busy
    rejects_[code] = &r.counter("tachyon_rejects", "Rejected txs by code",
                                "code=\"" + std::to_string(code) + "\"");
  }
  reject_other_ = &r.counter("tachyon_rejects", "Rejected txs by code", "code=\"other\"");
  for (size_t k = 0; k < size_t(ReadKind::kCount); ++k) {
    const std::string l = std::string("kind=\"") + kReadNames[k] + "\"";
    reads_[k] = &r.counter("tachyon_snapshot_reads", "Reads answered from a published snapshot", l);
    fallbacks_[k] = &r.counter("tachyon_snapshot_fallbacks",
                               "Reads the snapshot could not answer (answered another way)", l);
  }
  slow_resyncs_ = &r.counter("tachyon_ws_slow_consumer_resyncs",
                             "WebSocket connections whose queue overflowed once (resynced)");
  slow_closes_ = &r.counter("tachyon_ws_slow_consumer_closes",
                            "WebSocket connections closed for overflowing twice");
  stall_resyncs_ =
      &r.counter("tachyon_ws_stall_resyncs",
                 "WebSocket connections resynced for a send queue not drained within the stall "
                 "timeout");
  stall_closes_ = &r.counter("tachyon_ws_stall_closes",
                             "WebSocket connections closed for staying stalled after a resync");
  budget_closes_ = &r.counter("tachyon_ws_budget_closes",
                              "WebSocket connections closed to keep all send queues within "
                              "ws_total_queue_bytes (largest queue first)");
  r.gauge_fn("tachyon_ws_queued_bytes", "Bytes in all WebSocket send queues", "",
             [this] { return double(ws_queued_total()); });
  tracks.assign(shards, nullptr);
}

void ApiMetrics::tx_result(int tx_type, uint32_t code) {
  const auto t = static_cast<uint8_t>(tx_type);
  if (code == 0 || code == 200) {
    ok_[t]->add();
    return;
  }
  rejected_[t]->add();
  auto it = rejects_.find(code);
  (it != rejects_.end() ? it->second : reject_other_)->add();
}

}  // namespace tachyon::api
