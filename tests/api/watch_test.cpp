// tachyon-cli watch against two real servers and a dead address: each node's best bid and ask,
// the consolidated best bid and ask with the node holding each, and a clear error for the node
// that does not answer (the others are still shown).
#include <gtest/gtest.h>

#include <filesystem>

#include "api/api_support.hpp"
#include "support/nats_server.hpp"  // free_loopback_port

namespace tachyon::testing {
namespace {

TEST(Watch, shows_each_node_and_the_best_bid_and_ask_across_them) {
  Server a, b;
  ASSERT_TRUE(a.ready()) << a.log();
  ASSERT_TRUE(b.ready()) << b.log();
  Trader ta{3}, tb{3};
  ASSERT_EQ(a.deposit(ta.account, 100'000'000'000, ta.pk).status, 200);
  ASSERT_EQ(b.deposit(tb.account, 100'000'000'000, tb.pk).status, 200);
  ASSERT_EQ(a.send(ta.order(0, false, 1000, 299000), ta.sk).status, 200);  // a: 2990.00 / 3010.00
  ASSERT_EQ(a.send(ta.order(0, true, 1000, 301000), ta.sk).status, 200);
  ASSERT_EQ(b.send(tb.order(0, false, 1000, 299500), tb.sk).status, 200);  // b: 2995.00 / 3020.00
  ASSERT_EQ(b.send(tb.order(0, true, 1000, 302000), tb.sk).status, 200);
  const int dead = free_loopback_port();
  const std::string na = "127.0.0.1:" + std::to_string(a.port());
  const std::string nb = "127.0.0.1:" + std::to_string(b.port());
  const std::string nd = "127.0.0.1:" + std::to_string(dead);
  const std::string cli =
      std::filesystem::path(TACHYON_BIN).parent_path().string() + "/tachyon-cli";
  std::string out;
  EXPECT_EQ(
      run_program(cli + " watch --rounds 1 --nodes " + na + "," + nb + "," + nd + " 2>&1", out), 0)
      << out;
  auto line_of = [&](const std::string& node) {
    const size_t p = out.find(node + " ");
    return p == std::string::npos ? std::string() : out.substr(p, out.find('\n', p) - p);
  };
  EXPECT_NE(line_of(na).find("2990.00"), std::string::npos) << out;
  EXPECT_NE(line_of(na).find("3010.00"), std::string::npos) << out;
  EXPECT_NE(line_of(nb).find("2995.00"), std::string::npos) << out;
  EXPECT_NE(line_of(nb).find("3020.00"), std::string::npos) << out;
  EXPECT_NE(line_of(nd).find("connect"), std::string::npos) << "the dead node's error\n" << out;
  EXPECT_NE(out.find("best bid 2995.00 @ " + nb + ", best ask 3010.00 @ " + na), std::string::npos)
      << out;
  EXPECT_EQ(a.stop(), 0);
  EXPECT_EQ(b.stop(), 0);
}

}  // namespace
}  // namespace tachyon::testing
