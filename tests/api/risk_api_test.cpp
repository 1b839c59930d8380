// The risk lifecycle through the real server: funding paid by the server's own clock and
// shown by /funding-rates, /fundings, market_stats and positions; an operator halting and resuming
// a market over the admin port; the circuit breaker tripped by an oracle move; a liquidation on
// the trade channel's liquidation_trades. Every wait is on a pushed frame, with a deadline.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "api/api_support.hpp"
#include "api/ws_client.hpp"

namespace tachyon::testing {
namespace {

// The value of "key":<number or string> in a JSON text, as text ("" if absent).
std::string field(const std::string& json, const std::string& key, size_t from = 0) {
  const std::string k = "\"" + key + "\":";
  size_t p = json.find(k, from);
  if (p == std::string::npos) return "";
  p += k.size();
  if (json[p] == '"') {
    const size_t e = json.find('"', p + 1);
    return json.substr(p + 1, e - p - 1);
  }
  const size_t e = json.find_first_of(",}]", p);
  return json.substr(p, e - p);
}

Tx set_index(MarketId m, Ticks px) {
  Tx tx;
  tx.h.type = TxType::kSetIndexPrice;
  tx.set_index.market = m;
  tx.set_index.index_price = px;
  return tx;
}

Tx set_status(MarketId m, MarketStatus st) {
  Tx tx;
  tx.h.type = TxType::kSetMarketStatus;
  tx.market_status.market = m;
  tx.market_status.status = st;
  return tx;
}

TEST(RiskApi, funding_is_paid_by_the_server_clock_and_shown_everywhere) {
  // A sample every 100 ms, a payment every second (the minimum interval).
  ConfigFile cfg({{"funding_sample_ms = 60000", "funding_sample_ms = 100"},
                  {"funding_interval_ms = 3600000", "funding_interval_ms = 1000"}});
  Server s(cfg.args());
  ASSERT_TRUE(s.ready()) << s.log();
  Trader maker(3), taker(4);
  ASSERT_EQ(s.deposit(maker.account, 100'000'000'000, maker.pk).status, 200);
  ASSERT_EQ(s.deposit(taker.account, 100'000'000'000, taker.pk).status, 200);
  // taker long 1 ETH, maker short 1 ETH at 3000.00; the book is empty afterwards, so the premium
  // is zero and the rate is the interest rate: clamp(0 + clamp(0.01% − 0, ±0.05%), ±4%) / 8.
  ASSERT_EQ(s.send(maker.order(0, true, 10'000, 300'000), maker.sk).status, 200);
  ASSERT_EQ(s.send(taker.order(0, false, 10'000, 300'000, TimeInForce::kIoc), taker.sk).status,
            200);
  WsClient c(s.port());
  c.recv();  // connected
  c.send(R"({"type":"subscribe","channel":"market_stats/0"})");
  std::string paid;
  for (int i = 0; i < 400 && paid.empty(); ++i) {
    const std::string f = c.recv();
    ASSERT_FALSE(f.empty()) << "no market_stats push with a funding payment";
    const std::string ts = field(f, "funding_timestamp");
    if (!ts.empty() && ts != "0") paid = f;
  }
  EXPECT_EQ(field(paid, "funding_rate"), "0.0012500") << paid;  // percent: 1.25e-5 per period
  EXPECT_EQ(field(paid, "current_funding_rate"), "0.0012500") << paid;
  EXPECT_EQ(field(paid, "funding_clamp_small"), "0.0500") << paid;
  const HttpResult rates = s.get("/api/v1/funding-rates");
  EXPECT_NE(
      rates.body.find(R"("market_id":0,"exchange":"lighter","symbol":"ETH","rate":0.000012500)"),
      std::string::npos)
      << rates.body;
  const HttpResult hist = s.get("/api/v1/fundings?market_id=0&resolution=1h&count_back=5");
  ASSERT_EQ(hist.status, 200) << hist.body;
  // 1 ETH x 3000.00 x 0.00125% = 0.0375 USDC a payment, paid by the long side
  EXPECT_NE(hist.body.find(R"("value":"0.037500","rate":"0.0012500","direction":"long")"),
            std::string::npos)
      << hist.body;
  EXPECT_EQ(s.get("/api/v1/fundings").status, 400);
  // positions carry what each side paid: the long a positive multiple of 0.0375, the short
  // the same amount received
  const std::string lng = s.get("/api/v1/account?by=index&value=4").body;
  const std::string sht = s.get("/api/v1/account?by=index&value=3").body;
  const std::string paid_long = field(lng, "total_funding_paid_out");
  const std::string paid_short = field(sht, "total_funding_paid_out");
  ASSERT_FALSE(paid_long.empty()) << lng;
  EXPECT_GT(std::stod(paid_long), 0.0) << lng;
  EXPECT_LT(std::stod(paid_short), 0.0) << sht;
  EXPECT_EQ(s.stop(), 0) << s.log();
}

TEST(RiskApi, the_operator_halts_and_resumes_a_market_over_the_admin_port) {
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  Trader t(3);
  ASSERT_EQ(s.deposit(t.account, 100'000'000'000, t.pk).status, 200);
  // a user cannot send an operator tx to the public port
  Tx halt = set_status(0, MarketStatus::kHalted);
  EXPECT_NE(s.send(halt, t.sk).body.find("21"), std::string::npos);
  ASSERT_EQ(s.op(halt).status, 200);
  EXPECT_EQ(field(s.get("/api/v1/orderBookDetails?market_id=0").body, "status"), "inactive");
  const HttpResult refused = s.send(t.order(0, false, 1000, 299'000), t.sk);
  EXPECT_NE(refused.body.find("21605"), std::string::npos) << refused.body;
  t.nonce--;  // refused: the nonce was not used
  ASSERT_EQ(s.op(set_status(0, MarketStatus::kActive)).status, 200);
  EXPECT_EQ(field(s.get("/api/v1/orderBookDetails?market_id=0").body, "status"), "active");
  const HttpResult ok = s.send(t.order(0, false, 1000, 299'000), t.sk);
  EXPECT_EQ(field(ok.body, "code"), "200") << ok.body;
  EXPECT_EQ(s.stop(), 0) << s.log();
}

TEST(RiskApi, an_oracle_jump_trips_the_circuit_breaker_to_post_only) {
  Server s;  // the embedded markets: breaker_band 2000 (20%) within 60 s
  ASSERT_TRUE(s.ready()) << s.log();
  Trader t(3);
  ASSERT_EQ(s.deposit(t.account, 100'000'000'000, t.pk).status, 200);
  WsClient c(s.port());
  c.recv();
  c.send(R"({"type":"subscribe","channel":"market_stats/0"})");
  c.recv_until("subscribed/market_stats");
  ASSERT_EQ(s.op(set_index(0, 330'000)).status, 200);  // +10%: within the band
  ASSERT_EQ(s.op(set_index(0, 400'000)).status, 200);  // +33% in the window: trips it
  const std::string moved = c.recv_until("\"index_price\":\"4000.00\"");
  ASSERT_FALSE(moved.empty());
  EXPECT_EQ(field(s.get("/api/v1/orderBookDetails?market_id=0").body, "status"), "active");
  const HttpResult ioc = s.send(t.order(0, false, 1000, 399'000, TimeInForce::kIoc), t.sk);
  EXPECT_NE(ioc.body.find("21605"), std::string::npos) << ioc.body;
  t.nonce--;
  const HttpResult post = s.send(t.order(0, false, 1000, 399'000, TimeInForce::kPostOnly), t.sk);
  EXPECT_EQ(field(post.body, "code"), "200") << post.body;
  EXPECT_EQ(s.stop(), 0) << s.log();
}

TEST(RiskApi, a_liquidation_shows_in_liquidation_trades) {
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  Trader maker(3), victim(4);
  ASSERT_EQ(s.deposit(maker.account, 1'000'000'000'000, maker.pk).status, 200);
  ASSERT_EQ(s.deposit(victim.account, 200'000'000, victim.pk).status, 200);  // 200 USDC
  // victim: long 1 ETH at 3000.00 with 200 USDC (15x); the maker keeps bids under it
  ASSERT_EQ(s.send(maker.order(0, true, 10'000, 300'000), maker.sk).status, 200);
  ASSERT_EQ(s.send(victim.order(0, false, 10'000, 300'000, TimeInForce::kIoc), victim.sk).status,
            200);
  ASSERT_EQ(s.send(maker.order(0, false, 20'000, 299'000), maker.sk).status, 200);
  WsClient c(s.port());
  c.recv();
  c.send(R"({"type":"subscribe","channel":"trade/0"})");
  c.recv_until("subscribed/trade");
  // index 2830.00 (no asks: mark = index): TAV ≈ 200 − 170 = 30 USDC < MMR 1.2% ≈ 34 USDC
  ASSERT_EQ(s.op(set_index(0, 283'000)).status, 200);
  const std::string f = c.recv_until("\"type\":\"liquidation\"");
  ASSERT_FALSE(f.empty()) << "no liquidation trade pushed";
  const size_t liq = f.find("\"liquidation_trades\":[");
  ASSERT_NE(liq, std::string::npos) << f;
  EXPECT_EQ(field(f, "type", liq), "liquidation") << f;
  EXPECT_EQ(field(f, "price", liq), "2990.00") << f;
  EXPECT_EQ(field(f, "ask_account_id", liq), "4") << f;
  EXPECT_EQ(field(f, "size", liq), "1.0000") << f;
  const std::string acct = s.get("/api/v1/account?by=index&value=4").body;
  // flat; 200 − 0.90 taker fee − 10.00 loss − 29.90 liquidation fee (1% of the fill: it beat the
  // zero price by far more) = 159.20 USDC
  EXPECT_NE(acct.find("\"positions\":[]"), std::string::npos) << acct;
  EXPECT_EQ(field(acct, "collateral"), "159.200000") << acct;
  EXPECT_EQ(s.stop(), 0) << s.log();
}

// Isolated margin over sendTx: UpdateLeverage margin mode 1, a fill that moves the initial margin
// into the position, UpdateMargin in (accepted) and out (refused by the dry-run), /account showing
// margin_mode and allocated_margin, and a crash that liquidates the position alone.
TEST(RiskApi, an_isolated_position_over_rest_risks_only_its_allocated_margin) {
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  Trader maker(3), t(4);
  ASSERT_EQ(s.deposit(maker.account, 1'000'000'000'000, maker.pk).status, 200);
  ASSERT_EQ(s.deposit(t.account, 1'000'000'000, t.pk).status, 200);  // 1,000 USDC
  auto user_tx = [&](TxType type) {
    Tx tx;
    tx.h.type = type;
    tx.h.account = t.account;
    tx.h.nonce = t.nonce++;
    return tx;
  };
  Tx lev = user_tx(TxType::kUpdateLeverage);
  lev.leverage.market = 0;
  lev.leverage.imf = 1000;  // 10x
  lev.leverage.margin_mode = 1;
  ASSERT_EQ(s.send(lev, t.sk).status, 200);
  ASSERT_EQ(s.send(maker.order(0, true, 10'000, 300'000), maker.sk).status, 200);
  ASSERT_EQ(s.send(t.order(0, false, 10'000, 300'000, TimeInForce::kIoc), t.sk).status, 200);
  ASSERT_EQ(s.send(maker.order(0, false, 10'000, 290'000), maker.sk).status, 200);
  // 1,000 − 0.90 taker fee − 300 initial margin (1 ETH × 3000.00 × 10%) moved into the position
  auto account = [&] { return s.get("/api/v1/account?by=index&value=4").body; };
  std::string acct = account();
  EXPECT_EQ(field(acct, "collateral"), "699.100000") << acct;
  EXPECT_EQ(field(acct, "margin_mode", acct.find("\"positions\"")), "1") << acct;
  EXPECT_EQ(field(acct, "allocated_margin"), "300.000000") << acct;
  Tx add = user_tx(TxType::kUpdateMargin);
  add.margin.market = 0;
  add.margin.direction = kMarginAdd;
  add.margin.amount = 50'000'000;
  EXPECT_EQ(s.send(add, t.sk).status, 200);
  Tx out = user_tx(TxType::kUpdateMargin);
  out.margin.market = 0;
  out.margin.direction = kMarginRemove;
  out.margin.amount = 400'000'000;  // more than the position holds
  EXPECT_EQ(field(s.send(out, t.sk).body, "code"), "21739");
  --t.nonce;  // refused by the dry-run: the nonce was not used
  acct = account();
  EXPECT_EQ(field(acct, "collateral"), "649.100000") << acct;
  EXPECT_EQ(field(acct, "allocated_margin"), "350.000000") << acct;
  // index 2600.00: the position's value is 350 − 400 < 0, far under its close-out requirement;
  // it is closed at its bankruptcy price and the cross collateral stays as it was.
  ASSERT_EQ(s.op(set_index(0, 260'000)).status, 200);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (account().find("\"positions\":[]") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
  }
  acct = account();
  EXPECT_NE(acct.find("\"positions\":[]"), std::string::npos) << acct;
  EXPECT_EQ(field(acct, "collateral"), "649.100000") << acct;
  EXPECT_EQ(s.stop(), 0) << s.log();
}

// The account_all_orders/{a} snapshot a trader gets on subscribing with its auth token.
std::string orders_snapshot(Server& s, const Trader& t) {
  WsClient c(s.port());
  c.recv();
  const std::string tok = api::make_auth_token(now_ms() / 1000 + 600, t.account, 0, 304, t.sk);
  c.send(R"({"type":"subscribe","channel":"account_all_orders/)" + std::to_string(t.account) +
         R"(","auth":")" + tok + "\"}");
  return c.recv_until("subscribed/account_all_orders");
}

// A TWAP over sendTx: dry-run and engine accept it, its first slice trades at once, and the
// account's order list shows it open, with the time its next slice is due.
TEST(RiskApi, a_twap_over_rest_slices_at_once_and_shows_when_the_next_slice_is_due) {
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  Trader maker(4), t(3);
  for (Trader* x : {&maker, &t})
    ASSERT_EQ(s.deposit(x->account, 100'000'000'000, x->pk).status, 200);
  ASSERT_EQ(field(s.send(maker.order(0, true, 10'000, 301'000), maker.sk).body, "code"), "200");
  Tx tw = t.order(0, false, 5'000, 310'000);  // 0.5 ETH over 10 minutes: 20 slices of 0.025
  tw.order.type = OrderType::kTwap;
  tw.order.order_expiry_ms = now_ms() + 600'000;
  const HttpResult r = s.send(tw, t.sk);
  ASSERT_EQ(field(r.body, "code"), "200") << r.body;
  const std::string acct = s.get("/api/v1/account?by=index&value=3").body;
  EXPECT_NE(acct.find("\"position\":\"0.0250\""), std::string::npos) << acct;
  const std::string snap = orders_snapshot(s, t);
  EXPECT_NE(snap.find("\"type\":\"twap\""), std::string::npos) << snap;
  EXPECT_NE(snap.find("\"status\":\"open\""), std::string::npos) << snap;
  EXPECT_NE(snap.find("\"base_size\":4750"), std::string::npos) << snap;  // what is left
  EXPECT_EQ(snap.find("\"trigger_time\":0"), std::string::npos) << snap;
  // a TWAP as IOC is refused by the dry-run with its code
  Tx ioc = t.order(0, false, 5'000, 310'000, TimeInForce::kIoc);
  ioc.order.type = OrderType::kTwap;
  const HttpResult bad = s.send(ioc, t.sk);
  EXPECT_NE(bad.body.find(std::to_string(reject_code(Reject::kInvalidTimeInForce))),
            std::string::npos)
      << bad.body;
  EXPECT_EQ(s.stop(), 0) << s.log();
}

TEST(RiskApi, an_otoco_group_over_rest_shows_its_waiting_children) {
  Server s;
  ASSERT_TRUE(s.ready()) << s.log();
  Trader t(3);
  ASSERT_EQ(s.deposit(t.account, 100'000'000'000, t.pk).status, 200);
  Tx g;
  g.h.type = TxType::kCreateGroupedOrders;
  g.h.account = t.account;
  g.h.nonce = t.nonce++;
  g.grouped.grouping = Grouping::kOtoco;
  g.grouped.count = 3;
  g.grouped.orders[0] = t.order(0, false, 10'000, 295'000).order;  // buy 1 ETH at 2950.00
  t.nonce--;  // order() counted a nonce the group does not use
  for (int k = 1; k <= 2; ++k) {
    CreateOrderTx& c = g.grouped.orders[k];
    c = g.grouped.orders[0];
    c.is_ask = 1;
    c.reduce_only = 1;
    c.base_amount = 0;
    c.tif = TimeInForce::kIoc;
    c.type = k == 1 ? OrderType::kStopLoss : OrderType::kTakeProfit;
    c.trigger_price = k == 1 ? 280'000 : 320'000;
    c.price = k == 1 ? 270'000 : 310'000;
  }
  const HttpResult r = s.send(g, t.sk);
  ASSERT_EQ(field(r.body, "code"), "200") << r.body;
  const std::string snap = orders_snapshot(s, t);
  EXPECT_NE(snap.find("\"trigger_status\":\"parent-order\""), std::string::npos) << snap;
  EXPECT_NE(snap.find("\"type\":\"stop-loss\""), std::string::npos) << snap;
  EXPECT_NE(snap.find("\"status\":\"pending\""), std::string::npos) << snap;
  // The primary names both children; each child names the other, which it cancels.
  const uint64_t primary = std::stoull(field(r.body, "order_id"));
  auto order_json = [&](uint64_t id) {
    const size_t at = snap.find("{\"order_index\":" + std::to_string(id) + ",");
    return at == std::string::npos ? std::string() : snap.substr(at, snap.find('}', at) - at);
  };
  auto link = [](const std::string& key, uint64_t id) {
    return "\"" + key + "\":\"" + std::to_string(id) + "\"";
  };
  const std::string p = order_json(primary), c1 = order_json(primary + 1),
                    c2 = order_json(primary + 2);
  EXPECT_NE(p.find(link("to_trigger_order_id_0", primary + 1)), std::string::npos) << snap;
  EXPECT_NE(p.find(link("to_trigger_order_id_1", primary + 2)), std::string::npos) << snap;
  EXPECT_NE(p.find(link("to_cancel_order_id_0", 0)), std::string::npos) << snap;
  EXPECT_NE(c1.find(link("to_cancel_order_id_0", primary + 2)), std::string::npos) << snap;
  EXPECT_NE(c2.find(link("to_cancel_order_id_0", primary + 1)), std::string::npos) << snap;
  EXPECT_NE(c1.find(link("to_trigger_order_id_0", 0)), std::string::npos) << snap;
  EXPECT_EQ(c1.find("\"block_height\":0,"), std::string::npos) << snap;
  // Orders that are not an array, and a malformed group, are refused with their codes
  const HttpResult not_array =
      http(s.port(), "POST", "/api/v1/sendTx",
           "tx_type=28&tx_info=" + urlencode(R"({"AccountIndex":3,"ApiKeyIndex":0,"Orders":5})"));
  EXPECT_NE(not_array.body.find("21501"), std::string::npos) << not_array.body;
  EXPECT_NE(not_array.body.find("Orders must be an array"), std::string::npos) << not_array.body;
  g.h.nonce = t.nonce;
  g.grouped.count = 2;  // OTOCO needs three
  g.grouped.orders[2] = CreateOrderTx{};
  const HttpResult bad = s.send(g, t.sk);
  EXPECT_NE(bad.body.find("21741"), std::string::npos) << bad.body;
  EXPECT_EQ(s.stop(), 0) << s.log();
}

}  // namespace
}  // namespace tachyon::testing
