// Engine: the execute() switch, authentication, accounts, keys, transfers and operator txs.
#include "tachyon/engine/engine.hpp"

#include <algorithm>

#include "context.hpp"

namespace tachyon {

bool is_operator_tx(TxType t) {
  return t == TxType::kDeposit || t == TxType::kCreateMarket || t == TxType::kUpdateMarket ||
         t == TxType::kSetIndexPrice || t == TxType::kSetMarketStatus || t == TxType::kFundingTick;
}

Engine::Engine(const EngineConfig& cfg)
    : cfg_(cfg), pool_(cfg.max_orders), expiries_(pool_), order_slot_(2 * cfg.max_orders) {
  accounts_.reserve(cfg.expected_accounts);
  account_slot_.reserve(cfg.expected_accounts);
  // Sized for a typical working set, not the pool: a sparse table misses cache on every lookup.
  // It grows (allocating) only until it fits the live client order indices.
  coi_slot_.reserve(std::min<uint32_t>(cfg.max_orders, 1u << 14));
  for (int i = 0; i < kMaxMarkets; ++i) markets_[i].id = static_cast<MarketId>(i);
  // Genesis: the fee account and the insurance fund exist from the start, with no keys.
  NullSink null;
  Tx genesis;
  Ctx c{null, genesis, 0, 0};
  create_account(c, cfg.fee_account, cfg.fee_account);
  if (cfg.insurance_account != cfg.fee_account)
    create_account(c, cfg.insurance_account, cfg.insurance_account);
}

TxResult Engine::execute(const Tx& tx, UpdateSink& sink) {
  Ctx c{sink, tx, tx.h.time_ns, tx.h.time_ns / 1'000'000};
  last_seq_ = tx.h.seq;
  last_block_ = tx.h.block;
  // Time-driven transitions first, in a fixed order: TWAP slices, expiries, dead man's switches,
  // breakers.
  fire_twaps(c);
  expire_orders(c, c.now_ms);
  fire_scheduled_cancels(c);
  clear_breakers(c);
  TxResult r;
  switch (tx.h.type) {
    case TxType::kDeposit: r.reject = deposit(tx, c); break;
    case TxType::kCreateMarket: r.reject = create_market(tx, c); break;
    case TxType::kUpdateMarket: r.reject = update_market(tx, c); break;
    case TxType::kSetIndexPrice: r.reject = set_index_price(tx, c); break;
    case TxType::kChangePubKey: r.reject = change_pub_key(tx, c); break;
    case TxType::kCreateSubAccount: r.reject = create_sub_account(tx, c); break;
    case TxType::kTransfer: r.reject = transfer(tx, c); break;
    case TxType::kWithdraw: r.reject = withdraw(tx, c); break;
    case TxType::kCreateOrder: r.reject = create_order(tx, c, r.order_index); break;
    case TxType::kCreateGroupedOrders: r.reject = create_grouped(tx, c, r.order_index); break;
    case TxType::kCancelOrder: r.reject = cancel_order(tx, c, r.order_index); break;
    case TxType::kCancelAllOrders: r.reject = cancel_all(tx, c); break;
    case TxType::kModifyOrder: r.reject = modify_order(tx, c, r.order_index); break;
    case TxType::kUpdateLeverage: r.reject = update_leverage(tx, c); break;
    case TxType::kUpdateMargin: r.reject = update_margin(tx, c); break;
    case TxType::kFundingTick: r.reject = funding_tick(tx, c); break;
    case TxType::kSetMarketStatus: r.reject = set_market_status(tx, c); break;
    default: r.reject = Reject::kUnsupportedTxType; break;
  }
  settle_risk(c);
  StateUpdate u = c.make(UpdateType::kTxResult);
  u.result = TxResultUpdate{tx.h.seq,  tx.h.account,       r.order_index, r.reject,
                            tx.h.type, tx.h.api_key_index, c.next_nonce,  tx.h.block};
  sink.on_update(u);
  return r;
}

// ---- authentication (precedence: expiry → account → key → key version → nonce) ----

Reject Engine::check_operator(const Tx& tx) const {
  if (tx.h.expired_at_ms != 0 && tx.h.time_ns / 1'000'000 > tx.h.expired_at_ms)
    return Reject::kTxExpired;
  if (tx.h.nonce != operator_nonce_) return Reject::kInvalidNonce;
  return Reject::kOk;
}

Reject Engine::authenticate(const Tx& tx, Ctx& c, Account*& acct, ApiKey*& key) {
  if (tx.h.expired_at_ms != 0 && c.now_ms > tx.h.expired_at_ms) return Reject::kTxExpired;
  acct = find_account(tx.h.account);
  if (acct == nullptr) return Reject::kAccountNotFound;
  if (tx.h.api_key_index >= kMaxApiKeys) return Reject::kInvalidApiKeyIndex;
  key = acct->key(tx.h.api_key_index);
  if (key == nullptr) return Reject::kApiKeyNotFound;
  if (tx.h.key_version != key->version) return Reject::kStaleKeyVersion;
  if (tx.h.flags & kTxFlagSkipNonce) {
    if (tx.h.nonce < key->next_nonce) return Reject::kInvalidNonce;
  } else if (tx.h.nonce != key->next_nonce) {
    return Reject::kInvalidNonce;
  }
  return Reject::kOk;
}

void Engine::consume_nonce(Ctx& c, ApiKey& key, const Tx& tx) {
  key.next_nonce = tx.h.nonce + 1;
  c.next_nonce = key.next_nonce;
}

Account* Engine::find_account(AccountIndex a) {
  auto it = account_slot_.find(a);
  return it == account_slot_.end() ? nullptr : &accounts_[it->second];
}

const Account* Engine::account(AccountIndex a) const {
  auto it = account_slot_.find(a);
  return it == account_slot_.end() ? nullptr : &accounts_[it->second];
}

const Order* Engine::order(OrderIndex id) const {
  const uint32_t s = order_slot_.find(id, pool_);
  return s == kNoSlot ? nullptr : &pool_[s];
}

Account& Engine::create_account(Ctx& c, AccountIndex index, AccountIndex master,
                                const std::array<uint8_t, 20>& l1) {
  uint32_t slot = static_cast<uint32_t>(accounts_.size());
  Account& a = accounts_.emplace_back();
  a.index = index;
  a.master = master;
  a.collateral = 0;
  a.l1_address = l1;
  account_slot_.emplace(index, slot);
  StateUpdate u = c.make(UpdateType::kAccount);
  u.account = AccountUpdate{index, master, l1};
  c.sink.on_update(u);
  return a;
}

// ---- operator ----

Reject Engine::deposit(const Tx& tx, Ctx& c) {
  if (Reject r = check_operator(tx); r != Reject::kOk) return r;
  const DepositTx& d = tx.deposit;
  if (d.to_account > kMaxAccountIndex) return Reject::kInvalidAccountIndex;
  Account* a = find_account(d.to_account);
  if (a == nullptr && d.to_account >= kFirstSubAccountIndex) return Reject::kInvalidAccountIndex;
  if (d.amount <= 0 || d.amount > (int64_t{1} << 53)) return Reject::kInvalidTransferAmount;
  const bool with_key = std::any_of(d.pubkey.begin(), d.pubkey.end(), [](uint8_t b) { return b; });
  if (with_key && d.api_key_index >= kMaxApiKeys) return Reject::kInvalidApiKeyIndex;
  ++operator_nonce_;
  if (a == nullptr) {
    a = &create_account(c, d.to_account, d.to_account, d.l1_address);
  }
  const Usdc held = a->collateral, deposited = total_deposits_;
  a->collateral += d.amount;
  total_deposits_ += d.amount;
  // Credited equals deposited: the account's gain is what the deposits total grew by.
  TACHYON_ASSERT(a->collateral - held == total_deposits_ - deposited,
                 "deposit: credited != deposited");
  emit_balance(c, *a, d.amount, BalanceReason::kDeposit);
  if (with_key) {
    ApiKey& k = a->key_or_add(d.api_key_index);
    k.pubkey = d.pubkey;
    ++k.version;
    StateUpdate u = c.make(UpdateType::kApiKey);
    u.api_key = ApiKeyUpdate{a->index, k.version, k.index, k.next_nonce, k.pubkey};
    c.sink.on_update(u);
  }
  return Reject::kOk;
}

bool market_params_valid(const MarketParams& p) {
  if (p.symbol[0] == 0 || p.symbol.back() != 0) return false;
  if (p.size_decimals + p.price_decimals > kQuoteDecimals) return false;
  if (static_cast<uint8_t>(p.status) > static_cast<uint8_t>(MarketStatus::kHalted)) return false;
  if (p.taker_fee_ppm < 0 || p.taker_fee_ppm > 100'000) return false;
  if (p.maker_fee_ppm < 0 || p.maker_fee_ppm > 100'000) return false;
  if (!(0 < p.cmf && p.cmf < p.mmf && p.mmf < p.min_imf && p.min_imf <= p.default_imf &&
        p.default_imf <= kFractionOne))
    return false;
  if (p.price_band <= 0 || p.price_band > kFractionOne) return false;
  if (p.market_protection <= 0 || p.market_protection > kFractionOne) return false;
  if (p.min_base_lots < 1 || p.min_base_lots > kMaxBaseAmount || p.min_quote_usdc < 0) return false;
  if (p.max_orders_per_account < 1 || p.max_orders < 1) return false;
  if (p.funding_clamp_small < 0 || p.funding_clamp_big < p.funding_clamp_small ||
      p.funding_clamp_big > 1'000'000 || p.interest_rate < -1'000'000 ||
      p.interest_rate > 1'000'000)
    return false;
  if (p.breaker_band < 0 || p.breaker_band > kFractionOne || p.breaker_window_s < 0 ||
      p.breaker_cooldown_s < 0 || (p.breaker_band > 0 && p.breaker_window_s == 0))
    return false;
  return true;
}

Reject Engine::create_market(const Tx& tx, Ctx& c) {
  if (Reject r = check_operator(tx); r != Reject::kOk) return r;
  const CreateMarketTx& cm = tx.create_market;
  if (cm.market >= kMaxMarkets) return Reject::kInvalidMarket;
  if (markets_[cm.market].exists) return Reject::kMarketExists;
  if (!market_params_valid(cm.params)) return Reject::kInvalidMarketConfig;
  if (cm.index_price <= 0 || cm.index_price > kMaxPriceTicks) return Reject::kInvalidIndexPrice;
  ++operator_nonce_;
  Market& m = markets_[cm.market];
  m.exists = true;
  m.params = cm.params;
  m.quote_multiplier =
      pow10_i64(kQuoteDecimals - cm.params.size_decimals - cm.params.price_decimals);
  m.index_price = cm.index_price;
  m.mark_price = 0;  // refreshed below through touch()
  m.book.reserve(cfg_.levels_per_side);
  c.touch(cm.market);
  emit_market(c, m);
  return Reject::kOk;
}

Reject Engine::update_market(const Tx& tx, Ctx& c) {
  if (Reject r = check_operator(tx); r != Reject::kOk) return r;
  const UpdateMarketTx& um = tx.update_market;
  if (um.market >= kMaxMarkets || !markets_[um.market].exists) return Reject::kInvalidMarket;
  Market& m = markets_[um.market];
  if (!market_params_valid(um.params) || um.params.symbol != m.params.symbol ||
      um.params.size_decimals != m.params.size_decimals ||
      um.params.price_decimals != m.params.price_decimals)
    return Reject::kInvalidMarketConfig;
  ++operator_nonce_;
  const bool margin_changed = um.params.mmf != m.params.mmf || um.params.cmf != m.params.cmf;
  m.params = um.params;
  if (margin_changed) {  // every holder's distance to liquidation changed
    for (uint32_t h : m.holders) c.risk(h);
  }
  // An operator's resume (status active) also clears a tripped circuit breaker.
  if (um.params.status == MarketStatus::kActive && m.breaker_level != 0) {
    m.breaker_level = 0;
    m.window_start_ms = c.now_ms;
    m.window_ref = m.mark_price;
    breaker_markets_[m.id >> 6] &= ~(uint64_t{1} << (m.id & 63));
  }
  emit_market(c, m);
  return Reject::kOk;
}

Reject Engine::set_index_price(const Tx& tx, Ctx& c) {
  if (Reject r = check_operator(tx); r != Reject::kOk) return r;
  const SetIndexPriceTx& s = tx.set_index;
  if (s.market >= kMaxMarkets || !markets_[s.market].exists) return Reject::kInvalidMarket;
  if (s.index_price <= 0 || s.index_price > kMaxPriceTicks) return Reject::kInvalidIndexPrice;
  ++operator_nonce_;
  markets_[s.market].index_price = s.index_price;
  c.touch(s.market);
  return Reject::kOk;
}

Reject Engine::set_market_status(const Tx& tx, Ctx& c) {
  if (Reject r = check_operator(tx); r != Reject::kOk) return r;
  const SetMarketStatusTx& s = tx.market_status;
  if (s.market >= kMaxMarkets || !markets_[s.market].exists) return Reject::kInvalidMarket;
  if (static_cast<uint8_t>(s.status) > static_cast<uint8_t>(MarketStatus::kHalted))
    return Reject::kInvalidMarketConfig;
  ++operator_nonce_;
  Market& m = markets_[s.market];
  m.params.status = s.status;
  if (s.status == MarketStatus::kActive && m.breaker_level != 0) {
    m.breaker_level = 0;
    m.window_start_ms = c.now_ms;
    m.window_ref = m.mark_price;
    breaker_markets_[m.id >> 6] &= ~(uint64_t{1} << (m.id & 63));
  }
  emit_market(c, m);
  return Reject::kOk;
}

// ---- accounts and keys ----

Reject Engine::change_pub_key(const Tx& tx, Ctx& c) {
  Account* a = nullptr;
  ApiKey* signer = nullptr;
  if (Reject r = authenticate(tx, c, a, signer); r != Reject::kOk) return r;
  const ChangePubKeyTx& k = tx.change_key;
  if (k.target_key_index >= kMaxApiKeys) return Reject::kInvalidApiKeyIndex;
  if (std::all_of(k.pubkey.begin(), k.pubkey.end(), [](uint8_t b) { return b == 0; }))
    return Reject::kInvalidPubKey;
  consume_nonce(c, *signer, tx);
  ApiKey& target = a->key_or_add(k.target_key_index);  // may move `signer`: not used below
  target.pubkey = k.pubkey;
  ++target.version;  // in-flight txs verified against the old key are now refused
  StateUpdate u = c.make(UpdateType::kApiKey);
  u.api_key =
      ApiKeyUpdate{a->index, target.version, target.index, target.next_nonce, target.pubkey};
  c.sink.on_update(u);
  return Reject::kOk;
}

Reject Engine::create_sub_account(const Tx& tx, Ctx& c) {
  Account* a = nullptr;
  ApiKey* key = nullptr;
  if (Reject r = authenticate(tx, c, a, key); r != Reject::kOk) return r;
  if (next_sub_account_ > kMaxAccountIndex) return Reject::kTooManySubAccounts;
  consume_nonce(c, *key, tx);
  // The new account starts with a copy of the signing key (fresh nonce) so the same key holder
  // can trade it at once; `a` and `key` may dangle after create_account.
  const ApiKey signer = *key;
  const AccountIndex master = a->master;
  const auto l1 = a->l1_address;
  Account& sub = create_account(c, next_sub_account_++, master, l1);
  ApiKey& k = sub.key_or_add(signer.index);
  k.pubkey = signer.pubkey;
  k.version = 1;
  k.next_nonce = 0;
  StateUpdate u = c.make(UpdateType::kApiKey);
  u.api_key = ApiKeyUpdate{sub.index, k.version, k.index, k.next_nonce, k.pubkey};
  c.sink.on_update(u);
  return Reject::kOk;
}

// What an account may move out: collateral, but never below its initial margin.
static Usdc free_collateral(const Account& a, const MarginInfo& mi) {
  __int128 f = std::min<__int128>(a.collateral, mi.tav - mi.imr);
  return f < 0 ? 0 : static_cast<Usdc>(std::min<__int128>(f, INT64_MAX));
}

Reject Engine::transfer(const Tx& tx, Ctx& c) {
  Account* from = nullptr;
  ApiKey* key = nullptr;
  if (Reject r = authenticate(tx, c, from, key); r != Reject::kOk) return r;
  const TransferTx& t = tx.transfer;
  if (t.asset != 3) return Reject::kInvalidAsset;
  if (t.amount <= 0 || t.amount > (int64_t{1} << 53)) return Reject::kInvalidTransferAmount;
  if (t.fee < 0 || t.fee > (int64_t{1} << 53)) return Reject::kInvalidFee;
  if (t.to_account == from->index) return Reject::kSelfTransfer;
  Account* to = find_account(t.to_account);
  if (to == nullptr) return Reject::kAccountNotFound;
  if (t.amount + t.fee > free_collateral(*from, margin(*from)))
    return Reject::kInsufficientCollateral;
  consume_nonce(c, *key, tx);
  // Debited equals credited: the collateral of sender, receiver and fee account (each counted
  // once: the fee account may be either) sums to the same before and after.
  Account& fee = accounts_[kFeeAccountSlot];
  auto held = [&] {
    const bool fee_apart = &fee != from && &fee != to;
    return __int128{from->collateral} + to->collateral + (fee_apart ? fee.collateral : 0);
  };
  const __int128 held_before = held();
  from->collateral -= t.amount + t.fee;
  emit_balance(c, *from, -t.amount - t.fee, BalanceReason::kTransferOut);
  c.risk(static_cast<uint32_t>(from - accounts_.data()));  // less slack: re-key it
  to->collateral += t.amount;
  emit_balance(c, *to, t.amount, BalanceReason::kTransferIn);
  if (t.fee > 0) {
    fee.collateral += t.fee;
    emit_balance(c, fee, t.fee, BalanceReason::kFee);
  }
  TACHYON_ASSERT(held() == held_before, "transfer: debited != credited");
  TACHYON_ASSERT(from->collateral >= 0, "transfer overdrew the sender");
  return Reject::kOk;
}

Reject Engine::withdraw(const Tx& tx, Ctx& c) {
  Account* a = nullptr;
  ApiKey* key = nullptr;
  if (Reject r = authenticate(tx, c, a, key); r != Reject::kOk) return r;
  const WithdrawTx& w = tx.withdraw;
  if (w.asset != 3) return Reject::kInvalidAsset;
  if (w.amount <= 0 || w.amount > (int64_t{1} << 53)) return Reject::kInvalidTransferAmount;
  if (w.amount > free_collateral(*a, margin(*a))) return Reject::kInsufficientCollateral;
  consume_nonce(c, *key, tx);
  const Usdc held = a->collateral, withdrawn = total_withdrawals_;
  a->collateral -= w.amount;
  c.risk(static_cast<uint32_t>(a - accounts_.data()));
  total_withdrawals_ += w.amount;
  // Debited equals paid out: the account's loss is what the withdrawals total grew by, and never
  // more than it held.
  TACHYON_ASSERT(held - a->collateral == total_withdrawals_ - withdrawn && a->collateral >= 0,
                 "withdrawal: debited != paid out");
  emit_balance(c, *a, -w.amount, BalanceReason::kWithdraw);
  return Reject::kOk;
}

Reject Engine::update_leverage(const Tx& tx, Ctx& c) {
  Account* a = nullptr;
  ApiKey* key = nullptr;
  if (Reject r = authenticate(tx, c, a, key); r != Reject::kOk) return r;
  const UpdateLeverageTx& l = tx.leverage;
  if (l.market >= kMaxMarkets || !markets_[l.market].exists) return Reject::kInvalidMarket;
  if (l.margin_mode > 1) return Reject::kUnsupportedMarginMode;
  const Market& m = markets_[l.market];
  if (l.imf < m.params.min_imf || l.imf > kFractionOne) return Reject::kInvalidLeverage;
  const Position* now = a->position(l.market);
  const uint8_t mode_now = now != nullptr ? now->isolated : 0;
  if (l.margin_mode != mode_now) {
    if (l.margin_mode == 1 &&
        (a == &accounts_[kFeeAccountSlot] || a->index == cfg_.insurance_account))
      return Reject::kCrossOnlyAccount;
    if (now != nullptr && (now->size != 0 || now->open_orders != 0))
      return Reject::kMarginModeLocked;
  }
  const bool had_entry = now != nullptr;
  Position& p = a->position_or_add(l.market);
  const Bps4 old = p.imf;
  p.imf = l.imf;
  p.isolated = l.margin_mode;
  // Raising the fraction must leave both the cross bucket and the position's own at or above
  // initial margin; lowering it is always allowed.
  const MarginInfo mi = margin(*a);
  const MarginInfo own = p.isolated ? isolated(p) : MarginInfo{};
  if (l.imf > old && (mi.tav < mi.imr || own.tav < own.imr)) {
    p.imf = old;
    p.isolated = mode_now;
    if (!had_entry) a->positions.erase(a->positions.begin() + (&p - a->positions.data()));
    return Reject::kNotEnoughMargin;
  }
  consume_nonce(c, *key, tx);
  emit_position(c, *a, p);
  return Reject::kOk;
}

// Isolated margin in or out: adding takes free cross collateral; removing leaves the position at
// or above its initial margin.
Reject Engine::update_margin(const Tx& tx, Ctx& c) {
  Account* a = nullptr;
  ApiKey* key = nullptr;
  if (Reject r = authenticate(tx, c, a, key); r != Reject::kOk) return r;
  const UpdateMarginTx& u = tx.margin;
  if (u.market >= kMaxMarkets || !markets_[u.market].exists) return Reject::kInvalidMarket;
  if (u.direction > kMarginAdd) return Reject::kInvalidMarginDirection;
  if (u.amount <= 0 || u.amount > (int64_t{1} << 53)) return Reject::kInvalidTransferAmount;
  Position* p = a->position(u.market);
  if (p == nullptr || !p->isolated || p->size == 0) return Reject::kNotIsolated;
  if (u.direction == kMarginAdd) {
    if (u.amount > free_collateral(*a, margin(*a))) return Reject::kInsufficientCollateral;
  } else {
    const MarginInfo own = isolated(*p);
    if (u.amount > p->allocated || own.tav - u.amount < own.imr) return Reject::kNotEnoughMargin;
  }
  consume_nonce(c, *key, tx);
  const Usdc delta = u.direction == kMarginAdd ? u.amount : -u.amount;
  p->allocated += delta;
  a->collateral -= delta;
  // Margin moves within the account: in from free collateral, out from the position's own.
  TACHYON_ASSERT(delta > 0 ? a->collateral >= 0 : p->allocated >= 0,
                 "isolated margin moved more than its source held");
  emit_position(c, *a, *p);
  emit_balance(c, *a, -delta, BalanceReason::kIsolatedMargin);
  c.risk(static_cast<uint32_t>(a - accounts_.data()));
  return Reject::kOk;
}

// ---- emitters ----

void Engine::emit_balance(Ctx& c, const Account& a, Usdc delta, BalanceReason why) {
  StateUpdate u = c.make(UpdateType::kBalance);
  u.balance = BalanceUpdate{a.index, a.collateral, delta, why};
  c.sink.on_update(u);
}

void Engine::emit_position(Ctx& c, const Account& a, const Position& p) {
  StateUpdate u = c.make(UpdateType::kPosition);
  u.position = PositionUpdate{a.index, p.size,         p.entry_notional, p.realized_pnl, p.market,
                              p.imf,   p.funding_paid, p.allocated,      p.isolated};
  c.sink.on_update(u);
}

void Engine::emit_market(Ctx& c, const Market& m) {
  StateUpdate u = c.make(UpdateType::kMarket);
  u.market = MarketUpdate{m.id, m.status(), m.params};
  c.sink.on_update(u);
}

void Engine::emit_order(Ctx& c, UpdateType t, const Order& o, RemoveReason why) {
  OrderIndex child2 = 0;
  if (o.child != 0) {  // a primary: its second child is the first's OCO partner
    const uint32_t s = order_slot_.find(o.child, pool_);
    if (s != kNoSlot) child2 = pool_[s].sibling;
  }
  StateUpdate u = c.make(t);
  u.order = OrderUpdate{o.order_index,   o.client_order_index,
                        o.account,       o.price,
                        o.remaining,     o.initial,
                        o.expiry_ms,     o.market,
                        o.is_ask,        o.type,
                        o.tif,           why,
                        o.reduce_only,   o.pending,
                        o.trigger_price, o.parent,
                        o.child,         child2,
                        o.sibling,       c.tx.h.block};
  c.sink.on_update(u);
}

}  // namespace tachyon
