// The operator's configs against a real node: configs/prometheus/alerts.yml passes promtool's
// rule check and its own unit tests (alerts_test.yml), the node's live /metrics passes
// `promtool check metrics`, and every metric the alerts and the Grafana dashboard
// (configs/grafana/tachyon.json) read is one the server exports. The node is a cluster primary
// (a real nats-server) under the demo load, so its cluster series and histograms are there too.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "api/api_support.hpp"
#include "support/nats_server.hpp"

namespace tachyon::testing {
namespace {

const std::string kSrc = TACHYON_SOURCE_DIR;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The series names a Prometheus text page exports: each family, and a histogram's
// _bucket/_sum/_count.
std::set<std::string> exported(const std::string& page) {
  std::set<std::string> names;
  std::istringstream in(page);
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string hash, kind, name, type;
    if (!(f >> hash >> kind >> name >> type) || hash != "#" || kind != "TYPE") continue;
    names.insert(name);
    if (type == "histogram")
      for (const char* s : {"_bucket", "_sum", "_count"}) names.insert(name + s);
  }
  return names;
}

// Every tachyon_* name a text mentions.
std::set<std::string> mentioned(const std::string& text) {
  std::set<std::string> names;
  const std::string prefix = "tachyon_";
  for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at)) {
    size_t end = at + prefix.size();
    while (end < text.size() &&
           (std::islower(static_cast<unsigned char>(text[end])) ||
            std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '_'))
      ++end;
    names.insert(text.substr(at, end - at));
    at = end;
  }
  return names;
}

TEST(Ops, promtool_passes_and_the_alerts_and_dashboard_read_only_exported_metrics) {
  std::string out;
  ASSERT_EQ(run_program("promtool --version 2>&1", out, /*quiet=*/true), 0)
      << "promtool is missing: scripts/setup.sh installs Debian's prometheus package\n"
      << out;
  const std::string prom = kSrc + "/configs/prometheus";
  out.clear();
  EXPECT_EQ(run_program("promtool check rules " + prom + "/alerts.yml 2>&1", out, true), 0) << out;
  out.clear();
  EXPECT_EQ(run_program("cd " + prom + " && promtool test rules alerts_test.yml 2>&1", out, true),
            0)
      << out;

  NatsServers ns(1);
  TempDir dir;
  Server node({"--role", "primary", "--nats", ns.urls_csv(), "--durability", "replicated",
               "--demo-load-tps", "500"},
              dir.path());
  ASSERT_TRUE(node.ready()) << node.log();
  // Until the histograms and counters have values (apply batches, group commits), 30 s at most.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (auto m = scrape(node); m["tachyon_apply_batches_total"] == 0 ||
                              m["tachyon_journal_group_commit_seconds_count"] == 0;
       m = scrape(node)) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "no apply batch or group commit";
    std::this_thread::yield();
  }
  const HttpResult page = http(node.admin_port(), "GET", "/metrics");
  ASSERT_EQ(page.status, 200);
  const std::string path = dir.path() + "/metrics.txt";
  std::ofstream(path) << page.body;
  out.clear();
  EXPECT_EQ(run_program("promtool check metrics < " + path + " 2>&1", out, true), 0) << out;
  EXPECT_EQ(out, "") << "promtool's lint of /metrics";

  const std::set<std::string> names = exported(page.body);
  EXPECT_GT(names.count("tachyon_cluster_lag_seconds"), 0u) << "a cluster node's page";
  for (const std::string& n : mentioned(read_file(prom + "/alerts.yml")))
    EXPECT_GT(names.count(n), 0u) << "alerts.yml reads " << n
                                  << ", which the server does not export";

  const std::string dash = read_file(kSrc + "/configs/grafana/tachyon.json");
  simdjson::dom::parser p;
  simdjson::dom::element d;
  ASSERT_EQ(p.parse(dash).get(d), simdjson::SUCCESS) << "the dashboard is not valid JSON";
  size_t targets = 0;
  std::string exprs;
  for (simdjson::dom::element panel : d["panels"]) {
    std::string_view title;
    EXPECT_EQ(panel["title"].get_string().get(title), simdjson::SUCCESS);
    for (simdjson::dom::element t : panel["targets"]) {
      std::string_view e;
      ASSERT_EQ(t["expr"].get_string().get(e), simdjson::SUCCESS) << title;
      exprs += std::string(e) + "\n";
      ++targets;
    }
  }
  EXPECT_GE(targets, 20u);
  const std::set<std::string> used = mentioned(exprs);
  for (const char* must : {"tachyon_tx_stage_seconds_bucket", "tachyon_ws_freshness_seconds_bucket",
                           "tachyon_txs_total", "tachyon_journal_group_commit_seconds_bucket",
                           "tachyon_process_resident_bytes", "tachyon_connections"})
    EXPECT_GT(used.count(must), 0u) << "the dashboard shows " << must;
  for (const std::string& n : used)
    EXPECT_GT(names.count(n), 0u) << "the dashboard reads " << n
                                  << ", which the server does not export";
  EXPECT_EQ(node.stop(), 0) << node.log();
}

}  // namespace
}  // namespace tachyon::testing
