// WorkerLogic, the operator's console on the admin listener: GET /console is one page embedded in
// the binary (src/api/console/console.html: no external script, font or CDN); its WebSocket,
// /console/ws, gets a state frame every kConsolePeriodNs from the worker that holds it. A frame
// reads only what is published anyway: the books and recent trades of every market (the
// snapshots the workers serve), and the series of the /metrics text the page reads (the
// histograms and counters the server keeps, rendered, cut and encoded once per period by the api
// server's console thread; the page turns their deltas into rates and last-minute percentiles).
#include "tachyon/api/json_writer.hpp"
#include "tachyon/api/render.hpp"
#include "tachyon/api/worker.hpp"
#include "tachyon/core/clock.hpp"

namespace tachyon::api {

extern const char* const kConsoleHtml;  // generated from src/api/console/console.html

namespace {
constexpr size_t kConsoleLevels = 15;  // per side
constexpr size_t kConsoleTrades = 30;

// The series the page reads (console.html: rates, percentiles, the server table).
constexpr std::string_view kConsoleSeries[] = {
    "tachyon_txs_total",
    "tachyon_rejects_total",
    "tachyon_tx_stage_seconds_bucket{stage=\"recv_to_sent\"",
    "tachyon_tx_stage_seconds_bucket{stage=\"sequenced_to_executed\"",
    "tachyon_api_dry_run_seconds_bucket",
    "tachyon_apply_batch_seconds_bucket",
    "tachyon_journal_group_commit_seconds_bucket",
    "tachyon_ws_freshness_seconds_bucket",
    "tachyon_connections",
    "tachyon_ws_queued_bytes",
    "tachyon_ws_slow_consumer_",
    "tachyon_ws_stall_",
    "tachyon_ws_budget_closes_total",
    "tachyon_process_resident_bytes",
    "tachyon_jemalloc_",
    "tachyon_journal_failed",
    "tachyon_journal_out_of_space",
    "tachyon_data_dir_free_bytes",
};
}  // namespace

std::string console_metrics_json(std::string_view prometheus) {
  std::string kept;
  kept.reserve(prometheus.size() / 2);
  for (size_t at = 0; at < prometheus.size();) {
    size_t end = prometheus.find('\n', at);
    if (end == std::string_view::npos) end = prometheus.size();
    const std::string_view line = prometheus.substr(at, end - at);
    at = end + 1;
    for (std::string_view s : kConsoleSeries) {
      if (line.substr(0, s.size()) == s) {
        kept.append(line).push_back('\n');
        break;
      }
    }
  }
  std::string out;
  JsonWriter(out).str(kept);
  return out;
}

HttpReply WorkerLogic::admin_console(RestCall& c) {
  c.r.content_type = "text/html; charset=utf-8";
  c.r.body = kConsoleHtml;
  return std::move(c.r);
}

void WorkerLogic::console_markets(JsonWriter& w) {
  w.key("markets").arr();
  for (int mi = 0; mi < kMaxMarkets; ++mi) {
    const auto m = static_cast<MarketId>(mi);
    if (!pipe_.read_side().market_exists(m)) continue;
    const auto mv = dry_.market(m);
    if (!mv) continue;
    refresh_book(m);
    const BookCache& b = books_[m];
    const int pd = mv->params.price_decimals, sd = mv->params.size_decimals;
    w.obj().kv_i("id", m).kv_s("symbol", symbol_of(mv->params)).kv_i("nonce", b.nonce);
    w.key("mark").dec(mv->mark_price, pd).key("index").dec(mv->index_price, pd);
    w.key("last").dec(mv->last_trade_price, pd).kv_i("trades_total", mv->trade_count);
    auto side = [&](const char* name, const std::vector<pipe::PriceLevel>& levels) {
      w.key(name).arr();
      for (size_t i = 0; i < levels.size() && i < kConsoleLevels; ++i)
        w.arr().dec(levels[i].price, pd).dec(levels[i].size, sd).end_arr();
      w.end_arr();
    };
    side("bids", b.bids);
    side("asks", b.asks);
    w.key("trades").arr();
    const auto trades = pipe_.read_side().recent_trades(m, kConsoleTrades);
    for (auto it = trades.rbegin(); it != trades.rend(); ++it) {
      w.obj().key("price").dec(it->t.price, pd).key("size").dec(it->t.size, sd);
      w.kv_s("side", it->t.taker_is_ask ? "sell" : "buy").kv_i("t", it->time_ns / 1'000'000);
      w.end_obj();
    }
    w.end_arr().end_obj();
  }
  w.end_arr();
}

std::string WorkerLogic::console_frame() {
  std::string s;
  JsonWriter w(s);
  w.obj().kv_s("type", "console").kv_i("t", realtime_ns() / 1'000'000);
  w.key("node").obj().kv_b("ready", shared_.ready.load()).kv_i("applied_seq", pipe_.applied_seq());
  w.kv_i("start_ms", shared_.start_ms);
  if (!shared_.node_info.empty()) w.key("info").raw(shared_.node_info);
  if (shared_.cluster_status) {
    w.key("cluster").obj();
    shared_.cluster_status(w);
    w.end_obj();
  }
  w.end_obj();
  console_markets(w);
  // A JSON string ready to go (console_metrics_json); "" until the console thread's first render.
  const auto metrics = shared_.console_metrics();
  w.key("metrics");
  if (metrics) {
    w.raw(*metrics);
  } else {
    w.str("");
  }
  w.end_obj();
  return s;
}

// Every tick: a state frame to each console connection of this worker once its period is due.
void WorkerLogic::push_consoles(int64_t now) {
  if (now - last_console_ns_ < kConsolePeriodNs) return;
  last_console_ns_ = now;
  std::string frame;
  for (auto& [id, weak] : conns_) {
    auto c = weak.lock();
    if (!c || !c->console) continue;
    if (frame.empty()) frame = console_frame();
    push(*c, frame);
  }
}

}  // namespace tachyon::api
