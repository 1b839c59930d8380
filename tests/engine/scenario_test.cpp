// Scenario tables: one event per line with its expected result. Every reject code the engine can
// give, in the documented precedence (docs/ARCHITECTURE.md "Order checks"), and every tx type.
#include "support/engine_fixture.hpp"

namespace tachyon::testing {
namespace {

constexpr AccountIndex kAlice = 100;
constexpr AccountIndex kBob = 200;
constexpr AccountIndex kCarol = 300;
constexpr MarketId kEth = 0;
constexpr Ticks kPx = 300000;  // 3000.00
constexpr Lots kOne = 10000;   // 1.0000 ETH

class Scenario : public EngineTest {
 protected:
  void SetUp() override {
    run_table({
        {"operator creates ETH at 3000.00",
         [&] { return b.create_market(kEth, demo_market_params(), kPx); }, Reject::kOk},
        {"alice deposits 10,000 USDC", [&] { return b.deposit(kAlice, 10'000 * kUsdc); },
         Reject::kOk},
        {"bob deposits 10,000 USDC", [&] { return b.deposit(kBob, 10'000 * kUsdc); }, Reject::kOk},
    });
  }
  Tx with(Tx tx, std::function<void(Tx&)> f) {
    f(tx);
    return tx;
  }
};

TEST_F(Scenario, envelope_rejects_come_in_precedence_order) {
  run_table({
      {"expired and bad nonce: expiry wins",
       [&] {
         return with(b.limit(kAlice, 7, kEth, kBid, kPx, kOne),
                     [&](Tx& t) { t.h.expired_at_ms = b.now_ms() - 1; });
       },
       Reject::kTxExpired},
      {"unknown account and bad nonce: account wins",
       [&] { return b.limit(999, 7, kEth, kBid, kPx, kOne); }, Reject::kAccountNotFound},
      {"api key 255 is not a key index",
       [&] {
         return with(b.limit(kAlice, 0, kEth, kBid, kPx, kOne),
                     [](Tx& t) { t.h.api_key_index = 255; });
       },
       Reject::kInvalidApiKeyIndex},
      {"unregistered key 5 and bad nonce: key wins",
       [&] {
         return with(b.limit(kAlice, 7, kEth, kBid, kPx, kOne),
                     [](Tx& t) { t.h.api_key_index = 5; });
       },
       Reject::kApiKeyNotFound},
      {"signature checked against an old key version",
       [&] {
         return with(b.limit(kAlice, 7, kEth, kBid, kPx, kOne), [](Tx& t) { t.h.key_version = 0; });
       },
       Reject::kStaleKeyVersion},
      {"nonce 7 when 0 is next", [&] { return b.limit(kAlice, 7, kEth, kBid, kPx, kOne); },
       Reject::kInvalidNonce},
      {"nonce 0 is next", [&] { return b.limit(kAlice, 0, kEth, kBid, kPx, kOne); }, Reject::kOk},
      {"replay of nonce 0", [&] { return b.limit(kAlice, 0, kEth, kBid, kPx, kOne); },
       Reject::kInvalidNonce},
      {"skip-nonce jumps ahead (ccxt's Date.now nonces)",
       [&] {
         return with(b.limit(kAlice, 1'700'000, kEth, kBid, kPx, kOne),
                     [](Tx& t) { t.h.flags = kTxFlagSkipNonce; });
       },
       Reject::kOk},
      {"skip-nonce never goes back",
       [&] {
         return with(b.limit(kAlice, 1'699'999, kEth, kBid, kPx, kOne),
                     [](Tx& t) { t.h.flags = kTxFlagSkipNonce; });
       },
       Reject::kInvalidNonce},
      {"strict +1 after the jump",
       [&] { return b.limit(kAlice, 1'700'001, kEth, kBid, kPx, kOne); }, Reject::kOk},
      {"unknown tx type", [&] { return b.user(static_cast<TxType>(99), kAlice, N(kAlice)); },
       Reject::kUnsupportedTxType},
  });
}

TEST_F(Scenario, operator_transactions_and_their_rejects) {
  MarketParams bad = demo_market_params("BTC");
  bad.mmf = bad.min_imf;                                // maintenance must be below initial
  MarketParams wide = demo_market_params("BTC", 5, 2);  // 7 decimals > 6
  run_table({
      {"operator nonce must be +1",
       [&] {
         auto t = b.set_index(kEth, kPx);
         t.h.nonce += 5;
         return t;
       },
       Reject::kInvalidNonce},
      {"market id 255 is nil", [&] { return b.create_market(255, demo_market_params("BTC"), kPx); },
       Reject::kInvalidMarket},
      {"ETH exists already", [&] { return b.create_market(kEth, demo_market_params(), kPx); },
       Reject::kMarketExists},
      {"mmf >= imf", [&] { return b.create_market(1, bad, kPx); }, Reject::kInvalidMarketConfig},
      {"size+price decimals > 6", [&] { return b.create_market(1, wide, kPx); },
       Reject::kInvalidMarketConfig},
      {"index price 0", [&] { return b.create_market(1, demo_market_params("BTC"), 0); },
       Reject::kInvalidIndexPrice},
      {"BTC created", [&] { return b.create_market(1, demo_market_params("BTC", 5, 1), 600000); },
       Reject::kOk},
      {"update of a missing market", [&] { return b.update_market(7, demo_market_params("X")); },
       Reject::kInvalidMarket},
      {"update may not rename", [&] { return b.update_market(kEth, demo_market_params("ETH2")); },
       Reject::kInvalidMarketConfig},
      {"index of a missing market", [&] { return b.set_index(9, kPx); }, Reject::kInvalidMarket},
      {"index beyond uint32", [&] { return b.set_index(kEth, Ticks{1} << 32); },
       Reject::kInvalidIndexPrice},
      {"index moves to 3100.00", [&] { return b.set_index(kEth, 310000); }, Reject::kOk},
      {"deposit of 0", [&] { return b.deposit(kCarol, 0); }, Reject::kInvalidTransferAmount},
      {"deposit beyond the account range", [&] { return b.deposit(AccountIndex{1} << 48, kUsdc); },
       Reject::kInvalidAccountIndex},
      {"deposit may not create a sub-account index",
       [&] { return b.deposit(kFirstSubAccountIndex + 5, kUsdc); }, Reject::kInvalidAccountIndex},
      {"deposit with key index 255",
       [&] {
         auto t = b.deposit(kCarol, kUsdc);
         t.deposit.api_key_index = 255;
         return t;
       },
       Reject::kInvalidApiKeyIndex},
      {"deposit creates carol", [&] { return b.deposit(kCarol, 5 * kUsdc); }, Reject::kOk},
  });
  EXPECT_EQ(engine.market(kEth)->index_price, 310000);
  EXPECT_EQ(engine.market(kEth)->mark_price, 310000);  // empty book: mark = index
  EXPECT_EQ(collateral(kCarol), 5 * kUsdc);
  EXPECT_EQ(engine.total_deposits(), 20'005 * kUsdc);
}

TEST_F(Scenario, keys_sub_accounts_transfers_and_withdrawals) {
  run_table({
      {"key index 255 cannot be registered",
       [&] { return b.change_key(kAlice, N(kAlice), 255, 7); }, Reject::kInvalidApiKeyIndex},
      {"all-zero public key", [&] { return b.change_key(kAlice, N(kAlice), 3, 0); },
       Reject::kInvalidPubKey},
      {"alice registers key 3", [&] { return b.change_key(kAlice, N(kAlice), 3, 7); }, Reject::kOk},
      {"key 3 signs with version 1, nonce 0",
       [&] {
         auto t = b.withdraw(kAlice, 0, kUsdc);
         t.h.api_key_index = 3;
         return t;
       },
       Reject::kOk},
      {"alice rotates key 3", [&] { return b.change_key(kAlice, N(kAlice), 3, 9); }, Reject::kOk},
      {"a tx verified against key 3 version 1 is now stale",
       [&] {
         auto t = b.withdraw(kAlice, 1, kUsdc);
         t.h.api_key_index = 3;
         return t;
       },
       Reject::kStaleKeyVersion},
      {"the same with version 2 passes (nonce kept across rotation)",
       [&] {
         auto t = b.withdraw(kAlice, 1, kUsdc);
         t.h.api_key_index = 3;
         t.h.key_version = 2;
         return t;
       },
       Reject::kOk},
      {"alice opens a sub-account", [&] { return b.sub_account(kAlice, N(kAlice)); }, Reject::kOk},
      {"transfer of asset 1 (ETH)",
       [&] {
         auto t = b.transfer(kAlice, N(kAlice), kBob, kUsdc);
         t.transfer.asset = 1;
         return t;
       },
       Reject::kInvalidAsset},
      {"transfer of 0", [&] { return b.transfer(kAlice, N(kAlice), kBob, 0); },
       Reject::kInvalidTransferAmount},
      {"negative fee", [&] { return b.transfer(kAlice, N(kAlice), kBob, kUsdc, -1); },
       Reject::kInvalidFee},
      {"to herself", [&] { return b.transfer(kAlice, N(kAlice), kAlice, kUsdc); },
       Reject::kSelfTransfer},
      {"to nobody", [&] { return b.transfer(kAlice, N(kAlice), 4242, kUsdc); },
       Reject::kAccountNotFound},
      {"more than she has", [&] { return b.transfer(kAlice, N(kAlice), kBob, 9'999 * kUsdc); },
       Reject::kInsufficientCollateral},
      {"1,000 USDC to her sub-account, 1 USDC fee",
       [&] { return b.transfer(kAlice, N(kAlice), kFirstSubAccountIndex, 1'000 * kUsdc, kUsdc); },
       Reject::kOk},
      {"the sub-account trades with the copied key (own nonce)",
       [&] { return b.limit(kFirstSubAccountIndex, 0, kEth, kBid, kPx, kOne); }, Reject::kOk},
      {"withdraw of asset 1",
       [&] {
         auto t = b.withdraw(kBob, N(kBob), kUsdc);
         t.withdraw.asset = 1;
         return t;
       },
       Reject::kInvalidAsset},
      {"withdraw of -5", [&] { return b.withdraw(kBob, N(kBob), -5); },
       Reject::kInvalidTransferAmount},
      {"withdraw of more than bob has", [&] { return b.withdraw(kBob, N(kBob), 10'001 * kUsdc); },
       Reject::kInsufficientCollateral},
      {"bob withdraws everything", [&] { return b.withdraw(kBob, N(kBob), 10'000 * kUsdc); },
       Reject::kOk},
  });
  EXPECT_EQ(collateral(kAlice), (10'000 - 2 - 1'001) * kUsdc);
  EXPECT_EQ(collateral(kFirstSubAccountIndex), 1'000 * kUsdc);
  EXPECT_EQ(collateral(engine.config().fee_account), kUsdc);
  EXPECT_EQ(collateral(kBob), 0);
  EXPECT_EQ(engine.account(kFirstSubAccountIndex)->master, kAlice);
  EXPECT_EQ(engine.total_withdrawals(), 10'002 * kUsdc);
}

TEST_F(Scenario, withdrawal_is_limited_to_collateral_free_of_margin) {
  run_table({
      {"alice bids 10 ETH @ 3000 (needs 1,500 USDC at 5%)",
       [&] { return b.limit(kAlice, N(kAlice), kEth, kBid, kPx, 10 * kOne); }, Reject::kOk},
      {"8,501 USDC out would leave less than 1,500",
       [&] { return b.withdraw(kAlice, N(kAlice), 8'501 * kUsdc); },
       Reject::kInsufficientCollateral},
      {"8,500 USDC out is fine", [&] { return b.withdraw(kAlice, N(kAlice), 8'500 * kUsdc); },
       Reject::kOk},
      {"now even 1 micro-USDC is too much", [&] { return b.transfer(kAlice, N(kAlice), kBob, 1); },
       Reject::kInsufficientCollateral},
  });
}

TEST_F(Scenario, order_shape_and_amount_rejects_in_precedence_order) {
  MarketParams p = demo_market_params();
  p.min_base_lots = 100;          // 0.01 ETH
  p.min_quote_usdc = 10 * kUsdc;  // 10 USDC
  run_table({{"operator sets minimums", [&] { return b.update_market(kEth, p); }, Reject::kOk}});
  auto lim = [&](auto f) {
    return [this, f] {
      Tx t = b.limit(kAlice, N(kAlice), kEth, kBid, kPx, kOne);
      f(t.order);
      return t;
    };
  };
  run_table({
      {"market 7 does not exist", lim([](CreateOrderTx& o) { o.market = 7; }),
       Reject::kInvalidMarket},
      {"twap slices are the engine's own",
       lim([](CreateOrderTx& o) { o.type = OrderType::kTwapSub; }), Reject::kInvalidOrderType},
      {"liquidation orders are the engine's own",
       lim([](CreateOrderTx& o) { o.type = OrderType::kLiquidation; }), Reject::kInvalidOrderType},
      {"a stop-loss executes as a market order: IOC only", lim([](CreateOrderTx& o) {
         o.type = OrderType::kStopLoss;
         o.trigger_price = 1;
       }),
       Reject::kInvalidTimeInForce},
      {"a stop-loss-limit needs a trigger price",
       lim([](CreateOrderTx& o) { o.type = OrderType::kStopLossLimit; }), Reject::kInvalidTrigger},
      {"a limit order has none", lim([](CreateOrderTx& o) { o.trigger_price = 5; }),
       Reject::kInvalidTrigger},
      {"time in force 3", lim([](CreateOrderTx& o) { o.tif = static_cast<TimeInForce>(3); }),
       Reject::kInvalidTimeInForce},
      {"is_ask = 2", lim([](CreateOrderTx& o) { o.is_ask = 2; }), Reject::kInvalidTxInfo},
      {"self-trade mode 4", lim([](CreateOrderTx& o) { o.stp = static_cast<StpMode>(4); }),
       Reject::kInvalidStpMode},
      {"limit with a trigger", lim([](CreateOrderTx& o) { o.trigger_price = kPx; }),
       Reject::kInvalidTrigger},
      {"market order that is not IOC", lim([](CreateOrderTx& o) { o.type = OrderType::kMarket; }),
       Reject::kInvalidTimeInForce},
      {"IOC with an expiry", lim([](CreateOrderTx& o) { o.tif = TimeInForce::kIoc; }),
       Reject::kInvalidExpiry},
      {"GTT expiring in the past",
       lim([&](CreateOrderTx& o) { o.order_expiry_ms = b.now_ms() - 1; }), Reject::kInvalidExpiry},
      {"GTT without expiry", lim([](CreateOrderTx& o) { o.order_expiry_ms = 0; }),
       Reject::kInvalidExpiry},
      {"client order index 2^48",
       lim([](CreateOrderTx& o) { o.client_order_index = uint64_t{1} << 48; }),
       Reject::kInvalidClientOrderIndex},
      {"size 0 without reduce-only", lim([](CreateOrderTx& o) { o.base_amount = 0; }),
       Reject::kInvalidBaseAmount},
      {"size 2^48", lim([](CreateOrderTx& o) { o.base_amount = Lots{1} << 48; }),
       Reject::kInvalidBaseAmount},
      {"size below 0.01 ETH", lim([](CreateOrderTx& o) { o.base_amount = 99; }),
       Reject::kInvalidBaseAmount},
      {"price 0", lim([](CreateOrderTx& o) { o.price = 0; }), Reject::kInvalidPrice},
      {"price beyond uint32", lim([](CreateOrderTx& o) { o.price = Ticks{1} << 32; }),
       Reject::kInvalidPrice},
      {"value 9.99 USDC below 10", lim([](CreateOrderTx& o) {
         o.base_amount = 100;
         o.price = 99900;
       }),
       Reject::kInvalidAmount},
      {"bid 10.01% above mark (fat finger)", lim([](CreateOrderTx& o) { o.price = 330030; }),
       Reject::kPriceBandFatFinger},
      {"bid 10% above mark is inside the band", lim([](CreateOrderTx& o) {
         o.price = 330000;
         o.client_order_index = 5;
       }),
       Reject::kOk},
      {"client order index 5 in use", lim([](CreateOrderTx& o) { o.client_order_index = 5; }),
       Reject::kClientOrderIndexExists},
      {"market sell whose bound sits far above mark",
       [&] { return b.market(kAlice, N(kAlice), kEth, kAsk, 340000, kOne); }, Reject::kFarFromMark},
      {"reduce-only without a position", lim([](CreateOrderTx& o) {
         o.reduce_only = 1;
         o.is_ask = 1;
       }),
       Reject::kNoPosition},
      {"70 ETH more needs 10,650 USDC, alice has 10,000",
       lim([](CreateOrderTx& o) { o.base_amount = 70 * kOne; }), Reject::kNotEnoughMargin},
  });
}

TEST_F(Scenario, market_status_gates_orders_but_not_cancels) {
  MarketParams p = demo_market_params();
  run_table({{"alice rests a bid",
              [&] {
                return b.limit(kAlice, N(kAlice), kEth, kBid, kPx - 100, kOne,
                               TimeInForce::kGoodTillTime, 1);
              },
              Reject::kOk}});
  p.status = MarketStatus::kPostOnly;
  run_table({
      {"market goes post-only", [&] { return b.update_market(kEth, p); }, Reject::kOk},
      {"GTT refused", [&] { return b.limit(kBob, N(kBob), kEth, kAsk, kPx, kOne); },
       Reject::kMarketStatus},
      {"post-only accepted",
       [&] { return b.limit(kBob, N(kBob), kEth, kAsk, kPx, kOne, TimeInForce::kPostOnly); },
       Reject::kOk},
  });
  p.status = MarketStatus::kReduceOnly;
  run_table({
      {"market goes reduce-only", [&] { return b.update_market(kEth, p); }, Reject::kOk},
      {"opening order refused", [&] { return b.limit(kBob, N(kBob), kEth, kAsk, kPx, kOne); },
       Reject::kMarketStatus},
  });
  p.status = MarketStatus::kHalted;
  run_table({
      {"market halted", [&] { return b.update_market(kEth, p); }, Reject::kOk},
      {"IOC refused",
       [&] { return b.limit(kBob, N(kBob), kEth, kAsk, kPx - 100, kOne, TimeInForce::kIoc); },
       Reject::kMarketStatus},
      {"modify refused", [&] { return b.modify(kAlice, N(kAlice), kEth, 1, kOne / 2, kPx - 100); },
       Reject::kMarketStatus},
      {"cancel by client order index still works",
       [&] { return b.cancel(kAlice, N(kAlice), kEth, 1); }, Reject::kOk},
  });
  EXPECT_EQ(engine.market(kEth)->book.level_count(kBid), 0u);
}

TEST_F(Scenario, capacity_limits_refuse_resting_orders) {
  MarketParams p = demo_market_params();
  p.max_orders_per_account = 2;
  p.max_orders = 3;
  run_table({
      {"limits: 2 per account, 3 per market", [&] { return b.update_market(kEth, p); },
       Reject::kOk},
      {"alice #1", [&] { return b.limit(kAlice, N(kAlice), kEth, kBid, kPx - 100, kOne); },
       Reject::kOk},
      {"alice #2", [&] { return b.limit(kAlice, N(kAlice), kEth, kBid, kPx - 200, kOne); },
       Reject::kOk},
      {"alice #3 is one too many",
       [&] { return b.limit(kAlice, N(kAlice), kEth, kBid, kPx - 300, kOne); },
       Reject::kMaxOrdersPerAccount},
      {"alice may still take (IOC never rests)",
       [&] { return b.limit(kAlice, N(kAlice), kEth, kBid, kPx - 300, kOne, TimeInForce::kIoc); },
       Reject::kOk},
      {"bob #1 fills the market",
       [&] { return b.limit(kBob, N(kBob), kEth, kAsk, kPx + 100, kOne); }, Reject::kOk},
      {"bob #2 finds the market full",
       [&] { return b.limit(kBob, N(kBob), kEth, kAsk, kPx + 200, kOne); },
       Reject::kMaxOrdersPerMarket},
  });
}

class TinyPool : public EngineTest {
 protected:
  TinyPool() : EngineTest(config()) {}
  static EngineConfig config() {
    EngineConfig c = small_config();
    c.max_orders = 2;
    return c;
  }
};

TEST_F(TinyPool, a_full_order_pool_refuses_with_book_full) {
  run_table({
      {"market", [&] { return b.create_market(kEth, demo_market_params(), kPx); }, Reject::kOk},
      {"alice funded", [&] { return b.deposit(kAlice, 10'000 * kUsdc); }, Reject::kOk},
      {"order 1", [&] { return b.limit(kAlice, N(kAlice), kEth, kBid, kPx - 100, kOne); },
       Reject::kOk},
      {"order 2", [&] { return b.limit(kAlice, N(kAlice), kEth, kBid, kPx - 200, kOne); },
       Reject::kOk},
      {"order 3: pool exhausted",
       [&] { return b.limit(kAlice, N(kAlice), kEth, kBid, kPx - 300, kOne); }, Reject::kBookFull},
  });
}

TEST_F(Scenario, cancel_cancel_all_and_their_rejects) {
  run_table({
      {"alice bid coi 11",
       [&] {
         return b.limit(kAlice, N(kAlice), kEth, kBid, kPx - 100, kOne, TimeInForce::kGoodTillTime,
                        11);
       },
       Reject::kOk},
      {"alice bid coi 12",
       [&] {
         return b.limit(kAlice, N(kAlice), kEth, kBid, kPx - 200, kOne, TimeInForce::kGoodTillTime,
                        12);
       },
       Reject::kOk},
      {"alice ask coi 13",
       [&] {
         return b.limit(kAlice, N(kAlice), kEth, kAsk, kPx + 200, kOne, TimeInForce::kGoodTillTime,
                        13);
       },
       Reject::kOk},
      {"bob cannot cancel alice's coi 11", [&] { return b.cancel(kBob, N(kBob), kEth, 11); },
       Reject::kOrderNotFound},
      {"bob cannot cancel alice's order index",
       [&] { return b.cancel(kBob, N(kBob), kEth, kFirstOrderIndex); }, Reject::kOrderNotFound},
      {"wrong market", [&] { return b.cancel(kAlice, N(kAlice), 9, 11); }, Reject::kInvalidMarket},
      {"alice cancels coi 11", [&] { return b.cancel(kAlice, N(kAlice), kEth, 11); }, Reject::kOk},
      {"twice", [&] { return b.cancel(kAlice, N(kAlice), kEth, 11); }, Reject::kOrderNotFound},
      {"alice cancels her second order by order index",
       [&] { return b.cancel(kAlice, N(kAlice), kEth, kFirstOrderIndex + 1); }, Reject::kOk},
      {"scheduled cancel-all needs a deadline 5 min .. 15 days ahead",
       [&] {
         auto t = b.cancel_all(kAlice, N(kAlice));
         t.cancel_all.tif = kCancelAllScheduled;
         return t;
       },
       Reject::kInvalidExpiry},
      {"abort with nothing scheduled",
       [&] {
         auto t = b.cancel_all(kAlice, N(kAlice));
         t.cancel_all.tif = kCancelAllAbort;
         return t;
       },
       Reject::kOrderNotFound},
      {"unknown cancel-all mode",
       [&] {
         auto t = b.cancel_all(kAlice, N(kAlice));
         t.cancel_all.tif = 3;
         return t;
       },
       Reject::kUnsupportedCancelAllMode},
      {"cancel-all on a missing market", [&] { return b.cancel_all(kAlice, N(kAlice), 9); },
       Reject::kInvalidMarket},
      {"cancel-all", [&] { return b.cancel_all(kAlice, N(kAlice)); }, Reject::kOk},
  });
  EXPECT_EQ(engine.account(kAlice)->open_orders, 0u);
  EXPECT_EQ(engine.orders().live_count(), 0u);
}

TEST_F(Scenario, leverage_rejects_and_effect_on_margin) {
  run_table({
      {"imf below the market minimum (2%)",
       [&] { return b.leverage(kAlice, N(kAlice), kEth, 199); }, Reject::kInvalidLeverage},
      {"imf above 100%", [&] { return b.leverage(kAlice, N(kAlice), kEth, 10001); },
       Reject::kInvalidLeverage},
      {"margin mode 2 (only 0 cross and 1 isolated exist)",
       [&] {
         auto t = b.leverage(kAlice, N(kAlice), kEth, 500);
         t.leverage.margin_mode = 2;
         return t;
       },
       Reject::kUnsupportedMarginMode},
      {"missing market", [&] { return b.leverage(kAlice, N(kAlice), 9, 500); },
       Reject::kInvalidMarket},
      {"50x (2%)", [&] { return b.leverage(kAlice, N(kAlice), kEth, 200); }, Reject::kOk},
      {"40 ETH bid now fits (2,400 USDC)",
       [&] { return b.limit(kAlice, N(kAlice), kEth, kBid, kPx, 40 * kOne); }, Reject::kOk},
      {"back to 1x would need 120,000 USDC",
       [&] { return b.leverage(kAlice, N(kAlice), kEth, 10000); }, Reject::kNotEnoughMargin},
  });
}

}  // namespace
}  // namespace tachyon::testing
