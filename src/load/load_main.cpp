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
#include <optional>
#include <thread>

#include "floors.hpp"
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

struct Options {
  std::string scenario = "mixed", host = "127.0.0.1", key_file, out_dir = "loadtest-report";
  std::string lobster_file;
  int port = 8080, admin_port = 8081;
  uint32_t chain_id = 304;
  double rate = 1000, duration = 10, speed = 1.0, drain = 5;
  unsigned makers = 16, takers = 16, connections = 4, subscribers = 10, sign_threads = 2;
  int market = 0;
  uint64_t seed = 1, first_account = 100000;
  bool first_account_given = false;  // else the traders take the first free block from it on
  int64_t deposit_usdc = 10'000'000;
  size_t max_events = 0;
  int server_pid = 0;  // 0: asked from the admin listener when the server is on this machine
  std::string sync_dir = ".";  // the fdatasync floor's directory ("": none)
  int floor_pings = -1;        // -1: the rate x 1.5 s, within [200, 3000]; 0: no floors
  std::string targets_csv;     // --targets
  std::vector<std::pair<std::string, int>> targets;  // parsed
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("--scenario", o.scenario, "mixed | demo | lobster")
      ->check(CLI::IsMember({"mixed", "demo", "lobster"}));
  app.add_option("--host", o.host, "server address");
  app.add_option("--port", o.port, "public port (REST + WebSocket)");
  app.add_option("--admin-port", o.admin_port, "admin port (operator deposits)");
  app.add_option("--operator-key", o.key_file,
                 "the operator's secret key file (hex), e.g. "
                 "<data_dir>/operator.key")
      ->required();
  app.add_option("--chain-id", o.chain_id, "chain id the server signs for");
  app.add_option("--rate", o.rate, "offered txs per second (mixed; demo uses 20)");
  app.add_option("--duration", o.duration, "seconds of load");
  app.add_option("--makers", o.makers, "market-maker accounts");
  app.add_option("--takers", o.takers, "taker accounts");
  app.add_option("--connections", o.connections, "sending WebSocket connections");
  app.add_option("--subscribers", o.subscribers, "subscriber connections (freshness)");
  app.add_option("--market", o.market, "market id");
  app.add_option("--seed", o.seed, "generator seed");
  app.add_option("--first-account", o.first_account,
                 "index of the first synthetic account (default: the first "
                 "free block of 1000 from 100000)");
  app.add_option("--deposit", o.deposit_usdc, "USDC deposited into each account");
  app.add_option("--lobster", o.lobster_file, "LOBSTER message file (lobster scenario)");
  app.add_option("--speed", o.speed, "replay speed (lobster: 1 = the recorded pace)");
  app.add_option("--max-events", o.max_events, "lobster: replay at most this many messages");
  app.add_option("--drain", o.drain, "seconds to wait for the last replies");
  app.add_option("--sign-threads", o.sign_threads, "threads signing the plan before the run");
  app.add_option("--out", o.out_dir, "report folder (report.txt, report.json, SVG plots)");
  app.add_option("--server-pid", o.server_pid,
                 "the server's pid, to report its context switches and CPU per tx (default: "
                 "asked from its admin listener when --host is this machine)");
  app.add_option("--sync-dir", o.sync_dir,
                 "a directory on the server's disk (its data dir) where the fdatasync floor is "
                 "measured; empty: none");
  app.add_option("--floor-pings", o.floor_pings,
                 "pings for the WebSocket floor, paced at --rate, before the load (default: 1.5 s "
                 "worth, 200 to 3000); 0: no floors");
  app.add_option("--targets", o.targets_csv,
                 "host:port,... where the sending and subscribing connections go, in turn (a "
                 "cluster's nodes; --host/--port/--admin-port name the primary, which funds the "
                 "traders)");
}

// The helpers below return "" or what went wrong.

// The operator key and its next nonce.
std::string operator_key(const Options& o, api::SecretKey& op, int64_t& op_nonce) {
  {
    std::ifstream in(o.key_file);
    std::string hex;
    if (!(in >> hex) || !api::secret_from_hex(hex, op))
      return o.key_file + " is not an operator key file (hex secret key)";
  }
  HttpResult nn = http_call(o.host, o.admin_port, http::verb::get, "/admin/nextNonce");
  if (!nn.error.empty() || nn.status != 200)
    return "admin port " + std::to_string(o.admin_port) + ": " +
           (nn.error.empty() ? nn.body : nn.error);
  simdjson::dom::parser parser;
  if (parser.parse(nn.body)["nonce"].get(op_nonce) != simdjson::SUCCESS)
    return "unexpected /admin/nextNonce reply: " + nn.body;
  return "";
}

// The market: decimals, minimums and where its price is.
std::string market_info(const Options& o, load::MarketInfo& mi) {
  mi.id = static_cast<MarketId>(o.market);
  HttpResult d = http_call(o.host, o.port, http::verb::get,
                           "/api/v1/orderBookDetails?market_id=" + std::to_string(o.market));
  if (!d.error.empty() || d.status != 200)
    return "orderBookDetails: " + (d.error.empty() ? d.body : d.error);
  simdjson::dom::parser parser;
  simdjson::dom::element m;
  if (parser.parse(d.body)["order_book_details"].at(0).get(m) != simdjson::SUCCESS)
    return "market " + std::to_string(o.market) + " not found: " + d.body;
  int64_t pd = 0, sd = 0;
  if (m["price_decimals"].get(pd) || m["size_decimals"].get(sd))
    return "orderBookDetails lacks decimals: " + d.body;
  mi.price_decimals = static_cast<int>(pd);
  mi.size_decimals = static_cast<int>(sd);
  if (!fixed(m["mark_price"].value_unsafe(), mi.price_decimals, mi.mid) || mi.mid <= 0)
    return "no mark price for market " + std::to_string(o.market);
  simdjson::dom::element e;
  if (m["min_base_amount"].get(e) == simdjson::SUCCESS)
    (void)fixed(e, mi.size_decimals, mi.min_lots);
  if (m["min_quote_amount"].get(e) == simdjson::SUCCESS) (void)fixed(e, 6, mi.min_quote);
  return "";
}

// Where the traders go: a block of new account indices (a second run against the same server
// takes the next free block unless --first-account says where). Moves o.first_account there.
std::string find_free_accounts(Options& o) {
  const uint64_t block = (o.makers + o.takers + 999) / 1000 * 1000;
  bool found = false;
  for (int tries = 0; tries < 1000 && !found; ++tries, o.first_account += block) {
    found = true;
    for (uint64_t a : {o.first_account, o.first_account + o.makers + o.takers - 1}) {
      HttpResult r = http_call(o.host, o.port, http::verb::get,
                               "/api/v1/account?by=index&value=" + std::to_string(a));
      if (!r.error.empty()) return "account lookup: " + r.error;
      if (r.status == 200) found = false;  // taken
    }
    if (found) break;
  }
  if (!found) return "no free block of account indices found; pass --first-account";
  return "";
}

// Traders: keys and deposits, each deposit signed with the operator key.
std::string fund_traders(const Options& o, const api::SecretKey& op, int64_t op_nonce,
                         std::vector<load::Trader>& traders) {
  traders.resize(o.makers + o.takers);
  for (size_t i = 0; i < traders.size(); ++i) {
    load::Trader& t = traders[i];
    t.account = o.first_account + i;
    t.maker = i < o.makers;
    api::keygen(t.pk, t.sk);
    Tx tx;
    tx.h.type = TxType::kDeposit;
    tx.h.nonce = op_nonce;
    tx.deposit.to_account = t.account;
    tx.deposit.amount = o.deposit_usdc * 1'000'000;
    tx.deposit.pubkey = t.pk;
    tx.deposit.api_key_index = 0;
    const api::Signature sig = api::sign_tx(tx, o.chain_id, op);
    HttpResult r = http_call(o.host, o.admin_port, http::verb::post, "/api/v1/sendTx",
                             "tx_type=1&tx_info=" + urlencode(api::tx_info_json(tx, &sig)));
    if (r.status != 200)
      return "deposit into account " + std::to_string(t.account) +
             " refused: " + (r.error.empty() ? r.body : r.error) +
             " (accounts from --first-account must be new; the operator key must match)";
    ++op_nonce;
  }
  std::printf("tachyon-load: %zu traders funded (accounts %llu..%llu)\n", traders.size(),
              static_cast<unsigned long long>(o.first_account),
              static_cast<unsigned long long>(o.first_account + traders.size() - 1));
  return "";
}

// --targets: "host:port,host:port".
std::string parse_targets(Options& o) {
  size_t p = 0;
  while (p < o.targets_csv.size()) {
    const size_t end = std::min(o.targets_csv.find(',', p), o.targets_csv.size());
    const std::string t = o.targets_csv.substr(p, end - p);
    const size_t colon = t.rfind(':');
    const int port = colon == std::string::npos ? 0 : std::atoi(t.c_str() + colon + 1);
    if (port <= 0 || port > 65535) return "--targets: '" + t + "' is not host:port";
    o.targets.emplace_back(t.substr(0, colon), port);
    p = end + 1;
  }
  return "";
}

int64_t applied_seq(const std::string& host, int port) {
  HttpResult r = http_call(host, port, http::verb::get, "/health/ready");
  simdjson::dom::parser parser;
  int64_t seq = -1;
  if (r.error.empty() && parser.parse(r.body)["applied_seq"].get(seq) != simdjson::SUCCESS)
    seq = -1;
  return seq;
}

// Every target has applied what the primary had once the traders were funded (their deposits):
// a follower checks a trader's first tx against its own state.
std::string wait_for_targets(const Options& o) {
  if (o.targets.empty()) return "";
  const int64_t want = applied_seq(o.host, o.port);
  if (want < 0) return "/health/ready of " + o.host + ":" + std::to_string(o.port) + " failed";
  for (const auto& [host, port] : o.targets) {
    int64_t got = -1;
    for (int i = 0; i < 300 && (got = applied_seq(host, port)) < want; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (got < want)
      return "target " + host + ":" + std::to_string(port) + " has applied seq " +
             std::to_string(got) + ", not the primary's " + std::to_string(want) + " after 30 s";
  }
  return "";
}

// The local server's counters before the run (--server-pid, or the pid its admin listener
// gives); none for a server elsewhere.
std::optional<load::ServerCost> server_cost(const Options& o) {
  int pid = o.server_pid;
  if (pid == 0 && (o.host == "127.0.0.1" || o.host == "localhost")) {
    HttpResult r = http_call(o.host, o.admin_port, http::verb::get, "/admin/process");
    simdjson::dom::parser parser;
    int64_t p = 0;
    if (r.status == 200 && parser.parse(r.body)["pid"].get(p) == simdjson::SUCCESS)
      pid = static_cast<int>(p);
  }
  if (pid <= 0) return std::nullopt;
  load::ServerCost c;
  if (std::string e = load::read_server_cost(pid, c); !e.empty()) {
    std::fprintf(stderr, "tachyon-load: the server's cost is not reported: %s\n", e.c_str());
    return std::nullopt;
  }
  if (HttpResult m = http_call(o.host, o.admin_port, http::verb::get, "/metrics");
      m.status == 200) {
    c.group_commits = load::group_commits_in(m.body);
    c.signature_checks = load::metric_sum(m.body, "tachyon_signature_checks_total");
    c.signature_cpu_s = load::metric_sum(m.body, "tachyon_signature_check_cpu_seconds_total");
  }
  return c;
}

// The scenario's txs, each signed before the clock starts.
std::string make_plan(const Options& o, std::vector<load::Trader>& traders,
                      const load::MarketInfo& mi, std::vector<load::Planned>& plan) {
  if (o.scenario == "lobster") {
    load::LobsterConfig lc;
    lc.messages = o.lobster_file;
    lc.speed = o.speed;
    lc.max_events = o.max_events;
    std::string err;
    plan = load::plan_lobster(traders, mi, lc, err);
    if (plan.empty()) return "LOBSTER: " + err;
    if (o.duration > 0) {  // cut to the duration
      while (!plan.empty() && plan.back().at_ns >= static_cast<int64_t>(o.duration * 1e9))
        plan.pop_back();
    }
  } else {
    load::MixConfig mc;
    mc.rate = o.rate;
    mc.seconds = o.duration;
    mc.seed = o.seed;
    plan = load::plan_mixed(traders, mi, mc);
  }
  const auto t0 = std::chrono::steady_clock::now();
  load::sign_all(plan, traders, o.chain_id, o.sign_threads);
  std::printf("tachyon-load: %zu txs planned and signed in %.1f s; running %.1f s\n", plan.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
              plan.empty() ? 0.0 : double(plan.back().at_ns) / 1e9);
  std::fflush(stdout);
  return "";
}

// The run, its table on stdout and the report files. The exit code: 0, 1 when the run could not
// start or the report not be written, 3 when txs went unanswered.
// The floors (floors.hpp), before the load; none with --floor-pings 0 or an empty plan.
std::optional<load::Floors> measure_floors(const Options& o,
                                           const std::vector<load::Planned>& plan) {
  if (o.floor_pings == 0 || plan.empty()) return std::nullopt;
  load::FloorConfig fc;
  fc.host = o.targets.empty() ? o.host : o.targets.front().first;
  fc.port = o.targets.empty() ? o.port : o.targets.front().second;
  fc.rate = o.rate > 0 ? o.rate : 1000;
  fc.pings = o.floor_pings > 0 ? static_cast<unsigned>(o.floor_pings)
                               : static_cast<unsigned>(std::clamp(fc.rate * 1.5, 200.0, 3000.0));
  fc.sync_dir = o.sync_dir;
  if (const auto c = server_cost(o); c && o.targets.empty()) fc.server_pid = c->pid;
  load::Floors f;
  if (std::string e = load::measure_floors(fc, plan.front().tx, o.chain_id, f); !e.empty()) {
    std::fprintf(stderr, "tachyon-load: %s; the report has no floors\n", e.c_str());
    return std::nullopt;
  }
  return f;
}

int run_and_report(const Options& o, const load::MarketInfo& mi,
                   const std::vector<load::Planned>& plan,
                   const std::vector<load::Trader>& traders) {
  const std::optional<load::Floors> floors = measure_floors(o, plan);
  std::optional<load::ServerCost> before = server_cost(o);
  load::RunConfig rc;
  rc.host = o.host;
  rc.port = o.port;
  rc.targets = o.targets;
  rc.connections = o.connections;
  rc.subscribers = o.subscribers;
  rc.market = mi.id;
  rc.chain_id = o.chain_id;
  rc.drain_s = o.drain;
  const load::RunResult res = load::run_plan(rc, plan, traders);
  if (!res.error.empty()) return fail(res.error);

  load::ReportMeta meta;
  meta.scenario = o.scenario;
  meta.offered_rate = o.scenario == "lobster" ? 0 : o.rate;
  meta.planned = plan.size();
  meta.traders = static_cast<unsigned>(traders.size());
  meta.connections = o.connections;
  meta.subscribers = o.subscribers;
  meta.floors = floors;
  if (before) {
    if (const auto after = server_cost(o); after && after->pid == before->pid)
      meta.cost = load::cost_between(*before, *after);
  }
  meta.server = o.host + ":" + std::to_string(o.port);
  if (!o.targets.empty()) {
    meta.server = "";
    for (const auto& [host, port] : o.targets)
      meta.server += (meta.server.empty() ? "" : ",") + host + ":" + std::to_string(port);
  }
  std::printf("%s", load::report_table(meta, res).c_str());
  if (std::string e = load::write_report(o.out_dir, meta, res); !e.empty()) return fail(e);
  std::printf(
      "report: %s/report.txt, report.json, ack_over_time.svg, throughput.svg, "
      "latency_percentiles.svg, freshness_percentiles.svg\n",
      o.out_dir.c_str());
  return res.unanswered == 0 ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tachyon-load: realistic load and the latency a trader feels"};
  Options o;
  add_options(app, o);
  CLI11_PARSE(app, argc, argv);
  o.first_account_given = app.count("--first-account") != 0;
  if (o.scenario == "demo") {
    o.rate = std::min(o.rate, 20.0);
    o.makers = std::min(o.makers, 4u);
    o.takers = std::min(o.takers, 2u);
  }
  if (o.scenario == "lobster" && o.lobster_file.empty()) return fail("--lobster FILE is required");
  if (std::string e = parse_targets(o); !e.empty()) return fail(e);
  api::crypto_init();

  api::SecretKey op{};
  int64_t op_nonce = 0;
  if (std::string e = operator_key(o, op, op_nonce); !e.empty()) return fail(e);
  load::MarketInfo mi;
  if (std::string e = market_info(o, mi); !e.empty()) return fail(e);
  if (!o.first_account_given) {
    if (std::string e = find_free_accounts(o); !e.empty()) return fail(e);
  }
  std::vector<load::Trader> traders;
  if (std::string e = fund_traders(o, op, op_nonce, traders); !e.empty()) return fail(e);
  if (std::string e = wait_for_targets(o); !e.empty()) return fail(e);
  std::vector<load::Planned> plan;
  if (std::string e = make_plan(o, traders, mi, plan); !e.empty()) return fail(e);
  return run_and_report(o, mi, plan, traders);
}
