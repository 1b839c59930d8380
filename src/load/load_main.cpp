// tachyon-load: generates realistic load against a running tachyon over real connections and
// reports the latency a trader would feel (docs/PERFORMANCE.md, scripts/loadtest.sh).
//   1. creates synthetic traders: Ed25519 keys, funded by operator deposits on the admin port;
//   2. plans the run (mixed: makers quoting around a moving mid, takers crossing, cancels and
//      modifies at a Poisson rate; demo: the same, gently; lobster: real NASDAQ order flow) and
//      signs every tx before the clock starts;
//   3. sends each tx when due over WebSocket jsonapi/sendtx, with subscriber connections on
//      order_book, trade and account channels measuring freshness;
//   4. prints the table and leaves report.json and SVG plots in --out.
#include <simdjson.h>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <thread>

#include "plan.hpp"
#include "report.hpp"
#include "runner.hpp"
#include "tachyon/api/crypto.hpp"
#include "tachyon/api/tx_info.hpp"

namespace {

using namespace tachyon;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

struct HttpResult {
  int status = 0;
  std::string body;
  std::string error;
};

HttpResult http_call(const std::string& host, int port, http::verb verb, const std::string& target,
                     const std::string& body = "") {
  HttpResult r;
  try {
    asio::io_context io;
    asio::ip::tcp::resolver res(io);
    beast::tcp_stream s(io);
    s.connect(res.resolve(host, std::to_string(port)));
    http::request<http::string_body> req(verb, target, 11);
    req.set(http::field::host, host);
    if (!body.empty()) {
      req.set(http::field::content_type, "application/x-www-form-urlencoded");
      req.body() = body;
      req.prepare_payload();
    }
    http::write(s, req);
    beast::flat_buffer buf;
    http::response<http::string_body> resp;
    http::read(s, buf, resp);
    r.status = static_cast<int>(resp.result_int());
    r.body = resp.body();
    beast::error_code ec;
    s.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

std::string urlencode(const std::string& s) {
  std::string o;
  char b[4];
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      o += static_cast<char>(c);
    } else {
      std::snprintf(b, sizeof b, "%%%02X", c);
      o += b;
    }
  }
  return o;
}

// A decimal JSON value (string "3000.00" or number) in units of 10^-decimals.
bool fixed(simdjson::dom::element e, int decimals, int64_t& out) {
  std::string_view s;
  double d = 0;
  if (e.get_string().get(s) == simdjson::SUCCESS) {
    try {
      d = std::stod(std::string(s));
    } catch (...) {
      return false;
    }
  } else if (e.get_double().get(d) != simdjson::SUCCESS) {
    return false;
  }
  out = static_cast<int64_t>(std::llround(d * std::pow(10.0, decimals)));
  return true;
}

int fail(const std::string& msg) {
  std::fprintf(stderr, "tachyon-load: %s\n", msg.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tachyon-load: realistic load and the latency a trader feels"};
  std::string scenario = "mixed", host = "127.0.0.1", key_file, out_dir = "loadtest-report";
  std::string lobster_file;
  int port = 8080, admin_port = 8081;
  uint32_t chain_id = 304;
  double rate = 1000, duration = 10, speed = 1.0, drain = 5;
  unsigned makers = 16, takers = 16, connections = 4, subscribers = 10, sign_threads = 2;
  int market = 0;
  uint64_t seed = 1, first_account = 100000;
  int64_t deposit_usdc = 10'000'000;
  size_t max_events = 0;
  app.add_option("--scenario", scenario, "mixed | demo | lobster")
      ->check(CLI::IsMember({"mixed", "demo", "lobster"}));
  app.add_option("--host", host, "server address");
  app.add_option("--port", port, "public port (REST + WebSocket)");
  app.add_option("--admin-port", admin_port, "admin port (operator deposits)");
  app.add_option("--operator-key", key_file,
                 "the operator's secret key file (hex), e.g. "
                 "<data_dir>/operator.key")
      ->required();
  app.add_option("--chain-id", chain_id, "chain id the server signs for");
  app.add_option("--rate", rate, "offered txs per second (mixed; demo uses 20)");
  app.add_option("--duration", duration, "seconds of load");
  app.add_option("--makers", makers, "market-maker accounts");
  app.add_option("--takers", takers, "taker accounts");
  app.add_option("--connections", connections, "sending WebSocket connections");
  app.add_option("--subscribers", subscribers, "subscriber connections (freshness)");
  app.add_option("--market", market, "market id");
  app.add_option("--seed", seed, "generator seed");
  auto* first_opt = app.add_option("--first-account", first_account,
                                   "index of the first synthetic account (default: the first "
                                   "free block of 1000 from 100000)");
  app.add_option("--deposit", deposit_usdc, "USDC deposited into each account");
  app.add_option("--lobster", lobster_file, "LOBSTER message file (lobster scenario)");
  app.add_option("--speed", speed, "replay speed (lobster: 1 = the recorded pace)");
  app.add_option("--max-events", max_events, "lobster: replay at most this many messages");
  app.add_option("--drain", drain, "seconds to wait for the last replies");
  app.add_option("--sign-threads", sign_threads, "threads signing the plan before the run");
  app.add_option("--out", out_dir, "report folder (report.txt, report.json, SVG plots)");
  CLI11_PARSE(app, argc, argv);
  if (scenario == "demo") {
    rate = std::min(rate, 20.0);
    makers = std::min(makers, 4u);
    takers = std::min(takers, 2u);
  }
  if (scenario == "lobster" && lobster_file.empty()) return fail("--lobster FILE is required");
  api::crypto_init();

  // The operator key and its next nonce.
  api::SecretKey op{};
  {
    std::ifstream in(key_file);
    std::string hex;
    if (!(in >> hex) || !api::from_hex(hex, op.data(), op.size()))
      return fail(key_file + " is not an operator key file (hex secret key)");
  }
  HttpResult nn = http_call(host, admin_port, http::verb::get, "/admin/nextNonce");
  if (!nn.error.empty() || nn.status != 200)
    return fail("admin port " + std::to_string(admin_port) + ": " +
                (nn.error.empty() ? nn.body : nn.error));
  simdjson::dom::parser parser;
  int64_t op_nonce = 0;
  if (parser.parse(nn.body)["nonce"].get(op_nonce) != simdjson::SUCCESS)
    return fail("unexpected /admin/nextNonce reply: " + nn.body);

  // The market: decimals, minimums and where its price is.
  load::MarketInfo mi;
  mi.id = static_cast<MarketId>(market);
  {
    HttpResult d = http_call(host, port, http::verb::get,
                             "/api/v1/orderBookDetails?market_id=" + std::to_string(market));
    if (!d.error.empty() || d.status != 200)
      return fail("orderBookDetails: " + (d.error.empty() ? d.body : d.error));
    simdjson::dom::element m;
    if (parser.parse(d.body)["order_book_details"].at(0).get(m) != simdjson::SUCCESS)
      return fail("market " + std::to_string(market) + " not found: " + d.body);
    int64_t pd = 0, sd = 0;
    if (m["price_decimals"].get(pd) || m["size_decimals"].get(sd))
      return fail("orderBookDetails lacks decimals: " + d.body);
    mi.price_decimals = static_cast<int>(pd);
    mi.size_decimals = static_cast<int>(sd);
    if (!fixed(m["mark_price"].value_unsafe(), mi.price_decimals, mi.mid) || mi.mid <= 0)
      return fail("no mark price for market " + std::to_string(market));
    simdjson::dom::element e;
    if (m["min_base_amount"].get(e) == simdjson::SUCCESS)
      (void)fixed(e, mi.size_decimals, mi.min_lots);
    if (m["min_quote_amount"].get(e) == simdjson::SUCCESS) (void)fixed(e, 6, mi.min_quote);
  }

  // Where the traders go: a block of new account indices (a second run against the same server
  // takes the next free block unless --first-account says where).
  if (first_opt->count() == 0) {
    const uint64_t block = (makers + takers + 999) / 1000 * 1000;
    bool found = false;
    for (int tries = 0; tries < 1000 && !found; ++tries, first_account += block) {
      found = true;
      for (uint64_t a : {first_account, first_account + makers + takers - 1}) {
        HttpResult r = http_call(host, port, http::verb::get,
                                 "/api/v1/account?by=index&value=" + std::to_string(a));
        if (!r.error.empty()) return fail("account lookup: " + r.error);
        if (r.status == 200) found = false;  // taken
      }
      if (found) break;
    }
    if (!found) return fail("no free block of account indices found; pass --first-account");
  }

  // Traders: keys and deposits.
  std::vector<load::Trader> traders(makers + takers);
  for (size_t i = 0; i < traders.size(); ++i) {
    load::Trader& t = traders[i];
    t.account = first_account + i;
    t.maker = i < makers;
    api::keygen(t.pk, t.sk);
    Tx tx;
    tx.h.type = TxType::kDeposit;
    tx.h.nonce = op_nonce;
    tx.deposit.to_account = t.account;
    tx.deposit.amount = deposit_usdc * 1'000'000;
    tx.deposit.pubkey = t.pk;
    tx.deposit.api_key_index = 0;
    const api::Signature sig = api::sign_tx(tx, chain_id, op);
    HttpResult r = http_call(host, admin_port, http::verb::post, "/api/v1/sendTx",
                             "tx_type=1&tx_info=" + urlencode(api::tx_info_json(tx, &sig)));
    if (r.status != 200)
      return fail("deposit into account " + std::to_string(t.account) +
                  " refused: " + (r.error.empty() ? r.body : r.error) +
                  " (accounts from --first-account must be new; the operator key must match)");
    ++op_nonce;
  }
  std::printf("tachyon-load: %zu traders funded (accounts %llu..%llu)\n", traders.size(),
              static_cast<unsigned long long>(first_account),
              static_cast<unsigned long long>(first_account + traders.size() - 1));

  std::vector<load::Planned> plan;
  if (scenario == "lobster") {
    load::LobsterConfig lc;
    lc.messages = lobster_file;
    lc.speed = speed;
    lc.max_events = max_events;
    std::string err;
    plan = load::plan_lobster(traders, mi, lc, err);
    if (plan.empty()) return fail("LOBSTER: " + err);
    if (duration > 0) {  // cut to the duration
      while (!plan.empty() && plan.back().at_ns >= static_cast<int64_t>(duration * 1e9))
        plan.pop_back();
    }
  } else {
    load::MixConfig mc;
    mc.rate = rate;
    mc.seconds = duration;
    mc.seed = seed;
    plan = load::plan_mixed(traders, mi, mc);
  }
  const auto t0 = std::chrono::steady_clock::now();
  load::sign_all(plan, traders, chain_id, sign_threads);
  std::printf("tachyon-load: %zu txs planned and signed in %.1f s; running %.1f s\n", plan.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
              plan.empty() ? 0.0 : double(plan.back().at_ns) / 1e9);
  std::fflush(stdout);

  load::RunConfig rc;
  rc.host = host;
  rc.port = port;
  rc.connections = connections;
  rc.subscribers = subscribers;
  rc.market = mi.id;
  rc.drain_s = drain;
  const load::RunResult res = load::run_plan(rc, plan, traders);
  if (!res.error.empty()) return fail(res.error);

  load::ReportMeta meta;
  meta.scenario = scenario;
  meta.offered_rate = scenario == "lobster" ? 0 : rate;
  meta.planned = plan.size();
  meta.traders = static_cast<unsigned>(traders.size());
  meta.connections = connections;
  meta.subscribers = subscribers;
  meta.server = host + ":" + std::to_string(port);
  std::printf("%s", load::report_table(meta, res).c_str());
  if (std::string e = load::write_report(out_dir, meta, res); !e.empty()) return fail(e);
  std::printf(
      "report: %s/report.txt, report.json, ack_over_time.svg, throughput.svg, "
      "latency_percentiles.svg, freshness_percentiles.svg\n",
      out_dir.c_str());
  return res.unanswered == 0 ? 0 : 3;
}
