// The WebSocket protocol against the real server with a Beast client: greeting, snapshot then
// deltas with nonce continuity and absolute sizes, checksum, errors with codes, ping/pong,
// sendtx with the id echoed, auth on private channels, unsubscribe, subscription limits.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <zlib.h>

#include "api/api_support.hpp"
#include "api/ws_client.hpp"

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
