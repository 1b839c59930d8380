// The operator's console in a real browser (Debian's chromium, headless, driven over the DevTools
// protocol by tests/api/console/console_check.mjs): against a server whose book stands still while
// txs flow (IOC orders that find nothing to match), the page shows the REST book's levels, a tx
// rate above 0 and last-minute ack percentiles; once the server stops, it says disconnected. In a
// cluster (a primary and a replica on a nats-server of the test's own), the primary's console
// also lists both nodes with their applied seqs.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "api/api_support.hpp"
#include "support/nats_server.hpp"

namespace tachyon::testing {
namespace {

// The browser check against `s` (its book set up and txs flowing here); `roles`: the cluster's
// nodes the console must list ("" for a single node). The check stops `s`.
void check_console(Server& s, const std::string& roles) {
  const std::string src = TACHYON_SOURCE_DIR, dir = src + "/build/ccxt";
  const std::string chromium = "/usr/bin/chromium";
  ASSERT_TRUE(std::filesystem::exists(chromium)) << "chromium is missing: run scripts/setup.sh";
  ASSERT_TRUE(std::filesystem::exists(dir + "/node_modules/ws/package.json"))
      << "the ws package (with ccxt) is missing: run scripts/setup.sh";
  std::filesystem::copy_file(src + "/tests/api/console/console_check.mjs",
                             dir + "/console_check.mjs",
                             std::filesystem::copy_options::overwrite_existing);
  ASSERT_TRUE(s.ready()) << s.log();
  Trader maker{3}, taker{4};
  ASSERT_EQ(s.deposit(maker.account, 100'000'000'000, maker.pk).status, 200);
  ASSERT_EQ(s.deposit(taker.account, 100'000'000'000, taker.pk).status, 200);
  for (int i = 0; i < 5; ++i) {  // 2990.00 .. 2982.00 bid, 3010.00 .. 3018.00 ask
    ASSERT_EQ(s.send(maker.order(0, false, 1000 * (i + 1), 299000 - 200 * i), maker.sk).status,
              200);
    ASSERT_EQ(s.send(maker.order(0, true, 2000 + 500 * i, 301000 + 200 * i), maker.sk).status, 200);
  }
  // Txs that leave the book as it is: IOC buys below the best ask.
  std::atomic<bool> sending{true};
  std::thread flow([&] {
    while (sending.load()) {
      s.send(taker.order(0, false, 1000, 300000, TimeInForce::kIoc), taker.sk);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  const std::string shot =
      src + (roles.empty() ? "/build/console.png" : "/build/console-cluster.png");
  std::string out;
  const int rc = run_program("cd " + dir + " && node console_check.mjs " + chromium +
                                 " http://127.0.0.1:" + std::to_string(s.admin_port()) +
                                 " http://127.0.0.1:" + std::to_string(s.port()) + " " +
                                 std::to_string(s.pid()) + " " + shot + " " + roles + " 2>&1",
                             out);
  sending.store(false);
  flow.join();
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out.find("FAIL"), std::string::npos) << out;
  EXPECT_NE(out.find("\ndone"), std::string::npos) << out;
  EXPECT_TRUE(std::filesystem::exists(shot));
  if (!roles.empty()) {
    EXPECT_NE(out.find("ok every node of the cluster"), std::string::npos) << out;
  }
  EXPECT_EQ(s.wait_exit(), 0) << s.log();  // the script stopped it (SIGTERM): a clean stop
}

TEST(Console, a_browser_shows_the_book_rates_and_percentiles_then_disconnected) {
  Server s;
  check_console(s, "");
}

TEST(Console, in_a_cluster_the_console_lists_every_node) {
  NatsServers ns(1);
  Server primary({"--role", "primary", "--nats", ns.urls_csv()});
  ASSERT_TRUE(primary.ready()) << primary.log();
  Server replica({"--role", "replica", "--nats", ns.urls_csv()});
  ASSERT_TRUE(replica.ready()) << replica.log();
  check_console(primary, "primary,replica");
  EXPECT_EQ(replica.stop(), 0) << replica.log();
}

}  // namespace
}  // namespace tachyon::testing
