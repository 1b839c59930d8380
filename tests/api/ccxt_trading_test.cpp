// ccxt (npm, pinned) trades against the real server with the signer tachyon ships for it
// (clients/ccxt): tests/api/ccxt/trading.mjs places, amends, fills and cancels orders, moves
// leverage, margin and money, and checks each figure against the server's own REST state. Here:
// the funded accounts it trades with, the money after it, and every response's shape against
// Lighter's SDK models (tests/api/schema_check.py).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>

#include "api/api_support.hpp"

namespace tachyon::testing {
namespace {

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
  const std::string conf = ccxt_trading_conf("http", s.port(), a, b);
  const std::string path = s.data_dir() + "/trading.json";
  std::ofstream(path) << conf;
  std::string out;
  const int rc = run_program("cd " + dir + " && node trading.mjs " + path + " 2>&1", out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out.find("FAIL"), std::string::npos) << out;
  EXPECT_NE(out.find("\ndone"), std::string::npos) << out;
  // C holds its deposit and A's transfer of 100 USDC, to the micro-USDC.
  EXPECT_EQ(collateral(s, c.account), kDeposit + 100'000'000);

  // Every REST response and WS frame the server now gives, with the state the run left (open and
  // closed orders, trades, positions, isolated margin, movements), against JSON Schemas derived
  // from Lighter's SDK models (tests/api/schemas/lighter_models.json names each model's source).
  const int64_t deadline = now_ms() / 1000 + 3600;
  // The fill the check makes while subscribed: B buys A's resting ask (0.1 at 3100) with a
  // skip-nonce IOC signed by tachyon-cli, so every channel of A pushes an update frame too.
  const std::string key_file = s.data_dir() + "/b.key";
  std::ofstream(key_file) << api::to_hex(b.sk.data(), b.sk.size()) << "\n";
  const std::string cli =
      std::filesystem::path(TACHYON_BIN).parent_path().string() + "/tachyon-cli";
  const std::string trade_sh = s.data_dir() + "/trade.sh";
  std::ofstream(trade_sh)
      << "set -e\nINFO=$(" << cli << " sign --quiet --key-file " << key_file
      << " --tx-type 14 --tx '{\"AccountIndex\":4,\"ApiKeyIndex\":254,\"MarketIndex\":0,"
         "\"BaseAmount\":1000,\"Price\":310000,\"IsAsk\":0,\"Type\":0,\"TimeInForce\":0,"
         "\"OrderExpiry\":0,\"Nonce\":"
      << now_ms() * 1000 << ",\"L2TxAttributes\":{\"4\":1}}')\n"
      << "curl -s -X POST http://127.0.0.1:" << s.port()
      << "/api/v1/sendTx --data-urlencode tx_type=14 --data-urlencode \"tx_info=$INFO\" | grep -q "
         "'\"code\":200'\n";
  const std::string py =
      "/usr/bin/python3 " + src +
      "/tests/api/schema_check.py --http http://127.0.0.1:" + std::to_string(s.port()) +
      " --ws ws://127.0.0.1:" + std::to_string(s.port()) + "/stream --schemas " + src +
      "/tests/api/schemas/lighter_models.json --account 3 --token " +
      api::make_auth_token(deadline, 3, 254, 304, a.sk) + " --account2 4 --token2 " +
      api::make_auth_token(deadline, 4, 254, 304, b.sk) + " --l1 0x" + std::string(40, '0') +
      " --gaps " + src + "/tests/api/schemas/tachyon_gaps.json --trade-cmd \"sh " + trade_sh + "\"";
  std::string schema_out;
  EXPECT_EQ(run_program(py + " 2>&1", schema_out), 0) << schema_out;
  EXPECT_EQ(schema_out.find("FAIL"), std::string::npos) << schema_out;
  EXPECT_NE(schema_out.find("\ndone"), std::string::npos) << schema_out;
  EXPECT_EQ(s.stop(), 0) << s.log();
}

}  // namespace
}  // namespace tachyon::testing
