// Field lists of every record. Each list is the single definition of a layout: the Sizer gives
// its size at compile time (static_asserted below), the Writer encodes, the Reader decodes.
#include "tachyon/codec/codec.hpp"

#include "tachyon/codec/wire.hpp"

namespace tachyon::codec {

namespace {

template <class IO, class H>
constexpr void fields(IO& io, H& h, std::type_identity<TxHeader>) {
  io.num(h.seq);
  io.num(h.block);
  io.num(h.time_ns);
  io.num(h.expired_at_ms);
  io.num(h.account);
  io.num(h.nonce);
  io.num(h.key_version);
  io.num(h.api_key_index);
  io.num(h.flags);
  io.pad(2);
}

template <class IO, class P>
constexpr void market_params(IO& io, P& p) {
  io.chars(p.symbol);
  io.num(p.size_decimals);
  io.num(p.price_decimals);
  io.num(p.status);
  io.pad(1);
  io.num(p.taker_fee_ppm);
  io.num(p.maker_fee_ppm);
  io.num(p.default_imf);
  io.num(p.min_imf);
  io.num(p.mmf);
  io.num(p.cmf);
  io.num(p.price_band);
  io.num(p.market_protection);
  io.num(p.min_base_lots);
  io.num(p.min_quote_usdc);
  io.num(p.max_orders_per_account);
  io.num(p.max_orders);
  io.num(p.funding_clamp_small);
  io.num(p.funding_clamp_big);
  io.num(p.interest_rate);
  io.num(p.breaker_band);
  io.num(p.breaker_window_s);
  io.num(p.breaker_cooldown_s);
  io.pad(4);
}

template <class IO, class O>
constexpr void order_fields(IO& io, O& o) {
  io.num(o.client_order_index);
  io.num(o.base_amount);
  io.num(o.price);
  io.num(o.trigger_price);
  io.num(o.order_expiry_ms);
  io.num(o.market);
  io.num(o.is_ask);
  io.num(o.type);
  io.num(o.tif);
  io.num(o.reduce_only);
  io.num(o.stp);
  io.pad(2);
}

// Payloads of the operator's txs (deposits, markets, prices, funding ticks): tx_payload routes
// only these types here.
template <class IO, class T>
constexpr bool operator_tx_payload(IO& io, T& tx, TxType type) {
  switch (type) {
    case TxType::kDeposit: {
      auto& d = tx.deposit;
      io.num(d.to_account);
      io.num(d.amount);
      io.bytes(d.l1_address);
      io.bytes(d.pubkey);
      io.num(d.api_key_index);
      io.pad(3);
      return true;
    }
    case TxType::kCreateMarket:
      io.num(tx.create_market.market);
      io.pad(7);
      market_params(io, tx.create_market.params);
      io.num(tx.create_market.index_price);
      return true;
    case TxType::kUpdateMarket:
      io.num(tx.update_market.market);
      io.pad(7);
      market_params(io, tx.update_market.params);
      return true;
    case TxType::kSetIndexPrice:
      io.num(tx.set_index.market);
      io.pad(7);
      io.num(tx.set_index.index_price);
      return true;
    case TxType::kSetMarketStatus:
      io.num(tx.market_status.market);
      io.num(tx.market_status.status);
      io.pad(6);
      return true;
    case TxType::kFundingTick:
      io.num(tx.funding.market);
      io.pad(7);
      return true;
    default: return false;
  }
}

// Payloads of the account txs (keys, sub-accounts, transfers, withdrawals, leverage, margin):
// tx_payload routes only these types here.
template <class IO, class T>
constexpr bool account_tx_payload(IO& io, T& tx, TxType type) {
  switch (type) {
    case TxType::kChangePubKey:
      io.num(tx.change_key.target_key_index);
      io.pad(7);
      io.bytes(tx.change_key.pubkey);
      return true;
    case TxType::kCreateSubAccount: return true;
    case TxType::kTransfer: {
      auto& t = tx.transfer;
      io.num(t.to_account);
      io.num(t.amount);
      io.num(t.fee);
      io.num(t.asset);
      io.pad(7);
      io.bytes(t.memo);
      return true;
    }
    case TxType::kWithdraw:
      io.num(tx.withdraw.amount);
      io.num(tx.withdraw.asset);
      io.pad(7);
      return true;
    case TxType::kUpdateLeverage:
      io.num(tx.leverage.imf);
      io.num(tx.leverage.market);
      io.num(tx.leverage.margin_mode);
      io.pad(2);
      return true;
    case TxType::kUpdateMargin:
      io.num(tx.margin.amount);
      io.num(tx.margin.market);
      io.num(tx.margin.direction);
      io.pad(6);
      return true;
    default: return false;
  }
}

// Payloads of the order txs: tx_payload routes only these types here.
template <class IO, class T>
constexpr bool order_tx_payload(IO& io, T& tx, TxType type) {
  switch (type) {
    case TxType::kCreateOrder: order_fields(io, tx.order); return true;
    case TxType::kCreateGroupedOrders: {
      io.num(tx.grouped.grouping);
      io.num(tx.grouped.count);
      io.pad(6);
      for (auto& o : tx.grouped.orders) order_fields(io, o);
      return true;
    }
    case TxType::kCancelOrder:
      io.num(tx.cancel.index);
      io.num(tx.cancel.market);
      io.pad(7);
      return true;
    case TxType::kCancelAllOrders:
      io.num(tx.cancel_all.time_ms);
      io.num(tx.cancel_all.tif);
      io.num(tx.cancel_all.market);
      io.pad(6);
      return true;
    case TxType::kModifyOrder:
      io.num(tx.modify.index);
      io.num(tx.modify.base_amount);
      io.num(tx.modify.price);
      io.num(tx.modify.trigger_price);
      io.num(tx.modify.market);
      io.pad(7);
      return true;
    default: return false;
  }
}

// Payload of each tx type, by group. Returns false for an unknown type. Every type is listed here
// (no default): a new type the switch misses does not compile (-Wswitch).
template <class IO, class T>
constexpr bool tx_payload(IO& io, T& tx, TxType type) {
  switch (type) {
    case TxType::kDeposit:
    case TxType::kCreateMarket:
    case TxType::kUpdateMarket:
    case TxType::kSetIndexPrice:
    case TxType::kSetMarketStatus:
    case TxType::kFundingTick: return operator_tx_payload(io, tx, type);
    case TxType::kChangePubKey:
    case TxType::kCreateSubAccount:
    case TxType::kTransfer:
    case TxType::kWithdraw:
    case TxType::kUpdateLeverage:
    case TxType::kUpdateMargin: return account_tx_payload(io, tx, type);
    case TxType::kCreateOrder:
    case TxType::kCreateGroupedOrders:
    case TxType::kCancelOrder:
    case TxType::kCancelAllOrders:
    case TxType::kModifyOrder: return order_tx_payload(io, tx, type);
  }
  return false;
}

// Payloads of the tx results and the updates of orders and their fills: update_payload routes
// only these types here.
template <class IO, class U>
constexpr bool trading_update_payload(IO& io, U& u, UpdateType type) {
  switch (type) {
    case UpdateType::kTxResult: {
      auto& r = u.result;
      io.num(r.seq);
      io.num(r.account);
      io.num(r.order_index);
      io.num(r.reject);
      io.num(r.type);
      io.num(r.api_key_index);
      io.pad(4);
      io.num(r.next_nonce);
      io.num(r.block);
      return true;
    }
    case UpdateType::kOrderAdded:
    case UpdateType::kOrderReduced:
    case UpdateType::kOrderRemoved: {
      auto& o = u.order;
      io.num(o.order_index);
      io.num(o.client_order_index);
      io.num(o.account);
      io.num(o.price);
      io.num(o.remaining);
      io.num(o.initial);
      io.num(o.expiry_ms);
      io.num(o.market);
      io.num(o.is_ask);
      io.num(o.type);
      io.num(o.tif);
      io.num(o.reason);
      io.num(o.reduce_only);
      io.num(o.pending);
      io.pad(1);
      io.num(o.trigger_price);
      io.num(o.parent);
      io.num(o.child);
      io.num(o.child2);
      io.num(o.sibling);
      io.num(o.block);
      return true;
    }
    case UpdateType::kTrade: {
      auto& t = u.trade;
      io.num(t.trade_id);
      io.num(t.maker_order);
      io.num(t.taker_order);
      io.num(t.maker);
      io.num(t.taker);
      io.num(t.price);
      io.num(t.size);
      io.num(t.maker_fee);
      io.num(t.taker_fee);
      io.num(t.market);
      io.num(t.taker_is_ask);
      io.num(t.kind);
      io.pad(5);
      io.num(t.maker_client_order_index);
      io.num(t.taker_client_order_index);
      io.num(t.block);
      return true;
    }
    default: return false;
  }
}

// Payloads of an account's updates (position, balance, risk, the account and its keys):
// update_payload routes only these types here.
template <class IO, class U>
constexpr bool account_update_payload(IO& io, U& u, UpdateType type) {
  switch (type) {
    case UpdateType::kPosition: {
      auto& p = u.position;
      io.num(p.account);
      io.num(p.size);
      io.num(p.entry_notional);
      io.num(p.realized_pnl);
      io.num(p.market);
      io.num(p.margin_mode);
      io.pad(2);
      io.num(p.imf);
      io.num(p.funding_paid);
      io.num(p.allocated);
      return true;
    }
    case UpdateType::kBalance:
      io.num(u.balance.account);
      io.num(u.balance.collateral);
      io.num(u.balance.delta);
      io.num(u.balance.reason);
      io.pad(7);
      return true;
    case UpdateType::kRisk: {
      auto& r = u.risk;
      io.num(r.account);
      io.num(r.tav);
      io.num(r.mmr);
      io.num(r.amount);
      io.num(r.market);
      io.num(r.event);
      io.pad(6);
      return true;
    }
    case UpdateType::kAccount:
      io.num(u.account.account);
      io.num(u.account.master);
      io.bytes(u.account.l1_address);
      io.pad(4);
      return true;
    case UpdateType::kApiKey:
      io.num(u.api_key.account);
      io.num(u.api_key.version);
      io.num(u.api_key.key_index);
      io.pad(3);
      io.num(u.api_key.next_nonce);
      io.bytes(u.api_key.pubkey);
      return true;
    default: return false;
  }
}

// Payloads of a market's updates (mark price, parameters, funding): update_payload routes only
// these types here.
template <class IO, class U>
constexpr bool market_update_payload(IO& io, U& u, UpdateType type) {
  switch (type) {
    case UpdateType::kMarkPrice:
      io.num(u.mark.mark);
      io.num(u.mark.index);
      io.num(u.mark.open_interest);
      io.num(u.mark.market);
      io.pad(7);
      return true;
    case UpdateType::kMarket:
      io.num(u.market.market);
      io.num(u.market.status);
      io.pad(6);
      market_params(io, u.market.params);
      return true;
    case UpdateType::kFunding: {
      auto& f = u.funding;
      io.num(f.estimate_rate);
      io.num(f.last_rate);
      io.num(f.last_time_ms);
      io.num(f.next_time_ms);
      io.num(f.paid);
      io.num(f.residue);
      io.num(f.mark);
      io.num(f.market);
      io.num(f.settled);
      io.pad(6);
      return true;
    }
    default: return false;
  }
}

// Payload of each update type, by group. Returns false for an unknown type. Every type is listed
// here (no default): a new type the switch misses does not compile (-Wswitch).
template <class IO, class U>
constexpr bool update_payload(IO& io, U& u, UpdateType type) {
  switch (type) {
    case UpdateType::kTxResult:
    case UpdateType::kOrderAdded:
    case UpdateType::kOrderReduced:
    case UpdateType::kOrderRemoved:
    case UpdateType::kTrade: return trading_update_payload(io, u, type);
    case UpdateType::kPosition:
    case UpdateType::kBalance:
    case UpdateType::kRisk:
    case UpdateType::kAccount:
    case UpdateType::kApiKey: return account_update_payload(io, u, type);
    case UpdateType::kMarkPrice:
    case UpdateType::kMarket:
    case UpdateType::kFunding: return market_update_payload(io, u, type);
  }
  return false;
}

// Literal stand-ins with the members of Tx and StateUpdate, so the field lists can be sized in
// constant evaluation (Tx and StateUpdate zero themselves with memset and are not literal).
struct TxProbe {
  DepositTx deposit{};
  CreateMarketTx create_market{};
  UpdateMarketTx update_market{};
  SetIndexPriceTx set_index{};
  FundingTickTx funding{};
  SetMarketStatusTx market_status{};
  ChangePubKeyTx change_key{};
  TransferTx transfer{};
  WithdrawTx withdraw{};
  CreateOrderTx order{};
  CancelOrderTx cancel{};
  CancelAllOrdersTx cancel_all{};
  ModifyOrderTx modify{};
  UpdateLeverageTx leverage{};
  UpdateMarginTx margin{};
  CreateGroupedOrdersTx grouped{};
};
struct UpdateProbe {
  int64_t time_ns = 0;
  TxResultUpdate result{};
  OrderUpdate order{};
  TradeUpdate trade{};
  PositionUpdate position{};
  BalanceUpdate balance{};
  MarkPriceUpdate mark{};
  MarketUpdate market{};
  FundingUpdate funding{};
  RiskUpdate risk{};
  AccountUpdate account{};
  ApiKeyUpdate api_key{};
};

constexpr size_t tx_size(TxType t) {
  Sizer s;
  TxProbe tx;
  TxHeader h{};
  fields(s, h, std::type_identity<TxHeader>{});
  return tx_payload(s, tx, t) ? sizeof(RecordHeader) + s.size() : 0;
}

constexpr size_t update_size(UpdateType t) {
  Sizer s;
  UpdateProbe u;
  s.num(u.time_ns);
  return update_payload(s, u, t) ? sizeof(RecordHeader) + s.size() : 0;
}

// The layouts, pinned: a change here is a format change and needs a new version.
static_assert(tx_size(TxType::kCreateOrder) == 8 + 56 + 48);
static_assert(tx_size(TxType::kCancelOrder) == 8 + 56 + 16);
static_assert(tx_size(TxType::kModifyOrder) == 8 + 56 + 40);
static_assert(tx_size(TxType::kDeposit) == 8 + 56 + 72);
static_assert(tx_size(TxType::kCreateMarket) == 8 + 56 + 120);
static_assert(tx_size(TxType::kUpdateMarket) == 8 + 56 + 112);
static_assert(tx_size(TxType::kTransfer) == 8 + 56 + 64);
static_assert(update_size(UpdateType::kTrade) == 8 + 8 + 104);
static_assert(update_size(UpdateType::kOrderAdded) == 8 + 8 + 112);
static_assert(update_size(UpdateType::kPosition) == 8 + 8 + 56);
static_assert(tx_size(TxType::kUpdateMargin) == 8 + 56 + 16);
static_assert(tx_size(TxType::kCreateGroupedOrders) == 8 + 56 + 8 + 3 * 48);
static_assert(tx_size(TxType::kCreateMarket) <= kMaxRecordSize);

void put_header(Writer& w, size_t len, uint16_t type) {
  w.num(static_cast<uint32_t>(len));
  w.num(type);
  w.num((type & 0xff00) == kUpdateBase ? kUpdateVersion : kVersion);
  w.num(uint8_t{0});
}

Decoded check_header(std::span<const uint8_t> in, RecordHeader& h, uint16_t base) {
  Decoded d = peek_header(in, h);
  if (!d.ok()) return d;
  if ((h.type & 0xff00) != base) return {Error::kUnknownType, 0};
  if (h.version != (base == kUpdateBase ? kUpdateVersion : kVersion))
    return {Error::kBadVersion, 0};
  return d;
}

}  // namespace

// Constant-evaluated sizes, one entry per possible type byte.
struct SizeTables {
  std::array<uint16_t, 256> tx{};
  std::array<uint16_t, 256> update{};
  constexpr SizeTables() {
    for (int i = 0; i < 256; ++i) {
      tx[i] = static_cast<uint16_t>(tx_size(static_cast<TxType>(i)));
      update[i] = static_cast<uint16_t>(update_size(static_cast<UpdateType>(i)));
    }
  }
};
static constexpr SizeTables kSizes;

std::string_view error_message(Error e) {
  switch (e) {
    case Error::kOk: return "ok";
    case Error::kTruncated: return "record truncated";
    case Error::kBadLength: return "record length does not match its type";
    case Error::kUnknownType: return "unknown record type";
    case Error::kBadVersion: return "unsupported record version";
    case Error::kBufferTooSmall: return "output buffer too small";
  }
  return "unknown codec error";
}

size_t encoded_size(const Tx& tx) { return kSizes.tx[static_cast<uint8_t>(tx.h.type)]; }
size_t encoded_size(const StateUpdate& u) { return kSizes.update[static_cast<uint8_t>(u.type)]; }

size_t encode(const Tx& tx, std::span<uint8_t> out) {
  const size_t len = encoded_size(tx);
  if (len == 0 || out.size() < len) return 0;
  Writer w(out.data());
  put_header(w, len, static_cast<uint16_t>(kTxBase | static_cast<uint8_t>(tx.h.type)));
  fields(w, tx.h, std::type_identity<TxHeader>{});
  tx_payload(w, tx, tx.h.type);
  return len;
}

size_t encode(const StateUpdate& u, std::span<uint8_t> out) {
  const size_t len = encoded_size(u);
  if (len == 0 || out.size() < len) return 0;
  Writer w(out.data());
  put_header(w, len, static_cast<uint16_t>(kUpdateBase | static_cast<uint8_t>(u.type)));
  w.num(u.time_ns);
  update_payload(w, u, u.type);
  return len;
}

Decoded peek_header(std::span<const uint8_t> in, RecordHeader& h) {
  if (in.size() < sizeof(RecordHeader)) return {Error::kTruncated, 0};
  Reader r(in);
  r.num(h.length);
  r.num(h.type);
  r.num(h.version);
  r.num(h.flags);
  if (h.length < sizeof(RecordHeader) || h.length > kMaxRecordSize) return {Error::kBadLength, 0};
  if (in.size() < h.length) return {Error::kTruncated, 0};
  return {Error::kOk, h.length};
}

Decoded decode(std::span<const uint8_t> in, Tx& out) {
  RecordHeader h{};
  Decoded d = check_header(in, h, kTxBase);
  if (!d.ok()) return d;
  const auto type = static_cast<TxType>(h.type & 0xff);
  const size_t len = kSizes.tx[h.type & 0xff];
  if (len == 0) return {Error::kUnknownType, 0};
  if (h.length != len) return {Error::kBadLength, 0};
  Tx tx;
  tx.h.type = type;
  Reader r(in.subspan(sizeof(RecordHeader), len - sizeof(RecordHeader)));
  fields(r, tx.h, std::type_identity<TxHeader>{});
  tx_payload(r, tx, type);
  if (!r.ok() || r.remaining() != 0) return {Error::kBadLength, 0};
  out = tx;
  return {Error::kOk, len};
}

Decoded decode(std::span<const uint8_t> in, StateUpdate& out) {
  RecordHeader h{};
  Decoded d = check_header(in, h, kUpdateBase);
  if (!d.ok()) return d;
  const auto type = static_cast<UpdateType>(h.type & 0xff);
  const size_t len = kSizes.update[h.type & 0xff];
  if (len == 0) return {Error::kUnknownType, 0};
  if (h.length != len) return {Error::kBadLength, 0};
  StateUpdate u;
  u.type = type;
  Reader r(in.subspan(sizeof(RecordHeader), len - sizeof(RecordHeader)));
  r.num(u.time_ns);
  update_payload(r, u, type);
  if (!r.ok() || r.remaining() != 0) return {Error::kBadLength, 0};
  out = u;
  return {Error::kOk, len};
}

}  // namespace tachyon::codec
