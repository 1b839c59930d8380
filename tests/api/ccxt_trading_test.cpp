// ccxt (npm, pinned) trades against the real server with the signer tachyon ships for it
// (clients/ccxt): tests/api/ccxt/trading.mjs places, amends, fills and cancels orders, moves
// leverage, margin and money, and checks each figure against the server's own REST state. Here:
// the funded accounts it trades with, and the books and money after it.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>

#include "api/api_support.hpp"

namespace tachyon::testing {
namespace {

int run_node(const std::string& cmd, std::string& out) {
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) return -1;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof(buf), f)) out.append(buf, n);
  const int rc = ::pclose(f);
  std::printf("%s", out.c_str());  // the script's own report: one line per check
  return rc;
}

Usdc collateral(Server& s, AccountIndex a) {
  simdjson::dom::parser p;
  simdjson::dom::element e;
  const std::string body = s.get("/api/v1/account?by=index&value=" + std::to_string(a)).body;
  if (p.parse(body).get(e)) return -1;
  std::string_view c;
  if (e["accounts"].at(0)["collateral"].get_string().get(c)) return -1;
  const size_t dot = c.find('.');
  return std::stoll(std::string(c.substr(0, dot))) * 1'000'000 +
         std::stoll(std::string(c.substr(dot + 1)));
}

TEST(Ccxt, trades_end_to_end_with_the_shipped_signer) {
  const std::string src = TACHYON_SOURCE_DIR, dir = src + "/build/ccxt";
  ASSERT_TRUE(std::filesystem::exists(dir + "/node_modules/ccxt/package.json"))
      << "ccxt is not installed: run scripts/setup.sh (npm ci in build/ccxt)";
  std::filesystem::copy_file(src + "/tests/api/ccxt/trading.mjs", dir + "/trading.mjs",
                             std::filesystem::copy_options::overwrite_existing);
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  // A and B trade through API key 254 (ccxt's default: it uses keys 4..254 only); C receives.
  Trader a{3}, b{4}, c{5};
  constexpr Usdc kDeposit = 100'000'000'000;
  ASSERT_EQ(s.deposit(a.account, kDeposit, a.pk, 254).status, 200);
  ASSERT_EQ(s.deposit(b.account, kDeposit, b.pk, 254).status, 200);
  ASSERT_EQ(s.deposit(c.account, kDeposit, c.pk).status, 200);
  const std::string conf =
      "{\"http\":\"http://127.0.0.1:" + std::to_string(s.port()) +
      "\",\"ws\":\"ws://127.0.0.1:" + std::to_string(s.port()) + "/stream\",\"signer_js\":\"" +
      src + "/clients/ccxt/tachyon-signer.mjs\",\"signer_wasm\":\"" + src +
      "/clients/ccxt/tachyon-signer.wasm\",\"traders\":[{\"index\":3,\"key\":\"" +
      api::to_hex(a.sk.data(), a.sk.size()) + "\"},{\"index\":4,\"key\":\"" +
      api::to_hex(b.sk.data(), b.sk.size()) + "\"}],\"transfer_to\":5}";
  const std::string path = s.data_dir() + "/trading.json";
  std::ofstream(path) << conf;
  std::string out;
  const int rc = run_node("cd " + dir + " && node trading.mjs " + path + " 2>&1", out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out.find("FAIL"), std::string::npos) << out;
  EXPECT_NE(out.find("\ndone"), std::string::npos) << out;
  // C holds its deposit and A's transfer of 100 USDC, to the micro-USDC.
  EXPECT_EQ(collateral(s, c.account), kDeposit + 100'000'000);
  EXPECT_EQ(s.stop(), 0) << s.log();
}

}  // namespace
}  // namespace tachyon::testing
