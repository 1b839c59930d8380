#include "tachyon/pipe/pipe_metrics.hpp"

#include <string>

namespace tachyon::pipe {

namespace {
const char* update_name(size_t t) {
  switch (static_cast<UpdateType>(t)) {
    case UpdateType::kTxResult: return "tx_result";
    case UpdateType::kOrderAdded: return "order_added";
    case UpdateType::kOrderReduced: return "order_reduced";
    case UpdateType::kOrderRemoved: return "order_removed";
    case UpdateType::kTrade: return "trade";
    case UpdateType::kPosition: return "position";
    case UpdateType::kBalance: return "balance";
    case UpdateType::kMarkPrice: return "mark_price";
    case UpdateType::kMarket: return "market";
    case UpdateType::kAccount: return "account";
    case UpdateType::kApiKey: return "api_key";
    case UpdateType::kFunding: return "funding";
    case UpdateType::kRisk: return "risk";
  }
  return nullptr;
}
}  // namespace

PipeMetrics register_pipe_metrics(MetricRegistrar& r, TraceRegistrar& rec, bool detail) {
  PipeMetrics p;
  p.apply_batch_ns = &r.histogram("tachyon_apply_batch",
                                  "Apply thread: one batch (drain, caches, publication)", "", 1)
                          .shard(0);
  p.apply_batch_updates =
      &r.histogram("tachyon_apply_batch_updates", "Apply thread: updates per batch", "", 1,
                   tachyon::Unit::kCount)
           .shard(0);
  p.publish_ns =
      &r.histogram("tachyon_snapshot_publish",
                   "Apply thread: book snapshots and read-side views published per batch", "", 1)
           .shard(0);
  p.exec_to_applied_ns =
      &r.histogram("tachyon_exec_to_applied",
                   "Per tx: engine done -> its batch applied and published", "", 1)
           .shard(0);
  p.queue_ns =
      &r.histogram("tachyon_ingress_wait", "Per tx: api submit -> taken by the sequencer", "", 1)
           .shard(0);
  p.execute_ns =
      &r.histogram("tachyon_sequencer_tx", "Per tx: engine execution on the sequencer", "", 1)
           .shard(0);
  p.seq_track = &rec.track("sequencer");
  p.apply_track = &rec.track("apply");
  p.ev_execute = rec.name_id("execute");
  p.ev_sequence = rec.name_id("sequence_round");
  p.ev_batch = rec.name_id("apply_batch");
  p.ev_publish = rec.name_id("publish");
  p.ev_apply_depth = rec.name_id("apply_ring_depth");
  p.ev_route = rec.name_id("route_results");
  p.detail = detail;
  if (p.detail) {
    p.journal_append_ns = &r.histogram("tachyon_detail_journal_append",
                                       "Load-test detail: journal append on the sequencer", "", 1)
                               .shard(0);
    p.commit_push_ns = &r.histogram("tachyon_detail_committer_push",
                                    "Load-test detail: committer hand-off on the sequencer", "", 1)
                            .shard(0);
    for (size_t t = 0; t < kUpdateTypeSlots; ++t) {
      const char* n = update_name(t);
      if (n == nullptr) continue;
      p.apply_update_ns[t] =
          &r.histogram("tachyon_detail_apply_update",
                       "Load-test detail: one update applied to the read-side caches, by type",
                       std::string("type=\"") + n + "\"", 1)
               .shard(0);
    }
    p.seq_alloc_bytes =
        &r.counter("tachyon_detail_allocated_bytes",
                   "Load-test detail: bytes allocated on a hot thread", "thread=\"sequencer\"");
    p.apply_alloc_bytes =
        &r.counter("tachyon_detail_allocated_bytes",
                   "Load-test detail: bytes allocated on a hot thread", "thread=\"apply\"");
  }
  return p;
}

}  // namespace tachyon::pipe
