// WorkerLogic, WebSocket side: the Lighter protocol (docs/ARCHITECTURE.md "WebSocket channels"):
// greeting, subscribe / unsubscribe, snapshots then deltas, JSON ping/pong, jsonapi/sendtx(batch);
// and the fan-out of results and read-side changes to this worker's connections.
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "tachyon/api/form.hpp"
#include "tachyon/api/json_writer.hpp"
#include "tachyon/api/render.hpp"
#include "tachyon/api/worker.hpp"
#include "tachyon/core/clock.hpp"

#include "json_scratch.hpp"

namespace tachyon::api {

namespace {
int64_t now_ns() { return realtime_ns(); }

std::string ws_error(int code, std::string_view message, std::string_view id) {
  std::string s;
  JsonWriter w(s);
  w.obj().key("error").obj().kv_i("code", code).kv_s("message", message).end_obj();
  if (!id.empty()) w.kv_s("id", id);
  w.end_obj();
  return s;
}

// Parsed channel name: kind, market, account.
struct Channel {
  std::string kind;  // order_book, trade, market_stats, account_all, user_stats, ...
  int market = -1;   // -2: "all"
  int64_t account = -1;
  std::string key;    // as subscribed, normalised ("order_book/0")
  std::string frame;  // as in frames ("order_book:0")
  bool needs_auth = false;
};

bool parse_u(std::string_view s, int64_t& out) {
  if (s.empty() || s.size() > 18) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

std::optional<Channel> parse_channel(std::string_view ch) {
  Channel c;
  const size_t slash = ch.find('/');
  if (slash == std::string_view::npos) {
    if (ch != "height") return std::nullopt;
    c.kind = "height";
    c.key = c.frame = "height";
    return c;
  }
  c.kind = std::string(ch.substr(0, slash));
  std::string_view rest = ch.substr(slash + 1);
  int64_t a = 0, b = 0;
  if (c.kind == "order_book" || c.kind == "trade" || c.kind == "market_stats") {
    if (c.kind == "market_stats" && rest == "all") {
      c.market = -2;
    } else if (!parse_u(rest, a) || a >= kMaxMarkets) {
      return std::nullopt;
    } else {
      c.market = static_cast<int>(a);
    }
    c.key = c.kind + "/" + std::string(rest);
    c.frame = c.kind + ":" + std::string(rest);
    return c;
  }
  if (c.kind == "account_all" || c.kind == "user_stats" || c.kind == "account_all_trades" ||
      c.kind == "account_all_orders" || c.kind == "account_all_assets") {
    if (!parse_u(rest, a)) return std::nullopt;
    c.account = a;
    c.key = c.kind + "/" + std::to_string(a);
    c.frame = c.kind + ":" + std::to_string(a);
    c.needs_auth = c.kind == "account_all_orders" || c.kind == "account_all_assets" ||
                   c.kind == "account_all_trades";
    return c;
  }
  if (c.kind == "account_orders") {
    const size_t s2 = rest.find('/');
    if (s2 == std::string_view::npos || !parse_u(rest.substr(0, s2), a) || a >= kMaxMarkets ||
        !parse_u(rest.substr(s2 + 1), b))
      return std::nullopt;
    c.market = static_cast<int>(a);
    c.account = b;
    c.key = "account_orders/" + std::to_string(a) + "/" + std::to_string(b);
    c.frame = "account_orders:" + std::to_string(a);
    c.needs_auth = true;
    return c;
  }
  return std::nullopt;
}

// A client's message: its fields of interest ("data" as raw JSON). False: not a JSON object.
struct WsRequest {
  std::string type, channel, auth, id, data;
  uint64_t nonce = 0;
};
bool parse_ws_request(std::string_view text, WsRequest& q) {
  static thread_local JsonScratch js;
  simdjson::ondemand::document doc;
  simdjson::ondemand::object obj;
  if (js.iterate(text).get(doc) || doc.get_object().get(obj)) return false;
  for (auto f : obj) {
    std::string_view k, sv;
    simdjson::ondemand::value v;
    if (f.unescaped_key().get(k) || f.value().get(v)) return false;
    simdjson::ondemand::json_type t;
    if (v.type().get(t)) continue;
    if (k == "data") {
      std::string_view raw;
      if (simdjson::to_json_string(v).get(raw)) return false;
      q.data = std::string(raw);
      continue;
    }
    if (t == simdjson::ondemand::json_type::string) {
      if (v.get_string().get(sv)) continue;
    } else if (t == simdjson::ondemand::json_type::number) {
      sv = v.raw_json_token();
    } else {
      continue;
    }
    if (k == "type")
      q.type = sv;
    else if (k == "channel")
      q.channel = sv;
    else if (k == "auth")
      q.auth = sv;
    else if (k == "id")
      q.id = sv;
    else if (k == "nonce")
      q.nonce = std::strtoull(std::string(sv).c_str(), nullptr, 10);
  }
  return true;
}
}  // namespace

void WorkerLogic::push(WsConn& c, std::string frame) {
  if (c.cut) return;
  if (c.queued_bytes() + frame.size() > cfg_.ws_queue_bytes) {
    if (c.resynced)
      return cut(c, shared_.metrics.slow_closes(), "slow consumer: send queue overflowed twice");
    return resync(c, shared_.metrics.slow_resyncs());  // the frame goes with what is queued
  }
  c.send_text(std::move(frame));
}

// Drops what is queued and sends fresh snapshots of the connection's books instead; its stall
// clock starts again.
void WorkerLogic::resync(WsConn& c, tachyon::Counter& resyncs) {
  c.clear_queue();
  c.resynced = true;
  c.behind_since_ns = 0;
  resyncs.add();
  for (const auto& key : c.subs) {
    const auto ch = parse_channel(key);
    if (ch && ch->kind == "order_book" && books_[ch->market].valid)
      c.send_text(book_frame(c, static_cast<MarketId>(ch->market), true, books_[ch->market],
                             nullptr, nullptr, 0));
  }
}

// Counted once: the connection takes no more frames, and ws_closed follows.
void WorkerLogic::cut(WsConn& c, tachyon::Counter& closes, std::string_view reason) {
  c.cut = true;
  closes.add();
  c.cut_conn(reason);
}

// Removes `c` (and subscribers whose connection is gone) from a channel's list.
void WorkerLogic::drop_subscriber(const std::string& key, const WsConn& c) {
  auto it = subs_.find(key);
  if (it == subs_.end()) return;
  auto& v = it->second;
  v.erase(std::remove_if(v.begin(), v.end(),
                         [&](const Sub& s) {
                           auto p = s.conn.lock();
                           return !p || p.get() == &c;
                         }),
          v.end());
  if (v.empty()) subs_.erase(it);
  refresh_publish_interest();
}

void WorkerLogic::ws_open(const std::shared_ptr<WsConn>& c) {
  TACHYON_OWNER_ONLY(owner_);
  c->id = (uint64_t{index_} << 48) | next_conn_id_++;
  c->last_rx_ns = now_ns();
  conns_[c->id] = c;
  if (c->console) {
    shared_.consoles.fetch_add(1);
    c->counted = true;
  }
  std::string s;
  JsonWriter w(s);
  w.obj().kv_s("type", "connected").kv_s("session_id", std::to_string(c->id)).end_obj();
  c->send_text(std::move(s));
}

void WorkerLogic::ws_cancel_on_disconnect(const std::shared_ptr<WsConn>& c, std::string_view data,
                                          std::string_view id) {
  auto reply = [&](std::string_view status) {
    std::string s;
    JsonWriter w(s);
    w.obj().kv_s("type", "cancel_on_disconnect").kv_s("status", status);
    if (!id.empty()) w.kv_s("id", id);
    w.end_obj();
    push(*c, std::move(s));
  };
  if (data.empty() || data == "null") {
    c->on_disconnect.reset();
    return reply("disarmed");
  }
  static thread_local JsonScratch js;
  simdjson::ondemand::document doc;
  std::string_view info;
  int64_t type = 0;
  simdjson::ondemand::object obj;
  if (js.iterate(data).get(doc) || doc.get_object().get(obj) ||
      obj["tx_type"].get_int64().get(type)) {
    return push(*c, ws_error(30007, "data must hold tx_type 16 and a signed tx_info", id));
  }
  simdjson::ondemand::value v;
  if (obj["tx_info"].get(v) || simdjson::to_json_string(v).get(info)) {
    return push(*c, ws_error(30007, "data must hold tx_type 16 and a signed tx_info", id));
  }
  SignedTx st;
  std::string err;
  if (type != 16)
    return push(*c, ws_error(30007, "cancel-on-disconnect takes a CancelAllOrders (16)", id));
  if (Reject r = parse_tx_info(16, info, st, err); r != Reject::kOk)
    return push(*c, ws_error(static_cast<int>(r), err, id));
  if (st.tx.cancel_all.tif != 0 || !(st.tx.h.flags & kTxFlagSkipNonce))
    return push(
        *c,
        ws_error(30007, "use TimeInForce 0 and SkipTxNonce (attribute 4), so the nonce stays valid",
                 id));
  // Signature and key now; the nonce is checked when it fires.
  SignedTx probe = st;
  std::string msg;
  const Reject r = dry_.check_only(probe, now_ns() / 1'000'000, msg);
  if (r != Reject::kOk && r != Reject::kInvalidNonce)
    return push(
        *c, ws_error(static_cast<int>(r), msg.empty() ? std::string(reject_message(r)) : msg, id));
  c->on_disconnect = st;
  reply("armed");
}

void WorkerLogic::ws_closed(const std::shared_ptr<WsConn>& c) {
  TACHYON_OWNER_ONLY(owner_);
  if (std::exchange(c->counted, false)) shared_.consoles.fetch_sub(1);
  run_deferred();          // a tx this connection sent before it closed goes before its cancel
  if (c->on_disconnect) {  // the session asked for its orders to go with it
    SignedTx st = *c->on_disconnect;
    c->on_disconnect.reset();
    std::string msg;
    if (dry_.check_and_reserve(st, now_ns() / 1'000'000, msg) == Reject::kOk)
      cancel_on_disconnect(st);
  }
  for (const auto& key : c->subs) drop_subscriber(key, *c);
  c->subs.clear();
  conns_.erase(c->id);
}

// The armed cancel, its nonce reserved: to the sequencer, or (a cluster follower) to the primary.
void WorkerLogic::cancel_on_disconnect(const SignedTx& st) {
  const Tx tx = st.tx;
  auto settle = [&in = shared_.inflight, tx](bool accepted) {
    in.settle(tx.h.account, tx.h.api_key_index, tx.h.nonce, accepted);
  };
  if (shared_.not_primary && !shared_.not_primary().empty()) {
    if (!shared_.forward_txs) return settle(false);
    shared_.forward_txs(std::span(&tx, 1), false,
                        [settle](int status, const std::string&) { settle(status == 200); });
    return;
  }
  if (!submit(st, [settle](const pipe::Result& r) { settle(r.reject == Reject::kOk); }))
    settle(false);
}

void WorkerLogic::ws_message(const std::shared_ptr<WsConn>& c, std::string_view text) {
  TACHYON_OWNER_ONLY(owner_);
  c->last_rx_ns = now_ns();
  if (!shared_.ip_allow(c->ip)) {
    push(*c, ws_error(30009, "rate limit exceeded", ""));
    return;
  }
  WsRequest q;
  if (!parse_ws_request(text, q)) {
    push(*c, ws_error(30000, "Invalid JSON", ""));
    return;
  }
  const std::string& type = q.type;
  std::string& id = q.id;
  while (!id.empty() && (id.back() == ' ' || id.back() == '\n')) id.pop_back();
  if (type == "ping") {
    push(*c, "{\"type\":\"pong\"}");
  } else if (type == "pong") {
    // keep-alive answer: nothing to do
  } else if (type == "subscribe") {
    ws_subscribe(c, q.channel, q.auth, id);
  } else if (type == "unsubscribe") {
    ws_unsubscribe(c, q.channel);
  } else if (type == "jsonapi/sendtx" || type == "jsonapi/sendtxbatch") {
    ws_sendtx(c, q.data, type == "jsonapi/sendtxbatch", id);
  } else if (type == "cancel_on_disconnect") {
    ws_cancel_on_disconnect(c, q.data, id);
  } else if (type == "resume") {
    ws_resume(c, q.channel, q.nonce);
  } else {
    push(*c, ws_error(30001, "Invalid type: " + type, id));
  }
}

void WorkerLogic::ws_subscribe(const std::shared_ptr<WsConn>& c, std::string_view name,
                               std::string_view auth, std::string_view id) {
  const auto ch = parse_channel(name);
  if (!ch) {
    push(*c, ws_error(30005, "Invalid Channel: " + std::string(name), id));
    return;
  }
  if (ch->market >= 0 && !pipe_.read_side().market_exists(static_cast<MarketId>(ch->market))) {
    push(*c, ws_error(30005, "Invalid Channel: no market " + std::to_string(ch->market), id));
    return;
  }
  if (std::find(c->subs.begin(), c->subs.end(), ch->key) != c->subs.end()) {
    push(*c, ws_error(30003, "Already Subscribed: " + ch->key, id));
    return;
  }
  if (c->subs.size() >= cfg_.max_subscriptions) {
    push(*c, ws_error(30012, "too many subscriptions on this connection", id));
    return;
  }
  if (ch->account >= 0) {
    bool exists = false, authorized = !ch->needs_auth;
    dry_.account_reader().read([&] {
      const pipe::AccountView* a = dry_.accounts().find(static_cast<AccountIndex>(ch->account));
      if (a == nullptr) return;
      exists = true;
      if (!authorized) authorized = token_grants(*a, auth, cfg_.chain_id);
    });
    if (!exists) {
      push(*c, ws_error(30005, "Invalid Channel: account not found", id));
      return;
    }
    if (!authorized) {
      push(*c, ws_error(30008, "this channel needs a valid auth token for the account", id));
      return;
    }
  }
  c->subs.push_back(ch->key);
  subs_[ch->key].push_back(Sub{c, ch->frame});
  refresh_publish_interest();  // before the snapshot is read
  // The snapshot, first.
  const std::string& k = ch->kind;
  if (k == "order_book") {
    const auto m = static_cast<MarketId>(ch->market);
    if (!books_[m].valid) refresh_book(m);
    push(*c, book_frame(*c, m, true, books_[m], nullptr, nullptr, 0));
  } else if (k == "market_stats") {
    push(*c, market_stats_frame(*c, ch->market < 0 ? 0 : static_cast<MarketId>(ch->market),
                                ch->market == -2, true));
  } else if (k == "trade") {
    const auto m = static_cast<MarketId>(ch->market);
    push(*c, trades_frame(*c, m, pipe_.read_side().recent_trades(m, 100), true));
  } else if (k == "height") {
    std::string s;
    JsonWriter w(s);
    w.obj().kv_s("channel", "height").kv_s("type", "subscribed/height");
    w.kv_i("height", height());
    write_stamp(w, 0);
    w.end_obj();
    push(*c, std::move(s));
  } else {
    push(*c, account_frame(*c, k, static_cast<AccountIndex>(ch->account), true, nullptr, nullptr,
                           ch->market >= 0 ? static_cast<MarketId>(ch->market) : kAllMarkets));
  }
}

void WorkerLogic::ws_unsubscribe(const std::shared_ptr<WsConn>& c, std::string_view name) {
  const auto ch = parse_channel(name);
  auto pos = ch ? std::find(c->subs.begin(), c->subs.end(), ch->key) : c->subs.end();
  if (pos == c->subs.end()) {
    push(*c, ws_error(30002, "Not Subscribed: " + std::string(name), ""));
    return;
  }
  c->subs.erase(pos);
  drop_subscriber(ch->key, *c);
  std::string s;
  JsonWriter w(s);
  w.obj().kv_s("type", "unsubscribed").kv_s("channel", ch->frame).end_obj();
  push(*c, std::move(s));
}

void WorkerLogic::ws_resume(const std::shared_ptr<WsConn>& c, std::string_view name,
                            uint64_t nonce) {
  // The deltas after `nonce` from the market's history, up to what this worker's stream has sent
  // (its next frame continues from there); a snapshot when `nonce` is older than the history.
  const auto ch = parse_channel(name);
  if (!ch || ch->kind != "order_book" ||
      std::find(c->subs.begin(), c->subs.end(), ch->key) == c->subs.end()) {
    push(*c, ws_error(30002, "resume needs a subscribed order_book channel", ""));
    return;
  }
  const auto m = static_cast<MarketId>(ch->market);
  std::vector<pipe::BookDelta> deltas;
  const bool have =
      nonce <= books_[m].nonce && pipe_.book_deltas(m, nonce, books_[m].nonce, deltas);
  shared_.metrics.read(ReadKind::kBookHistory, have);
  if (!have) {
    push(*c, book_frame(*c, m, true, books_[m], nullptr, nullptr, 0));
    return;
  }
  for (const auto& d : deltas) {
    BookCache at = books_[m];  // nonce and stamp of this delta; levels for the checksum only
    at.nonce = d.nonce;
    at.engine_ts_ns = d.engine_ts_ns;
    at.valid = d.nonce == books_[m].nonce;  // a checksum only where the levels are that state
    push(*c, book_frame(*c, m, false, at, &d.bids, &d.asks, d.begin_nonce));
  }
}

namespace {
// A jsonapi/sendtx message's `data` as the REST form's fields; false when it is not an object.
bool ws_tx_fields(std::string_view data, FormFields& f) {
  static thread_local JsonScratch js;
  simdjson::ondemand::document doc;
  simdjson::ondemand::object obj;
  if (data.empty() || js.iterate(data).get(doc) || doc.get_object().get(obj)) return false;
  for (auto fld : obj) {
    std::string_view k;
    simdjson::ondemand::value v;
    if (fld.unescaped_key().get(k) || fld.value().get(v)) break;
    std::string_view sv;
    simdjson::ondemand::json_type t;
    if (v.type().get(t)) break;
    if (t == simdjson::ondemand::json_type::string) {
      if (v.get_string().get(sv)) continue;
      f.emplace_back(std::string(k), std::string(sv));
    } else {
      if (simdjson::to_json_string(v).get(sv)) break;
      f.emplace_back(std::string(k), std::string(sv));
    }
  }
  return true;
}
}  // namespace

void WorkerLogic::ws_sendtx(const std::shared_ptr<WsConn>& c, std::string_view data, bool batch,
                            std::string id) {
  const char* type = batch ? "jsonapi/sendtxbatch" : "jsonapi/sendtx";
  // The same path as REST sendTx (same dry-run, same reply body), from the `data` members.
  FormFields f;
  if (!ws_tx_fields(data, f)) {
    push(*c, ws_error(30007, "data must be an object with tx_type and tx_info", id));
    return;
  }
  if (auto did = field(f, "id"); did && id.empty()) id = *did;
  std::weak_ptr<WsConn> weak = c;
  ReplyFn done = [this, weak, id, type](HttpReply r) {
    auto conn = weak.lock();
    if (!conn) return;
    // Turn the REST reply into the WS shape: success echoes type and id; failure is an error.
    if (r.status != 200) {
      static thread_local JsonScratch js;
      simdjson::ondemand::document d;
      int64_t code = 0;
      std::string_view message;
      if (!js.iterate(r.body).get(d) && !d["code"].get_int64().get(code)) {
        if (d["message"].get_string().get(message)) message = "rejected";
        push(*conn, ws_error(static_cast<int>(code), message, id));
        return;
      }
    }
    std::string s;
    s.reserve(r.body.size() + id.size() + 48);
    s += "{\"type\":\"";
    s += type;
    s += "\",\"id\":";
    JsonWriter(s).str(id);
    s += ",";
    s.append(r.body, 1, std::string::npos);  // the REST object's members
    push(*conn, std::move(s));
  };
  const SendKind kind = batch ? SendKind::kBatch : SendKind::kTx;
  if (defer(f, /*admin=*/false, kind, done)) return;
  bool deferred = false;
  HttpReply r = send_form(f, /*admin=*/false, kind, deferred, done);
  if (!deferred) done(std::move(r));
}

// ---- frames ----

}  // namespace tachyon::api
