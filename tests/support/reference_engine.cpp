#include "support/reference_engine.hpp"

#include <algorithm>

#include "tachyon/core/hash.hpp"

namespace tachyon::testing {

namespace {
__int128 iabs(__int128 v) { return v < 0 ? -v : v; }
__int128 cdiv(__int128 a, __int128 b) {
  return a / b + ((a % b != 0 && (a > 0) == (b > 0)) ? 1 : 0);
}
bool zero_key(const std::array<uint8_t, 32>& k) {
  for (uint8_t x : k)
    if (x) return false;
  return true;
}
}  // namespace

ReferenceEngine::ReferenceEngine(const EngineConfig& cfg) : cfg_(cfg) {
  accs_[cfg.fee_account].master = cfg.fee_account;
  created_.push_back(cfg.fee_account);
  if (cfg.insurance_account != cfg.fee_account) {
    accs_[cfg.insurance_account].master = cfg.insurance_account;
    created_.push_back(cfg.insurance_account);
  }
}

Ticks ReferenceEngine::best(MarketId m, bool is_ask) const {
  auto it = mkts_.find(m);
  if (it == mkts_.end()) return 0;
  if (is_ask) return it->second.asks.empty() ? 0 : it->second.asks.begin()->first;
  return it->second.bids.empty() ? 0 : it->second.bids.rbegin()->first;
}

TxResult ReferenceEngine::execute(const Tx& tx, std::vector<RefFill>& fills) {
  now_ms_ = tx.h.time_ns / 1'000'000;
  adl_.clear();
  due_.clear();
  // Time first: TWAP slices that are due, then every order whose time has come (one at a time:
  // an expired primary may arm a child that has expired too).
  fire_twaps(fills);
  for (;;) {
    auto it = std::find_if(orders_.begin(), orders_.end(), [&](const auto& kv) {
      return kv.second.expiry_ms != 0 && kv.second.expiry_ms <= now_ms_;
    });
    if (it == orders_.end()) break;
    remove(it->first);
  }

  TxResult r;
  switch (tx.h.type) {
    case TxType::kDeposit:
    case TxType::kCreateMarket:
    case TxType::kUpdateMarket:
    case TxType::kSetIndexPrice:
    case TxType::kSetMarketStatus: r.reject = operator_tx(tx); break;
    case TxType::kFundingTick: r.reject = funding_tick(tx); break;
    case TxType::kCreateOrder: r.reject = place(tx, r.order_index, fills); break;
    case TxType::kCreateGroupedOrders: r.reject = grouped(tx, r.order_index, fills); break;
    case TxType::kCancelOrder: r.reject = cancel(tx, r.order_index); break;
    case TxType::kCancelAllOrders: r.reject = cancel_all(tx); break;
    case TxType::kModifyOrder: r.reject = modify(tx, r.order_index, fills); break;
    case TxType::kTransfer:
    case TxType::kWithdraw: r.reject = transfer_or_withdraw(tx); break;
    case TxType::kUpdateLeverage: r.reject = leverage(tx); break;
    case TxType::kUpdateMargin: r.reject = update_margin(tx); break;
    case TxType::kChangePubKey:
    case TxType::kCreateSubAccount: r.reject = account_tx(tx); break;
    default: r.reject = Reject::kUnsupportedTxType;
  }
  settle_risk(fills);
  return r;
}

void ReferenceEngine::refresh_marks() {
  // Mark = median(index, best bid, best ask), or the index when a side is empty.
  // A mark that moved makes due every trigger order of its market it has reached.
  for (auto& [id, m] : mkts_) {
    const Ticks old = m.mark;
    if (m.bids.empty() || m.asks.empty()) {
      m.mark = m.index;
    } else {
      Ticks v[3] = {m.index, m.bids.rbegin()->first, m.asks.begin()->first};
      std::sort(v, v + 3);
      m.mark = v[1];
    }
    if (old == m.mark || old <= 0) continue;
    for (auto& [oid, o] : orders_)
      if (o.market == id && o.pending == 1 && reached(o)) due_.push_back(oid);
  }
}

Reject ReferenceEngine::op_auth(const Tx& tx) const {
  if (tx.h.expired_at_ms != 0 && now_ms_ > tx.h.expired_at_ms) return Reject::kTxExpired;
  if (tx.h.nonce != op_nonce_) return Reject::kInvalidNonce;
  return Reject::kOk;
}

Reject ReferenceEngine::auth(const Tx& tx, Acc*& a, Key*& k) {
  if (tx.h.expired_at_ms != 0 && now_ms_ > tx.h.expired_at_ms) return Reject::kTxExpired;
  auto it = accs_.find(tx.h.account);
  if (it == accs_.end()) return Reject::kAccountNotFound;
  a = &it->second;
  if (tx.h.api_key_index > 254) return Reject::kInvalidApiKeyIndex;
  auto kt = a->keys.find(tx.h.api_key_index);
  if (kt == a->keys.end()) return Reject::kApiKeyNotFound;
  k = &kt->second;
  if (k->version != tx.h.key_version) return Reject::kStaleKeyVersion;
  const bool skip = tx.h.flags & kTxFlagSkipNonce;
  if (skip ? tx.h.nonce < k->nonce : tx.h.nonce != k->nonce) return Reject::kInvalidNonce;
  return Reject::kOk;
}

Reject ReferenceEngine::operator_tx(const Tx& tx) {
  if (Reject r = op_auth(tx); r != Reject::kOk) return r;
  switch (tx.h.type) {
    case TxType::kDeposit: {
      const DepositTx& d = tx.deposit;
      if (d.to_account > kMaxAccountIndex) return Reject::kInvalidAccountIndex;
      const bool exists = accs_.count(d.to_account) != 0;
      if (!exists && d.to_account >= kFirstSubAccountIndex) return Reject::kInvalidAccountIndex;
      if (d.amount <= 0 || d.amount > (int64_t{1} << 53)) return Reject::kInvalidTransferAmount;
      if (!zero_key(d.pubkey) && d.api_key_index > 254) return Reject::kInvalidApiKeyIndex;
      if (!exists) {
        accs_[d.to_account].master = d.to_account;
        accs_[d.to_account].l1 = d.l1_address;
        created_.push_back(d.to_account);
      }
      Acc& a = accs_[d.to_account];
      a.collateral += d.amount;
      deposits_ += d.amount;
      if (!zero_key(d.pubkey)) {
        Key& k = a.keys[d.api_key_index];
        k.pubkey = d.pubkey;
        k.version += 1;
      }
      break;
    }
    case TxType::kCreateMarket:
    case TxType::kUpdateMarket: {
      const bool create = tx.h.type == TxType::kCreateMarket;
      const MarketId id = create ? tx.create_market.market : tx.update_market.market;
      const MarketParams& p = create ? tx.create_market.params : tx.update_market.params;
      if (id > 254) return Reject::kInvalidMarket;
      const bool exists = mkts_.count(id) != 0;
      if (create && exists) return Reject::kMarketExists;
      if (!create && !exists) return Reject::kInvalidMarket;
      if (!market_params_valid(p)) return Reject::kInvalidMarketConfig;
      if (!create) {
        const MarketParams& old = mkts_[id].p;
        if (old.symbol != p.symbol || old.size_decimals != p.size_decimals ||
            old.price_decimals != p.price_decimals)
          return Reject::kInvalidMarketConfig;
      }
      if (create &&
          (tx.create_market.index_price <= 0 || tx.create_market.index_price > kMaxPriceTicks))
        return Reject::kInvalidIndexPrice;
      Mkt& m = mkts_[id];
      m.p = p;
      if (create) {
        m.exists = true;
        m.index = tx.create_market.index_price;
        m.mult = 1;
        for (int i = p.size_decimals + p.price_decimals; i < 6; ++i) m.mult *= 10;
      }
      break;
    }
    case TxType::kSetMarketStatus: {
      auto it = mkts_.find(tx.market_status.market);
      if (it == mkts_.end()) return Reject::kInvalidMarket;
      if (static_cast<int>(tx.market_status.status) > 3) return Reject::kInvalidMarketConfig;
      it->second.p.status = tx.market_status.status;
      break;
    }
    case TxType::kSetIndexPrice: {
      auto it = mkts_.find(tx.set_index.market);
      if (it == mkts_.end()) return Reject::kInvalidMarket;
      if (tx.set_index.index_price <= 0 || tx.set_index.index_price > kMaxPriceTicks)
        return Reject::kInvalidIndexPrice;
      it->second.index = tx.set_index.index_price;
      break;
    }
    default: return Reject::kUnsupportedTxType;
  }
  ++op_nonce_;
  return Reject::kOk;
}

Reject ReferenceEngine::account_tx(const Tx& tx) {
  Acc* a = nullptr;
  Key* k = nullptr;
  if (Reject r = auth(tx, a, k); r != Reject::kOk) return r;
  if (tx.h.type == TxType::kChangePubKey) {
    if (tx.change_key.target_key_index > 254) return Reject::kInvalidApiKeyIndex;
    if (zero_key(tx.change_key.pubkey)) return Reject::kInvalidPubKey;
    k->nonce = tx.h.nonce + 1;
    Key& t = a->keys[tx.change_key.target_key_index];
    t.pubkey = tx.change_key.pubkey;
    t.version += 1;
    return Reject::kOk;
  }
  if (next_sub_ > kMaxAccountIndex) return Reject::kTooManySubAccounts;
  k->nonce = tx.h.nonce + 1;
  const Key copy{k->pubkey, 0, 1};
  const AccountIndex master = a->master;
  const auto l1 = a->l1;
  const AccountIndex sub = next_sub_++;
  Acc& s = accs_[sub];
  s.master = master;
  s.l1 = l1;
  s.keys[tx.h.api_key_index] = copy;
  created_.push_back(sub);
  return Reject::kOk;
}

Lots ReferenceEngine::open_size(AccountIndex a, MarketId m, bool is_ask) const {
  Lots s = 0;
  for (auto& [id, o] : orders_)
    if (o.account == a && o.market == m && o.is_ask == is_ask && o.pending == 0) s += o.remaining;
  return s;
}

int ReferenceEngine::open_count(AccountIndex a, MarketId m) const {
  int n = 0;
  for (auto& [id, o] : orders_) n += (o.account == a && o.market == m);
  return n;
}

void ReferenceEngine::margin(AccountIndex ai, MarketId xm, Lots xbuy, Lots xsell, __int128& tav,
                             __int128& imr, __int128& imr_plain) const {
  const Acc& a = accs_.at(ai);
  tav = a.collateral;
  imr = imr_plain = 0;
  std::map<MarketId, bool> markets;
  for (auto& [mid, p] : a.pos) markets[mid] = true;
  for (auto& [id, o] : orders_)
    if (o.account == ai) markets[o.market] = true;
  if (xbuy != 0 || xsell != 0) markets[xm] = true;
  for (auto& [mid, unused] : markets) {
    const Mkt& m = mkts_.at(mid);
    auto pit = a.pos.find(mid);
    const Pos p = pit == a.pos.end() ? Pos{} : pit->second;
    const __int128 unit = static_cast<__int128>(m.mark) * m.mult;
    const Bps4 imf = p.imf ? std::max(p.imf, m.p.min_imf) : m.p.default_imf;
    const Lots buy = open_size(ai, mid, false), sell = open_size(ai, mid, true);
    auto req = [&](Lots b, Lots s) {
      __int128 worst = std::max(iabs(static_cast<__int128>(p.size) + b),
                                iabs(static_cast<__int128>(p.size) - s));
      return cdiv(worst * unit * imf, 10000);
    };
    const __int128 own = p.iso ? req(0, 0) : 0;  // an isolated position's own margin covers it
    if (!p.iso) tav += p.size * unit - p.entry;
    imr_plain += std::max<__int128>(req(buy, sell) - own, 0);
    imr +=
        std::max<__int128>((mid == xm ? req(buy + xbuy, sell + xsell) : req(buy, sell)) - own, 0);
  }
}

Usdc ReferenceEngine::free_collateral(AccountIndex ai) const {
  __int128 tav, imr, plain;
  margin(ai, 0, 0, 0, tav, imr, plain);
  __int128 f = std::min<__int128>(accs_.at(ai).collateral, tav - imr);
  return f < 0 ? 0 : static_cast<Usdc>(f);
}

Reject ReferenceEngine::transfer_or_withdraw(const Tx& tx) {
  Acc* a = nullptr;
  Key* k = nullptr;
  if (Reject r = auth(tx, a, k); r != Reject::kOk) return r;
  const bool is_transfer = tx.h.type == TxType::kTransfer;
  const uint8_t asset = is_transfer ? tx.transfer.asset : tx.withdraw.asset;
  const Usdc amount = is_transfer ? tx.transfer.amount : tx.withdraw.amount;
  const Usdc fee = is_transfer ? tx.transfer.fee : 0;
  if (asset != 3) return Reject::kInvalidAsset;
  if (amount <= 0 || amount > (int64_t{1} << 53)) return Reject::kInvalidTransferAmount;
  if (is_transfer) {
    if (fee < 0 || fee > (int64_t{1} << 53)) return Reject::kInvalidFee;
    if (tx.transfer.to_account == tx.h.account) return Reject::kSelfTransfer;
    if (!accs_.count(tx.transfer.to_account)) return Reject::kAccountNotFound;
  }
  if (amount + fee > free_collateral(tx.h.account)) return Reject::kInsufficientCollateral;
  k->nonce = tx.h.nonce + 1;
  a->collateral -= amount + fee;
  if (is_transfer) {
    accs_[tx.transfer.to_account].collateral += amount;
    accs_[cfg_.fee_account].collateral += fee;
  } else {
    withdrawals_ += amount;
  }
  return Reject::kOk;
}

// An isolated position's own bucket: its margin plus its PnL, against its own initial margin.
static void isolated_bucket(const ReferenceEngine::Pos& p, const ReferenceEngine::Mkt& m,
                            __int128& tav, __int128& imr) {
  const __int128 unit = static_cast<__int128>(m.mark) * m.mult;
  const Bps4 imf = p.imf ? std::max(p.imf, m.p.min_imf) : m.p.default_imf;
  tav = p.alloc + p.size * unit - p.entry;
  imr = cdiv(iabs(static_cast<__int128>(p.size)) * unit * imf, 10000);
}

Reject ReferenceEngine::leverage(const Tx& tx) {
  Acc* a = nullptr;
  Key* k = nullptr;
  if (Reject r = auth(tx, a, k); r != Reject::kOk) return r;
  const UpdateLeverageTx& l = tx.leverage;
  if (!mkts_.count(l.market)) return Reject::kInvalidMarket;
  if (l.margin_mode > 1) return Reject::kUnsupportedMarginMode;
  const Mkt& m = mkts_[l.market];
  if (l.imf < m.p.min_imf || l.imf > 10000) return Reject::kInvalidLeverage;
  const bool had = a->pos.count(l.market) != 0;
  const bool iso_now = had && a->pos[l.market].iso;
  if (l.margin_mode != iso_now) {
    if (l.margin_mode == 1 &&
        (tx.h.account == cfg_.fee_account || tx.h.account == cfg_.insurance_account))
      return Reject::kCrossOnlyAccount;
    if ((had && a->pos[l.market].size != 0) || open_count(tx.h.account, l.market) != 0)
      return Reject::kMarginModeLocked;
  }
  const Bps4 old = had ? a->pos[l.market].imf : 0;
  Pos& p = a->pos[l.market];
  p.imf = l.imf;
  p.iso = l.margin_mode == 1;
  __int128 tav, imr, plain, own_tav = 0, own_imr = 0;
  margin(tx.h.account, 0, 0, 0, tav, imr, plain);
  if (p.iso) isolated_bucket(p, m, own_tav, own_imr);
  if (l.imf > old && (tav < imr || own_tav < own_imr)) {
    if (had) {
      p.imf = old;
      p.iso = iso_now;
    } else {
      a->pos.erase(l.market);
    }
    return Reject::kNotEnoughMargin;
  }
  k->nonce = tx.h.nonce + 1;
  return Reject::kOk;
}

Reject ReferenceEngine::update_margin(const Tx& tx) {
  Acc* a = nullptr;
  Key* k = nullptr;
  if (Reject r = auth(tx, a, k); r != Reject::kOk) return r;
  const UpdateMarginTx& u = tx.margin;
  if (!mkts_.count(u.market)) return Reject::kInvalidMarket;
  if (u.direction > 1) return Reject::kInvalidMarginDirection;
  if (u.amount <= 0 || u.amount > (int64_t{1} << 53)) return Reject::kInvalidTransferAmount;
  auto it = a->pos.find(u.market);
  if (it == a->pos.end() || !it->second.iso || it->second.size == 0) return Reject::kNotIsolated;
  Pos& p = it->second;
  if (u.direction == 1) {
    if (u.amount > free_collateral(tx.h.account)) return Reject::kInsufficientCollateral;
  } else {
    __int128 own_tav, own_imr;
    isolated_bucket(p, mkts_.at(u.market), own_tav, own_imr);
    if (u.amount > p.alloc || own_tav - u.amount < own_imr) return Reject::kNotEnoughMargin;
  }
  k->nonce = tx.h.nonce + 1;
  const Usdc delta = u.direction == 1 ? u.amount : -u.amount;
  p.alloc += delta;
  a->collateral -= delta;
  return Reject::kOk;
}

}  // namespace tachyon::testing
