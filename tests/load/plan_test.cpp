// tachyon-load's plans: Poisson arrivals at the offered rate, per-trader nonces in order, cancels
// and modifies only of the trader's own live quotes, prices and sizes the market takes, frames
// that decode back to the planned tx with a valid signature, and the LOBSTER mapping.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <map>
#include <set>

#include "plan.hpp"
#include "support/lobster_data.hpp"
#include "tachyon/api/tx_info.hpp"

namespace tachyon::load {
namespace {

MarketInfo eth() {
  MarketInfo m;
  m.id = 0;
  m.price_decimals = 2;
  m.size_decimals = 4;
  m.mid = 300000;
  m.min_lots = 50;
  m.min_quote = 10'000'000;
  return m;
}

std::vector<Trader> traders(unsigned makers, unsigned takers) {
  std::vector<Trader> t(makers + takers);
  for (size_t i = 0; i < t.size(); ++i) {
    t[i].account = 1000 + i;
    t[i].maker = i < makers;
    api::keygen(t[i].pk, t[i].sk);
  }
  return t;
}

TEST(LoadPlan, MixedArrivalsAtTheRateWithOrderedNoncesAndOwnQuotesOnly) {
  api::crypto_init();
  auto tr = traders(8, 8);
  MixConfig c;
  c.rate = 2000;
  c.seconds = 5;
  c.seed = 42;
  const MarketInfo m = eth();
  const auto plan = plan_mixed(tr, m, c);
  // Poisson: mean 10000, sd 100.
  EXPECT_NEAR(double(plan.size()), 10000.0, 500.0);
  std::map<uint32_t, int64_t> next_nonce;
  std::map<uint32_t, std::map<uint64_t, bool>> live;  // coi -> is ask
  std::map<Kind, size_t> kinds;
  int64_t last_at = -1;
  for (const Planned& p : plan) {
    ASSERT_GE(p.at_ns, last_at);
    ASSERT_LT(p.at_ns, 5'000'000'000);
    last_at = p.at_ns;
    ++kinds[p.kind];
    const Tx& tx = p.tx;
    EXPECT_EQ(tx.h.account, tr[p.trader].account);
    EXPECT_EQ(tx.h.nonce, next_nonce[p.trader]++);
    EXPECT_TRUE(tx.h.flags & kTxFlagSkipNonce);
    switch (p.kind) {
      case Kind::kQuote:
        ASSERT_EQ(tx.h.type, TxType::kCreateOrder);
        EXPECT_TRUE(tr[p.trader].maker);
        EXPECT_EQ(tx.order.tif, TimeInForce::kGoodTillTime);
        EXPECT_TRUE(live[p.trader].emplace(tx.order.client_order_index, tx.order.is_ask).second);
        EXPECT_GE(tx.order.base_amount * tx.order.price * 1, int64_t{10'000'000});  // >= $10
        EXPECT_GE(tx.order.base_amount, m.min_lots);
        EXPECT_LE(std::abs(tx.order.price - m.mid), m.mid / 50 + 12);
        EXPECT_GE(std::abs(tx.order.price - p.mid), 3);  // quotes rest: they never cross the mid
        EXPECT_EQ(tx.order.price > p.mid, tx.order.is_ask != 0);
        break;
      case Kind::kCancel:
        ASSERT_EQ(tx.h.type, TxType::kCancelOrder);
        EXPECT_EQ(live[p.trader].erase(tx.cancel.index), 1u) << "not the trader's live quote";
        break;
      case Kind::kModify:
        ASSERT_EQ(tx.h.type, TxType::kModifyOrder);
        ASSERT_EQ(live[p.trader].count(tx.modify.index), 1u);
        // Re-priced on its own side of the mid: a modify never turns a quote into a taker.
        if (live[p.trader][tx.modify.index]) {
          EXPECT_GE(tx.modify.price, p.mid + 3);
        } else {
          EXPECT_LE(tx.modify.price, p.mid - 3);
        }
        EXPECT_GE(tx.modify.base_amount, m.min_lots);
        break;
      case Kind::kTake:
        ASSERT_EQ(tx.h.type, TxType::kCreateOrder);
        EXPECT_TRUE(p.expects_fill);
        EXPECT_EQ(tx.order.tif, TimeInForce::kIoc);
        break;
    }
  }
  for (Kind k : {Kind::kQuote, Kind::kCancel, Kind::kModify, Kind::kTake}) {
    EXPECT_GT(kinds[k], plan.size() / 20) << int(k);
  }
  EXPECT_NEAR(double(kinds[Kind::kTake]) / double(plan.size()), c.take_share, 0.03);
}

TEST(LoadPlan, SignedFramesDecodeToThePlannedTxWithAValidSignature) {
  api::crypto_init();
  auto tr = traders(2, 2);
  MixConfig c;
  c.rate = 500;
  c.seconds = 1;
  auto plan = plan_mixed(tr, eth(), c);
  ASSERT_FALSE(plan.empty());
  sign_all(plan, tr, 304, 2);
  simdjson::dom::parser parser;
  for (size_t i = 0; i < plan.size(); ++i) {
    simdjson::dom::element doc;
    ASSERT_EQ(parser.parse(plan[i].frame).get(doc), simdjson::SUCCESS) << plan[i].frame;
    std::string_view type, id, info;
    int64_t tx_type = 0;
    ASSERT_EQ(doc["type"].get(type), simdjson::SUCCESS);
    EXPECT_EQ(type, "jsonapi/sendtx");
    ASSERT_EQ(doc["data"]["id"].get(id), simdjson::SUCCESS);
    EXPECT_EQ(id, std::to_string(i));
    ASSERT_EQ(doc["data"]["tx_type"].get(tx_type), simdjson::SUCCESS);
    ASSERT_EQ(doc["data"]["tx_info"].get(info), simdjson::SUCCESS);
    api::SignedTx st;
    std::string err;
    ASSERT_EQ(api::parse_tx_info(static_cast<int>(tx_type), info, st, err), Reject::kOk) << err;
    ASSERT_TRUE(st.has_sig);
    EXPECT_TRUE(api::verify_tx(st.tx, 304, st.sig, tr[plan[i].trader].pk));
    EXPECT_FALSE(api::verify_tx(st.tx, 305, st.sig, tr[plan[i].trader].pk));  // other chain
    EXPECT_EQ(st.tx.h.nonce, plan[i].tx.h.nonce);
    EXPECT_EQ(st.tx.h.account, plan[i].tx.h.account);
  }
}

TEST(LoadPlan, LobsterMessagesMapToAddsCancelsModifiesAndTakers) {
  const std::string file =
      std::string(TACHYON_LOBSTER_DIR) + "/AMZN_2012-06-21_34200000_57600000_message_1.csv.gz";
  std::string err;
  const auto msgs = testing::lobster::load_messages(file, &err);
  ASSERT_FALSE(msgs.empty()) << err;
  auto tr = traders(6, 3);
  LobsterConfig c;
  c.messages = file;
  c.speed = 2.0;
  const auto plan = plan_lobster(tr, eth(), c, err);
  ASSERT_FALSE(plan.empty()) << err;
  size_t adds = 0, execs = 0;
  for (const auto& x : msgs) {
    adds += x.type == 1;
    execs += x.type == 4 || x.type == 5;
  }
  std::map<Kind, size_t> kinds;
  int64_t last = -1;
  for (const Planned& p : plan) {
    ++kinds[p.kind];
    EXPECT_GE(p.at_ns, last);
    last = p.at_ns;
    if (p.kind == Kind::kQuote) {
      EXPECT_TRUE(tr[p.trader].maker);
    }
    if (p.kind == Kind::kTake) {
      EXPECT_FALSE(tr[p.trader].maker);
    }
  }
  EXPECT_EQ(kinds[Kind::kQuote], adds);
  EXPECT_EQ(kinds[Kind::kTake], execs);
  EXPECT_GT(kinds[Kind::kCancel], 0u);
  // Twice the recorded pace: the plan lasts half the file's span.
  const double span = double(msgs.back().time_ns - msgs.front().time_ns);
  EXPECT_NEAR(double(plan.back().at_ns), span / 2, span * 0.01);
  LobsterConfig missing;
  missing.messages = "/nonexistent.csv.gz";
  err.clear();
  EXPECT_TRUE(plan_lobster(tr, eth(), missing, err).empty());
  EXPECT_FALSE(err.empty());
}

}  // namespace
}  // namespace tachyon::load
