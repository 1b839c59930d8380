// Each trade's two sides on the read side (the positions before the fill and the PnL it realized)
// against the engine's, and against the engine's own state as an oracle.
#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "support/engine_fixture.hpp"
#include "support/random_stream.hpp"
#include "tachyon/pipe/read_side.hpp"

namespace tachyon::testing {
namespace {

using namespace tachyon::pipe;  // NOLINT: the read side's trade records

constexpr uint64_t kSeed = 20240611;

// Each trade's sides as the engine shows them while it emits the trade (the journal replay's
// way), next to every update for the read side.
class SidesSink final : public UpdateSink {
 public:
  explicit SidesSink(const Engine& e) : e_(e) {}
  void on_update(const StateUpdate& u) override {
    updates.push_back(u);
    if (u.type == UpdateType::kTrade) by_engine.emplace_back(u.trade, trade_sides(u.trade, e_));
  }
  std::vector<StateUpdate> updates;
  std::vector<std::pair<TradeUpdate, TradeSides>> by_engine;

 private:
  const Engine& e_;
};

// Trades of a random stream with volatile prices and liquidations: the sides the read side keeps
// (what the WebSocket pushes) equal the engine's, and they add up to the engine's own state:
// each account's size before a trade is its size before the previous one plus that fill, the
// last plus its fill is the engine's position, and the fills' PnL sums to its realized PnL.
TEST(ReadSideTrades, each_trade_shows_both_positions_before_it_and_the_pnl_it_realized) {
  Engine e(EngineConfig{1 << 14, 256, 256});
  ReadSide rs(ReadSideConfig{4, 1 << 12, 1 << 17, 20'000'000});  // the log holds every update
  rs.seed_markets(e, 0);
  rs.seed_accounts(e, 0, 0, e.accounts().size());
  rs.seed_done(0);
  StreamConfig sc{8, 2, 4};
  sc.jump_percent = 5;
  sc.jump_bps = 900;
  sc.insurance_deposit_usdc = 1'000'000;
  sc.advanced_orders = true;
  RandomStream stream(kSeed, sc);
  SidesSink sink(e);
  auto run = [&](const Tx& tx) { stream.on_result(tx, e.execute(tx, sink)); };
  for (const Tx& tx : stream.genesis()) run(tx);
  for (int i = 0; i < 6000; ++i) run(stream.next());
  for (const StateUpdate& u : sink.updates) rs.apply(u);
  rs.publish(1, true, true);
  ASSERT_GT(sink.by_engine.size(), 500u);
  std::map<std::pair<AccountIndex, MarketId>, std::pair<Lots, Usdc>> chain;  // size after, Σ pnl
  size_t flips = 0, closing = 0, takeovers = 0;
  for (const auto& [t, want] : sink.by_engine) {
    const TradeSides got = rs.logged_trade_sides(t.trade_id);
    for (auto [side, is_buy, a] : {std::tuple{&got.maker, t.taker_is_ask != 0, t.maker},
                                   std::tuple{&got.taker, t.taker_is_ask == 0, t.taker}}) {
      const TradeSide& w = side == &got.maker ? want.maker : want.taker;
      ASSERT_EQ(std::tuple(side->size_before, side->entry_before, side->pnl, side->imf_before),
                std::tuple(w.size_before, w.entry_before, w.pnl, w.imf_before))
          << "trade " << t.trade_id << " account " << a;
      auto& [size, pnl] = chain[{a, t.market}];
      ASSERT_EQ(side->size_before, size) << "trade " << t.trade_id << " account " << a;
      size += is_buy ? t.size : -t.size;
      pnl += side->pnl;
      flips += side->size_before != 0 && size != 0 && (side->size_before > 0) != (size > 0);
      closing += side->pnl != 0;
    }
    takeovers += t.kind != TradeKind::kTrade;
  }
  for (const auto& [key, v] : chain) {
    const Account* a = e.account(key.first);
    ASSERT_NE(a, nullptr);
    const Position* p = a->position(key.second);
    EXPECT_EQ(v.first, p != nullptr ? p->size : 0) << "account " << key.first;
    EXPECT_EQ(v.second, p != nullptr ? p->realized_pnl : 0) << "account " << key.first;
  }
  EXPECT_GT(flips, 0u);
  EXPECT_GT(closing, 0u);
  EXPECT_GT(takeovers, 0u) << "no liquidation trades: the stream did not exercise them";
}

}  // namespace
}  // namespace tachyon::testing
