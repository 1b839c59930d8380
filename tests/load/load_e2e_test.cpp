// tachyon-load against the real server: funds its traders, runs the mixed plan and a LOBSTER
// replay over real WebSocket connections, every tx answered, fills and freshness measured, and
// the report (JSON, table, SVG plots) written. Counts only: timings are for bench, not tests.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "api/api_support.hpp"
#include "tachyon/api/crypto.hpp"

namespace tachyon::testing {
namespace {

int run(const std::string& cmd, std::string& out) {
  FILE* f = ::popen((cmd + " 2>&1").c_str(), "r");
  if (f == nullptr) return -1;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, f)) out.append(buf, n);
  return ::pclose(f);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int64_t num(simdjson::dom::element e, const char* k) {
  int64_t v = -1;
  EXPECT_EQ(e[k].get(v), simdjson::SUCCESS) << k;
  return v;
}

class LoadE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ready()) << server_.log();
    key_ = dir_.path() + "/operator.key";
    const auto& sk = server_.operator_key();
    std::ofstream(key_) << api::to_hex(sk.data(), sk.size()) << "\n";
  }
  std::string base_cmd(const std::string& out, uint64_t first_account) const {
    return std::string(TACHYON_LOAD_BIN) + " --port " + std::to_string(server_.port()) +
           " --admin-port " + std::to_string(server_.admin_port()) + " --operator-key " + key_ +
           " --out " + out + " --first-account " + std::to_string(first_account) + " --drain 20";
  }
  Server server_;
  TempDir dir_;
  std::string key_;
};

TEST_F(LoadE2E, mixed_load_is_answered_in_full_with_fills_freshness_and_plots) {
  const std::string out = dir_.path() + "/mixed";
  std::string log;
  const int rc = run(base_cmd(out, 5000) +
                         " --rate 300 --duration 2 --makers 4 --takers 4 --connections 2"
                         " --subscribers 2 --sync-dir " +
                         dir_.path(),
                     log);
  ASSERT_EQ(rc, 0) << log;
  simdjson::dom::parser p;
  simdjson::dom::element r;
  ASSERT_EQ(p.parse(slurp(out + "/report.json")).get(r), simdjson::SUCCESS) << log;
  const int64_t planned = num(r, "planned");
  EXPECT_GT(planned, 400);
  EXPECT_EQ(num(r, "sent"), planned);
  EXPECT_EQ(num(r, "unanswered"), 0);
  EXPECT_EQ(num(r, "protocol_errors"), 0);
  EXPECT_EQ(num(r, "accepted") + num(r, "rejected"), planned);
  EXPECT_GT(num(r, "accepted"), planned / 2);
  // Refusals are only the exchange's verdicts on stale intents (a cancel of a filled quote).
  simdjson::dom::object codes;
  ASSERT_EQ(r["rejects_by_code"].get(codes), simdjson::SUCCESS);
  for (auto kv : codes) EXPECT_EQ(kv.key, "21600") << log;
  EXPECT_EQ(num(r["ack"], "count"), planned);
  EXPECT_GT(num(r["fill"], "count"), 0);
  for (const char* ch : {"order_book", "trade", "account_all"}) {
    EXPECT_GT(num(r["freshness"][ch]["engine_to_client"], "count"), 0) << ch;
    EXPECT_GT(num(r["freshness"][ch]["api_to_client"], "count"), 0) << ch;
  }
  simdjson::dom::array secs;
  ASSERT_EQ(r["per_second"].get(secs), simdjson::SUCCESS);
  int64_t replies = 0;
  for (auto s : secs) replies += num(s, "replies");
  EXPECT_EQ(replies, planned);
  for (const char* f : {"ack_over_time.svg", "throughput.svg", "latency_percentiles.svg",
                        "freshness_percentiles.svg"}) {
    EXPECT_EQ(slurp(out + "/" + f).rfind("<svg", 0), 0u) << f;
  }
  EXPECT_NE(slurp(out + "/report.txt").find("ack (due -> reply)"), std::string::npos);
  // What the run cost the server, read from its /proc (its pid from the admin listener).
  simdjson::dom::element cost = r["server_cost"];
  EXPECT_EQ(num(cost, "pid"), server_.pid());
  double total = 0, sum = 0;
  ASSERT_EQ(cost["cpu_us_per_tx"].get_double().get(total), simdjson::SUCCESS);
  // By default one api worker runs the pipeline's loop and a verify helper shares its checks.
  for (const char* t : {"api-0", "verify-0"}) {
    double cpu = 0, sw = 0;
    ASSERT_EQ(cost["threads"][t]["cpu_us_per_tx"].get_double().get(cpu), simdjson::SUCCESS) << t;
    ASSERT_EQ(cost["threads"][t]["switches_per_tx"].get_double().get(sw), simdjson::SUCCESS) << t;
    if (std::string_view(t) == "api-0") {
      EXPECT_GT(sw, 0) << t;  // it waits for work at this rate
    }
    sum += cpu;
  }
  EXPECT_GT(sum, 0);
  // The process's CPU holds these threads'. /proc counts each in clock ticks, rounded on its
  // own: their sum may pass the process's by a tick for each of the three counters.
  double sent = 0;
  ASSERT_EQ(r["sent"].get_double().get(sent), simdjson::SUCCESS);
  ASSERT_GT(sent, 0);
  const double tick_us = 1e6 / static_cast<double>(::sysconf(_SC_CLK_TCK));
  EXPECT_GE(total + 3 * tick_us / sent, sum);
  EXPECT_NE(slurp(out + "/report.txt").find("context switches ("), std::string::npos);
  // Its journal's group commits over the run, from its /metrics (the txs were journaled).
  double commits = -1, preempted = -1;
  ASSERT_EQ(cost["group_commits_per_tx"].get_double().get(commits), simdjson::SUCCESS);
  EXPECT_GT(commits, 0);
  ASSERT_EQ(cost["preempted_per_tx"].get_double().get(preempted), simdjson::SUCCESS);
  EXPECT_GE(preempted, 0);
  // Its signature checks (/metrics): every tx of the run is signed and checked once, whether the
  // worker or a verify helper checked it, and never twice; their CPU is a part of the server's.
  double checks = -1, checks_cpu = -1;
  ASSERT_EQ(cost["signature_checks_per_tx"].get_double().get(checks), simdjson::SUCCESS);
  ASSERT_EQ(cost["signature_cpu_us_per_tx"].get_double().get(checks_cpu), simdjson::SUCCESS);
  EXPECT_GE(checks, 0.99);
  EXPECT_LE(checks, 1.0);
  EXPECT_GT(checks_cpu, 0);
  EXPECT_LT(checks_cpu, total);
  EXPECT_NE(slurp(out + "/report.txt").find("signature checks per tx"), std::string::npos);
  // The floors, measured before the load: 1.5 s of pings at the rate (each answered by a pong),
  // 200 paced fdatasyncs in --sync-dir (the file removed after), a verify that verified.
  simdjson::dom::element floors = r["floors"];
  EXPECT_EQ(num(floors["ping"], "count"), 450);
  EXPECT_EQ(num(floors["fdatasync"], "count"), 200);
  EXPECT_GT(num(floors, "verify_ns"), 0);
  double per_ping = -1;
  ASSERT_EQ(floors["server_switches_per_ping"].get_double().get(per_ping), simdjson::SUCCESS);
  EXPECT_GT(per_ping, 0);  // the api worker waits for each ping
  double per_sync = -1;
  ASSERT_EQ(floors["fdatasync_switches"].get_double().get(per_sync), simdjson::SUCCESS);
  EXPECT_GE(per_sync, 0);  // (0 on a disk with nothing to wait for, as tmpfs)
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/.tachyon-load-fdatasync.tmp"));
  EXPECT_NE(slurp(out + "/report.txt").find("ack p50"), std::string::npos);
  // The server counted the same txs.
  const HttpResult m = http(server_.admin_port(), "GET", "/metrics");
  EXPECT_NE(m.body.find("tachyon_txs_total{type=\"create_order\",result=\"ok\"}"),
            std::string::npos);
}

TEST_F(LoadE2E, a_lobster_replay_is_answered_in_full) {
  const std::string out = dir_.path() + "/lobster";
  std::string log;
  const int rc = run(base_cmd(out, 6000) + " --scenario lobster --lobster " + TACHYON_LOBSTER_DIR +
                         "/AMZN_2012-06-21_34200000_57600000_message_1.csv.gz"
                         " --max-events 400 --speed 50 --makers 4 --takers 2 --subscribers 1",
                     log);
  ASSERT_EQ(rc, 0) << log;
  simdjson::dom::parser p;
  simdjson::dom::element r;
  ASSERT_EQ(p.parse(slurp(out + "/report.json")).get(r), simdjson::SUCCESS) << log;
  EXPECT_EQ(num(r, "planned"), 400);
  EXPECT_EQ(num(r, "unanswered"), 0);
  EXPECT_GT(num(r, "accepted"), 200);
}

TEST_F(LoadE2E, a_second_run_takes_the_next_free_block_of_accounts) {
  const std::string cmd = std::string(TACHYON_LOAD_BIN) + " --port " +
                          std::to_string(server_.port()) + " --admin-port " +
                          std::to_string(server_.admin_port()) + " --operator-key " + key_ +
                          " --scenario demo --duration 1 --subscribers 1 --drain 20 --out ";
  for (int i = 0; i < 2; ++i) {
    std::string log;
    ASSERT_EQ(run(cmd + dir_.path() + "/demo" + std::to_string(i), log), 0) << log;
    const std::string first = i == 0 ? "accounts 100000.." : "accounts 101000..";
    EXPECT_NE(log.find(first), std::string::npos) << log;
  }
}

TEST_F(LoadE2E, bad_arguments_and_a_wrong_key_are_refused_clearly) {
  std::string log;
  EXPECT_NE(run(std::string(TACHYON_LOAD_BIN) + " --scenario nope --operator-key x", log), 0);
  EXPECT_NE(log.find("nope"), std::string::npos) << log;
  log.clear();
  const std::string bad = dir_.path() + "/bad.key";
  std::ofstream(bad) << "not-hex\n";
  EXPECT_EQ(run(std::string(TACHYON_LOAD_BIN) + " --operator-key " + bad, log) >> 8, 1);
  EXPECT_NE(log.find("not an operator key file"), std::string::npos) << log;
  log.clear();
  api::PublicKey pk;
  api::SecretKey other;
  api::keygen(pk, other);
  const std::string wrong = dir_.path() + "/wrong.key";
  std::ofstream(wrong) << api::to_hex(other.data(), other.size()) << "\n";
  EXPECT_EQ(run(std::string(TACHYON_LOAD_BIN) + " --port " + std::to_string(server_.port()) +
                    " --admin-port " + std::to_string(server_.admin_port()) + " --operator-key " +
                    wrong + " --first-account 7000",
                log) >>
                8,
            1);
  EXPECT_NE(log.find("refused"), std::string::npos) << log;
}

}  // namespace
}  // namespace tachyon::testing
