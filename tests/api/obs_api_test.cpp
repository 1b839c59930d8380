// The server's instruments end to end: /metrics counts exactly what the test did (txs by type and
// result, rejects by code, every stage of each tx's life), the percentile table and the flight
// recorder's trace are served on the admin listener only, and a slow batch dumps a trace file.
#include <gtest/gtest.h>
#include <poll.h>
#include <simdjson.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "api/api_support.hpp"
#include "api/ws_client.hpp"

namespace tachyon::testing {
namespace {

TEST(Obs, metrics_count_every_tx_by_type_result_code_and_stage) {
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  Trader t(5);
  ASSERT_EQ(s.deposit(t.account, 50'000'000'000, t.pk).status, 200);
  for (int i = 0; i < 5; ++i) {
    const HttpResult r = s.send(t.order(0, i % 2 == 0, 1000, 290000 + 100 * i), t.sk);
    ASSERT_EQ(r.status, 200) << r.body;
  }
  Tx stale = t.order(0, true, 1000, 310000);
  stale.h.nonce = 0;  // already used
  const HttpResult bad = s.send(stale, t.sk);
  ASSERT_EQ(bad.status, 400) << bad.body;
  ASSERT_NE(bad.body.find("21104"), std::string::npos) << bad.body;

  auto m = scrape(s);
  EXPECT_EQ(m["tachyon_txs_total{type=\"create_order\",result=\"ok\"}"], 5);
  EXPECT_EQ(m["tachyon_txs_total{type=\"create_order\",result=\"rejected\"}"], 1);
  EXPECT_EQ(m["tachyon_txs_total{type=\"deposit\",result=\"ok\"}"], 1);
  EXPECT_EQ(m["tachyon_rejects_total{code=\"21104\"}"], 1);
  EXPECT_EQ(m["tachyon_api_dry_run_seconds_count{type=\"create_order\"}"], 6);
  // Every accepted tx through the api went through every stage once (the deposit included).
  for (const char* st :
       {"recv_to_dry_run", "dry_run_to_sequenced", "sequenced_to_executed", "executed_to_applied",
        "applied_to_durable", "durable_to_sent", "recv_to_sent"}) {
    const std::string l = std::string("{stage=\"") + st + "\"";
    EXPECT_EQ(m["tachyon_tx_stage_seconds_count" + l + "}"], 6) << st;
    EXPECT_EQ(m["tachyon_tx_stage_seconds_bucket" + l + ",le=\"+Inf\"}"], 6) << st;
    EXPECT_GT(m["tachyon_tx_stage_seconds_sum" + l + "}"], 0) << st;
  }
  // The sum of the stages is the whole life, to within rounding of the stamps.
  double parts = 0;
  for (const char* st : {"recv_to_dry_run", "dry_run_to_sequenced", "sequenced_to_executed",
                         "executed_to_applied", "applied_to_durable", "durable_to_sent"})
    parts += m[std::string("tachyon_tx_stage_seconds_sum{stage=\"") + st + "\"}"];
  EXPECT_NEAR(parts, m["tachyon_tx_stage_seconds_sum{stage=\"recv_to_sent\"}"], 1e-4);
  EXPECT_GE(m["tachyon_apply_batch_seconds_count"], 1);
  EXPECT_GE(m["tachyon_journal_group_commit_txs_sum"], 8);  // 2 markets + deposit + 5 orders
#ifdef TACHYON_EXPECT_JEMALLOC  // sanitizer builds keep their own allocator
  EXPECT_GT(m["tachyon_jemalloc_resident_bytes"], 0);
#else
  EXPECT_EQ(m["tachyon_jemalloc_resident_bytes"], 0);
#endif
  EXPECT_GE(m["tachyon_applied_seq"], 8);

  // Admin only.
  EXPECT_EQ(http(s.port(), "GET", "/metrics").status, 404);
  EXPECT_EQ(http(s.port(), "GET", "/admin/trace").status, 404);
  const HttpResult lat = http(s.admin_port(), "GET", "/admin/latency");
  EXPECT_NE(lat.body.find("tachyon_tx_stage_seconds{stage=\"recv_to_sent\"}"), std::string::npos)
      << lat.body;

  const HttpResult tr = http(s.admin_port(), "GET", "/admin/trace");
  ASSERT_EQ(tr.status, 200);
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  ASSERT_EQ(p.parse(tr.body).get(doc), simdjson::SUCCESS) << tr.body.substr(0, 300);
  std::map<std::string, int> names, threads;
  for (simdjson::dom::element e : doc["traceEvents"].get_array()) {
    std::string_view ph, name;
    ASSERT_EQ(e["ph"].get(ph), simdjson::SUCCESS);
    ASSERT_EQ(e["name"].get(name), simdjson::SUCCESS);
    if (ph == "M") {
      std::string_view tn;
      ASSERT_EQ(e["args"]["name"].get(tn), simdjson::SUCCESS);
      ++threads[std::string(tn)];
    } else {
      ++names[std::string(name)];
    }
  }
  EXPECT_EQ(threads["sequencer"], 1);
  EXPECT_EQ(threads["apply"], 1);
  EXPECT_EQ(threads["api worker 0"], 1);
  EXPECT_GE(names["sequence_round"], 1);
  EXPECT_EQ(names["dry_run"], 6);
  EXPECT_GE(names["apply_batch"], 1);
  EXPECT_GE(names["ws_fan_out"], 1);
}

// Waits (inotify, no polling) until a file is renamed into `dir`; its name or "".
std::string wait_for_file(const std::string& dir, int timeout_ms) {
  const int fd = inotify_init1(IN_CLOEXEC);
  const int wd = inotify_add_watch(fd, dir.c_str(), IN_MOVED_TO);
  std::string found;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {  // renamed before we watched
    if (e.path().extension() == ".json") found = e.path().filename().string();
  }
  pollfd pf{fd, POLLIN, 0};
  if (found.empty() && wd >= 0 && ::poll(&pf, 1, timeout_ms) == 1) {
    alignas(inotify_event) char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n >= static_cast<ssize_t>(sizeof(inotify_event))) {
      const auto* ev = reinterpret_cast<const inotify_event*>(buf);
      if (ev->len > 0) found = ev->name;
    }
  }
  ::close(fd);
  return found;
}

TEST(Obs, a_batch_over_the_threshold_dumps_the_flight_recorder_to_a_trace_file) {
  TempDir traces;
  ConfigFile cfg({{"trace_dir = \"\"", "trace_dir = \"" + traces.path() + "\""},
                  {"dump_apply_batch_us = 1000", "dump_apply_batch_us = 1"}});
  Server s(cfg.args());
  ASSERT_TRUE(s.ready()) << s.log();
  Trader t(6);
  ASSERT_EQ(s.deposit(t.account, 50'000'000'000, t.pk).status, 200);  // a batch > 1 us
  const std::string f = wait_for_file(traces.path(), 10'000);
  ASSERT_FALSE(f.empty());
  EXPECT_NE(f.find("apply_batch"), std::string::npos) << f;
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  ASSERT_EQ(p.load(traces.path() + "/" + f).get(doc), simdjson::SUCCESS);
  size_t events = 0;
  for (simdjson::dom::element e : doc["traceEvents"].get_array()) events += e.is_object();
  EXPECT_GT(events, 3u);
  EXPECT_GE(scrape(s)["tachyon_trace_dumps_written_total"], 1);
}

}  // namespace
}  // namespace tachyon::testing

namespace tachyon::testing {
namespace {

int64_t metric(Server& s, const std::string& series) {
  const auto m = scrape(s);
  auto it = m.find(series);
  return it == m.end() ? -1 : static_cast<int64_t>(it->second);
}

// The slow-consumer policy on a real socket: a client that subscribes and never reads (with a
// tiny receive buffer) fills the kernel's buffers, then the server's bounded queue: one resync,
// then the server closes it. The counters on /metrics say so; other clients are unaffected.
TEST(Obs, a_real_socket_that_never_reads_is_resynced_then_closed) {
  ConfigFile cfg(ConfigFile::Edits{{"ws_queue_bytes = 4194304", "ws_queue_bytes = 4096"},
                                   {"ip_rate_per_s = 200", "ip_rate_per_s = 1000000"},
                                   {"ip_burst = 400", "ip_burst = 1000000"},
                                   {"account_rate_per_s = 100", "account_rate_per_s = 1000000"},
                                   {"account_burst = 200", "account_burst = 1000000"}});
  Server s(cfg.args());
  ASSERT_TRUE(s.ready()) << s.log();
  namespace asio = boost::asio;
  namespace beast = boost::beast;
  asio::io_context io;
  beast::websocket::stream<beast::tcp_stream> ws(io);
  auto& sock = beast::get_lowest_layer(ws).socket();
  sock.open(asio::ip::tcp::v4());
  sock.set_option(asio::socket_base::receive_buffer_size(1024));  // a small window
  sock.connect({asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(s.port())});
  ws.handshake("127.0.0.1", "/stream");
  ws.write(asio::buffer(std::string(R"({"type":"subscribe","channel":"order_book/0"})")));
  ws.write(asio::buffer(std::string(R"({"type":"subscribe","channel":"trade/0"})")));
  // Book churn: orders at fresh prices (every one is a delta, and the resync snapshot grows).
  Trader t(11);
  ASSERT_EQ(s.deposit(t.account, 1'000'000'000'000, t.pk).status, 200);
  int64_t closes = 0;
  for (int i = 0; i < 6000 && closes < 1; ++i) {
    const bool ask = i % 2 == 1;
    const Ticks px = ask ? 302000 + i % 2000 : 298000 - i % 2000;
    HttpResult r = s.send(t.order(0, ask, 500, px, TimeInForce::kGoodTillTime, i + 1), t.sk);
    ASSERT_EQ(r.status, 200) << r.body;
    if (i >= 200) {  // stay under the open-order limit: cancel the order 200 back
      r = s.send(t.cancel(0, static_cast<uint64_t>(i + 1 - 200)), t.sk);
      ASSERT_EQ(r.status, 200) << r.body;
    }
    if (i % 200 == 199) closes = metric(s, "tachyon_ws_slow_consumer_closes_total");
  }
  EXPECT_GE(closes, 1);
  EXPECT_GE(metric(s, "tachyon_ws_slow_consumer_resyncs_total"), 1);
  // The server is fine: a new client gets its snapshot.
  WsClient other(s.port());
  other.send(R"({"type":"subscribe","channel":"order_book/0"})");
  EXPECT_NE(other.recv_until("subscribed/order_book"), "");
  EXPECT_EQ(s.stop(), 0) << s.log();
}

}  // namespace
}  // namespace tachyon::testing
