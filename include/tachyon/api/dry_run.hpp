#pragma once
// The dry-run every submitted tx goes through on its api worker before it may reach the
// sequencer (docs/ARCHITECTURE.md "Dry-run"): decode (done by the caller) -> expiry -> account ->
// key -> signature -> nonce -> market -> shape -> amounts -> band -> margin, against the read-side
// snapshots. The sequencer re-validates authoritatively; the signature is checked only here.
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include <span>

#include "tachyon/api/tx_info.hpp"
#include "tachyon/api/verify_pool.hpp"
#include "tachyon/engine/margin.hpp"
#include "tachyon/pipe/read_side.hpp"

namespace tachyon::api {

// Nonces in flight per (account, API key), shared by all workers: a client may send n, n+1,
// n+2 without waiting for replies (pipelining); only a real gap or a replay is refused.
class InflightNonces {
 public:
  // Expected next nonce = max(the snapshot's, the highest reserved + 1). Reserves on success.
  Reject reserve(AccountIndex a, uint8_t key, int64_t nonce, bool skip, int64_t view_next);
  // The sequencer answered for `nonce`: drop the entry once nothing newer is in flight, or at
  // once on a refusal (whatever followed it will be refused too; the snapshot is the truth).
  void settle(AccountIndex a, uint8_t key, int64_t nonce, bool accepted);
  // Whether txs of this key are reserved and not yet answered.
  bool pending(AccountIndex a, uint8_t key);

 private:
  struct Shard {
    std::mutex mu;
    absl::flat_hash_map<uint64_t, int64_t> next;  // (account << 8 | key) -> next nonce
  };
  static uint64_t id(AccountIndex a, uint8_t key) { return (a << 8) | key; }
  Shard& shard(uint64_t k) { return shards_[(k * 0x9E3779B97F4A7C15ull) >> 60]; }
  std::array<Shard, 16> shards_;
};

// One per api worker thread (it holds that thread's reader slots).
class DryRunner {
 public:
  // `metrics` (may be null) counts the signature checks it runs (timed_check).
  DryRunner(pipe::ReadSide& rs, uint32_t chain_id, InflightNonces& inflight,
            ApiMetrics* metrics = nullptr);
  // Checks a user tx; on success sets tx.h.key_version and reserves the nonce (a tx about to be
  // submitted: the next one from the same key must use the next nonce).
  Reject check_and_reserve(SignedTx& st, int64_t now_ms, std::string& message);
  // The verdict without reserving the nonce (POST /api/v1/dryRun).
  Reject check_only(SignedTx& st, int64_t now_ms, std::string& message);

  // Read helpers for the worker (copies: valid after return).
  std::optional<pipe::MarketView> market(MarketId m);
  pipe::AccountTable& accounts() { return rs_.accounts(); }
  pipe::EpochDomain::Reader& account_reader() { return acct_reader_; }
  uint32_t chain_id() const { return chain_id_; }
  // Signatures already checked (VerifyPool): until the next call, a tx whose canonical bytes,
  // signature and key are those of a job that passed is not verified again. The jobs must
  // outlive their use; an empty span ends it.
  void set_checked(std::span<const VerifyPool::Job> jobs) { checked_ = jobs; }
  // Order-list reads (cancel/modify of an own order) answered from the account's published list,
  // and those let through to the sequencer because the list lagged.
  uint64_t order_list_reads = 0, order_list_lagging = 0;

 private:
  Reject run(SignedTx& st, int64_t now_ms, std::string& message, bool reserve);
  Reject check_body(const Tx& tx, const pipe::AccountView& a, int64_t now_ms);
  Reject check_order(const CreateOrderTx& o, const pipe::AccountView& a, int64_t now_ms);
  Reject check_update_margin(const UpdateMarginTx& u, const pipe::AccountView& a);
  bool may_have_order(const Tx& tx, const pipe::AccountView& a, MarketId m, uint64_t index);
  MarginMarket margin_market(MarketId m);
  __int128 free_collateral(const pipe::AccountView& a);
  bool signature_ok(const Tx& tx, const Signature& sig, const PublicKey& pk) const;

  pipe::ReadSide& rs_;
  uint32_t chain_id_;
  InflightNonces& inflight_;
  ApiMetrics* metrics_;
  pipe::EpochDomain::Reader acct_reader_;
  std::vector<std::optional<pipe::Published<pipe::MarketView>::Reader>> market_readers_;
  std::span<const VerifyPool::Job> checked_;
};

}  // namespace tachyon::api
