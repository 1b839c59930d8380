// Recovery of the server's state at start (src/app/server_parts.hpp).
#include <spdlog/spdlog.h>

#include "server_parts.hpp"

namespace tachyon::app {

bool recover(const Config& c, Recovered& rec) {
  const size_t keep_replayed = api::ApiConfig{}.tx_index_capacity;
  auto on_replayed = [&](const Tx& tx, const TxResult& r) {
    rec.replayed_txs.emplace_back(tx, r);
    if (rec.replayed_txs.size() > keep_replayed) rec.replayed_txs.pop_front();
    auto& ups = rec.replayed_history.updates;
    if (rec.replayed_history.named < ups.size()) {
      TradeHash h{};
      (void)api::from_hex(api::tx_hash_hex(tx, c.chain_id), h.data(), h.size());
      for (size_t i = rec.replayed_history.named; i < ups.size(); ++i)
        if (ups[i].type == UpdateType::kTrade)
          rec.trade_hashes.emplace_back(ups[i].trade.trade_id, h);
      rec.replayed_history.named = ups.size();
    }
  };
  // The snapshot's state hash is checked against the hasher thread's (build_read_side()) when no
  // journal tx follows it.
  if (Status s = ClusterNode::bootstrap(c); !s.ok()) {
    spdlog::critical("cluster ({}): {}", c.role, s.message());
    return false;
  }
  const store::RecoverOptions opt{
      .replayed = on_replayed,
      .updates = &rec.replayed_history,
      .before_replay = [&h = rec.replayed_history](const Engine& e) { h.engine = &e; },
      .defer_hash_check = true,
      .saved_accounts = &rec.account_base.saved};
  if (Status s = store::recover(c.data_dir, c.engine, rec.engine, rec.rep, opt); !s.ok()) {
    spdlog::critical("recovery of {} failed: {}", c.data_dir, s.message());
    return false;
  }
  for (const auto& why : rec.rep.skipped_snapshots) spdlog::warn("skipped snapshot: {}", why);
  if (rec.rep.journal.truncated_tail) spdlog::warn("{}", rec.rep.journal.note);
  rec.hasher =
      std::jthread([&hash = rec.state_hash, e = static_cast<const Engine*>(rec.engine.get())] {
        hash = e->state_hash();
      });
  return true;
}

}  // namespace tachyon::app
