#pragma once
// A test fixture around one Engine: records every update, runs readable scenario tables (one
// event per line with its expected result) and checks validate() after every step.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "support/tx_builder.hpp"
#include "tachyon/core/bytes.hpp"
#include "tachyon/engine/engine.hpp"

namespace tachyon::testing {

class RecordingSink final : public UpdateSink {
 public:
  void on_update(const StateUpdate& u) override { updates.push_back(u); }
  std::vector<TradeUpdate> trades() const {
    std::vector<TradeUpdate> out;
    for (const auto& u : updates)
      if (u.type == UpdateType::kTrade) out.push_back(u.trade);
    return out;
  }
  std::vector<OrderUpdate> removed() const {
    std::vector<OrderUpdate> out;
    for (const auto& u : updates)
      if (u.type == UpdateType::kOrderRemoved) out.push_back(u.order);
    return out;
  }
  void clear() { updates.clear(); }
  std::vector<StateUpdate> updates;
};

struct Row {
  std::string what;
  std::function<Tx()> make;
  Reject expect;
};

// Each row's tx through run(tx) (the operator nonce synced first): its reject code is the row's,
// and a refused tx leaves the state hash as it was.
template <typename Run>
void run_rows(const Engine& engine, TxBuilder& b, const std::vector<Row>& rows, Run&& run) {
  for (const Row& r : rows) {
    const uint64_t before = engine.state_hash();
    b.sync_op_nonce(engine.operator_next_nonce());
    const TxResult res = run(r.make());
    EXPECT_EQ(reject_code(res.reject), reject_code(r.expect))
        << r.what << ": got " << reject_message(res.reject);
    if (!res.ok()) {
      EXPECT_EQ(engine.state_hash(), before) << r.what << ": a refused tx changed the state";
    }
  }
}

inline constexpr bool kBid = false;
inline constexpr bool kAsk = true;
inline constexpr Usdc kUsdc = 1'000'000;

class EngineTest : public ::testing::Test {
 protected:
  explicit EngineTest(EngineConfig cfg = small_config()) : engine(cfg) {}
  static EngineConfig small_config() {
    EngineConfig c;
    c.max_orders = 4096;
    c.expected_accounts = 64;
    c.levels_per_side = 64;
    return c;
  }

  // Next nonce of api key 0 of an account, read from the engine itself.
  int64_t N(AccountIndex a, uint8_t key = 0) const {
    const Account* acc = engine.account(a);
    const ApiKey* k = acc ? acc->key(key) : nullptr;
    return k ? k->next_nonce : 0;
  }

  TxResult run(const Tx& tx) {
    last = engine.execute(tx, sink);
    std::string broken = engine.validate();
    EXPECT_EQ(broken, "") << "after tx seq " << tx.h.seq;
    return last;
  }

  void run_table(const std::vector<Row>& rows) {
    run_rows(engine, b, rows, [this](const Tx& tx) { return run(tx); });
  }

  Lots level_size(bool is_ask, size_t i) const {
    const auto& book = engine.market(0)->book;
    return i < book.level_count(is_ask) ? book.level(is_ask, i).total : 0;
  }
  Ticks level_price(bool is_ask, size_t i) const {
    const auto& book = engine.market(0)->book;
    return i < book.level_count(is_ask) ? book.level(is_ask, i).price : 0;
  }
  const Position* pos(AccountIndex a, MarketId m = 0) const {
    const Account* acc = engine.account(a);
    return acc ? acc->position(m) : nullptr;
  }
  Lots pos_size(AccountIndex a, MarketId m = 0) const {
    const Position* p = pos(a, m);
    return p ? p->size : 0;
  }
  Usdc collateral(AccountIndex a) const { return engine.account(a)->collateral; }

  // Loads a snapshot of the engine into `copy` (a fresh engine of the same config) and checks
  // that it is the same state.
  void reload_into(Engine& copy) {
    VectorSink out;
    engine.save(out);
    ByteSource in(out.bytes.data(), out.bytes.size());
    ASSERT_TRUE(copy.load(in).ok());
    EXPECT_EQ(copy.state_hash(), engine.state_hash());
    EXPECT_EQ(copy.validate(), "");
  }

  // Market 0 (ETH, index 3000.00) and a maker with bids at 2990.00 and 2800.00 and asks at
  // 3010.00 and 3200.00, 5 ETH each; then each of `traders` funded with its amount.
  void market_with_maker(AccountIndex maker,
                         const std::vector<std::pair<AccountIndex, Usdc>>& traders) {
    b.sync_op_nonce(engine.operator_next_nonce());
    run(b.create_market(0, demo_market_params(), 300'000));
    b.sync_op_nonce(engine.operator_next_nonce());
    run(b.deposit(maker, 10'000'000 * kUsdc));
    for (const auto& [a, amount] : traders) {
      b.sync_op_nonce(engine.operator_next_nonce());
      run(b.deposit(a, amount));
    }
    for (auto [ask, px] :
         {std::pair{false, 299'000}, {false, 280'000}, {true, 301'000}, {true, 320'000}})
      ASSERT_TRUE(run(b.limit(maker, N(maker), 0, ask, px, 5 * 10'000)).ok());
  }

  Engine engine;
  TxBuilder b;
  RecordingSink sink;
  TxResult last;
};

}  // namespace tachyon::testing
