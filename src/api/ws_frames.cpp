// WorkerLogic, WebSocket frames: the order book (rendered once per update, each connection's copy
// with its own offset), market stats, trades and the account channels, as Lighter shapes them
// (docs/ARCHITECTURE.md "WebSocket channels").
#include <zlib.h>

#include <charconv>
#include <map>

#include "tachyon/api/json_writer.hpp"
#include "tachyon/api/render.hpp"
#include "tachyon/api/worker.hpp"

namespace tachyon::api {

namespace {
uint32_t book_checksum(const std::vector<pipe::PriceLevel>& bids,
                       const std::vector<pipe::PriceLevel>& asks, int pd, int sd) {
  std::string s;
  JsonWriter w(s);  // only for its fixed-point formatting
  bool first = true;
  auto side = [&](const std::vector<pipe::PriceLevel>& lv) {
    for (size_t i = 0; i < lv.size() && i < 25; ++i) {
      std::string p, q;
      JsonWriter(p).dec_num(lv[i].price, pd);
      JsonWriter(q).dec_num(lv[i].size, sd);
      if (!first) s += '|';
      first = false;
      s += p + ":" + q;
    }
  };
  side(bids);
  side(asks);
  return static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

// An account's trades, by market, newest first: {"<market>": [trade, ...], ...}.
template <typename Markets>
void write_trades_by_market(JsonWriter& w, const pipe::TradeRange& list, Markets&& markets,
                            ApiShared& shared) {
  std::map<MarketId, std::vector<const pipe::TradeRecord*>> by;
  for (const auto& t : list) by[t.t.market].push_back(&t);
  w.key("trades").obj();
  for (const auto& [m, trades] : by) {
    const auto mv = markets(m);
    if (!mv) continue;
    w.key(std::to_string(m)).arr();
    for (auto it = trades.rbegin(); it != trades.rend(); ++it)
      write_trade(w, **it, *mv, shared.trade_tx_hash(**it));
    w.end_arr();
  }
  w.end_obj();
}

// An account's orders of market `only` (or all), by market; `changes`: the list is what changed,
// and an order removed shows its status.
template <typename Markets>
void write_orders_by_market(JsonWriter& w, const pipe::OrderRange& list, MarketId only,
                            bool changes, Markets&& markets) {
  std::map<MarketId, std::vector<const pipe::OrderView*>> by;
  for (const auto& o : list)
    if (only == kAllMarkets || o.o.market == only) by[o.o.market].push_back(&o);
  w.key("orders").obj();
  for (const auto& [m, os] : by) {
    const auto mv = markets(m);
    if (!mv) continue;
    w.key(std::to_string(m)).arr();
    for (const auto* o : os) {
      write_order(w, o->o, o->created_ns, o->updated_ns, *mv,
                  changes && o->removed ? order_status(o->o.reason) : std::string_view());
    }
    w.end_arr();
  }
  w.end_obj();
}
}  // namespace

std::string WorkerLogic::book_frame(WsConn& c, MarketId m, bool snapshot, const BookCache& cache,
                                    const std::vector<pipe::PriceLevel>* dbids,
                                    const std::vector<pipe::PriceLevel>* dasks,
                                    uint64_t begin_nonce) {
  return with_offset(book_frame_at_zero(m, snapshot, cache, dbids, dasks, begin_nonce), c);
}

// A book frame holds the connection's message count ("offset", twice; Lighter counts per
// connection): rendered once with 0 for every subscriber, each copy gets its connection's next.
std::string WorkerLogic::with_offset(std::string_view at_zero, WsConn& c) {
  static constexpr std::string_view kAt = "\"offset\":0";
  const size_t a = at_zero.find(kAt) + kAt.size() - 1, b = at_zero.rfind(kAt) + kAt.size() - 1;
  char num[24];
  const size_t n = static_cast<size_t>(std::to_chars(num, num + sizeof(num), ++c.offset).ptr - num);
  std::string s;
  s.reserve(at_zero.size() + 2 * n);
  s.append(at_zero.substr(0, a)).append(num, n);
  s.append(at_zero.substr(a + 1, b - a - 1)).append(num, n).append(at_zero.substr(b + 1));
  return s;
}

std::string WorkerLogic::book_frame_at_zero(MarketId m, bool snapshot, const BookCache& cache,
                                            const std::vector<pipe::PriceLevel>* dbids,
                                            const std::vector<pipe::PriceLevel>* dasks,
                                            uint64_t begin_nonce) {
  const auto mv = dry_.market(m);
  const int pd = mv ? mv->params.price_decimals : 0, sd = mv ? mv->params.size_decimals : 0;
  const uint64_t offset = 0;  // with_offset() puts the connection's in
  std::string s;
  JsonWriter w(s);
  w.obj().kv_s("channel", "order_book:" + std::to_string(m)).kv_i("offset", offset);
  w.key("order_book").obj().kv_i("code", 0);
  auto side = [&](const char* name, const std::vector<pipe::PriceLevel>& lv) {
    w.key(name).arr();
    for (const auto& l : lv)
      w.obj().key("price").dec(l.price, pd).key("size").dec(l.size, sd).end_obj();
    w.end_arr();
  };
  side("asks", snapshot ? cache.asks : *dasks);
  side("bids", snapshot ? cache.bids : *dbids);
  w.kv_i("offset", offset).kv_i("nonce", cache.nonce);
  w.kv_i("begin_nonce", snapshot ? cache.nonce : begin_nonce);
  if (cache.valid) w.kv_i("checksum", book_checksum(cache.bids, cache.asks, pd, sd));
  w.end_obj();
  const int64_t sent = write_stamp(w, cache.engine_ts_ns);
  if (!snapshot) shared_.metrics.freshness(index_, Chan::kOrderBook, sent - cache.engine_ts_ns);
  w.kv_s("type", snapshot ? "subscribed/order_book" : "update/order_book").end_obj();
  return s;
}

std::string WorkerLogic::market_stats_frame(WsConn&, MarketId m, bool all, bool snapshot) {
  std::string s;
  JsonWriter w(s);
  w.obj().kv_s("channel", all ? "market_stats:all" : "market_stats:" + std::to_string(m));
  int64_t ts = 0;
  w.key("market_stats");
  if (all) {
    w.obj();
    for (int i = 0; i < kMaxMarkets; ++i) {
      if (auto v = dry_.market(static_cast<MarketId>(i))) {
        w.key(std::to_string(i));
        write_market_stats(w, *v);
        ts = std::max(ts, v->engine_ts_ns);
      }
    }
    w.end_obj();
  } else if (auto v = dry_.market(m)) {
    write_market_stats(w, *v);
    ts = v->engine_ts_ns;
  } else {
    w.null();
  }
  write_stamp(w, ts);  // pushed once a second: its age is the market's quiet time, not a freshness
  w.kv_s("type", snapshot ? "subscribed/market_stats" : "update/market_stats").end_obj();
  return s;
}

std::string WorkerLogic::trades_frame(WsConn&, MarketId m,
                                      const std::vector<pipe::TradeRecord>& trades, bool snapshot) {
  const auto mv = dry_.market(m);
  std::string s;
  JsonWriter w(s);
  int64_t ts = 0;
  // Book trades in `trades`; liquidation fills, takeovers and deleverages (the waterfall) in
  // `liquidation_trades`, as Lighter does.
  w.obj().kv_s("channel", "trade:" + std::to_string(m));
  for (const bool liq : {false, true}) {
    w.key(liq ? "liquidation_trades" : "trades").arr();
    for (auto it = trades.rbegin(); it != trades.rend(); ++it) {  // newest first (ccxt reverses)
      if ((it->t.kind != TradeKind::kTrade) != liq) continue;
      if (mv) write_trade(w, *it, *mv, shared_.trade_tx_hash(*it));
      ts = std::max(ts, it->time_ns);
    }
    w.end_arr();
  }
  const int64_t sent = write_stamp(w, ts);
  if (!snapshot && ts > 0) shared_.metrics.freshness(index_, Chan::kTrade, sent - ts);
  w.kv_s("type", snapshot ? "subscribed/trade" : "update/trade").end_obj();
  return s;
}

std::string WorkerLogic::account_frame(WsConn&, std::string_view kind, AccountIndex a,
                                       bool snapshot,
                                       const std::vector<pipe::TradeRecord>* new_trades,
                                       const std::vector<pipe::OrderView>* changed, MarketId only) {
  auto markets = [this](MarketId m) { return dry_.market(m); };
  std::string s;
  JsonWriter w(s);
  int64_t ts = 0;
  const std::string frame_channel = kind == "account_orders"
                                        ? "account_orders:" + std::to_string(only)
                                        : std::string(kind) + ":" + std::to_string(a);
  w.obj().kv_s("channel", frame_channel).kv_i("account", a);
  dry_.account_reader().read([&] {
    const pipe::AccountView* v = dry_.accounts().find(a);
    if (v == nullptr) return;
    ts = v->engine_ts_ns;
    auto trades = [&] {  // all of them in a snapshot, else the new ones
      return snapshot || new_trades == nullptr
                 ? v->trades()
                 : pipe::TradeRange(std::span<const pipe::TradeRecord>(*new_trades));
    };
    if (kind == "user_stats") {
      w.key("stats");
      write_user_stats(w, *v, markets);
    } else if (kind == "account_all_assets") {
      w.key("assets").obj().key("3");
      write_spot_usdc(w);
      w.end_obj();
    } else if (kind == "account_all_trades") {
      write_trades_by_market(w, trades(), markets, shared_);
      w.kv_i("total_trade_count", v->trade_count);
    } else if (kind == "account_all_orders" || kind == "account_orders") {
      const bool changes = !snapshot && changed != nullptr;
      write_orders_by_market(w, changes ? pipe::OrderRange(*changed) : v->order_list(), only,
                             changes, markets);
    } else {  // account_all
      const AccountFigures f = account_figures(*v, markets);
      w.key("positions").obj();
      for (const auto& p : v->positions) {
        w.key(std::to_string(p.market));
        write_position(w, p, f, markets);
      }
      w.end_obj();
      write_trades_by_market(w, trades(), markets, shared_);
      w.key("funding_histories").obj().end_obj().key("shares").arr().end_arr();
      w.key("collateral").dec(v->collateral, 6).key("available_balance").dec(f.available, 6);
      w.kv_i("total_order_count", v->open_order_count).kv_i("daily_trades_count", v->trade_count);
    }
  });
  const int64_t sent = write_stamp(w, ts);
  if (!snapshot && ts > 0) shared_.metrics.freshness(index_, Chan::kAccount, sent - ts);
  w.kv_s("type", std::string(snapshot ? "subscribed/" : "update/") +
                     std::string(kind == "account_orders" ? "account_orders" : kind));
  w.end_obj();
  return s;
}

}  // namespace tachyon::api
