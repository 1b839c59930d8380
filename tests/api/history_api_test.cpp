// Recent trades and candles across restarts: a clean stop saves each market's history
// and each account's recent trades (history.bin) and the next start serves them from its first
// read; after a crash, the journal
// replay adds the trades the file does not have; trades the file already has are never counted
// twice; a damaged file is reported and ignored.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "api/api_support.hpp"
#include "api/ws_client.hpp"

namespace tachyon::testing {
namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

struct Desk {
  Trader maker{21}, taker{22};
  int rounds = 0;
  // Three asks, then one IOC buy that takes all three: three trades at three prices.
  void round(Server& s) {
    const Ticks base = 300000 + 300 * rounds++;
    for (Ticks p : {base, base + 100, base + 200}) {
      const HttpResult r = s.send(maker.order(0, true, 1000, p), maker.sk);
      ASSERT_EQ(r.status, 200) << r.body;
    }
    const HttpResult r =
        s.send(taker.order(0, false, 3000, base + 200, TimeInForce::kIoc), taker.sk);
    ASSERT_EQ(r.status, 200) << r.body;
  }
};

std::string trades(Server& s) { return s.get("/api/v1/recentTrades?market_id=0&limit=100").body; }
// An account's recent trades and total as account_all_trades/{a} sends them on subscribing (with
// the account's auth token).
std::string account_trades(Server& s, const Trader& t) {
  WsClient c(s.port());
  const std::string token = api::make_auth_token(now_ms() / 1000 + 600, t.account, 0, 304, t.sk);
  c.send(R"({"type":"subscribe","channel":"account_all_trades/)" + std::to_string(t.account) +
         R"(","auth":")" + token + "\"}");
  const std::string f = c.recv_until("subscribed/account_all_trades");
  const size_t from = f.find("\"trades\":"), total = f.find("\"total_trade_count\":");
  if (from == std::string::npos || total == std::string::npos) return "no trades in " + f;
  return f.substr(from, f.find_first_of(",}", total) - from);
}
std::string candles(Server& s, const char* res) {
  return s.get(std::string("/api/v1/candles?market_id=0&resolution=") + res + "&count_back=50")
      .body;
}

TEST(History, recent_trades_and_candles_survive_clean_and_crash_restarts_once_each) {
  TempDir dir;
  Desk d;
  std::string trades1, candles1m, candles1h, maker1, taker1;
  {
    Server s({}, dir.path());
    ASSERT_TRUE(s.ready()) << s.log();
    ASSERT_EQ(s.deposit(d.maker.account, 100'000'000'000, d.maker.pk).status, 200);
    ASSERT_EQ(s.deposit(d.taker.account, 100'000'000'000, d.taker.pk).status, 200);
    d.round(s);
    d.round(s);
    trades1 = trades(s);
    candles1m = candles(s, "1m");
    candles1h = candles(s, "1h");
    maker1 = account_trades(s, d.maker);
    taker1 = account_trades(s, d.taker);
    ASSERT_EQ(count(trades1, "\"trade_id\""), 6u) << trades1;
    ASSERT_EQ(count(maker1, "\"trade_id\""), 6u) << maker1;
    EXPECT_NE(taker1.find("\"total_trade_count\":6"), std::string::npos) << taker1;
    ASSERT_EQ(s.stop(), 0) << s.log();
  }
  // Without the snapshots, the next start replays the whole journal: every trade the history
  // file already has comes again, and must not be counted twice.
  for (const auto& f : std::filesystem::directory_iterator(dir.path())) {
    if (f.path().extension() == ".snap") std::filesystem::remove(f.path());
  }
  std::string trades2, candles2m, maker2;
  {
    Server s({}, dir.path());
    ASSERT_TRUE(s.ready()) << s.log();
    EXPECT_NE(s.log().find("market history: 1 markets and 2 accounts' trades from history.bin"),
              std::string::npos)
        << s.log();
    // The first reads, right after ready, are the history before the restart.
    EXPECT_EQ(trades(s), trades1);
    EXPECT_EQ(candles(s, "1m"), candles1m);
    EXPECT_EQ(candles(s, "1h"), candles1h);
    // and each account's own trades, with their total, counted once
    EXPECT_EQ(account_trades(s, d.maker), maker1);
    EXPECT_EQ(account_trades(s, d.taker), taker1);
    d.round(s);
    trades2 = trades(s);
    candles2m = candles(s, "1m");
    maker2 = account_trades(s, d.maker);
    ASSERT_EQ(count(trades2, "\"trade_id\""), 9u) << trades2;
    ASSERT_EQ(count(maker2, "\"trade_id\""), 9u) << maker2;
    EXPECT_NE(maker2.find("\"total_trade_count\":9"), std::string::npos) << maker2;
    s.kill();  // a crash: the last three trades are only in the journal
  }
  {
    Server s({}, dir.path());
    ASSERT_TRUE(s.ready()) << s.log();
    EXPECT_EQ(trades(s), trades2);
    EXPECT_EQ(candles(s, "1m"), candles2m);
    EXPECT_EQ(account_trades(s, d.maker), maker2);  // the file's six + the replay's three
    ASSERT_EQ(s.stop(), 0) << s.log();
  }
  flip_middle_byte(dir.path() + "/history.bin");  // damaged on disk
  Server s({}, dir.path());
  ASSERT_TRUE(s.ready()) << s.log();
  EXPECT_NE(s.log().find("market history not restored from the file"), std::string::npos)
      << s.log();
  EXPECT_EQ(s.get("/health/ready").status, 200);
  EXPECT_EQ(s.stop(), 0) << s.log();
}

}  // namespace
}  // namespace tachyon::testing
