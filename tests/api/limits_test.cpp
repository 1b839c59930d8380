// The protections and the extras beyond Lighter, against the real server: per-IP and
// per-account rate limits, connection limits, the idle timeout, oversized WebSocket messages,
// gap repair (resume and /orderBookUpdates), cancel-on-disconnect, /tx and accountsByL1Address.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <simdjson.h>
#include <filesystem>
#include <thread>

#include "api/api_support.hpp"
#include "api/ws_client.hpp"

namespace tachyon::testing {
namespace {

int64_t code_of(const std::string& body) {
  simdjson::dom::parser p;
  simdjson::dom::element e;
  int64_t c = 0;
  if (p.parse(body).get(e) || e["code"].get_int64().get(c)) return -1;
  return c;
}

int64_t int_after(const std::string& s, const std::string& key) {
  const size_t p = s.find("\"" + key + "\":");
  return p == std::string::npos ? -1 : std::atoll(s.c_str() + p + key.size() + 3);
}

TEST(Limits, per_ip_and_per_account_rates_answer_429_with_23000) {
  ConfigFile cfg({{"ip_burst = 400", "ip_burst = 6"},
                  {"ip_rate_per_s = 200", "ip_rate_per_s = 1"},
                  {"account_burst = 200", "account_burst = 2"},
                  {"account_rate_per_s = 100", "account_rate_per_s = 1"}});
  Server s(cfg.args());
  ASSERT_TRUE(s.ready()) << s.log();
  Trader t(5);
  ASSERT_EQ(s.deposit(t.account, 10'000'000'000, t.pk).status, 200);  // admin: not limited
  // the account: two txs pass, the third is refused (and changes nothing)
  EXPECT_EQ(s.send(t.order(0, true, 1000, 301000), t.sk).status, 200);
  EXPECT_EQ(s.send(t.order(0, true, 1000, 301100), t.sk).status, 200);
  const HttpResult third = s.send(t.order(0, true, 1000, 301200), t.sk);
  EXPECT_EQ(third.status, 429);
  EXPECT_EQ(code_of(third.body), 23000) << third.body;
  // the address: 6 requests in the burst (3 used above), then 429
  int refused = 0;
  for (int i = 0; i < 4; ++i) refused += s.get("/api/v1/assetDetails").status == 429;
  EXPECT_EQ(refused, 1);
  const HttpResult r = s.get("/");
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(code_of(r.body), 23000);
  EXPECT_EQ(s.stop(), 0) << s.log();
}

TEST(Limits, connections_per_address_are_capped_and_idle_connections_closed) {
  ConfigFile cfg({{"max_connections_per_ip = 100", "max_connections_per_ip = 2"},
                  {"idle_timeout_s = 120", "idle_timeout_s = 1"},
                  {"max_ws_message_bytes = 65536", "max_ws_message_bytes = 1024"}});
  Server s(cfg.args());
  ASSERT_TRUE(s.ready()) << s.log();
  {
    WsClient a(s.port()), b(s.port());
    const HttpResult over = s.get("/");
    EXPECT_EQ(over.status, 429);
    EXPECT_EQ(code_of(over.body), 23002) << over.body;
    // An oversized message closes that connection with 1009 (too big); the server stays up.
    a.send(std::string(2000, 'x'));
    a.recv_until("never");
    EXPECT_TRUE(a.closed);
    EXPECT_EQ(a.close_code, 1009);
    // b says nothing: closed for idleness (a pong to our keep-alive ping is not activity)
    b.recv_until("never");
    EXPECT_TRUE(b.closed);
  }
  EXPECT_EQ(s.get("/health/live").status, 200);  // both slots are free again
  EXPECT_EQ(s.stop(), 0) << s.log();
}

// Whether pred() becomes true within 10 s (polled every millisecond).
template <typename P>
bool eventually(P&& pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// A TCP connection to 127.0.0.1:port, nothing sent; -1 if it could not connect.
int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Out of file descriptors: accepting fails (EMFILE) while a flood of connections is open; the
// connection already open keeps being served, the server says so once, and once the flood is
// gone it accepts again. The server runs under a low descriptor limit inherited from the test.
TEST(Limits, out_of_descriptors_existing_connections_keep_working_and_accepting_resumes) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's runtime needs descriptors of its own (it reads /proc/self/maps) "
                  "and reports false errors without them; the Release run covers this";
#endif
  ConfigFile cfg(
      ConfigFile::Edits{{"max_connections_per_ip = 100", "max_connections_per_ip = 10000"}});
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &old), 0);
  rlimit low = old;
  low.rlim_cur = 160;  // the server's own files and threads take some; the flood takes the rest
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  Server s(cfg.args());
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &old), 0);
  ASSERT_TRUE(s.ready()) << s.log();
  // One keep-alive connection, served before the flood.
  const int keep = connect_loopback(s.port());
  ASSERT_GE(keep, 0);
  const std::string req = "GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  auto ask = [&] {
    if (::send(keep, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size()))
      return std::string();
    char buf[4096];
    const ssize_t n = ::recv(keep, buf, sizeof(buf), 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  };
  ASSERT_NE(ask().find("200 OK"), std::string::npos);
  std::vector<int> flood;
  for (int i = 0; i < 300; ++i) {
    const int fd = connect_loopback(s.port());
    if (fd >= 0) flood.push_back(fd);
  }
  // The server holds as many descriptors as it may: its next accept fails.
  const std::string fds = "/proc/" + std::to_string(s.pid()) + "/fd";
  EXPECT_TRUE(eventually([&] {
    return std::distance(std::filesystem::directory_iterator(fds),
                         std::filesystem::directory_iterator{}) >= static_cast<long>(low.rlim_cur);
  })) << "the server never reached its descriptor limit";
  EXPECT_NE(ask().find("200 OK"), std::string::npos) << "the open connection is still served";
  for (int fd : flood) ::close(fd);
  // Accepting resumes: a new connection is answered (after the backoff).
  EXPECT_TRUE(eventually([&] { return s.get("/health/live").status == 200; }));
  ::close(keep);
  EXPECT_EQ(s.stop(), 0) << s.log();
  EXPECT_NE(s.log().find("accept failed"), std::string::npos) << s.log();
  EXPECT_NE(s.log().find("accepting connections again"), std::string::npos) << s.log();
}

TEST(Extras, resume_replays_the_deltas_after_a_nonce_and_orderBookUpdates_too) {
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  Trader t(3);
  ASSERT_EQ(s.deposit(t.account, 100'000'000'000, t.pk).status, 200);
  WsClient c(s.port());
  c.send(R"({"type":"subscribe","channel":"order_book/0"})");
  const std::string snap = c.recv_until("subscribed/order_book");
  const int64_t n0 = int_after(snap.substr(snap.find("\"order_book\"")), "nonce");
  ASSERT_GT(n0, 0) << snap;
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(s.send(t.order(0, true, 1000, 301000 + i * 100), t.sk).status, 200);
  // wait until this connection's stream has all three, then ask for them again
  int64_t last = n0;
  while (last < n0 + 3) {
    const std::string u = c.recv_until("update/order_book");
    ASSERT_FALSE(u.empty());
    last = int_after(u.substr(u.find("\"order_book\"")), "nonce");
  }
  c.send(R"({"type":"resume","channel":"order_book/0","nonce":)" + std::to_string(n0) + "}");
  int64_t begin = n0;
  for (int i = 0; i < 3; ++i) {
    const std::string u = c.recv_until("update/order_book");
    const std::string ob = u.substr(u.find("\"order_book\""));
    EXPECT_EQ(int_after(ob, "begin_nonce"), begin) << u;
    begin = int_after(ob, "nonce");
    EXPECT_NE(u.find("\"price\":\"30" + std::to_string(10 + i) + ".00\",\"size\":\"0.1000\""),
              std::string::npos)
        << u;
  }
  EXPECT_EQ(begin, last);
  // too old (or unknown): a fresh snapshot
  c.send(R"({"type":"resume","channel":"order_book/0","nonce":0})");
  EXPECT_NE(c.recv_until("subscribed/order_book").find("3012.00"), std::string::npos);
  // REST: the same deltas, and a reset for an unknown nonce
  const std::string rest =
      s.get("/api/v1/orderBookUpdates?market_id=0&since_nonce=" + std::to_string(n0)).body;
  EXPECT_NE(rest.find("\"reset\":false"), std::string::npos) << rest;
  size_t updates = 0;
  for (size_t p = 0; (p = rest.find("\"begin_nonce\"", p)) != std::string::npos; ++p) ++updates;
  EXPECT_EQ(updates, 3u) << rest;
  EXPECT_NE(s.get("/api/v1/orderBookUpdates?market_id=0&since_nonce=0").body.find("\"reset\":true"),
            std::string::npos);
  EXPECT_EQ(s.stop(), 0) << s.log();
}

TEST(Extras, cancel_on_disconnect_cancels_the_sessions_orders_as_a_journaled_tx) {
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  Trader t(3);
  ASSERT_EQ(s.deposit(t.account, 100'000'000'000, t.pk).status, 200);
  WsClient watcher(s.port());  // sees the account change when the cancel executes
  {
    WsClient c(s.port());
    c.send(cancel_on_disconnect_message(t));
    EXPECT_NE(c.recv_until("cancel_on_disconnect").find("\"status\":\"armed\""), std::string::npos);
    ASSERT_EQ(s.send(t.order(0, true, 1000, 301000), t.sk).status, 200);
    ASSERT_EQ(s.send(t.order(0, false, 1000, 299000), t.sk).status, 200);
    EXPECT_EQ(int_after(s.get("/api/v1/account?by=index&value=3").body, "total_order_count"), 2);
    watcher.send(R"({"type":"subscribe","channel":"account_all/3"})");
    EXPECT_NE(watcher.recv_until("subscribed/account_all").find("\"total_order_count\":2"),
              std::string::npos);
    c.close();
  }
  // the cancel's account update (recv_until gives up after 10 s without a frame)
  EXPECT_NE(watcher.recv_until("\"total_order_count\":0"), "");
  EXPECT_EQ(int_after(s.get("/api/v1/account?by=index&value=3").body, "total_order_count"), 0);
  EXPECT_EQ(int_after(s.get("/api/v1/nextNonce?account_index=3&api_key_index=0").body, "nonce"),
            (int64_t{1} << 40) + 1);
  EXPECT_EQ(s.stop(), 0) << s.log();
}

TEST(Extras, tx_by_hash_and_accounts_by_l1_address) {
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  Trader t(9);
  ASSERT_EQ(s.deposit(t.account, 10'000'000'000, t.pk).status, 200);
  const Tx tx = t.order(0, true, 1000, 301000);
  const HttpResult r = s.send(tx, t.sk);
  ASSERT_EQ(r.status, 200);
  const std::string hash = api::tx_hash_hex(tx, 304);
  const std::string got = s.get("/api/v1/tx?by=hash&value=" + hash).body;
  EXPECT_EQ(int_after(got, "status"), 2) << got;
  EXPECT_EQ(int_after(got, "transaction_index"), int_after(r.body, "seq"));
  EXPECT_EQ(int_after(got, "block_height"), int_after(r.body, "block"));
  EXPECT_GT(int_after(got, "block_height"), 0);
  EXPECT_EQ(code_of(s.get("/api/v1/tx?by=hash&value=00").body), 21500);
  // an owner address: the deposit carries it, accountsByL1Address finds the account
  Tx d;
  d.h.type = TxType::kDeposit;
  d.h.nonce = 3;  // markets 0, 1 and the deposit above
  d.deposit.to_account = 11;
  d.deposit.amount = 5'000'000;
  d.deposit.l1_address[19] = 0xab;
  const api::Signature sig = api::sign_tx(d, 304, s.operator_key());
  ASSERT_EQ(http(s.admin_port(), "POST", "/api/v1/sendTx",
                 "tx_type=1&tx_info=" + urlencode(api::tx_info_json(d, &sig)))
                .status,
            200);
  const std::string l1 = "0x00000000000000000000000000000000000000ab";
  const std::string accts = s.get("/api/v1/accountsByL1Address?l1_address=" + l1).body;
  EXPECT_EQ(int_after(accts, "index"), 11) << accts;
  EXPECT_NE(accts.find("\"collateral\":\"5.000000\""), std::string::npos) << accts;
  EXPECT_EQ(s.stop(), 0) << s.log();
}

}  // namespace
}  // namespace tachyon::testing
