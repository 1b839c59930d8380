#include "tachyon/api/dry_run.hpp"

#include <algorithm>

#include "tachyon/codec/tx_hash.hpp"
#include "tachyon/engine/margin.hpp"
#include "tachyon/engine/order_checks.hpp"

namespace tachyon::api {

Reject InflightNonces::reserve(AccountIndex a, uint8_t key, int64_t nonce, bool skip,
                               int64_t view_next) {
  const uint64_t k = id(a, key);
  Shard& s = shard(k);
  std::lock_guard lk(s.mu);
  auto it = s.next.find(k);
  const int64_t expected = it == s.next.end() ? view_next : std::max(view_next, it->second);
  if (skip ? nonce < expected : nonce != expected) return Reject::kInvalidNonce;
  s.next[k] = nonce + 1;
  return Reject::kOk;
}

bool InflightNonces::pending(AccountIndex a, uint8_t key) {
  const uint64_t k = id(a, key);
  Shard& s = shard(k);
  std::lock_guard lk(s.mu);
  return s.next.contains(k);
}

void InflightNonces::settle(AccountIndex a, uint8_t key, int64_t nonce, bool accepted) {
  const uint64_t k = id(a, key);
  Shard& s = shard(k);
  std::lock_guard lk(s.mu);
  auto it = s.next.find(k);
  if (it == s.next.end()) return;
  if (!accepted || it->second <= nonce + 1) s.next.erase(it);
}

DryRunner::DryRunner(pipe::ReadSide& rs, uint32_t chain_id, InflightNonces& inflight,
                     ApiMetrics* metrics)
    : rs_(rs),
      chain_id_(chain_id),
      inflight_(inflight),
      metrics_(metrics),
      acct_reader_(rs.accounts().reader()),
      market_readers_(kMaxMarkets) {}

std::optional<pipe::MarketView> DryRunner::market(MarketId m) {
  if (m >= kMaxMarkets || !rs_.market_exists(m)) return std::nullopt;
  auto& r = market_readers_[m];
  if (!r) r.emplace(rs_.market(m).reader());
  return r->read([](const pipe::MarketView* v) -> std::optional<pipe::MarketView> {
    if (v == nullptr) return std::nullopt;
    return *v;
  });
}

Reject DryRunner::check_and_reserve(SignedTx& st, int64_t now_ms, std::string& message) {
  return run(st, now_ms, message, true);
}
Reject DryRunner::check_only(SignedTx& st, int64_t now_ms, std::string& message) {
  return run(st, now_ms, message, false);
}

Reject DryRunner::run(SignedTx& st, int64_t now_ms, std::string& message, bool reserve) {
  Tx& tx = st.tx;
  if (tx.h.expired_at_ms != 0 && now_ms > tx.h.expired_at_ms) return Reject::kTxExpired;
  return acct_reader_.read([&]() -> Reject {
    const pipe::AccountView* a = rs_.accounts().find(tx.h.account);
    if (a == nullptr) return Reject::kAccountNotFound;
    const pipe::KeyView* k = a->key(tx.h.api_key_index);
    if (k == nullptr) return Reject::kApiKeyNotFound;
    if (!st.has_sig || !signature_ok(tx, st.sig, k->pubkey)) {
      message = "the signature does not verify against API key " +
                std::to_string(tx.h.api_key_index) + " of account " + std::to_string(a->index);
      return Reject::kInvalidSignature;
    }
    tx.h.key_version = k->version;
    const bool skip = tx.h.flags & kTxFlagSkipNonce;
    // The nonce check itself happens in reserve(), atomically with the reservation; here only
    // what the snapshot alone already refuses.
    if (tx.h.nonce < k->next_nonce) return Reject::kInvalidNonce;  // a replay
    if (Reject r = check_body(tx, *a, now_ms); r != Reject::kOk) return r;
    if (!reserve) {
      if (!skip && tx.h.nonce != k->next_nonce) return Reject::kInvalidNonce;
      return Reject::kOk;
    }
    return inflight_.reserve(a->index, k->index, tx.h.nonce, skip, k->next_nonce);
  });
}

// A passed job of the same signature and key vouches only for its own message: the bytes are
// compared too (a tx that reuses another's signature is checked, and fails).
bool DryRunner::signature_ok(const Tx& tx, const Signature& sig, const PublicKey& pk) const {
  for (const VerifyPool::Job& j : checked_) {
    if (j.ok && j.sig == sig && j.pubkey == pk &&
        j.message == codec::canonical_tx_bytes(tx, chain_id_))
      return true;
  }
  return timed_check(metrics_, static_cast<int>(tx.h.type),
                     [&] { return verify_tx(tx, chain_id_, sig, pk); });
}

MarginMarket DryRunner::margin_market(MarketId m) {
  const auto v = market(m);
  if (!v) return MarginMarket{};
  return MarginMarket{v->mark_price,     v->quote_multiplier, v->params.default_imf,
                      v->params.min_imf, v->params.mmf,       v->params.cmf};
}

// What the account may move out of cross collateral: never below its initial margin.
__int128 DryRunner::free_collateral(const pipe::AccountView& a) {
  const MarginInfo mi = account_margin(
      a.collateral, a.positions, [this](MarketId m) { return margin_market(m); }, 0, 0, 0, nullptr);
  return std::min<__int128>(a.collateral, mi.tav - mi.imr);
}

namespace {
// By order index: a binary search in a big list; by client order index: a scan.
bool in_order_list(const pipe::AccountView& a, MarketId m, uint64_t index) {
  const pipe::OrderRange list = a.order_list();
  if (index >= kFirstOrderIndex) {
    const pipe::OrderView* o = list.find(index);
    return o != nullptr && o->o.market == m;
  }
  return std::any_of(list.begin(), list.end(), [&](const pipe::OrderView& o) {
    return o.o.market == m && o.o.client_order_index == index && index != 0;
  });
}
}  // namespace

// For a cancel or modify: could the order exist? Only a certain "no" refuses.
bool DryRunner::may_have_order(const Tx& tx, const pipe::AccountView& a, MarketId m,
                               uint64_t index) {
  if (!a.orders_current) {  // the list lags (a busy account): the sequencer decides
    ++order_list_lagging;
    return true;
  }
  ++order_list_reads;
  if (in_order_list(a, m, index)) return true;
  // Not in the published list, but this key has txs in flight: the order may be one of them
  // (a cancel pipelined right behind its order). The sequencer decides.
  if (inflight_.pending(a.index, tx.h.api_key_index)) {
    ++order_list_lagging;
    return true;
  }
  return false;
}

Reject DryRunner::check_order(const CreateOrderTx& o, const pipe::AccountView& a, int64_t now_ms) {
  const auto m = market(o.market);
  if (!m) return Reject::kInvalidMarket;
  if (Reject r = check_market_status(m->params.status, o.tif, o.reduce_only); r != Reject::kOk)
    return r;
  if (Reject r = check_order_shape(o, now_ms); r != Reject::kOk) return r;
  if (o.client_order_index != 0 && a.orders_current &&
      in_order_list(a, o.market, o.client_order_index))
    return Reject::kClientOrderIndexExists;
  const OrderMarket om{m->params, m->mark_price, m->quote_multiplier};
  if (Reject r = check_order_amounts(o, om); r != Reject::kOk) return r;
  if (Reject r = check_order_band(o, om); r != Reject::kOk) return r;
  // A trigger order waits: its position and margin are judged when it fires.
  if (o.trigger_price != 0) return Reject::kOk;
  // A TWAP's first slice executes at once: judged as that market order (the rest later).
  const Lots size = o.type == OrderType::kTwap
                        ? twap_slice(o.base_amount, now_ms, o.order_expiry_ms)
                        : o.base_amount;
  const pipe::PositionView* p = a.position(o.market);
  if (o.reduce_only) {
    if (p == nullptr || p->size == 0) return Reject::kNoPosition;
    if (o.is_ask ? p->size <= 0 : p->size >= 0) return Reject::kReduceOnlyIncreasesPosition;
    return Reject::kOk;
  }
  if (o.tif != TimeInForce::kIoc && p != nullptr &&
      p->open_orders >= static_cast<uint32_t>(m->params.max_orders_per_account))
    return Reject::kMaxOrdersPerAccount;
  __int128 imr_before = 0;
  const MarginInfo mi = account_margin(
      a.collateral, a.positions, [this](MarketId id) { return margin_market(id); }, o.market,
      o.is_ask ? 0 : size, o.is_ask ? size : 0, &imr_before);
  return order_margin_ok(mi, imr_before) ? Reject::kOk : Reject::kNotEnoughMargin;
}

Reject DryRunner::check_update_margin(const UpdateMarginTx& u, const pipe::AccountView& a) {
  const auto m = market(u.market);
  if (!m) return Reject::kInvalidMarket;
  if (u.direction > kMarginAdd) return Reject::kInvalidMarginDirection;
  if (u.amount <= 0 || u.amount > (int64_t{1} << 53)) return Reject::kInvalidTransferAmount;
  const pipe::PositionView* p = a.position(u.market);
  if (p == nullptr || !p->isolated || p->size == 0) return Reject::kNotIsolated;
  if (u.direction == kMarginAdd)
    return u.amount > free_collateral(a) ? Reject::kInsufficientCollateral : Reject::kOk;
  const MarginInfo own = isolated_margin(margin_market(u.market), *p);
  return u.amount > p->allocated || own.tav - u.amount < own.imr ? Reject::kNotEnoughMargin
                                                                 : Reject::kOk;
}

Reject DryRunner::check_body(const Tx& tx, const pipe::AccountView& a, int64_t now_ms) {
  switch (tx.h.type) {
    case TxType::kCreateOrder: return check_order(tx.order, a, now_ms);
    case TxType::kCancelOrder:
      if (!market(tx.cancel.market)) return Reject::kInvalidMarket;
      return may_have_order(tx, a, tx.cancel.market, tx.cancel.index) ? Reject::kOk
                                                                      : Reject::kOrderNotFound;
    case TxType::kModifyOrder:
      if (!market(tx.modify.market)) return Reject::kInvalidMarket;
      return may_have_order(tx, a, tx.modify.market, tx.modify.index) ? Reject::kOk
                                                                      : Reject::kOrderNotFound;
    case TxType::kCancelAllOrders: {  // the dead man's switch: its deadline's range
      const int64_t t = tx.cancel_all.time_ms;
      if (tx.cancel_all.tif == kCancelAllScheduled)
        return t < now_ms + kCancelAllMinDelayMs || t > now_ms + kCancelAllMaxDelayMs
                   ? Reject::kInvalidExpiry
                   : Reject::kOk;
      return tx.cancel_all.tif <= kCancelAllAbort ? Reject::kOk : Reject::kUnsupportedCancelAllMode;
    }
    case TxType::kTransfer:
    case TxType::kWithdraw: {
      const Usdc amount = tx.h.type == TxType::kTransfer ? tx.transfer.amount : tx.withdraw.amount;
      const Usdc fee = tx.h.type == TxType::kTransfer ? tx.transfer.fee : 0;
      if (amount <= 0 || fee < 0) return Reject::kInvalidTransferAmount;
      if (static_cast<__int128>(amount) + fee > free_collateral(a))
        return Reject::kInsufficientCollateral;
      return Reject::kOk;
    }
    case TxType::kUpdateLeverage: {
      const UpdateLeverageTx& l = tx.leverage;
      if (!market(l.market)) return Reject::kInvalidMarket;
      if (l.margin_mode > 1) return Reject::kUnsupportedMarginMode;
      const pipe::PositionView* p = a.position(l.market);
      if (p != nullptr && l.margin_mode != p->isolated && (p->size != 0 || p->open_orders != 0))
        return Reject::kMarginModeLocked;
      return Reject::kOk;  // the margin of a raised fraction: the engine
    }
    case TxType::kUpdateMargin: return check_update_margin(tx.margin, a);
    default: return Reject::kOk;  // the engine checks the rest (keys, sub-accounts)
  }
}

}  // namespace tachyon::api
