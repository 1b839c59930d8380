// Durability before visibility, through the real server under fsync: what readers were shown
// before a kill -9 is all there after recovery. A WebSocket client records every trade pushed on
// trade/0 and the taker the applied seq /health/ready reports after each of its orders, while a
// maker and the taker trade from two threads; the server is killed the moment a trade frame arrives
// (a trade pushed ahead of its tx's fdatasync would be lost there) and restarted on the same data
// dir: every trade's tx is found by its hash, and the recovered state is at least the seq last
// shown.
#include <gtest/gtest.h>

#include <sys/mount.h>
#include <sys/statvfs.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
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

// A small tmpfs of its own, unmounted at the end; empty path() when it cannot be mounted.
class SmallDisk {
 public:
  explicit SmallDisk(const char* size) {
    if (::mount("tachyon-test", dir_.path().c_str(), "tmpfs", 0, size) == 0)
      path_ = dir_.path();
    else
      error_ = std::strerror(errno);
  }
  ~SmallDisk() {
    if (!path_.empty()) ::umount2(path_.c_str(), MNT_DETACH);
  }
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }
  uint64_t free_bytes() const {
    struct statvfs v {};
    return ::statvfs(path_.c_str(), &v) == 0 ? uint64_t{v.f_bavail} * v.f_bsize : 0;
  }

 private:
  TempDir dir_;
  std::string path_, error_;
};

void fill(const std::string& path, uint64_t bytes) {
  std::ofstream f(path, std::ios::binary);
  const std::string block(64 << 10, 'x');
  for (uint64_t done = 0; done < bytes && f; done += block.size())
    f.write(block.data(),
            static_cast<std::streamsize>(std::min<uint64_t>(block.size(), bytes - done)));
}

bool wait_for(const std::function<bool()>& cond) {  // generously bounded: a hang fails, not a pace
  for (int i = 0; i < 30'000 && !cond(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return cond();
}

// The journal's disk fills up under the running server (its own small tmpfs): new txs are refused
// with 23003 and /health/ready says why; the tx whose record found no room waits and is answered
// once there is room; nothing acknowledged is lost across a kill -9 afterwards.
TEST(Durability, a_full_disk_refuses_new_txs_with_the_reason_and_resumes_when_space_returns) {
  SmallDisk disk("size=8m");
  if (disk.path().empty()) GTEST_SKIP() << "mounting a small tmpfs needs root: " << disk.error();
  const std::string data = disk.path() + "/data", filler = disk.path() + "/filler";
  std::set<std::string> acked;
  std::mutex mu;
  {
    // The per-account rate lifted: a 429 would leave a nonce gap behind it, and the disk would
    // fill only if the txs before it were enough.
    const ConfigFile cfg(
        ConfigFile::Edits{{"account_rate_per_s = 100", "account_rate_per_s = 1000000"},
                          {"account_burst = 200", "account_burst = 1000000"}});
    std::vector<std::string> args = cfg.args();
    Server s(args, data);  // fsync
    ASSERT_TRUE(s.ready()) << s.log();
    Trader maker(41), taker(43), probe(42);
    for (Trader* t : {&maker, &taker, &probe})
      ASSERT_EQ(s.deposit(t->account, 1'000'000'000'000, t->pk).status, 200);
    fill(filler, disk.free_bytes() - (24 << 10));
    std::atomic<bool> stop{false};
    std::thread sender([&] {  // a maker's ask, taken by an IOC bid: every tx trades, none rests
      for (int64_t i = 0; !stop.load(); ++i) {
        const bool ask = i % 2 == 0;
        Trader& t = ask ? maker : taker;
        const Tx tx = ask ? t.order(0, true, 1000, 300000 + 100 * (i % 5))
                          : t.order(0, false, 1000, 300400, TimeInForce::kIoc);
        const HttpResult r = s.send(tx, t.sk);
        std::lock_guard lk(mu);
        if (r.status == 200) acked.merge(tx_hashes_in(r.body));
        if (r.status == 503 || r.status == 429) --t.nonce;  // refused before the engine
      }
    });
    ASSERT_TRUE(wait_for([&] { return s.get("/health/ready").status == 503; }))
        << "the disk never filled";
    const HttpResult ready = s.get("/health/ready");
    EXPECT_NE(ready.body.find("disk is full"), std::string::npos) << ready.body;
    const HttpResult refused =
        s.send(probe.order(0, false, 1000, 300400, TimeInForce::kIoc), probe.sk);
    EXPECT_EQ(refused.status, 503) << refused.body;
    EXPECT_NE(refused.body.find("23003"), std::string::npos) << refused.body;
    --probe.nonce;
    std::filesystem::remove(filler);  // the operator makes room
    ASSERT_TRUE(wait_for([&] { return s.get("/health/ready").status == 200; }));
    stop.store(true);
    sender.join();
    const HttpResult again =
        s.send(probe.order(0, false, 1000, 300400, TimeInForce::kIoc), probe.sk);
    EXPECT_EQ(again.status, 200) << again.body;
    acked.merge(tx_hashes_in(again.body));
    s.kill();
  }
  ASSERT_GT(acked.size(), 10u);
  Server after({}, data);
  ASSERT_TRUE(after.ready()) << after.log();
  size_t lost = 0;
  for (const std::string& h : acked)
    lost += after.get("/api/v1/tx?by=hash&value=" + h).status != 200;
  EXPECT_EQ(lost, 0u) << "of " << acked.size() << " acknowledged txs";
  EXPECT_EQ(after.stop(), 0) << after.log();
}

// "<line start>...state hash <hex>" in a server log: the hash on the first line that has `marker`.
std::string logged_hash(const std::string& log, const std::string& marker) {
  const size_t at = log.find(marker);
  const size_t h = at == std::string::npos ? at : log.find("state hash ", at);
  return h == std::string::npos ? "" : log.substr(h + 11, 16);
}

// history.bin and txindex.bin cannot be written (directories stand where their temp files go):
// the server keeps trading through snapshots and its stop, logs why, stops cleanly, and the
// state it recovers is the state it stopped with.
TEST(Durability, a_failed_history_write_keeps_trading_and_the_state_whole) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() + "/history.bin.tmp/x");
  std::filesystem::create_directories(dir.path() + "/txindex.bin.tmp/x");
  // A snapshot every 10 txs: the history is saved (and fails) after each, while trading goes on.
  const ConfigFile cfg(
      ConfigFile::Edits{{"snapshot_every_txs = 1000000", "snapshot_every_txs = 10"}});
  std::string stopped;
  {
    Server s(cfg.args(), dir.path());  // fsync
    ASSERT_TRUE(s.ready()) << s.log();
    Trader maker(51), taker(52);
    for (Trader* t : {&maker, &taker})
      ASSERT_EQ(s.deposit(t->account, 1'000'000'000'000, t->pk).status, 200);
    for (int i = 0; i < 60; ++i) {  // a maker's ask, taken by an IOC bid
      const bool ask = i % 2 == 0;
      Trader& t = ask ? maker : taker;
      const Tx tx = ask ? t.order(0, true, 1000, 300000 + 100 * (i % 5))
                        : t.order(0, false, 1000, 300400, TimeInForce::kIoc);
      EXPECT_EQ(s.send(tx, t.sk).status, 200);
    }
    ASSERT_EQ(s.stop(), 0) << s.log();
    EXPECT_NE(s.log().find("market history not saved"), std::string::npos) << s.log();
    EXPECT_NE(s.log().find("tx index not saved"), std::string::npos) << s.log();
    stopped = logged_hash(s.log(), "stopped cleanly at seq");
  }
  ASSERT_EQ(stopped.size(), 16u);
  Server again({}, dir.path());
  ASSERT_TRUE(again.ready()) << again.log();
  EXPECT_EQ(logged_hash(again.log(), "] recovered "), stopped) << again.log();
  EXPECT_EQ(again.stop(), 0) << again.log();
}

}  // namespace
}  // namespace tachyon::testing
