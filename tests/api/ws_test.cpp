// The WebSocket protocol against the real server with a Beast client: greeting, snapshot then
// deltas with nonce continuity and absolute sizes, checksum, errors with codes, ping/pong,
// sendtx with the id echoed, auth on private channels, unsubscribe, subscription limits.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <zlib.h>

#include "api/api_support.hpp"
#include "api/ws_client.hpp"
#include "tachyon/api/json_writer.hpp"

namespace tachyon::testing {
namespace {

std::string jstr(simdjson::dom::element e, const char* k) {
  std::string_view v;
  return e[k].get_string().get(v) ? "" : std::string(v);
}
int64_t jint(simdjson::dom::element e, const char* k) {
  int64_t v = -1;
  return e[k].get_int64().get(v) ? -1 : v;
}

TEST(Ws, greeting_snapshot_then_deltas_with_continuity_and_checksum) {
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  Trader t(3);
  ASSERT_EQ(s.deposit(t.account, 100'000'000'000, t.pk).status, 200);
  ASSERT_EQ(s.send(t.order(0, true, 10000, 301000), t.sk).status, 200);
  WsClient c(s.port());
  EXPECT_NE(c.recv().find("\"type\":\"connected\""), std::string::npos);
  c.send(R"({"type":"subscribe","channel":"order_book/0"})");
  simdjson::dom::parser p;
  const std::string snap = c.recv_until("subscribed/order_book");
  simdjson::dom::element e = p.parse(snap);
  EXPECT_EQ(jstr(e, "channel"), "order_book:0");
  const int64_t n0 = jint(e["order_book"], "nonce");
  EXPECT_GT(jint(e, "engine_ts_us"), 0);
  EXPECT_LE(jint(e, "engine_ts_us"), jint(e, "sent_ts_us"));
  EXPECT_GT(jint(e, "sent_ts_us"), 0);
  auto asks = e["order_book"]["asks"];
  EXPECT_EQ(jstr(asks.at(0), "price"), "3010.00");
  EXPECT_EQ(jstr(asks.at(0), "size"), "1.0000");
  // a second order at the same price: the delta carries the absolute size of the level
  ASSERT_EQ(s.send(t.order(0, true, 5000, 301000), t.sk).status, 200);
  const std::string upd = c.recv_until("update/order_book");
  simdjson::dom::parser p2;
  simdjson::dom::element u = p2.parse(upd);
  EXPECT_EQ(jint(u["order_book"], "begin_nonce"), n0) << upd;
  EXPECT_GT(jint(u["order_book"], "nonce"), n0);
  EXPECT_EQ(jstr(u["order_book"]["asks"].at(0), "size"), "1.5000") << upd;
  // checksum: CRC32 of "price:size" pairs joined by '|', bids then asks (top 25 each)
  const std::string text = "3010.00:1.5000";
  EXPECT_EQ(
      jint(u["order_book"], "checksum"),
      static_cast<int64_t>(crc32(0, reinterpret_cast<const Bytef*>(text.data()), text.size())));
  // a cancel of everything: size 0 removes the level
  Tx cancel;
  cancel.h.type = TxType::kCancelAllOrders;
  cancel.h.account = t.account;
  cancel.h.nonce = t.nonce++;
  cancel.cancel_all.market = kAllMarkets;
  ASSERT_EQ(s.send(cancel, t.sk).status, 200);
  const std::string gone = c.recv_until("update/order_book");
  EXPECT_NE(gone.find(R"({"price":"3010.00","size":"0.0000"})"), std::string::npos) << gone;
  EXPECT_EQ(s.stop(), 0) << s.log();
}

// A book update is rendered once for all its subscribers; each copy carries its own
// connection's message count ("offset", at the top and in the book), the rest is the same.
TEST(Ws, subscribers_of_a_book_get_the_same_update_each_with_its_own_offset) {
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  Trader t(3);
  ASSERT_EQ(s.deposit(t.account, 100'000'000'000, t.pk).status, 200);
  WsClient early(s.port()), late(s.port());
  early.recv();  // connected
  late.recv();
  early.send(R"({"type":"subscribe","channel":"order_book/0"})");
  early.recv_until("subscribed/order_book");  // offset 1
  ASSERT_EQ(s.send(t.order(0, true, 10000, 301000), t.sk).status, 200);
  early.recv_until("update/order_book");  // offset 2
  late.send(R"({"type":"subscribe","channel":"order_book/0"})");
  late.recv_until("subscribed/order_book");  // offset 1
  ASSERT_EQ(s.send(t.order(0, true, 5000, 302000), t.sk).status, 200);
  const std::string a = early.recv_until("update/order_book"),
                    b = late.recv_until("update/order_book");
  simdjson::dom::parser pa, pb;
  simdjson::dom::element ea = pa.parse(a), eb = pb.parse(b);
  EXPECT_EQ(jint(ea, "offset"), 3) << a;
  EXPECT_EQ(jint(ea["order_book"], "offset"), 3) << a;
  EXPECT_EQ(jint(eb, "offset"), 2) << b;
  EXPECT_EQ(jint(eb["order_book"], "offset"), 2) << b;
  for (const char* k : {"nonce", "begin_nonce", "checksum"})
    EXPECT_EQ(jint(ea["order_book"], k), jint(eb["order_book"], k)) << k;
  EXPECT_EQ(jstr(ea["order_book"]["asks"].at(0), "price"), "3020.00") << a;
  EXPECT_EQ(jstr(eb["order_book"]["asks"].at(0), "price"), "3020.00") << b;
  EXPECT_EQ(s.stop(), 0) << s.log();
}

TEST(Ws, errors_have_codes_and_the_connection_stays_usable) {
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  Trader t(3);
  ASSERT_EQ(s.deposit(t.account, 100'000'000'000, t.pk).status, 200);
  WsClient c(s.port());
  c.recv();  // connected
  c.send("{nope");
  EXPECT_NE(c.recv().find("\"code\":30000"), std::string::npos);
  c.send(R"({"type":"dance"})");
  EXPECT_NE(c.recv().find("\"code\":30001"), std::string::npos);
  c.send(R"({"type":"subscribe","channel":"order_book/77"})");
  EXPECT_NE(c.recv().find("\"code\":30005"), std::string::npos);
  c.send(R"({"type":"subscribe","channel":"candles/0"})");
  EXPECT_NE(c.recv().find("\"code\":30005"), std::string::npos);
  c.send(R"({"type":"subscribe","channel":"trade/0"})");
  EXPECT_NE(c.recv().find("subscribed/trade"), std::string::npos);
  c.send(R"({"type":"subscribe","channel":"trade/0"})");
  EXPECT_NE(c.recv().find("\"code\":30003"), std::string::npos);
  // private channel: refused without a token, accepted with one
  c.send(R"({"type":"subscribe","channel":"account_all_orders/3"})");
  EXPECT_NE(c.recv().find("\"code\":30008"), std::string::npos);
  const std::string tok = api::make_auth_token(now_ms() / 1000 + 600, 3, 0, 304, t.sk);
  c.send(R"({"type":"subscribe","channel":"account_all_orders/3","auth":")" + tok + "\"}");
  EXPECT_NE(c.recv().find("subscribed/account_all_orders"), std::string::npos);
  // JSON ping
  c.send(R"({"type":"ping"})");
  EXPECT_EQ(c.recv_until("pong"), R"({"type":"pong"})");
  // sendtx over WS: the id comes back on success and on failure
  Tx tx = t.order(0, false, 1000, 299000);
  const api::Signature sig = api::sign_tx(tx, 304, t.sk);
  c.send(R"({"type":"jsonapi/sendtx","data":{"id":"abc","tx_type":14,"tx_info":)" +
         api::tx_info_json(tx, &sig) + "}}");
  const std::string ok = c.recv_until("jsonapi/sendtx");
  EXPECT_NE(ok.find("\"id\":\"abc\""), std::string::npos) << ok;
  EXPECT_NE(ok.find("\"tx_hash\":\"" + api::tx_hash_hex(tx, 304) + "\""), std::string::npos) << ok;
  c.send(R"({"type":"jsonapi/sendtx","data":{"id":"replay","tx_type":14,"tx_info":)" +
         api::tx_info_json(tx, &sig) + "}}");
  const std::string bad = c.recv_until("\"id\":\"replay\"");
  EXPECT_NE(bad.find("\"code\":21104"), std::string::npos) << bad;
  c.send(R"({"type":"unsubscribe","channel":"trade/0"})");
  EXPECT_EQ(c.recv_until("unsubscribed"), R"({"type":"unsubscribed","channel":"trade:0"})");
  c.send(R"({"type":"unsubscribe","channel":"trade/0"})");
  EXPECT_NE(c.recv_until("error").find("\"code\":30002"), std::string::npos);
  EXPECT_EQ(s.get("/health/live").status, 200);
  EXPECT_EQ(s.stop(), 0) << s.log();
}

TEST(Ws, subscription_limit_is_enforced) {
  ConfigFile cfg(ConfigFile::Edits{{"max_subscriptions = 100", "max_subscriptions = 2"}});
  Server s(cfg.args());
  ASSERT_TRUE(s.ready()) << s.log();
  WsClient c(s.port());
  c.recv();
  c.send(R"({"type":"subscribe","channel":"trade/0"})");
  c.recv_until("subscribed/trade");
  c.send(R"({"type":"subscribe","channel":"trade/1"})");
  c.recv_until("subscribed/trade");
  c.send(R"({"type":"subscribe","channel":"order_book/0"})");
  EXPECT_NE(c.recv_until("error").find("\"code\":30012"), std::string::npos);
  EXPECT_EQ(s.stop(), 0) << s.log();
}

}  // namespace
}  // namespace tachyon::testing

namespace tachyon::testing {
namespace {

// A cancel right behind its own order in one sendTxBatch: the batch is dry-run whole before any
// of it reaches the sequencer, so the order is only in flight when the cancel is checked. The
// dry-run cannot see it in the published list but knows the key has txs in flight, so it lets
// the cancel through (the sequencer decides). A cancel of an order that never existed is refused.
TEST(Ws, a_cancel_batched_behind_its_order_is_not_refused_by_the_dry_run) {
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  Trader t(8);
  ASSERT_EQ(s.deposit(t.account, 100'000'000'000, t.pk).status, 200);
  auto info = [&](const Tx& tx) {
    const api::Signature sig = api::sign_tx(tx, 304, t.sk);
    std::string out;
    api::JsonWriter(out).str(api::tx_info_json(tx, &sig));  // a JSON string of the tx_info
    return out;
  };
  auto cancel = [&](uint64_t index, int64_t nonce) {
    Tx tx;
    tx.h.type = TxType::kCancelOrder;
    tx.h.account = t.account;
    tx.h.nonce = nonce;
    tx.cancel.market = 0;
    tx.cancel.index = index;
    return tx;
  };
  const Tx order = t.order(0, true, 1000, 301000, TimeInForce::kGoodTillTime, 77);
  const Tx c1 = cancel(77, t.nonce++);
  const HttpResult r = http(s.port(), "POST", "/api/v1/sendTxBatch",
                            "tx_types=" + urlencode("[14,15]") +
                                "&tx_infos=" + urlencode("[" + info(order) + "," + info(c1) + "]"));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("\"status\":\"executed\""), std::string::npos) << r.body;
  const Tx ghost = cancel(999, t.nonce);
  const api::Signature gs = api::sign_tx(ghost, 304, t.sk);
  const HttpResult g2 = http(s.port(), "POST", "/api/v1/sendTx",
                             "tx_type=15&tx_info=" + urlencode(api::tx_info_json(ghost, &gs)));
  EXPECT_NE(g2.body.find("21600"), std::string::npos) << g2.body;
}

// A trade pushed to trade/{m} names the taker tx by its hash, the one sendtx answered with, even
// when another connection (here REST, on any worker) submitted it.
TEST(Ws, a_trade_push_names_the_taker_tx) {
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  Trader maker(9), taker(10);
  ASSERT_EQ(s.deposit(maker.account, 100'000'000'000, maker.pk).status, 200);
  ASSERT_EQ(s.deposit(taker.account, 100'000'000'000, taker.pk).status, 200);
  ASSERT_EQ(
      s.send(maker.order(0, true, 1000, 301000, TimeInForce::kGoodTillTime, 77), maker.sk).status,
      200);
  WsClient c(s.port());
  c.send(R"({"type":"subscribe","channel":"trade/0"})");
  c.recv_until("subscribed/trade");
  const Tx take = taker.order(0, false, 1000, 301000, TimeInForce::kIoc, 88);
  const HttpResult r = s.send(take, taker.sk);
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string hash = api::tx_hash_hex(take, 304);
  EXPECT_NE(r.body.find(hash), std::string::npos) << r.body;
  const std::string push = c.recv_until("update/trade");
  EXPECT_NE(push.find("\"tx_hash\":\"" + hash + "\""), std::string::npos) << push;
  // both sides' client order indices (the maker asked, the taker bid)
  EXPECT_NE(push.find(R"("ask_client_id":77,"ask_client_id_str":"77")"), std::string::npos) << push;
  EXPECT_NE(push.find(R"("bid_client_id":88,"bid_client_id_str":"88")"), std::string::npos) << push;
}

}  // namespace
}  // namespace tachyon::testing
