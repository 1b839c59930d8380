// The api end to end against the real server process: REST reads equal the state the test built
// with signed txs, bad input gets clear errors and changes nothing, pipelined nonces pass, and the
// real ccxt client (npm, pinned) reads the same values.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdio>
#include <fstream>

#include "api/api_support.hpp"
#include "api/ws_client.hpp"

namespace tachyon::testing {
namespace {

simdjson::dom::element parse(simdjson::dom::parser& p, const std::string& s) {
  simdjson::dom::element e;
  EXPECT_EQ(p.parse(s).get(e), simdjson::SUCCESS) << s;
  return e;
}
using Elem = simdjson::simdjson_result<simdjson::dom::element>;
std::string str(Elem e, const char* key) {
  std::string_view v;
  if (e[key].get_string().get(v)) return "<missing " + std::string(key) + ">";
  return std::string(v);
}
std::string str(simdjson::dom::element e, const char* key) { return str(Elem(std::move(e)), key); }
int64_t num(Elem e, const char* key) {
  int64_t v = 0;
  if (e[key].get_int64().get(v)) return INT64_MIN;
  return v;
}
int64_t num(simdjson::dom::element e, const char* key) { return num(Elem(std::move(e)), key); }

// Two traders and two crossing IOCs on ETH (market 0: 4 size decimals, 2 price decimals).
struct Scene {
  Trader maker{3}, taker{4};
  Tx take_buy, take_sell;  // the two taker txs (their hashes name the trades)
  void build(Server& s) {
    ASSERT_EQ(s.deposit(maker.account, 100'000'000'000, maker.pk).status, 200);
    ASSERT_EQ(s.deposit(taker.account, 100'000'000'000, taker.pk).status, 200);
    for (const Tx& tx :
         {maker.order(0, true, 10000, 301000), maker.order(0, true, 20000, 302000),
          maker.order(0, false, 15000, 299000), maker.order(0, false, 5000, 298000)}) {
      const HttpResult r = s.send(tx, maker.sk);
      ASSERT_EQ(r.status, 200) << r.body;
    }
    // taker buys 0.4 @ 3010 (crosses the best ask), then sells 0.3 @ 2990 (the best bid)
    take_buy = taker.order(0, false, 4000, 301000, TimeInForce::kIoc);
    take_sell = taker.order(0, true, 3000, 299000, TimeInForce::kIoc);
    ASSERT_EQ(s.send(take_buy, taker.sk).status, 200);
    ASSERT_EQ(s.send(take_sell, taker.sk).status, 200);
  }
};

TEST(Api, rest_reads_equal_the_state_built_with_signed_txs) {
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  Scene sc;
  sc.build(s);
  simdjson::dom::parser p;
  // the book, per level, best first
  auto book = parse(p, s.get("/api/v1/orderBookOrders?market_id=0&limit=10").body);
  std::vector<std::pair<std::string, std::string>> asks, bids;
  for (auto l : book["asks"]) {  // one row per order: here one order per level
    asks.emplace_back(str(l, "price"), str(l, "remaining_base_amount"));
    EXPECT_EQ(num(l, "owner_account_index"), 3);
    EXPECT_GE(num(l, "order_index"), int64_t{1} << 48);
  }
  for (auto l : book["bids"]) bids.emplace_back(str(l, "price"), str(l, "remaining_base_amount"));
  using V = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(asks, (V{{"3010.00", "0.6000"}, {"3020.00", "2.0000"}}));
  EXPECT_EQ(bids, (V{{"2990.00", "1.2000"}, {"2980.00", "0.5000"}}));
  // the taker: long 0.1 from 3010; fees 0.03% of 1204.00 and 897.00; realized (2990-3010)*0.3
  auto acct = parse(p, s.get("/api/v1/account?by=index&value=4").body)["accounts"].at(0);
  EXPECT_EQ(str(acct, "collateral"), "99993.369700");
  auto pos = acct["positions"].at(0);
  EXPECT_EQ(str(pos, "position"), "0.1000");
  EXPECT_EQ(num(pos, "sign"), 1);
  EXPECT_EQ(str(pos, "avg_entry_price"), "3010.00");
  EXPECT_EQ(str(pos, "realized_pnl"), "-6.000000");
  // trades, newest first; the ticker's last price
  auto trades = parse(p, s.get("/api/v1/recentTrades?market_id=0&limit=10").body)["trades"];
  size_t n_trades = 0;
  for (auto t : trades) n_trades += t.is_object();
  ASSERT_EQ(n_trades, 2u);
  EXPECT_EQ(str(trades.at(0), "price"), "2990.00");
  EXPECT_EQ(str(trades.at(0), "size"), "0.3000");
  EXPECT_EQ(str(trades.at(1), "price"), "3010.00");
  // each trade names the taker tx that made it
  EXPECT_EQ(str(trades.at(0), "tx_hash"), api::tx_hash_hex(sc.take_sell, 304));
  EXPECT_EQ(str(trades.at(1), "tx_hash"), api::tx_hash_hex(sc.take_buy, 304));
  auto det =
      parse(p, s.get("/api/v1/orderBookDetails?market_id=0").body)["order_book_details"].at(0);
  double last = 0;
  ASSERT_EQ(det["last_trade_price"].get_double().get(last), simdjson::SUCCESS);
  EXPECT_DOUBLE_EQ(last, 2990.0);
  EXPECT_EQ(str(det, "mark_price"), "3000.00");  // median(index 3000, bid 2990, ask 3010)
  // candles: all volume and the extremes of the two trades
  auto candles =
      parse(p, s.get("/api/v1/candles?market_id=0&resolution=1m&count_back=10").body)["c"];
  double vol = 0, hi = 0, lo = 1e18;
  for (auto c : candles) {
    vol += double(c["v"]);
    hi = std::max(hi, double(c["h"]));
    lo = std::min(lo, double(c["l"]));
  }
  EXPECT_NEAR(vol, 0.7, 1e-9);
  EXPECT_DOUBLE_EQ(hi, 3010.0);
  EXPECT_DOUBLE_EQ(lo, 2990.0);
  // exchange stats: a row per market with the fields Lighter's SDK requires (OrderBookStats),
  // `total` the rows; market 0's day: 0.7 traded, from 3010 (the first trade) to 2990 (the last)
  auto ex = parse(p, s.get("/api/v1/exchangeStats").body);
  simdjson::dom::array rows;
  ASSERT_EQ(ex["order_book_stats"].get(rows), simdjson::SUCCESS);
  EXPECT_EQ(num(ex, "total"), static_cast<int64_t>(rows.size()));
  auto r0 = rows.at(0);
  EXPECT_EQ(str(r0, "symbol"), "ETH");
  EXPECT_EQ(num(r0, "daily_trades_count"), 2);
  double base = 0, change = 0;
  ASSERT_EQ(r0["daily_base_token_volume"].get_double().get(base), simdjson::SUCCESS);
  ASSERT_EQ(r0["daily_price_change"].get_double().get(change), simdjson::SUCCESS);
  EXPECT_NEAR(base, 0.7, 1e-9);
  EXPECT_NEAR(change, 100.0 * (2990 - 3010) / 3010, 1e-4);
  // blocks: sealed every 100 ms by default, committed off the hot path; a chain of commitments
  // The first commitment: the `height` channel pushes it (each read gives up after 10 s).
  WsClient hc(s.port());
  hc.send(R"({"type":"subscribe","channel":"height"})");
  int64_t height = 0;
  for (std::string f; height <= 0 && !(f = hc.recv_until("\"height\":")).empty();) {
    simdjson::dom::parser hp;
    height = num(parse(hp, f), "height");
  }
  ASSERT_GT(height, 0);
  EXPECT_EQ(num(parse(p, s.get("/api/v1/currentHeight").body), "height"), height);
  auto blk =
      parse(p, s.get("/api/v1/block?by=height&value=" + std::to_string(height)).body)["blocks"].at(
          0);
  EXPECT_EQ(num(blk, "height"), height);
  EXPECT_EQ(str(blk, "commitment").size(), 64u);
  EXPECT_EQ(s.get("/api/v1/block?by=height&value=999999").status, 400);
  // keys and nonces
  auto nn = parse(p, s.get("/api/v1/nextNonce?account_index=3&api_key_index=0").body);
  EXPECT_EQ(num(nn, "nonce"), 4);
  auto keys = parse(p, s.get("/api/v1/apikeys?account_index=3").body)["api_keys"].at(0);
  EXPECT_EQ(str(keys, "public_key"), api::to_hex(sc.maker.pk.data(), 32));
  EXPECT_EQ(s.stop(), 0) << s.log();
}

TEST(Api, a_restarted_server_is_ready_only_with_the_restored_state_and_serves_it) {
  TempDir dir;
  std::string account, book;
  int64_t applied_before = 0;
  {
    Server s({}, dir.path());
    ASSERT_TRUE(s.ready()) << s.log();
    Scene sc;
    sc.build(s);
    account = s.get("/api/v1/account?by=index&value=4").body;
    book = s.get("/api/v1/orderBookOrders?market_id=0").body;
    simdjson::dom::parser hp;
    applied_before = num(parse(hp, s.get("/health/ready").body), "applied_seq");
    ASSERT_GT(applied_before, 0);
    ASSERT_EQ(s.stop(), 0) << s.log();
  }
  Server again({}, dir.path());
  ASSERT_TRUE(again.ready()) << again.log();
  EXPECT_EQ(again.log().find("created"), std::string::npos) << "markets come from the data dir";
  // A clean stop wrote a snapshot of everything: no account view was made at start, each is made
  // from the snapshot on first use.
  EXPECT_NE(again.log().find("read side: 0 of "), std::string::npos) << again.log();
  // The first reads, right after ready, are the state before the restart.
  const HttpResult health = again.get("/health/ready");
  EXPECT_EQ(health.status, 200);
  simdjson::dom::parser hp;
  EXPECT_EQ(num(parse(hp, health.body), "applied_seq"), applied_before)
      << "the restored state is applied: " << health.body;
  // The state, without the times of the txs that changed each object last: the engine keeps no
  // such times, so a restored object carries the restore's (docs/WIRE_FIELDS.md).
  const auto no_times = [](std::string s) {
    return without_number_fields(std::move(s), {"transaction_time"});
  };
  account = no_times(account);
  book = no_times(book);
  EXPECT_EQ(no_times(again.get("/api/v1/account?by=index&value=4").body), account);
  const std::string book2 = no_times(again.get("/api/v1/orderBookOrders?market_id=0").body);
  const size_t cut = book.find("\"nonce\":"), cut2 = book2.find("\"nonce\":");
  EXPECT_EQ(book2.substr(0, cut2), book.substr(0, cut));
  EXPECT_GT(std::stoll(book2.substr(cut2 + 8)), std::stoll(book.substr(cut + 8)))
      << "book nonces never go backwards across a restart";
  // and trading continues from there: the maker's next nonce survived
  simdjson::dom::parser p;
  EXPECT_EQ(
      num(parse(p, again.get("/api/v1/nextNonce?account_index=3&api_key_index=0").body), "nonce"),
      4);
  EXPECT_EQ(again.stop(), 0) << again.log();
}

// After a crash the txs the journal replays at start are found by hash again: a client that
// lost its connection learns whether its tx went in.
TEST(Api, after_a_crash_the_replayed_txs_are_found_by_hash) {
  TempDir dir;
  std::string hash;
  int64_t seq = 0;
  {
    Server s({}, dir.path());
    ASSERT_TRUE(s.ready()) << s.log();
    Trader t(7);
    ASSERT_EQ(s.deposit(t.account, 100'000'000'000, t.pk).status, 200);
    const Tx tx = t.order(0, true, 1000, 301000);
    const HttpResult r = s.send(tx, t.sk);
    ASSERT_EQ(r.status, 200) << r.body;
    simdjson::dom::parser p;
    seq = num(parse(p, r.body), "seq");
    hash = api::tx_hash_hex(tx, 304);
    s.kill();
  }
  Server again({}, dir.path());
  ASSERT_TRUE(again.ready()) << again.log();
  const HttpResult r = again.get("/api/v1/tx?by=hash&value=" + hash);
  ASSERT_EQ(r.status, 200) << r.body;
  simdjson::dom::parser p;
  auto e = parse(p, r.body);
  EXPECT_EQ(num(e, "sequence_index"), seq);
  EXPECT_EQ(num(e, "status"), 2);
  EXPECT_EQ(num(e, "account_index"), 7);
  EXPECT_EQ(again.get("/api/v1/tx?by=hash&value=" + std::string(80, 'a')).status, 400);
  EXPECT_EQ(again.stop(), 0) << again.log();
}

// A clean restart keeps the tx index (saved at stop, loaded at start); a damaged index file is
// reported and ignored, and the server starts anyway.
TEST(Api, the_tx_index_survives_a_clean_restart_and_a_damaged_one_is_ignored) {
  TempDir dir;
  std::string hash;
  int64_t seq = 0;
  {
    Server s({}, dir.path());
    ASSERT_TRUE(s.ready()) << s.log();
    Trader t(12);
    ASSERT_EQ(s.deposit(t.account, 100'000'000'000, t.pk).status, 200);
    const Tx tx = t.order(0, false, 1000, 299000);
    const HttpResult r = s.send(tx, t.sk);
    ASSERT_EQ(r.status, 200) << r.body;
    simdjson::dom::parser p;
    seq = num(parse(p, r.body), "seq");
    hash = api::tx_hash_hex(tx, 304);
    ASSERT_EQ(s.stop(), 0) << s.log();
  }
  {
    Server again({}, dir.path());
    ASSERT_TRUE(again.ready()) << again.log();
    const HttpResult r = again.get("/api/v1/tx?by=hash&value=" + hash);
    ASSERT_EQ(r.status, 200) << r.body << again.log();
    simdjson::dom::parser p;
    EXPECT_EQ(num(parse(p, r.body), "sequence_index"), seq);
    ASSERT_EQ(again.stop(), 0) << again.log();
  }
  flip_middle_byte(dir.path() + "/txindex.bin");  // damaged on disk
  Server third({}, dir.path());
  ASSERT_TRUE(third.ready()) << third.log();
  EXPECT_NE(third.log().find("tx index not restored"), std::string::npos) << third.log();
  EXPECT_EQ(third.get("/health/ready").status, 200);
  EXPECT_EQ(third.stop(), 0) << third.log();
}

TEST(Api, bad_input_gets_a_clear_error_changes_nothing_and_the_server_stays_up) {
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  Trader t(5), other(6);
  ASSERT_EQ(s.deposit(t.account, 10'000'000'000, t.pk).status, 200);
  ASSERT_EQ(s.deposit(other.account, 10'000'000'000, other.pk).status, 200);
  auto code_of = [](const HttpResult& r) {
    simdjson::dom::parser p;
    simdjson::dom::element e;
    int64_t c = 0;
    if (p.parse(r.body).get(e) || e["code"].get_int64().get(c)) return int64_t{-1};
    return c;
  };
  auto post = [&](const std::string& body) {
    return http(s.port(), "POST", "/api/v1/sendTx", body);
  };
  // malformed JSON, wrong types, unknown tx type, missing fields
  EXPECT_EQ(code_of(post("tx_type=14&tx_info=" + urlencode("{not json"))), 21501);
  EXPECT_EQ(code_of(post("tx_type=14&tx_info=" + urlencode(R"({"AccountIndex":"x","Nonce":0})"))),
            21501);
  EXPECT_EQ(code_of(post("tx_type=99&tx_info=" + urlencode(R"({"AccountIndex":5,"Nonce":0})"))),
            21505);
  EXPECT_EQ(code_of(post("tx_type=14")), 21501);
  // a malformed literal inside tx_info (found by the fuzzer: it used to end the worker)
  EXPECT_EQ(code_of(post("tx_type=14&tx_info=" +
                         urlencode(R"({"AccountIndex":5,"IsAsk":tru,"Nonce":0})"))),
            21501);
  // an operator tx on the public port
  EXPECT_EQ(code_of(post("tx_type=1&tx_info=" +
                         urlencode(R"({"ToAccountIndex":5,"Amount":1,"Nonce":9})"))),
            21505);
  // wrong signature: signed by another key
  EXPECT_EQ(code_of(s.send(t.order(0, false, 1000, 299000), other.sk)), 21103);
  t.nonce--;
  // a key of another account: account 6's key signs for account 5
  Tx steal = t.order(0, false, 1000, 299000);
  t.nonce--;
  steal.h.account = other.account == 6 ? 5 : 6;
  EXPECT_EQ(code_of(s.send(steal, other.sk)), 21103);
  // expired
  Tx old = t.order(0, false, 1000, 299000);
  t.nonce--;
  old.h.expired_at_ms = now_ms() - 1000;
  EXPECT_EQ(code_of(s.send(old, t.sk)), 21100);
  // a good one, then its replay
  const Tx good = t.order(0, false, 1000, 299000);
  EXPECT_EQ(s.send(good, t.sk).status, 200);
  EXPECT_EQ(code_of(s.send(good, t.sk)), 21104);
  // a nonce gap
  Tx gap = t.order(0, false, 1000, 299000);
  gap.h.nonce += 5;
  EXPECT_EQ(code_of(s.send(gap, t.sk)), 21104);
  t.nonce--;
  // not enough margin: 10k USDC cannot carry 100 ETH at 20x
  EXPECT_EQ(code_of(s.send(t.order(0, false, 1'000'000, 299000), t.sk)), 21739);
  t.nonce--;
  // too large a body, an unknown endpoint, an unsupported method
  EXPECT_EQ(post("tx_type=14&tx_info=" + std::string(70000, 'x')).status, 413);
  // far over the limit: the answer still arrives whole (the rest of the body is read and
  // dropped, never a reset under the reply)
  const HttpResult big = post("tx_type=14&tx_info=" + std::string(2 << 20, 'x'));
  EXPECT_EQ(big.status, 413);
  EXPECT_NE(big.body.find("\"code\":21501"), std::string::npos) << big.body;
  EXPECT_EQ(s.get("/api/v1/nope").status, 404);
  EXPECT_EQ(http(s.port(), "DELETE", "/api/v1/account").status, 405);
  EXPECT_EQ(s.get("/api/v1/account?by=index&value=abc").status, 400);
  EXPECT_EQ(s.get("/api/v1/candles?market_id=0&resolution=2m").status, 400);
  // garbage that is not HTTP at all
  EXPECT_EQ(http(s.port(), "BLAH\x01", "/").status, 400);
  // admin: unsigned snapshot trigger, a deposit signed by someone else
  EXPECT_EQ(http(s.admin_port(), "POST", "/admin/snapshot").status, 401);
  // nothing changed: one resting order, nonce 1
  simdjson::dom::parser p;
  auto acct = p.parse(s.get("/api/v1/account?by=index&value=5").body).value()["accounts"].at(0);
  EXPECT_EQ(num(acct, "total_order_count"), 1);
  EXPECT_EQ(str(acct, "collateral"), "10000.000000");
  EXPECT_EQ(num(p.parse(s.get("/api/v1/nextNonce?account_index=5&api_key_index=0").body).value(),
                "nonce"),
            1);
  EXPECT_EQ(s.get("/health/live").status, 200);
  EXPECT_EQ(s.stop(), 0) << s.log();
}

TEST(Api, pipelined_nonces_pass_without_waiting_for_replies) {
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  Trader t(7);
  ASSERT_EQ(s.deposit(t.account, 10'000'000'000, t.pk).status, 200);
  // n, n+1, n+2 on three connections at once, before any reply.
  std::vector<std::thread> th;
  std::vector<HttpResult> res(3);
  std::vector<Tx> txs;
  for (int i = 0; i < 3; ++i) txs.push_back(t.order(0, true, 1000, 310000 + i * 100));
  for (int i = 0; i < 3; ++i) th.emplace_back([&, i] { res[i] = s.send(txs[i], t.sk); });
  for (auto& x : th) x.join();
  // Arrival order is up to the kernel: nonces that arrive before their predecessor are a real
  // gap and are refused; a retry after the others then passes.
  int ok = 0;
  for (int i = 0; i < 3; ++i) ok += res[i].status == 200;
  for (int i = 0; i < 3 && ok < 3; ++i)
    if (res[i].status != 200) ok += s.send(txs[i], t.sk).status == 200;
  EXPECT_EQ(ok, 3);
  // strictly pipelined on one keep-alive connection: send all three, then read three replies
  std::string wire;
  for (int i = 0; i < 3; ++i) {
    const Tx tx = t.order(0, true, 1000, 311000 + i * 100);
    const api::Signature sig = api::sign_tx(tx, 304, t.sk);
    const std::string body = "tx_type=14&tx_info=" + urlencode(api::tx_info_json(tx, &sig));
    wire +=
        "POST /api/v1/sendTx HTTP/1.1\r\nHost: x\r\nContent-Type: "
        "application/x-www-form-urlencoded\r\n"
        "Content-Length: " +
        std::to_string(body.size()) + "\r\n" + (i == 2 ? "Connection: close\r\n" : "") + "\r\n" +
        body;
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(s.port()));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(::send(fd, wire.data(), wire.size(), MSG_NOSIGNAL), static_cast<ssize_t>(wire.size()));
  std::string resp;
  char buf[8192];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;)
    resp.append(buf, static_cast<size_t>(n));
  ::close(fd);
  size_t executed = 0;
  for (size_t p = 0; (p = resp.find("\"status\":\"executed\"", p)) != std::string::npos; ++p)
    ++executed;
  EXPECT_EQ(executed, 3u) << resp;
  EXPECT_EQ(s.stop(), 0) << s.log();
}

TEST(Api, ccxt_reads_the_same_values_as_the_server_state) {
  // ccxt is installed under build/ccxt (scripts/setup.sh); the script runs beside it.
  const std::string dir = std::string(TACHYON_SOURCE_DIR) + "/build/ccxt";
  ASSERT_TRUE(std::filesystem::exists(dir + "/node_modules/ccxt/package.json"))
      << "ccxt is not installed: run scripts/setup.sh (npm ci in build/ccxt)";
  std::filesystem::copy_file(std::string(TACHYON_SOURCE_DIR) + "/tests/api/ccxt/acceptance.mjs",
                             dir + "/acceptance.mjs",
                             std::filesystem::copy_options::overwrite_existing);
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  Scene sc;
  sc.build(s);
  simdjson::dom::parser p;
  // Expected values from the server's own state (REST), checked above against the txs.
  auto acct = parse(p, s.get("/api/v1/account?by=index&value=4").body)["accounts"].at(0);
  const std::string total = str(acct, "collateral"), avail = str(acct, "available_balance");
  std::string candle;
  {
    simdjson::dom::parser p2;
    auto cs = parse(p2, s.get("/api/v1/candles?market_id=0&resolution=1m&count_back=1").body)["c"];
    auto c = cs.at(0);
    candle = "{\"open\":" + std::to_string(double(c["o"])) +
             ",\"high\":" + std::to_string(double(c["h"])) +
             ",\"low\":" + std::to_string(double(c["l"])) +
             ",\"close\":" + std::to_string(double(c["c"])) +
             ",\"volume\":" + std::to_string(double(c["v"])) + "}";
  }
  std::string trades = "[", mine = "[";
  {
    simdjson::dom::parser p3;
    auto ts = parse(p3, s.get("/api/v1/recentTrades?market_id=0").body)["trades"];
    std::vector<std::string> rows;
    for (auto t : ts) {
      const std::string row = "{\"id\":\"" + std::to_string(num(t, "trade_id")) +
                              "\",\"price\":" + str(t, "price") + ",\"amount\":" + str(t, "size") +
                              ",\"side\":\"" + (bool(t["is_maker_ask"]) ? "buy" : "sell") + "\"}";
      rows.insert(rows.begin(), row);  // oldest first
    }
    for (size_t i = 0; i < rows.size(); ++i) {
      trades += (i ? "," : "") + rows[i];
      mine += (i ? "," : "") + rows[i];
    }
  }
  trades += "]";
  mine += "]";
  const std::string expect =
      "{\"http\":\"http://127.0.0.1:" + std::to_string(s.port()) +
      "\",\"ws\":\"ws://127.0.0.1:" + std::to_string(s.port()) +
      "/stream\",\"accountIndex\":4,\"auth\":\"" +
      api::make_auth_token(now_ms() / 1000 + 600, 4, 0, 304, sc.taker.sk) +
      "\",\"markets\":[{\"market_id\":0,\"symbol\":\"ETH\",\"size_decimals\":4,\"price_decimals\":"
      "2},"
      "{\"market_id\":1,\"symbol\":\"BTC\",\"size_decimals\":5,\"price_decimals\":1}],\"market_"
      "id\":0,"
      "\"book\":{\"bids\":[[2990,1.2],[2980,0.5]],\"asks\":[[3010,0.6],[3020,2]]},"
      "\"last_trade_price\":2990,\"trades\":" +
      trades + ",\"my_trades\":" + mine + ",\"balance\":{\"total\":" + total +
      ",\"free\":" + avail +
      "},"
      "\"positions\":[{\"symbol\":\"ETH/"
      "USDC:USDC\",\"side\":\"long\",\"contracts\":0.1,\"entryPrice\":3010}],"
      "\"candle_1m\":" +
      candle + "}";
  const std::string path = s.data_dir() + "/expect.json";
  std::ofstream(path) << expect;
  const std::string cmd = "cd " + dir + " && node acceptance.mjs " + path + " 2>&1";
  std::string out;
  const int rc = run_program(cmd, out);
  EXPECT_EQ(rc, 0) << out << "\nexpect.json: " << expect;
  EXPECT_EQ(out.find("FAIL"), std::string::npos) << out;
  EXPECT_EQ(s.stop(), 0) << s.log();
}

TEST(Api, a_client_following_the_lighter_sdk_ws_rules_handles_every_frame) {
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  const std::string script = std::string(TACHYON_SOURCE_DIR) + "/tests/api/sdk_ws_client.py";
  const std::string cli =
      std::filesystem::path(TACHYON_BIN).parent_path().string() + "/tachyon-cli";
  const std::string port = std::to_string(s.port()), admin = std::to_string(s.admin_port());
  const std::string cmd = "/usr/bin/python3 " + script + " --http http://127.0.0.1:" + port +
                          " --admin http://127.0.0.1:" + admin + " --ws ws://127.0.0.1:" + port +
                          "/stream --cli " + cli + " --data-dir " + s.data_dir() + " 2>&1";
  std::string out;
  const int rc = run_program(cmd, out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("PASS sdk ws client"), std::string::npos) << out;
  EXPECT_EQ(s.stop(), 0) << s.log();
}

}  // namespace
}  // namespace tachyon::testing
