// WorkerLogic, REST side: routing as a table of routes, reads from the snapshots; sendTx /
// sendTxBatch / dryRun go to send_tx.cpp.
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <simdjson.h>

#include "tachyon/api/crypto.hpp"
#include "tachyon/api/form.hpp"
#include "tachyon/api/json_writer.hpp"
#include "tachyon/api/render.hpp"
#include "tachyon/api/worker.hpp"
#include "tachyon/codec/tx_hash.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/core/reject.hpp"

namespace tachyon::api {

namespace {
int64_t now_ns() { return realtime_ns(); }

}  // namespace

WorkerLogic::WorkerLogic(ApiShared& shared, pipe::Front& pipe, uint32_t index)
    : shared_(shared),
      cfg_(shared.cfg),
      pipe_(pipe),
      index_(index),
      dry_(pipe.read_side(), shared.cfg.chain_id, shared.inflight, &shared.metrics),
      book_readers_(kMaxMarkets),
      history_readers_(kMaxMarkets),
      books_(kMaxMarkets) {
  log_pos_ = pipe.read_side().log_published();
  pipe.want_publishes(index, false);  // nothing to push yet
}

// The apply thread wakes this worker for publishes only while it has something to push from them:
// subscribers, or forwarded txs waiting for their seq. Turning that on first moves the update log
// position to its head: what was published while nothing here listened is nobody's (and a
// worker so far behind would otherwise resync every connection). Called before a new
// subscriber's snapshot is read (WorkerWakes::want_publishes says why).
void WorkerLogic::refresh_publish_interest() {
  const bool wants = !subs_.empty() || !awaiting_.empty();
  if (wants == wants_publishes_) return;
  if (wants) log_pos_ = std::max(log_pos_, pipe_.read_side().log_published());
  wants_publishes_ = wants;
  pipe_.want_publishes(index_, wants);
}

WorkerLogic::~WorkerLogic() = default;

void WorkerLogic::handle_http(const HttpRequest& req, ReplyFn done) {
  TACHYON_OWNER_ONLY(owner_);
  if (!req.admin && !shared_.ip_allow(req.ip)) {
    done(error_reply(429, 23000, "too many requests: rate limit exceeded"));
    return;
  }
  bool deferred = false;
  HttpReply r = route(req, deferred, done);
  if (!deferred) done(std::move(r));
}

// Every REST endpoint: the listener it is on, its method and path, its handler.
struct WorkerLogic::Route {
  bool admin;
  bool post;
  std::string_view path;
  HttpReply (WorkerLogic::*handler)(RestCall&);
};

const WorkerLogic::Route WorkerLogic::kRoutes[] = {
    {true, false, "/metrics", &WorkerLogic::admin_metrics},
    {true, false, "/admin/latency", &WorkerLogic::admin_latency},
    {true, false, "/admin/trace", &WorkerLogic::admin_trace},
    {true, false, "/admin/nextNonce", &WorkerLogic::admin_next_nonce},
    {true, false, "/admin/process", &WorkerLogic::admin_process},
    {true, false, "/console", &WorkerLogic::admin_console},
    {true, true, "/admin/snapshot", &WorkerLogic::admin_snapshot},
    {true, true, "/api/v1/sendTx", &WorkerLogic::post_tx},
    {false, false, "/", &WorkerLogic::get_root},
    {false, false, "/health/live", &WorkerLogic::get_live},
    {false, false, "/health/ready", &WorkerLogic::get_ready},
    {false, true, "/api/v1/sendTx", &WorkerLogic::post_tx},
    {false, true, "/api/v1/sendTxBatch", &WorkerLogic::post_tx_batch},
    {false, true, "/api/v1/dryRun", &WorkerLogic::post_dry_run},
    {false, false, "/api/v1/assetDetails", &WorkerLogic::get_asset_details},
    {false, false, "/api/v1/orderBookDetails", &WorkerLogic::get_order_books},
    {false, false, "/api/v1/orderBooks", &WorkerLogic::get_order_books},
    {false, false, "/api/v1/orderBookOrders", &WorkerLogic::get_order_book_orders},
    {false, false, "/api/v1/recentTrades", &WorkerLogic::get_market_history},
    {false, false, "/api/v1/candles", &WorkerLogic::get_market_history},
    {false, false, "/api/v1/funding-rates", &WorkerLogic::get_funding_rates},
    {false, false, "/api/v1/fundings", &WorkerLogic::get_fundings},
    {false, false, "/api/v1/account", &WorkerLogic::get_account},
    {false, false, "/api/v1/apikeys", &WorkerLogic::get_api_keys},
    {false, false, "/api/v1/nextNonce", &WorkerLogic::get_api_keys},
    {false, false, "/api/v1/exchangeStats", &WorkerLogic::get_exchange_stats},
    {false, false, "/api/v1/block", &WorkerLogic::get_blocks},
    {false, false, "/api/v1/blocks", &WorkerLogic::get_blocks},
    {false, false, "/api/v1/currentHeight", &WorkerLogic::get_blocks},
    {false, false, "/api/v1/tx", &WorkerLogic::get_tx},
    {false, false, "/api/v1/accountsByL1Address", &WorkerLogic::get_accounts_by_l1},
    {false, false, "/api/v1/orderBookUpdates", &WorkerLogic::get_order_book_updates},
    {false, false, "/api/v1/accountActiveOrders", &WorkerLogic::get_active_orders},
    {false, false, "/api/v1/accountInactiveOrders", &WorkerLogic::get_inactive_orders},
    {false, false, "/api/v1/trades", &WorkerLogic::get_trades},
    {false, false, "/api/v1/deposit/history", &WorkerLogic::get_money_history},
    {false, false, "/api/v1/withdraw/history", &WorkerLogic::get_money_history},
    {false, false, "/api/v1/transfer/history", &WorkerLogic::get_money_history},
};

// A path on the wrong listener or with the wrong method: 404 on the admin listener, 405 for a
// public path that is not a GET, else 404.
HttpReply WorkerLogic::route(const HttpRequest& req, bool& deferred, ReplyFn& done) {
  RestCall c{req, req.target.substr(0, req.target.find('?')), deferred, done};
  const bool get = req.method == "GET", post = req.method == "POST";
  for (const Route& rt : kRoutes) {
    if (rt.admin == req.admin && rt.path == c.path && (rt.post ? post : get))
      return (this->*rt.handler)(c);
  }
  if (req.admin) return error_reply(404, 29404, "no such admin endpoint: " + std::string(c.path));
  if (!get) return error_reply(405, 29404, "method not allowed");
  return no_endpoint(c.path);
}

HttpReply WorkerLogic::admin_metrics(RestCall& c) {
  c.r.content_type = "text/plain; version=0.0.4";
  c.r.body = shared_.metrics_text ? shared_.metrics_text() : std::string();
  return std::move(c.r);
}

HttpReply WorkerLogic::admin_latency(RestCall& c) {
  c.r.content_type = "text/plain";
  c.r.body = shared_.latency_text ? shared_.latency_text() : std::string();
  return std::move(c.r);
}

// The flight recorder's last window, for Perfetto.
HttpReply WorkerLogic::admin_trace(RestCall& c) {
  c.r.body = shared_.trace_json ? shared_.trace_json() : std::string("{\"traceEvents\":[]}");
  return std::move(c.r);
}

HttpReply WorkerLogic::admin_next_nonce(RestCall& c) {
  c.w.obj().kv_i("code", 200).kv_i("nonce", shared_.operator_nonce.load()).end_obj();
  return std::move(c.r);
}

// The server's process id, for a tool on the same machine that reads its /proc (tachyon-load).
HttpReply WorkerLogic::admin_process(RestCall& c) {
  c.w.obj().kv_i("code", 200).kv_i("pid", static_cast<int64_t>(::getpid())).end_obj();
  return std::move(c.r);
}

// Authorization: an auth token signed by the operator key (account 0, key 0).
HttpReply WorkerLogic::admin_snapshot(RestCall& c) {
  const auto tok = parse_auth_token(c.req.authorization, cfg_.chain_id);
  const int64_t now_s = now_ns() / 1'000'000'000;
  if (!tok || tok->deadline_s < now_s || tok->deadline_s > now_s + kMaxTokenLifetimeS ||
      !verify_detached(tok->message, tok->sig, cfg_.operator_pubkey))
    return error_reply(401, 21103, "snapshot trigger needs an operator auth token");
  const std::string status = shared_.snapshot_trigger ? shared_.snapshot_trigger() : "";
  c.w.obj().kv_i("code", 200).kv_s("message", status).end_obj();
  return std::move(c.r);
}

HttpReply WorkerLogic::post_tx(RestCall& c) { return send_tx(c, SendKind::kTx); }
HttpReply WorkerLogic::post_tx_batch(RestCall& c) { return send_tx(c, SendKind::kBatch); }
HttpReply WorkerLogic::post_dry_run(RestCall& c) { return send_tx(c, SendKind::kDryRun); }

HttpReply WorkerLogic::no_endpoint(std::string_view path) {
  return error_reply(404, 29404, "no such endpoint: " + std::string(path));
}

HttpReply WorkerLogic::get_root(RestCall& c) {
  HttpReply& r = c.r;
  JsonWriter& w = c.w;
  w.obj().kv_i("status", 200).kv_i("network_id", 1).kv_i("timestamp", now_ns() / 1'000'000'000);
  w.kv_s("server", "tachyon").end_obj();
  return std::move(r);
}

HttpReply WorkerLogic::get_live(RestCall& c) {
  HttpReply& r = c.r;
  JsonWriter& w = c.w;
  w.obj().kv_s("status", "ok").end_obj();
  return std::move(r);
}

HttpReply WorkerLogic::get_ready(RestCall& c) {
  HttpReply& r = c.r;
  JsonWriter& w = c.w;
  const std::string storage = shared_.storage_refusal ? shared_.storage_refusal() : "";
  const bool ready = shared_.ready.load() && storage.empty();
  r.status = ready ? 200 : 503;
  w.obj().kv_s("status", ready ? "ready" : storage.empty() ? "starting" : "storage unavailable");
  w.kv_b("ready", ready);
  if (!storage.empty()) w.kv_s("reason", storage);
  w.kv_i("applied_seq", pipe_.applied_seq());
  if (shared_.cluster_status) shared_.cluster_status(w);
  w.end_obj();
  return std::move(r);
}

HttpReply WorkerLogic::get_asset_details(RestCall& c) {
  HttpReply& r = c.r;
  JsonWriter& w = c.w;
  w.obj().kv_i("code", 200).key("asset_details").arr();
  w.obj().kv_i("asset_id", 3).kv_s("symbol", "USDC").kv_i("decimals", 6).kv_i("l1_decimals", 6);
  w.kv_s("min_transfer_amount", "1.000000").kv_s("min_withdrawal_amount", "1.000000");
  // USDC is the collateral itself: priced at 1, counted in full, never lent, no supply caps
  // ("0": none), and no L1 token contract behind this server's deposits.
  w.kv_s("margin_mode", "enabled").kv_s("index_price", "1.000000").kv_i("price_decimals", 6);
  w.kv_s("l1_address", "0x0000000000000000000000000000000000000000");
  w.kv_s("global_supply_cap", "0").kv_s("user_supply_cap", "0").kv_s("total_supplied", "0");
  w.kv_s("liquidation_fee", "0").kv_s("liquidation_threshold", "1").kv_s("loan_to_value", "1");
  w.end_obj().end_arr().end_obj();
  return std::move(r);
}

HttpReply WorkerLogic::get_order_books(RestCall& c) {
  const HttpRequest& req = c.req;
  const std::string_view path = c.path;
  HttpReply& r = c.r;
  JsonWriter& w = c.w;
  const bool full = path == "/api/v1/orderBookDetails";
  int only = -1;
  if (query(req.target, "market_id") && !query_int(req.target, "market_id", only))
    return error_reply(400, 21602, "market_id must be an integer");
  w.obj().kv_i("code", 200);
  if (full) w.key("spot_order_book_details").arr().end_arr();
  w.key(full ? "order_book_details" : "order_books").arr();
  for (int m = 0; m < kMaxMarkets; ++m) {
    if (only >= 0 && m != only) continue;
    if (auto v = dry_.market(static_cast<MarketId>(m))) write_market_details(w, *v, full);
  }
  w.end_arr().end_obj();
  return std::move(r);
}

HttpReply WorkerLogic::get_order_book_orders(RestCall& c) {
  const HttpRequest& req = c.req;
  HttpReply& r = c.r;
  JsonWriter& w = c.w;
  int m = -1, limit = 100;
  if (!query_int(req.target, "market_id", m) || m < 0 || m >= kMaxMarkets)
    return error_reply(400, 21602, "market_id is required");
  if (query(req.target, "limit") &&
      (!query_int(req.target, "limit", limit) || limit < 1 || limit > 100))
    return error_reply(400, 21501, "limit must be 1..100");
  const auto mv = dry_.market(static_cast<MarketId>(m));
  if (!mv) return error_reply(400, 21602, "no such market");
  auto& rd = book_readers_[m];
  if (!rd) rd.emplace(pipe_.book(static_cast<MarketId>(m)).reader());
  rd->read([&](const pipe::BookSnapshot* s) {
    const int pd = mv->params.price_decimals, sd = mv->params.size_decimals;
    // transaction_time: when the order rested or changed last (µs), from its owner's view; 0 when
    // that view's order list is held back (over orders_in_view orders, rebuilt every few ms).
    auto order_time_us = [&](const pipe::BookOrder& o) -> int64_t {
      const pipe::AccountView* a = dry_.accounts().find(o.owner);
      const pipe::OrderView* v = a ? a->order_list().find(o.order_index) : nullptr;
      return v ? v->updated_ns / 1000 : 0;
    };
    // One row per order, in priority order (price, then time), at most 100 a side.
    auto side = [&](const std::vector<pipe::BookOrder>& os, bool ask) {
      const size_t n = std::min<size_t>(os.size(), static_cast<size_t>(limit));
      w.key(ask ? "total_asks" : "total_bids").i64(static_cast<int64_t>(n));
      w.key(ask ? "asks" : "bids").arr();
      for (size_t i = 0; i < n; ++i) {
        const pipe::BookOrder& o = os[i];
        w.obj().kv_i("order_index", o.order_index).kv_s("order_id", std::to_string(o.order_index));
        w.kv_i("owner_account_index", o.owner).key("initial_base_amount").dec(o.initial, sd);
        w.key("remaining_base_amount").dec(o.remaining, sd).key("price").dec(o.price, pd);
        w.kv_i("order_expiry", o.expiry_ms).kv_i("transaction_time", order_time_us(o));
        w.kv_b("is_ask", ask).end_obj();
      }
      w.end_arr();
    };
    w.obj().kv_i("code", 200);
    static const std::vector<pipe::BookOrder> none;
    dry_.account_reader().read([&] {
      side(s ? s->ask_orders : none, true);
      side(s ? s->bid_orders : none, false);
    });
    w.kv_i("nonce", s ? s->nonce : 0).end_obj();
  });
  return std::move(r);
}

HttpReply WorkerLogic::get_market_history(RestCall& c) {
  const HttpRequest& req = c.req;
  const std::string_view path = c.path;
  HttpReply& r = c.r;
  JsonWriter& w = c.w;
  int m = -1;
  if (!query_int(req.target, "market_id", m) || m < 0 || m >= kMaxMarkets)
    return error_reply(400, 21602, "market_id is required");
  const auto mv = dry_.market(static_cast<MarketId>(m));
  if (!mv) return error_reply(400, 21602, "no such market");
  auto& rd = history_readers_[m];
  if (!rd) rd.emplace(pipe_.read_side().history(static_cast<MarketId>(m)).reader());
  if (path == "/api/v1/recentTrades") {
    int limit = 100;
    if (query(req.target, "limit") &&
        (!query_int(req.target, "limit", limit) || limit < 1 || limit > 100))
      return error_reply(400, 21501, "limit must be 1..100");
    const auto trades = pipe_.read_side().recent_trades(static_cast<MarketId>(m), limit);
    w.obj().kv_i("code", 200).key("trades").arr();
    for (auto it = trades.rbegin(); it != trades.rend(); ++it)
      write_trade(w, *it, *mv, shared_.trade_tx_hash(*it));
    w.end_arr().end_obj();
    return std::move(r);
  }
  const auto res = query(req.target, "resolution");
  const int ri = res ? pipe::resolution_index(*res) : -1;
  if (ri < 0)
    return error_reply(400, 22400, "resolution must be one of 1m 5m 15m 30m 1h 4h 12h 1d 1w");
  int64_t start = 0, end = INT64_MAX, count_back = 0;
  if (query(req.target, "start_timestamp") && !query_int(req.target, "start_timestamp", start))
    return error_reply(400, 22401, "start_timestamp must be ms");
  if (query(req.target, "end_timestamp") && !query_int(req.target, "end_timestamp", end))
    return error_reply(400, 22402, "end_timestamp must be ms");
  if (query(req.target, "count_back") && !query_int(req.target, "count_back", count_back))
    return error_reply(400, 22403, "count_back must be an integer");
  rd->read([&](const pipe::MarketHistory* h) {
    w.obj().kv_i("code", 200).kv_s("r", *res).key("c").arr();
    // Closed candles from the history, the open one from the market view (fresher).
    std::vector<pipe::Candle> cs;
    const pipe::Candle& cur = mv->current[ri];
    if (h) {
      for (const auto& c : h->candles[ri])
        if (cur.start_ms == 0 || c.start_ms < cur.start_ms) cs.push_back(c);
    }
    if (cur.start_ms != 0) cs.push_back(cur);
    const int64_t len = pipe::kResolutionSeconds[ri] * 1000;
    size_t first = 0;
    if (count_back > 0 && cs.size() > static_cast<size_t>(count_back))
      first = cs.size() - count_back;
    for (size_t i = first; i < cs.size(); ++i)
      if (cs[i].start_ms + len > start && cs[i].start_ms <= end) write_candle(w, cs[i], *mv);
    w.end_arr().end_obj();
  });
  return std::move(r);
}

HttpReply WorkerLogic::get_funding_rates(RestCall& c) {
  HttpReply& r = c.r;
  JsonWriter& w = c.w;
  // The estimate of each market's next payment, as a fraction per funding period.
  w.obj().kv_i("code", 200).key("funding_rates").arr();
  for (int m = 0; m < kMaxMarkets; ++m) {
    if (auto v = dry_.market(static_cast<MarketId>(m))) {
      w.obj().kv_i("market_id", m).kv_s("exchange", "lighter").kv_s("symbol", symbol_of(v->params));
      w.key("rate").dec_num(v->funding_estimate, 9).end_obj();
    }
  }
  w.end_arr().end_obj();
  return std::move(r);
}

HttpReply WorkerLogic::get_fundings(RestCall& c) {
  const HttpRequest& req = c.req;
  HttpReply& r = c.r;
  JsonWriter& w = c.w;
  // Past payments of one market: rate in percent, value = what the paying side paid (USDC),
  // direction = the side that paid.
  int m = -1;
  if (!query_int(req.target, "market_id", m) || m < 0 || m >= kMaxMarkets)
    return error_reply(400, 21602, "market_id is required");
  if (!dry_.market(static_cast<MarketId>(m))) return error_reply(400, 21602, "no such market");
  const auto res = query(req.target, "resolution");
  if (res && *res != "1h" && *res != "1d")
    return error_reply(400, 22400, "resolution must be 1h or 1d");
  int64_t start = 0, end = INT64_MAX, count_back = 0;
  if (query(req.target, "start_timestamp") && !query_int(req.target, "start_timestamp", start))
    return error_reply(400, 22401, "start_timestamp must be ms");
  if (query(req.target, "end_timestamp") && !query_int(req.target, "end_timestamp", end))
    return error_reply(400, 22402, "end_timestamp must be ms");
  if (query(req.target, "count_back") &&
      (!query_int(req.target, "count_back", count_back) || count_back < 0))
    return error_reply(400, 22403, "count_back must be a non-negative integer");
  auto& rd = history_readers_[m];
  if (!rd) rd.emplace(pipe_.read_side().history(static_cast<MarketId>(m)).reader());
  rd->read([&](const pipe::MarketHistory* h) {
    w.obj().kv_i("code", 200).kv_s("resolution", res ? *res : "1h").key("fundings").arr();
    if (h) {
      std::vector<const pipe::FundingRecord*> sel;
      for (const auto& f : h->fundings)
        if (f.time_ms >= start && f.time_ms <= end) sel.push_back(&f);
      size_t first = 0;
      if (count_back > 0 && sel.size() > static_cast<size_t>(count_back))
        first = sel.size() - count_back;
      for (size_t i = first; i < sel.size(); ++i) {
        const auto& f = *sel[i];
        w.obj().kv_i("timestamp", f.time_ms / 1000);
        w.key("value").dec(f.paid, kQuoteDecimals);
        w.key("rate").dec(f.rate < 0 ? -f.rate : f.rate, 7);
        w.kv_s("direction", f.rate >= 0 ? "long" : "short").end_obj();
      }
    }
    w.end_arr().end_obj();
  });
  return std::move(r);
}

HttpReply WorkerLogic::get_account(RestCall& c) {
  const HttpRequest& req = c.req;
  HttpReply& r = c.r;
  JsonWriter& w = c.w;
  auto market_lookup = [this](MarketId m) { return dry_.market(m); };
  const auto by = query(req.target, "by");
  if (by && *by == "l1_address") return get_accounts_of_l1(c);
  AccountIndex idx = 0;
  if (!by || *by != "index" || !query_int(req.target, "value", idx))
    return error_reply(400, 21101, "use by=index&value=<account index> or by=l1_address&value=0x…");
  bool found = false;
  dry_.account_reader().read([&] {
    const pipe::AccountView* a = dry_.accounts().find(idx);
    if (a == nullptr) return;
    found = true;
    w.obj().kv_i("code", 200).kv_i("total", 1).key("accounts").arr();
    write_account(w, *a, market_lookup);
    w.end_arr().end_obj();
  });
  if (!found) return error_reply(400, 21101, "account not found");
  return std::move(r);
}

// Inside an account read: the views of the accounts of L1 address `l1`, by index (the table's
// own order depends on the order accounts were inserted).
std::vector<const pipe::AccountView*> WorkerLogic::accounts_of_l1(
    const std::array<uint8_t, 20>& l1) {
  std::vector<const pipe::AccountView*> found;
  dry_.accounts().for_each_with_l1(l1, [&](const pipe::AccountView& a) { found.push_back(&a); });
  std::sort(found.begin(), found.end(), [](const pipe::AccountView* x, const pipe::AccountView* y) {
    return x->index < y->index;
  });
  return found;
}

// account?by=l1_address: every account of the address, by index.
HttpReply WorkerLogic::get_accounts_of_l1(RestCall& c) {
  auto market_lookup = [this](MarketId m) { return dry_.market(m); };
  const auto l1 = query(c.req.target, "value");
  std::array<uint8_t, 20> addr{};
  if (!l1 || !from_hex(*l1, addr.data(), addr.size()))
    return error_reply(400, 21501, "value must be an l1_address: 20 bytes of hex");
  JsonWriter& w = c.w;
  dry_.account_reader().read([&] {
    const auto found = accounts_of_l1(addr);
    w.obj().kv_i("code", 200).kv_i("total", static_cast<int64_t>(found.size()));
    w.key("accounts").arr();
    for (const pipe::AccountView* a : found) write_account(w, *a, market_lookup);
    w.end_arr().end_obj();
  });
  return std::move(c.r);
}

HttpReply WorkerLogic::get_api_keys(RestCall& c) {
  const HttpRequest& req = c.req;
  const std::string_view path = c.path;
  HttpReply& r = c.r;
  JsonWriter& w = c.w;
  AccountIndex idx = 0;
  int key = 255;
  if (!query_int(req.target, "account_index", idx))
    return error_reply(400, 21101, "account_index is required");
  if (query(req.target, "api_key_index") && !query_int(req.target, "api_key_index", key))
    return error_reply(400, 21108, "api_key_index must be an integer");
  bool found = false, key_found = false;
  dry_.account_reader().read([&] {
    const pipe::AccountView* a = dry_.accounts().find(idx);
    if (a == nullptr) return;
    found = true;
    if (path == "/api/v1/nextNonce") {
      const pipe::KeyView* k = a->key(static_cast<uint8_t>(key));
      if (k == nullptr) return;
      key_found = true;
      w.obj().kv_i("code", 200).kv_i("nonce", k->next_nonce).end_obj();
      return;
    }
    key_found = true;
    w.obj().kv_i("code", 200).key("api_keys").arr();
    for (const auto& k : a->keys) {
      if (key != 255 && k.index != key) continue;
      w.obj().kv_i("account_index", a->index).kv_i("api_key_index", k.index);
      w.kv_i("nonce", k.next_nonce).kv_s("public_key", to_hex(k.pubkey.data(), 32));
      w.kv_i("version", k.version).kv_i("transaction_time", a->engine_ts_ns / 1000).end_obj();
    }
    w.end_arr().end_obj();
  });
  if (!found) return error_reply(400, 21101, "account not found");
  if (!key_found) return error_reply(400, 21102, "api key not found");
  return std::move(r);
}

HttpReply WorkerLogic::get_exchange_stats(RestCall& c) {
  HttpReply& r = c.r;
  JsonWriter& w = c.w;
  Usdc volume = 0;
  uint64_t trades = 0, markets = 0;
  w.obj().kv_i("code", 200).key("order_book_stats").arr();
  for (int m = 0; m < kMaxMarkets; ++m) {
    if (auto v = dry_.market(static_cast<MarketId>(m))) {
      volume += v->daily_quote;
      trades += v->daily_trades;
      ++markets;
      w.obj()
          .kv_s("symbol", symbol_of(v->params))
          .key("last_trade_price")
          .dec_num(v->last_trade_price, v->params.price_decimals);
      w.kv_i("daily_trades_count", v->daily_trades)
          .key("daily_base_token_volume")
          .dec_num(v->daily_base, v->params.size_decimals)
          .key("daily_quote_token_volume")
          .dec_num(v->daily_quote, 6);
      w.key("daily_price_change").raw(std::to_string(daily_price_change(*v)));
      w.end_obj();
    }
  }
  w.end_arr()
      .kv_i("total", static_cast<int64_t>(markets))
      .key("daily_usd_volume")
      .dec_num(volume, 6)
      .kv_i("daily_trades_count", trades)
      .end_obj();
  return std::move(r);
}

HttpReply WorkerLogic::get_tx(RestCall& c) {
  const HttpRequest& req = c.req;
  HttpReply& r = c.r;
  JsonWriter& w = c.w;
  const auto by = query(req.target, "by");
  const auto value = query(req.target, "value");
  if (!by || *by != "hash" || !value) return error_reply(400, 21501, "use by=hash&value=<tx hash>");
  const auto rec = shared_.find_tx(*value);
  if (!rec)
    return error_reply(400, 21500,
                       "tx not found (this server keeps the txs it sequenced since it started "
                       "and those it replayed from the journal when it started)");
  w.obj().kv_i("code", 200).kv_s("hash", *value).kv_i("type", static_cast<int>(rec->tx.h.type));
  w.kv_s("info", tx_info_json(rec->tx, nullptr)).kv_s("event_info", "");
  // Lighter's numeric status: 2 executed, 0 failed; plus the reject code and its message.
  w.kv_i("status", rec->reject == Reject::kOk ? 2 : 0)
      .kv_i("result_code", static_cast<int>(rec->reject));
  w.kv_s("result_message", reject_message(rec->reject));
  w.kv_i("transaction_index", rec->seq).kv_i("sequence_index", rec->seq);
  w.kv_s("l1_address", "").kv_i("account_index", rec->tx.h.account).kv_i("nonce", rec->tx.h.nonce);
  w.kv_i("expire_at", rec->tx.h.expired_at_ms).kv_i("block_height", rec->block);
  w.kv_i("queued_at", rec->queued_ms).kv_i("executed_at", rec->executed_ms);
  w.kv_i("api_key_index", rec->tx.h.api_key_index);
  w.kv_i("transaction_time", rec->executed_ms * 1000);  // µs, as Lighter's
  // When its block was committed (0: not yet, or older than the blocks kept in memory); tachyon
  // has no validity proofs, so nothing is ever "verified" (0).
  int64_t committed_ms = 0;
  if (shared_.blocks) {
    const auto b = shared_.blocks(rec->block, 1);
    if (!b.empty() && b[0].block == rec->block) committed_ms = b[0].sealed_time_ns / 1'000'000;
  }
  w.kv_i("committed_at", committed_ms).kv_i("verified_at", 0);
  w.kv_i("order_index", rec->order_index).kv_s("parent_hash", "").end_obj();
  return std::move(r);
}

HttpReply WorkerLogic::get_accounts_by_l1(RestCall& c) {
  const HttpRequest& req = c.req;
  HttpReply& r = c.r;
  JsonWriter& w = c.w;
  auto market_lookup = [this](MarketId m) { return dry_.market(m); };
  const auto l1 = query(req.target, "l1_address");
  std::array<uint8_t, 20> addr{};
  if (!l1 || !from_hex(*l1, addr.data(), addr.size()))
    return error_reply(400, 21501, "l1_address must be 20 bytes of hex");
  w.obj().kv_i("code", 200).kv_s("l1_address", *l1).key("sub_accounts").arr();
  dry_.account_reader().read([&] {
    const auto found = accounts_of_l1(addr);
    for (const pipe::AccountView* ap : found) write_sub_account(w, *ap, market_lookup);
  });
  w.end_arr().end_obj();
  return std::move(r);
}

HttpReply WorkerLogic::get_order_book_updates(RestCall& c) {
  const HttpRequest& req = c.req;
  HttpReply& r = c.r;
  JsonWriter& w = c.w;
  int m = -1;
  uint64_t since = 0;
  if (!query_int(req.target, "market_id", m) || m < 0 || m >= kMaxMarkets)
    return error_reply(400, 21602, "market_id is required");
  if (!query_int(req.target, "since_nonce", since))
    return error_reply(400, 21501, "since_nonce is required");
  const auto mv = dry_.market(static_cast<MarketId>(m));
  if (!mv) return error_reply(400, 21602, "no such market");
  const int pd = mv->params.price_decimals, sd = mv->params.size_decimals;
  auto levels = [&](const char* name, const auto& lv) {  // a delta's vector or a LevelArray
    w.key(name).arr();
    for (const auto& l : lv)
      w.obj().key("price").dec(l.price, pd).key("size").dec(l.size, sd).end_obj();
    w.end_arr();
  };
  std::vector<pipe::BookDelta> deltas;
  w.obj().kv_i("code", 200).kv_i("market_id", m);
  if (pipe_.book_deltas(static_cast<MarketId>(m), since, UINT64_MAX, deltas)) {
    w.kv_b("reset", false).key("updates").arr();
    for (const auto& d : deltas) {
      w.obj().kv_i("nonce", d.nonce).kv_i("begin_nonce", d.begin_nonce);
      levels("asks", d.asks);
      levels("bids", d.bids);
      w.kv_i("engine_ts_us", d.engine_ts_ns / 1000).end_obj();
    }
    w.end_arr();
  } else {  // too old: the whole book, to rebuild from
    auto& rd = book_readers_[m];
    if (!rd) rd.emplace(pipe_.book(static_cast<MarketId>(m)).reader());
    rd->read([&](const pipe::BookSnapshot* s) {
      static const pipe::LevelArray none;
      w.kv_b("reset", true).key("order_book").obj().kv_i("nonce", s ? s->nonce : 0);
      levels("asks", s ? s->asks : none);
      levels("bids", s ? s->bids : none);
      w.end_obj();
    });
  }
  w.end_obj();
  return std::move(r);
}

HttpReply WorkerLogic::get_blocks(RestCall& c) {
  if (!shared_.blocks) return no_endpoint(c.path);
  const HttpRequest& req = c.req;
  const std::string_view path = c.path;
  HttpReply& r = c.r;
  JsonWriter& w = c.w;
  if (path == "/api/v1/currentHeight") {
    w.obj().kv_i("code", 200).kv_i("height", shared_.current_height()).end_obj();
    return std::move(r);
  }
  uint64_t from = 0;
  int64_t limit = 1;
  if (path == "/api/v1/block") {
    const auto by = query(req.target, "by");
    if (!by || *by != "height" || !query_int(req.target, "value", from))
      return error_reply(400, 21501, "use by=height&value=<block height>");
  } else {
    if (query(req.target, "index") && !query_int(req.target, "index", from))
      return error_reply(400, 21501, "index must be a block height");
    limit = 20;
    if (query(req.target, "limit") &&
        (!query_int(req.target, "limit", limit) || limit < 1 || limit > 100))
      return error_reply(400, 21501, "limit must be 1..100");
  }
  const auto blocks = shared_.blocks(from, static_cast<size_t>(limit));
  if (path == "/api/v1/block" && (blocks.empty() || blocks[0].block != from))
    return error_reply(400, 21500, "block not found (or older than the ones kept in memory)");
  w.obj().kv_i("code", 200).kv_i("total", blocks.size()).key("blocks").arr();
  for (const auto& b : blocks) {
    w.obj().kv_i("height", b.block).kv_s("commitment", codec::to_hex(b.commitment.data(), 32));
    w.kv_s("state_root", codec::to_hex(b.state_root.data(), 32));
    w.kv_s("tx_root", codec::to_hex(b.tx_root.data(), 32));
    w.kv_i("first_seq", b.first_seq).kv_i("last_seq", b.last_seq).kv_i("tx_count", b.tx_count);
    // Lighter's rollup fields: a block here is committed when it is listed (status 1) and never
    // proven on an L1 (no operations, no L1 tx, verified_at 0); its txs are read with tx?by=hash.
    w.kv_i("timestamp", b.sealed_time_ns / 1'000'000).kv_i("status", 1);
    w.kv_i("size", b.tx_count).kv_i("committed_at", b.sealed_time_ns / 1'000'000);
    w.kv_s("committed_tx_hash", "").kv_s("verified_tx_hash", "").kv_i("verified_at", 0);
    w.kv_i("priority_operations", 0).kv_i("on_chain_l2_operations", 0);
    w.kv_s("pending_on_chain_operations_pub_data", "").key("txs").arr().end_arr().end_obj();
  }
  w.end_arr().end_obj();
  return std::move(r);
}

}  // namespace tachyon::api
