// Durability before visibility, through the real server under fsync: what readers were shown
// before a kill -9 is all there after recovery. A WebSocket client records every trade pushed on
// trade/0 and the taker the applied seq /health/ready reports after each of its orders, while a
// maker and the taker trade from two threads; the server is killed the moment a trade frame arrives
// (a trade pushed ahead of its tx's fdatasync would be lost there) and restarted on the same data
// dir: every trade's tx is found by its hash, and the recovered state is at least the seq last
// shown.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>

#include "api/api_support.hpp"
#include "api/ws_client.hpp"

namespace tachyon::testing {
namespace {

std::set<std::string> tx_hashes_in(const std::string& frame) {
  std::set<std::string> out;
  const std::string key = "\"tx_hash\":\"";
  for (size_t p = frame.find(key); p != std::string::npos; p = frame.find(key, p + 1)) {
    const size_t b = p + key.size(), e = frame.find('"', b);
    if (e != std::string::npos && e > b) out.insert(frame.substr(b, e - b));
  }
  return out;
}

int64_t applied_seq(Server& s) {
  const HttpResult r = s.get("/health/ready");
  const std::string key = "\"applied_seq\":";
  const size_t p = r.body.find(key);
  return p == std::string::npos ? -1 : std::atoll(r.body.c_str() + p + key.size());
}

struct Shown {
  std::set<std::string> trades;  // tx hashes of trades pushed on trade/0
  int64_t applied = 0;           // the highest applied seq served over REST
};

// Trades, records what readers are shown, and kills the server the moment the `kill_after`-th
// trade frame arrives: a trade pushed before its tx was durable would be lost by that kill.
Shown trade_and_kill(Server& s, int kill_after, uint64_t round) {
  // Fresh accounts each round: their keys start at nonce 0.
  Trader maker(static_cast<AccountIndex>(31 + 2 * round)),
      taker(static_cast<AccountIndex>(32 + 2 * round));
  const std::string next = http(s.admin_port(), "GET", "/admin/nextNonce").body;
  const size_t at = next.find("\"nonce\":");
  if (at == std::string::npos) {
    ADD_FAILURE() << "no operator nonce in " << next;
    return {};
  }
  s.set_operator_nonce(std::atoll(next.c_str() + at + 8));  // the operator's, after a restart
  EXPECT_EQ(s.deposit(maker.account, 1'000'000'000'000, maker.pk).status, 200);
  EXPECT_EQ(s.deposit(taker.account, 1'000'000'000'000, taker.pk).status, 200);
  Shown shown;
  std::atomic<bool> stop{false};
  WsClient ws(s.port());
  ws.send(R"({"type":"subscribe","channel":"trade/0"})");
  std::atomic<bool> killed{false};
  std::thread reader([&] {
    for (int frames = 0;;) {
      const std::string f = ws.recv();
      if (f.empty()) {
        if (ws.closed || stop.load()) return;
        continue;
      }
      for (const std::string& h : tx_hashes_in(f)) shown.trades.insert(h);
      if (f.find("\"channel\":\"trade:0\"") != std::string::npos && ++frames == kill_after) {
        s.kill();
        killed.store(true);
        stop.store(true);
      }
    }
  });
  // The taker reads the applied seq over REST after each of its orders.
  std::atomic<int64_t> applied{0};
  auto trader = [&](Trader& t, bool ask) {
    for (Ticks i = 0; !stop.load(); ++i) {
      const Tx tx = ask ? t.order(0, true, 1000, 300000 + 100 * (i % 5))
                        : t.order(0, false, 1000, 300400, TimeInForce::kIoc);
      if (s.send(tx, t.sk).status == 0) return;  // the server is gone
      if (ask) continue;
      const int64_t a = applied_seq(s);
      if (a > applied.load()) applied.store(a);
    }
  };
  std::thread m([&] { trader(maker, true); }), k([&] { trader(taker, false); });
  reader.join();  // after the kill, or when no frame came for the client's 10 s
  if (!killed.load()) {
    ADD_FAILURE() << "fewer than " << kill_after << " trade frames";
    s.kill();
    stop.store(true);
  }
  m.join();
  k.join();
  shown.applied = applied.load();
  return shown;
}

TEST(Durability, what_readers_were_shown_before_a_kill9_is_there_after_recovery) {
  TempDir dir;
  uint64_t trades_checked = 0;
  for (uint64_t round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    Shown shown;
    {
      Server s({}, dir.path());  // fsync
      ASSERT_TRUE(s.ready()) << s.log();
      shown = trade_and_kill(s, 40 + 10 * static_cast<int>(round), round);
    }
    ASSERT_FALSE(shown.trades.empty()) << "no trade was pushed before the kill";
    Server again({}, dir.path());
    ASSERT_TRUE(again.ready()) << again.log();
    EXPECT_GE(applied_seq(again), shown.applied) << "a seq served over REST was lost";
    size_t lost = 0;
    for (const std::string& h : shown.trades)
      lost += again.get("/api/v1/tx?by=hash&value=" + h).status != 200;
    EXPECT_EQ(lost, 0u) << "of " << shown.trades.size() << " trades pushed on WebSocket";
    trades_checked += shown.trades.size();
    ASSERT_EQ(again.stop(), 0) << again.log();
  }
  std::printf("%llu trades pushed before 3 kills, all found after recovery\n",
              static_cast<unsigned long long>(trades_checked));
}

}  // namespace
}  // namespace tachyon::testing
