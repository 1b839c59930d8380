// WorkerLogic, REST side: an account's orders, trades and money movements (Lighter's
// accountActiveOrders, accountInactiveOrders, trades, deposit/withdraw/transfer history),
// private reads authorized by the account's auth token.
#include <map>

#include "tachyon/api/crypto.hpp"
#include "tachyon/api/form.hpp"
#include "tachyon/api/json_writer.hpp"
#include "tachyon/api/render.hpp"
#include "tachyon/api/worker.hpp"
#include "tachyon/core/clock.hpp"

namespace tachyon::api {

bool token_grants(const pipe::AccountView& a, std::string_view token, uint32_t chain_id) {
  const auto tok = parse_auth_token(token, chain_id);
  const int64_t now_s = realtime_ns() / 1'000'000'000;
  if (!tok || tok->account != a.index || tok->deadline_s < now_s ||
      tok->deadline_s > now_s + kMaxTokenLifetimeS)
    return false;
  const pipe::KeyView* k = a.key(tok->api_key);
  return k != nullptr && verify_detached(tok->message, tok->sig, k->pubkey);
}

namespace {

// The `limit` parameter: 1..100, `dflt` when absent; false when malformed.
bool read_limit(const HttpRequest& req, int& limit, int dflt) {
  limit = dflt;
  return !query(req.target, "limit") ||
         (query_int(req.target, "limit", limit) && limit >= 1 && limit <= 100);
}

// The optional `market_id`: kAllMarkets when absent; false when malformed.
bool read_market(const HttpRequest& req, MarketId& m) {
  int x = kAllMarkets;
  if (query(req.target, "market_id") &&
      (!query_int(req.target, "market_id", x) || x < 0 || x >= kMaxMarkets))
    return false;
  m = static_cast<MarketId>(x);
  return true;
}

std::string l1_of(const std::array<uint8_t, 20>& a) { return "0x" + to_hex(a.data(), a.size()); }

}  // namespace

HttpReply WorkerLogic::private_read(RestCall& c,
                                    absl::FunctionRef<void(const pipe::AccountView&)> f) {
  AccountIndex idx = 0;
  if (!query_int(c.req.target, "account_index", idx))
    return error_reply(400, 21107, "account_index is required");
  // Lighter takes the token in the Authorization header or the `auth` parameter.
  const auto param = query(c.req.target, "auth");
  const std::string_view token = !c.req.authorization.empty() ? c.req.authorization
                                 : param                      ? std::string_view(*param)
                                                              : std::string_view();
  bool found = false, granted = false;
  dry_.account_reader().read([&] {
    const pipe::AccountView* a = dry_.accounts().find(idx);
    if (a == nullptr) return;
    found = true;
    granted = token_grants(*a, token, cfg_.chain_id);
    if (granted) f(*a);
  });
  if (!found) return error_reply(400, 21101, "account not found");
  if (!granted)
    return error_reply(401, 21103, "this read needs a valid auth token for the account");
  return std::move(c.r);
}

HttpReply WorkerLogic::get_active_orders(RestCall& c) {
  MarketId only = kAllMarkets;
  if (!read_market(c.req, only)) return error_reply(400, 21602, "no such market_id");
  JsonWriter& w = c.w;
  return private_read(c, [&](const pipe::AccountView& a) {
    w.obj().kv_i("code", 200).key("orders").arr();
    std::optional<pipe::MarketView> mv;
    for (const auto& o : a.order_list()) {
      if (only != kAllMarkets && o.o.market != only) continue;
      if (!mv || mv->id != o.o.market) mv = dry_.market(o.o.market);
      if (mv) write_order(w, o.o, o.created_ns, o.updated_ns, *mv, {});
    }
    w.end_arr().kv_s("next_cursor", "").end_obj();
  });
}

// The account's closed orders that the server still holds (ReadSide::closed_orders), newest first.
HttpReply WorkerLogic::get_inactive_orders(RestCall& c) {
  MarketId only = kAllMarkets;
  int limit = 100;
  if (!read_market(c.req, only)) return error_reply(400, 21602, "no such market_id");
  if (!read_limit(c.req, limit, 100)) return error_reply(400, 21501, "limit must be 1..100");
  JsonWriter& w = c.w;
  return private_read(c, [&](const pipe::AccountView& a) {
    const auto closed = pipe_.read_side().closed_orders(a.index, only, limit);
    w.obj().kv_i("code", 200).key("orders").arr();
    for (const auto& o : closed) {
      const auto mv = dry_.market(o.o.market);
      if (mv) write_order(w, o.o, o.created_ns, o.updated_ns, *mv, order_status(o.o.reason));
    }
    w.end_arr().kv_s("next_cursor", "").end_obj();
  });
}

// The account's deposits, withdrawals or transfers that the server still holds
// (ReadSide::money_history), newest first, in Lighter's history items: every one completed (an
// operator deposit, a withdrawal and a transfer are final once executed), USDC (asset 3), perps.
HttpReply WorkerLogic::get_money_history(RestCall& c) {
  using R = BalanceReason;
  auto bit = [](R r) { return 1u << static_cast<unsigned>(r); };
  const std::string_view p = c.path;
  const bool deposits = p == "/api/v1/deposit/history", withdraws = p == "/api/v1/withdraw/history";
  const uint32_t kinds = deposits    ? bit(R::kDeposit)
                         : withdraws ? bit(R::kWithdraw)
                                     : bit(R::kTransferIn) | bit(R::kTransferOut);
  JsonWriter& w = c.w;
  return private_read(c, [&](const pipe::AccountView& a) {
    const auto list = pipe_.read_side().money_history(a.index, kinds, 100);
    w.obj().kv_i("code", 200);
    w.key(deposits ? "deposits" : withdraws ? "withdraws" : "transfers").arr();
    for (const pipe::MoneyRecord& r : list) {
      const std::string hash = shared_.tx_hash_of(r.origin_worker, r.origin_cookie);
      w.obj().kv_s("id", std::to_string(r.id)).key("amount").dec(r.amount, 6);
      w.kv_i("timestamp", r.time_ns / 1'000'000).kv_i("asset_id", 3);
      if (deposits || withdraws) {
        w.kv_s("status", "completed").kv_s("l1_tx_hash", hash);
        if (withdraws) w.kv_s("type", "secure");
      } else {
        const bool out = r.reason == R::kTransferOut;
        const AccountIndex from = out ? r.account : r.counterparty;
        const AccountIndex to = out ? r.counterparty : r.account;
        const pipe::AccountView* other = dry_.accounts().find(r.counterparty);
        const std::string mine = l1_of(a.l1_address);
        const std::string theirs = other ? l1_of(other->l1_address) : l1_of({});
        w.kv_s("type", out ? "L2TransferOutflow" : "L2TransferInflow");
        w.kv_s("from_l1_address", out ? mine : theirs).kv_s("to_l1_address", out ? theirs : mine);
        w.kv_i("from_account_index", from).kv_i("to_account_index", to).kv_s("tx_hash", hash);
        w.key("fee").dec(r.fee, 6).kv_s("from_route", "perps").kv_s("to_route", "perps");
      }
      w.end_obj();
    }
    w.end_arr().kv_s("cursor", "").end_obj();
  });
}

// With account_index: the account's recent trades (private); else market_id's recent trades.
// Newest first.
HttpReply WorkerLogic::get_trades(RestCall& c) {
  MarketId only = kAllMarkets;
  int limit = 100;
  if (!read_market(c.req, only)) return error_reply(400, 21602, "no such market_id");
  if (!read_limit(c.req, limit, 100)) return error_reply(400, 21501, "limit must be 1..100");
  const auto sort = query(c.req.target, "sort_by");
  if (sort && *sort != "timestamp" && *sort != "trade_id")
    return error_reply(400, 21501, "sort_by must be timestamp or trade_id");
  JsonWriter& w = c.w;
  if (!query(c.req.target, "account_index")) {
    if (only == kAllMarkets)
      return error_reply(400, 21602, "market_id or account_index is required");
    const auto mv = dry_.market(only);
    if (!mv) return error_reply(400, 21602, "no such market");
    const auto trades = pipe_.read_side().recent_trades(only, limit);
    w.obj().kv_i("code", 200).key("trades").arr();
    for (auto it = trades.rbegin(); it != trades.rend(); ++it)
      write_trade(w, *it, *mv, shared_.trade_tx_hash(*it));
    w.end_arr().kv_s("next_cursor", "").end_obj();
    return std::move(c.r);
  }
  return private_read(c, [&](const pipe::AccountView& a) {
    const pipe::TradeRange list = a.trades();
    w.obj().kv_i("code", 200).key("trades").arr();
    int n = 0;
    for (size_t i = list.size(); i > 0 && n < limit; --i) {
      const pipe::TradeRecord& t = list[i - 1];
      if (only != kAllMarkets && t.t.market != only) continue;
      const auto mv = dry_.market(t.t.market);
      if (!mv) continue;
      write_trade(w, t, *mv, shared_.trade_tx_hash(t));
      ++n;
    }
    w.end_arr().kv_s("next_cursor", "").end_obj();
  });
}

}  // namespace tachyon::api
