#include "tachyon/api/tx_info.hpp"

#include <simdjson.h>

#include "tachyon/api/json_writer.hpp"

#include "json_scratch.hpp"

namespace tachyon::api {

namespace sj = simdjson;

bool is_user_tx_type(int t) {
  switch (t) {
    case 8:
    case 9:
    case 12:
    case 13:
    case 14:
    case 15:
    case 16:
    case 17:
    case 20:
    case 28:
    case 29: return true;
    default: return false;
  }
}
bool is_operator_tx_type(int t) { return t == 1 || t == 60 || t == 61 || t == 62; }

namespace {

// The required fields found so far.
struct ParseSeen {
  bool account = false, nonce = false;
};

// The value's JSON type; false for a malformed value (never the throwing conversion: a
// malformed tx_info must answer 21501, not end the worker with an exception).
bool type_of(sj::ondemand::value& v, sj::ondemand::json_type& t) { return !v.type().get(t); }
bool is_null(sj::ondemand::value& v) {
  sj::ondemand::json_type t;
  return type_of(v, t) && t == sj::ondemand::json_type::null;
}

bool get_i64(sj::ondemand::value v, int64_t& out) {
  sj::ondemand::json_type t;
  if (!type_of(v, t)) return false;
  if (t == sj::ondemand::json_type::boolean) {
    bool b = false;
    if (v.get_bool().get(b)) return false;
    out = b ? 1 : 0;
    return true;
  }
  return !v.get_int64().get(out);
}

template <typename T>
bool set_int(sj::ondemand::value v, T& field, int64_t lo, int64_t hi) {
  int64_t x = 0;
  if (!get_i64(v, x) || x < lo || x > hi) return false;
  field = static_cast<T>(x);
  return true;
}

void write_order_fields(JsonWriter& w, const CreateOrderTx& o) {
  w.kv_i("MarketIndex", o.market).kv_i("ClientOrderIndex", o.client_order_index);
  w.kv_i("BaseAmount", o.base_amount).kv_i("Price", o.price).kv_i("IsAsk", o.is_ask);
  w.kv_i("Type", o.type).kv_i("TimeInForce", o.tif).kv_i("ReduceOnly", o.reduce_only);
  w.kv_i("TriggerPrice", o.trigger_price).kv_i("OrderExpiry", o.order_expiry_ms);
}

// One field of a CreateOrder tx_info (also each entry of CreateGroupedOrders' Orders).
bool order_field(std::string_view k, sj::ondemand::value v, CreateOrderTx& o) {
  constexpr int64_t kU48 = (int64_t{1} << 48) - 1;
  if (k == "MarketIndex") return set_int(v, o.market, 0, 254);
  if (k == "ClientOrderIndex") return set_int(v, o.client_order_index, 0, kU48);
  if (k == "BaseAmount") return set_int(v, o.base_amount, 0, kU48);
  if (k == "Price") return set_int(v, o.price, 0, 0xffffffffll);
  if (k == "IsAsk") return set_int(v, o.is_ask, 0, 1);
  if (k == "Type") return set_int(v, o.type, 0, 6);
  if (k == "TimeInForce") return set_int(v, o.tif, 0, 2);
  if (k == "ReduceOnly") return set_int(v, o.reduce_only, 0, 1);
  if (k == "TriggerPrice") return set_int(v, o.trigger_price, 0, 0xffffffffll);
  if (k == "OrderExpiry") return set_int(v, o.order_expiry_ms, -1, INT64_MAX);
  return true;  // unknown order fields are ignored, as before
}

// L2TxAttributes: skip-nonce, the market of a CancelAll, the self-trade mode of an order;
// integrator fees, self-trade equality and the order version are accepted and not used.
bool attributes_field(sj::ondemand::value v, Tx& tx, std::string& why) {
  if (is_null(v)) return true;
  sj::ondemand::object attrs;
  if (v.get_object().get(attrs)) return false;
  const TxType t = tx.h.type;
  for (auto a : attrs) {
    std::string_view ak;
    sj::ondemand::value av;
    int64_t x = 0;
    bool ok = !a.unescaped_key().get(ak) && !a.value().get(av) && get_i64(av, x);
    if (!ok) {
    } else if (ak == "4") {
      if (x == 1) tx.h.flags |= kTxFlagSkipNonce;
    } else if (ak == "5" && t == TxType::kCancelAllOrders) {
      ok = x >= 0 && x <= 255;
      tx.cancel_all.market = static_cast<MarketId>(x);
    } else if (ak == "6" && t == TxType::kCreateOrder) {
      ok = x >= 0 && x <= 3;
      tx.order.stp = static_cast<StpMode>(x);
    } else if (!(ak == "1" || ak == "2" || ak == "3" || ak == "7" || ak == "8")) {
      ok = false;
    }
    if (!ok) {
      why = "invalid L2TxAttributes entry " + std::string(ak);
      return false;
    }
  }
  return true;
}

// The fields every tx has; false when `k` is not one of them (`ok` untouched).
bool header_field(std::string_view k, sj::ondemand::value v, bool user, SignedTx& out,
                  ParseSeen& seen, bool& ok, std::string& why) {
  constexpr int64_t kU48 = (int64_t{1} << 48) - 1;
  Tx& tx = out.tx;
  if (user && (k == "AccountIndex" || k == "FromAccountIndex")) {
    ok = set_int(v, tx.h.account, 0, kU48);
    seen.account = true;
  } else if (user && k == "ApiKeyIndex") {
    ok = set_int(v, tx.h.api_key_index, 0, 254);
  } else if (k == "ExpiredAt") {
    ok = set_int(v, tx.h.expired_at_ms, 0, INT64_MAX);
  } else if (k == "Nonce") {
    ok = set_int(v, tx.h.nonce, 0, INT64_MAX);
    seen.nonce = true;
  } else if (k == "Sig") {
    std::string_view s;
    if (is_null(v)) return true;
    ok = !v.get_string().get(s) && from_base64(s, out.sig.data(), out.sig.size());
    out.has_sig = ok;
  } else if (k == "L2TxAttributes") {
    ok = attributes_field(v, tx, why);
  } else {
    return false;
  }
  return true;
}

// CreateGroupedOrders: its grouping and up to 3 orders.
bool grouped_field(std::string_view k, sj::ondemand::value v, CreateGroupedOrdersTx& g,
                   std::string& why) {
  if (k == "GroupingType") return set_int(v, g.grouping, 0, 255);  // the engine checks which
  if (k != "Orders") return true;
  sj::ondemand::array arr;
  g.count = 0;
  if (v.get_array().get(arr)) {  // not an array: nothing to iterate (simdjson UB)
    why = "Orders must be an array of orders";
    return false;
  }
  for (auto item : arr) {
    sj::ondemand::object oo;
    if (g.count >= 3 || item.get_object().get(oo)) return false;
    CreateOrderTx& o = g.orders[g.count++];
    o.order_expiry_ms = 0;
    for (auto f : oo) {
      std::string_view ok2;
      sj::ondemand::value vv;
      // never iterate on past an error
      if (f.unescaped_key().get(ok2) || f.value().get(vv) || !order_field(ok2, vv, o)) return false;
    }
  }
  return true;
}

// CancelOrder, CancelAllOrders, ModifyOrder.
bool order_admin_field(std::string_view k, sj::ondemand::value v, Tx& tx) {
  constexpr int64_t kU48 = (int64_t{1} << 48) - 1;
  switch (tx.h.type) {
    case TxType::kCancelOrder:
      if (k == "MarketIndex") return set_int(v, tx.cancel.market, 0, 254);
      if (k == "Index") return set_int(v, tx.cancel.index, 0, INT64_MAX);
      return true;
    case TxType::kCancelAllOrders:
      if (k == "TimeInForce") return set_int(v, tx.cancel_all.tif, 0, 2);
      if (k == "Time") return set_int(v, tx.cancel_all.time_ms, 0, INT64_MAX);
      return true;
    default: break;
  }
  auto& m = tx.modify;
  if (k == "MarketIndex") return set_int(v, m.market, 0, 254);
  if (k == "Index") return set_int(v, m.index, 0, INT64_MAX);
  if (k == "BaseAmount") return set_int(v, m.base_amount, 0, kU48);
  if (k == "Price") return set_int(v, m.price, 0, 0xffffffffll);
  if (k == "TriggerPrice") return set_int(v, m.trigger_price, 0, 0xffffffffll);
  return true;
}

bool hex_field(sj::ondemand::value v, uint8_t* out, size_t n, bool empty_ok) {
  std::string_view s;
  return !v.get_string().get(s) && ((empty_ok && s.empty()) || from_hex(s, out, n));
}

// Transfer, Withdraw, ChangePubKey, UpdateLeverage, UpdateMargin.
bool account_field(std::string_view k, sj::ondemand::value v, Tx& tx) {
  constexpr int64_t kU48 = (int64_t{1} << 48) - 1;
  switch (tx.h.type) {
    case TxType::kTransfer: {
      auto& x = tx.transfer;
      if (k == "ToAccountIndex") return set_int(v, x.to_account, 0, kU48);
      if (k == "AssetIndex") return set_int(v, x.asset, 0, 255);
      if (k == "Amount") return set_int(v, x.amount, 0, INT64_MAX);
      if (k == "USDCFee") return set_int(v, x.fee, 0, INT64_MAX);
      if (k == "Memo") return hex_field(v, x.memo.data(), x.memo.size(), true);
      return true;
    }
    case TxType::kWithdraw:
      if (k == "AssetIndex") return set_int(v, tx.withdraw.asset, 0, 255);
      if (k == "Amount") return set_int(v, tx.withdraw.amount, 0, INT64_MAX);
      return true;
    case TxType::kChangePubKey:
      if (k == "PubKey")
        return hex_field(v, tx.change_key.pubkey.data(), tx.change_key.pubkey.size(), false);
      if (k == "TargetApiKeyIndex") return set_int(v, tx.change_key.target_key_index, 0, 254);
      return true;
    case TxType::kUpdateLeverage:
      if (k == "MarketIndex") return set_int(v, tx.leverage.market, 0, 254);
      if (k == "InitialMarginFraction") return set_int(v, tx.leverage.imf, 0, 10000);
      if (k == "MarginMode") return set_int(v, tx.leverage.margin_mode, 0, 1);
      return true;
    case TxType::kUpdateMargin:
      if (k == "MarketIndex") return set_int(v, tx.margin.market, 0, 254);
      if (k == "USDCAmount") return set_int(v, tx.margin.amount, 0, INT64_MAX);
      if (k == "Direction") return set_int(v, tx.margin.direction, 0, 1);
      return true;
    default: return true;
  }
}

// The operator's txs: Deposit, FundingTick, SetMarketStatus, SetIndexPrice.
bool operator_field(std::string_view k, sj::ondemand::value v, Tx& tx) {
  constexpr int64_t kU48 = (int64_t{1} << 48) - 1;
  switch (tx.h.type) {
    case TxType::kDeposit: {
      auto& d = tx.deposit;
      if (k == "ToAccountIndex") return set_int(v, d.to_account, 0, kU48);
      if (k == "Amount") return set_int(v, d.amount, 0, INT64_MAX);
      if (k == "KeyIndex") return set_int(v, d.api_key_index, 0, 254);
      if (k == "PubKey") return hex_field(v, d.pubkey.data(), d.pubkey.size(), false);
      if (k == "L1Address") return hex_field(v, d.l1_address.data(), d.l1_address.size(), false);
      return true;
    }
    case TxType::kFundingTick:
      if (k == "MarketIndex") return set_int(v, tx.funding.market, 0, 255);
      return true;
    case TxType::kSetMarketStatus:
      if (k == "MarketIndex") return set_int(v, tx.market_status.market, 0, 254);
      if (k == "Status") return set_int(v, tx.market_status.status, 0, 3);
      return true;
    case TxType::kSetIndexPrice:
      if (k == "MarketIndex") return set_int(v, tx.set_index.market, 0, 254);
      if (k == "IndexPrice") return set_int(v, tx.set_index.index_price, 0, 0xffffffffll);
      return true;
    default: return true;
  }
}

// A field of the tx type's own body; unknown fields are ignored.
bool body_field(std::string_view k, sj::ondemand::value v, Tx& tx, std::string& why) {
  switch (tx.h.type) {
    case TxType::kCreateOrder: return order_field(k, v, tx.order);
    case TxType::kCreateGroupedOrders: return grouped_field(k, v, tx.grouped, why);
    case TxType::kCancelOrder:
    case TxType::kCancelAllOrders:
    case TxType::kModifyOrder: return order_admin_field(k, v, tx);
    case TxType::kTransfer:
    case TxType::kWithdraw:
    case TxType::kChangePubKey:
    case TxType::kUpdateLeverage:
    case TxType::kUpdateMargin: return account_field(k, v, tx);
    default: return operator_field(k, v, tx);
  }
}

// The defaults a field may override.
void init_tx(int tx_type, SignedTx& out) {
  out = SignedTx{};
  Tx& tx = out.tx;
  tx.h.type = static_cast<TxType>(tx_type);
  if (tx.h.type == TxType::kCancelAllOrders) tx.cancel_all.market = kAllMarkets;
  if (tx.h.type == TxType::kFundingTick) tx.funding.market = kAllMarkets;
  if (tx.h.type == TxType::kTransfer) tx.transfer.asset = 3;
  if (tx.h.type == TxType::kWithdraw) tx.withdraw.asset = 3;
}

}  // namespace

Reject parse_tx_info(int tx_type, std::string_view json, SignedTx& out, std::string& error) {
  if (!is_user_tx_type(tx_type) && !is_operator_tx_type(tx_type)) {
    error = "unsupported tx_type " + std::to_string(tx_type);
    return Reject::kUnsupportedTxType;
  }
  init_tx(tx_type, out);
  Tx& tx = out.tx;
  static thread_local JsonScratch js;
  sj::ondemand::document doc;
  sj::ondemand::object obj;
  if (js.iterate(json).get(doc) || doc.get_object().get(obj)) {
    error = "tx_info is not a JSON object";
    return Reject::kInvalidTxInfo;
  }
  const bool user = is_user_tx_type(tx_type);  // operator txs carry no signer account or key
  ParseSeen seen;
  for (auto field : obj) {
    std::string_view k;
    sj::ondemand::value v;
    if (field.unescaped_key().get(k) || field.value().get(v)) {
      error = "malformed tx_info";
      return Reject::kInvalidTxInfo;
    }
    bool ok = true;
    std::string why;  // empty: "invalid value for <key>"
    if (!header_field(k, v, user, out, seen, ok, why)) ok = body_field(k, v, tx, why);
    if (!ok) {
      error = why.empty() ? "invalid value for " + std::string(k) : why;
      return Reject::kInvalidTxInfo;
    }
  }
  const bool nonce_seen = seen.nonce, account_seen = seen.account;
  if (!nonce_seen) {
    error = "missing field Nonce";
    return Reject::kInvalidTxInfo;
  }
  if (!account_seen && is_user_tx_type(tx_type)) {
    error = "missing field AccountIndex";
    return Reject::kInvalidTxInfo;
  }
  if (tx.h.type == TxType::kChangePubKey && tx.change_key.target_key_index == 0)
    tx.change_key.target_key_index = tx.h.api_key_index;
  return Reject::kOk;
}

namespace {
// The tx type's own fields, in Lighter's order.
void write_body(JsonWriter& w, const Tx& tx) {
  switch (tx.h.type) {
    case TxType::kCreateOrder: write_order_fields(w, tx.order); break;
    case TxType::kCreateGroupedOrders:
      w.kv_i("GroupingType", static_cast<int>(tx.grouped.grouping)).key("Orders").arr();
      for (int i = 0; i < tx.grouped.count && i < 3; ++i) {
        w.obj();
        write_order_fields(w, tx.grouped.orders[i]);
        w.end_obj();
      }
      w.end_arr();
      break;
    case TxType::kCancelOrder:
      w.kv_i("MarketIndex", tx.cancel.market).kv_i("Index", tx.cancel.index);
      break;
    case TxType::kCancelAllOrders:
      w.kv_i("TimeInForce", tx.cancel_all.tif).kv_i("Time", tx.cancel_all.time_ms);
      break;
    case TxType::kModifyOrder:
      w.kv_i("MarketIndex", tx.modify.market).kv_i("Index", tx.modify.index);
      w.kv_i("BaseAmount", tx.modify.base_amount).kv_i("Price", tx.modify.price);
      w.kv_i("TriggerPrice", tx.modify.trigger_price);
      break;
    case TxType::kTransfer:
      w.kv_i("ToAccountIndex", tx.transfer.to_account).kv_i("AssetIndex", tx.transfer.asset);
      w.kv_i("FromRouteType", 0).kv_i("ToRouteType", 0).kv_i("Amount", tx.transfer.amount);
      w.kv_i("USDCFee", tx.transfer.fee);
      w.kv_s("Memo", to_hex(tx.transfer.memo.data(), tx.transfer.memo.size()));
      break;
    case TxType::kWithdraw:
      w.kv_i("AssetIndex", tx.withdraw.asset).kv_i("RouteType", 0);
      w.kv_i("Amount", tx.withdraw.amount);
      break;
    case TxType::kChangePubKey:
      w.kv_s("PubKey", to_hex(tx.change_key.pubkey.data(), 32));
      w.kv_i("TargetApiKeyIndex", tx.change_key.target_key_index);
      break;
    case TxType::kUpdateLeverage:
      w.kv_i("MarketIndex", tx.leverage.market).kv_i("InitialMarginFraction", tx.leverage.imf);
      w.kv_i("MarginMode", tx.leverage.margin_mode);
      break;
    case TxType::kUpdateMargin:
      w.kv_i("MarketIndex", tx.margin.market).kv_i("USDCAmount", tx.margin.amount);
      w.kv_i("Direction", tx.margin.direction);
      break;
    case TxType::kDeposit:
      w.kv_i("ToAccountIndex", tx.deposit.to_account).kv_i("Amount", tx.deposit.amount);
      w.kv_s("L1Address", to_hex(tx.deposit.l1_address.data(), 20));
      w.kv_s("PubKey", to_hex(tx.deposit.pubkey.data(), 32));
      w.kv_i("KeyIndex", tx.deposit.api_key_index);
      break;
    case TxType::kSetIndexPrice:
      w.kv_i("MarketIndex", tx.set_index.market).kv_i("IndexPrice", tx.set_index.index_price);
      break;
    case TxType::kFundingTick: w.kv_i("MarketIndex", tx.funding.market); break;
    case TxType::kSetMarketStatus:
      w.kv_i("MarketIndex", tx.market_status.market)
          .kv_i("Status", static_cast<int>(tx.market_status.status));
      break;
    default: break;
  }
}

// L2TxAttributes: null unless skip-nonce, a CancelAll's market or an order's self-trade mode
// is set.
void write_attributes(JsonWriter& w, const Tx& tx) {
  const TxType t = tx.h.type;
  w.key("L2TxAttributes");
  const bool skip = tx.h.flags & kTxFlagSkipNonce;
  const bool cam = t == TxType::kCancelAllOrders && tx.cancel_all.market != kAllMarkets;
  const bool stp = t == TxType::kCreateOrder && tx.order.stp != StpMode::kExpireMaker;
  if (!skip && !cam && !stp) {
    w.null();
    return;
  }
  w.obj();
  if (skip) w.kv_i("4", 1);
  if (cam) w.kv_i("5", tx.cancel_all.market);
  if (stp) w.kv_i("6", tx.order.stp);
  w.end_obj();
}
}  // namespace

std::string tx_info_json(const Tx& tx, const Signature* sig) {
  std::string s;
  JsonWriter w(s);
  w.obj();
  const TxType t = tx.h.type;
  if (is_user_tx_type(static_cast<int>(t))) {
    w.kv_i(t == TxType::kTransfer || t == TxType::kWithdraw ? "FromAccountIndex" : "AccountIndex",
           tx.h.account);
    w.kv_i("ApiKeyIndex", tx.h.api_key_index);
  }
  write_body(w, tx);
  w.kv_i("ExpiredAt", tx.h.expired_at_ms).kv_i("Nonce", tx.h.nonce);
  if (sig != nullptr) w.kv_s("Sig", to_base64(sig->data(), sig->size()));
  write_attributes(w, tx);
  w.end_obj();
  return s;
}

}  // namespace tachyon::api
