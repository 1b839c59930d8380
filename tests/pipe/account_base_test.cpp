// The account base: at a start from a snapshot, accounts the journal replay did not change get
// their read-side view on first use, made from the snapshot (AccountTable::set_base). Their views
// must equal the ones a start that builds every view makes, for every kind of order an account
// can hold (resting, waiting for a trigger, a grouped child waiting for its primary, a TWAP),
// long and short order lists, positions and keys; also while readers make views concurrently
// with the apply thread publishing (this suite also runs under TSan: Pipeline*).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>
#include <tuple>
#include <vector>

#include "support/engine_fixture.hpp"
#include "support/rng.hpp"
#include "tachyon/pipe/pipeline.hpp"

namespace tachyon::testing {
namespace {

constexpr uint64_t kSpinCap = 200'000'000;  // polling bound: a hang fails instead of blocking
constexpr int kAccounts = 300;
constexpr AccountIndex kFirst = 1000;

EngineConfig engine_config() { return EngineConfig{1 << 14, 512, 256}; }

pipe::PipelineConfig pipeline_config() {
  pipe::PipelineConfig pc{.workers = 1, .read = pipe::ReadSideConfig{4, 1 << 12, 1 << 17}};
  pc.read.orders_in_view = 4;  // both kinds of order list: in the view, and chunked
  return pc;
}

// Drops updates but names the accounts they are about (what the server's replay collects).
class ChangedSink final : public UpdateSink {
 public:
  void on_update(const StateUpdate& u) override {
    for_each_account_of(u, [&](AccountIndex a) { changed.push_back(a); });
  }
  std::vector<AccountIndex> changed;
};

// An exchange with every kind of order in the accounts' lists, built one tx at a time.
class World {
 public:
  World() : engine(engine_config()) {}

  int64_t nonce(AccountIndex a) {
    const Account* acc = engine.account(a);
    return acc != nullptr && !acc->keys.empty() ? acc->keys.front().next_nonce : 0;
  }
  TxResult run(const Tx& tx, UpdateSink& sink) {
    const TxResult r = engine.execute(tx, sink);
    b.sync_op_nonce(engine.operator_next_nonce());
    return r;
  }
  TxResult run(const Tx& tx) { return run(tx, null); }

  void build() {
    ASSERT_TRUE(run(b.create_market(0, demo_market_params("ETH", 4, 2), 300'000)).ok());
    ASSERT_TRUE(run(b.create_market(1, demo_market_params("BTC", 5, 1), 600'000)).ok());
    for (int i = 0; i < kAccounts; ++i)
      ASSERT_TRUE(run(b.deposit(kFirst + i, rng.range(20'000, 200'000) * kUsdc)).ok());
    // Resting orders: most accounts a few, some more than a view holds itself.
    for (int i = 0; i < kAccounts; ++i) {
      const AccountIndex a = kFirst + i;
      const int n = i % 10 == 0 ? 9 : static_cast<int>(rng.below(4));
      for (int k = 0; k < n; ++k) {
        const MarketId m = static_cast<MarketId>(rng.below(2));
        const bool ask = rng.chance(50);
        const Ticks mid = m == 0 ? 300'000 : 600'000;
        const Ticks px = ask ? mid + 100 + rng.range(0, 4000) : mid - 100 - rng.range(0, 4000);
        ASSERT_TRUE(
            run(b.limit(a, nonce(a), m, ask, px, rng.range(10, 5'000), TimeInForce::kGoodTillTime,
                        rng.chance(30) ? 1 + rng.below(1'000'000) : 0))
                .ok());
      }
    }
    // Trades: positions for the takers and partly filled makers.
    for (int i = 0; i < 40; ++i) {
      const AccountIndex a = kFirst + 1 + 3 * i;
      const bool ask = i % 2 == 0;
      ASSERT_TRUE(
          run(b.market(a, nonce(a), 0, ask, ask ? 250'000 : 350'000, rng.range(10, 3'000))).ok());
    }
    // Stop-losses waiting for the mark, OTOCO groups (children waiting for their primary),
    // TWAPs between slices.
    for (int i = 0; i < 30; ++i) {
      const AccountIndex a = kFirst + 2 + 7 * i;
      Tx tx = b.limit(a, nonce(a), 0, i % 2 == 0, 0, 0, TimeInForce::kIoc);
      if (i % 3 == 0) {
        tx = b.limit(a, nonce(a), 0, true, 270'000, 0, TimeInForce::kIoc);
        tx.order.type = OrderType::kStopLoss;
        tx.order.trigger_price = 280'000;
        tx.order.reduce_only = 0;
        tx.order.base_amount = rng.range(10, 1'000);
        tx.order.order_expiry_ms = b.now_ms() + 600'000;
      } else if (i % 3 == 1) {
        tx = b.user(TxType::kCreateGroupedOrders, a, nonce(a));
        tx.grouped.grouping = Grouping::kOtoco;
        tx.grouped.count = 3;
        CreateOrderTx& p0 = tx.grouped.orders[0];
        p0 = b.limit(a, 0, 0, false, 290'000 - 50 * i, rng.range(10, 2'000)).order;
        for (int k = 1; k <= 2; ++k) {
          CreateOrderTx& ch = tx.grouped.orders[k];
          ch = p0;
          ch.is_ask = true;
          ch.type = k == 1 ? OrderType::kStopLoss : OrderType::kTakeProfit;
          ch.tif = TimeInForce::kIoc;
          ch.base_amount = 0;
          ch.trigger_price = k == 1 ? 270'000 : 330'000;
          ch.price = k == 1 ? 260'000 : 320'000;
          ch.reduce_only = 1;
        }
      } else {
        tx = b.limit(a, nonce(a), 0, false, 312'000, rng.range(10, 2'000));
        tx.order.type = OrderType::kTwap;
        tx.order.order_expiry_ms = b.now_ms() + 600'000;
      }
      const TxResult r = run(tx);
      ASSERT_TRUE(r.ok()) << "special order " << i << ": " << reject_message(r.reject);
    }
  }

  Engine engine;
  TxBuilder b;
  NullSink null;
  Rng rng{77};
};

std::vector<uint8_t> save(const Engine& e) {
  VectorSink out;
  e.save(out);
  return out.bytes;
}

std::unique_ptr<Engine> load(const std::vector<uint8_t>& bytes, SavedAccounts* saved) {
  auto e = std::make_unique<Engine>(engine_config());
  ByteSource in(bytes.data(), bytes.size());
  EXPECT_TRUE(e->load(in, true, saved).ok());
  return e;
}

// Everything a view shows but its timestamps and version, with empty position entries left out
// (a view keeps an entry once made; the engine's may be gone or still there).
auto content(const pipe::AccountView& v) {
  std::vector<
      std::tuple<MarketId, Lots, Usdc, Usdc, Lots, Lots, Bps4, uint32_t, Usdc, Usdc, uint8_t>>
      positions;
  for (const auto& p : v.positions) {
    auto t = std::tuple(p.market, p.size, p.entry_notional, p.realized_pnl, p.buy_open, p.sell_open,
                        p.imf, p.open_orders, p.funding_paid, p.allocated, p.isolated);
    if (p.size != 0 || p.entry_notional != 0 || p.realized_pnl != 0 || p.buy_open != 0 ||
        p.sell_open != 0 || p.imf != 0 || p.open_orders != 0 || p.funding_paid != 0 ||
        p.allocated != 0 || p.isolated != 0)
      positions.push_back(t);
  }
  std::vector<std::tuple<uint8_t, uint32_t, int64_t, std::array<uint8_t, 32>>> keys;
  for (const auto& k : v.keys) keys.emplace_back(k.index, k.version, k.next_nonce, k.pubkey);
  std::vector<std::tuple<OrderIndex, uint64_t, AccountIndex, Ticks, Lots, Lots, int64_t, MarketId,
                         uint8_t, OrderType, TimeInForce, uint8_t, uint8_t, Ticks, OrderIndex>>
      orders;
  for (const pipe::OrderView& ov : v.order_list()) {
    const OrderUpdate& o = ov.o;
    orders.emplace_back(o.order_index, o.client_order_index, o.account, o.price, o.remaining,
                        o.initial, o.expiry_ms, o.market, o.is_ask, o.type, o.tif, o.reduce_only,
                        o.pending, o.trigger_price, o.parent);
  }
  return std::tuple(v.index, v.master, v.l1_address, v.collateral, v.open_order_count,
                    v.orders_current, positions, keys, orders);
}

// Every account of `e` has a view in `lazy` equal to its view in `eager`.
void expect_same_views(const Engine& e, pipe::ReadSide& lazy, pipe::ReadSide& eager) {
  auto rl = lazy.accounts().reader();
  auto re = eager.accounts().reader();
  for (const Account& a : e.accounts()) {
    SCOPED_TRACE("account " + std::to_string(a.index));
    rl.read([&] {
      re.read([&] {
        const pipe::AccountView* l = lazy.accounts().find(a.index);
        const pipe::AccountView* g = eager.accounts().find(a.index);
        ASSERT_NE(l, nullptr);
        ASSERT_NE(g, nullptr);
        EXPECT_EQ(content(*l), content(*g));
      });
    });
  }
}

// Orders of each kind the snapshot's accounts hold (so that their decode is what is compared).
void expect_every_kind(const Engine& e) {
  std::array<int, 4> pending{};
  int linked = 0, long_lists = 0;
  for (const Account& a : e.accounts()) {
    long_lists += a.open_orders > pipeline_config().read.orders_in_view;
    for (uint32_t s = a.order_head; s != kNoSlot; s = e.orders()[s].acct_next) {
      ++pending[std::min<int>(e.orders()[s].pending, 3)];
      linked += e.orders()[s].parent != 0;
    }
  }
  EXPECT_GT(pending[0], 300);  // resting
  EXPECT_GT(pending[1], 0);    // waiting for a trigger
  EXPECT_GT(pending[2], 0);    // grouped children waiting for their primary
  EXPECT_GT(pending[3], 0);    // TWAPs
  EXPECT_GT(linked, 0);
  EXPECT_GT(long_lists, 10);
}

TEST(PipelineAccountBase, views_made_on_first_use_equal_the_views_made_at_start) {
  World w;
  w.build();
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  expect_every_kind(w.engine);
  const std::vector<uint8_t> snapshot = save(w.engine);
  auto saved = std::make_shared<SavedAccounts>();
  std::unique_ptr<Engine> lazy_engine = load(snapshot, saved.get());
  std::unique_ptr<Engine> eager_engine = load(snapshot, nullptr);
  ASSERT_EQ(saved->size(), w.engine.accounts().size());
  // The journal replay after the snapshot: cancels, new orders, a transfer, a new account.
  ChangedSink changed;
  NullSink null;
  TxBuilder b(w.b.now_ns() + 1'000'000);
  b.sync_op_nonce(lazy_engine->operator_next_nonce());
  auto nonce = [&](AccountIndex a) { return lazy_engine->account(a)->keys.front().next_nonce; };
  std::vector<Tx> replay;
  for (int i = 0; i < 12; ++i) {
    const AccountIndex a = kFirst + 10 * i;  // the accounts with long lists
    replay.push_back(i % 2 == 0 ? b.cancel_all(a, nonce(a))
                                : b.limit(a, nonce(a), 1, true, 650'000 + i, 100));
    ASSERT_TRUE(lazy_engine->execute(replay.back(), changed).ok());
  }
  replay.push_back(b.transfer(kFirst + 5, nonce(kFirst + 5), kFirst + 6, 10 * kUsdc));
  ASSERT_TRUE(lazy_engine->execute(replay.back(), changed).ok());
  replay.push_back(b.deposit(kFirst + 5000, 1'000 * kUsdc));
  ASSERT_TRUE(lazy_engine->execute(replay.back(), changed).ok());
  for (const Tx& tx : replay) ASSERT_TRUE(eager_engine->execute(tx, null).ok());

  pipe::Pipeline lazy(pipeline_config(), std::move(lazy_engine), nullptr, nullptr,
                      pipe::AccountBase{saved, changed.changed});
  pipe::Pipeline eager(pipeline_config(), std::move(eager_engine), nullptr, nullptr);
  const size_t total = lazy.engine().accounts().size();
  // Only the new account and those the replay changed got a view at start.
  EXPECT_GT(lazy.read_side().accounts().size(), 12u);
  EXPECT_LT(lazy.read_side().accounts().size(), 30u);
  EXPECT_EQ(eager.read_side().accounts().size(), total);

  // A search by address made before any other read finds the base's accounts too.
  const std::array<uint8_t, 20> l1 = lazy.engine().account(kFirst + 42)->l1_address;
  std::vector<AccountIndex> want, got;
  for (const Account& a : lazy.engine().accounts())
    if (a.l1_address == l1) want.push_back(a.index);
  auto r = lazy.read_side().accounts().reader();
  r.read([&] {
    lazy.read_side().accounts().for_each_with_l1(
        l1, [&](const pipe::AccountView& v) { got.push_back(v.index); });
  });
  std::sort(got.begin(), got.end());
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(got, want);

  expect_same_views(lazy.engine(), lazy.read_side(), eager.read_side());
  EXPECT_EQ(lazy.read_side().accounts().size(), total);  // all made by now
  EXPECT_GT(lazy.read_side().accounts().made_from_base(), 250u);
}

// Live: the apply thread builds its state of a base account from the view made on first use
// (or makes it), while two readers make views of random accounts at the same time. The views
// then equal the ones a fresh start from the final state makes.
TEST(PipelineAccountBase, readers_and_the_apply_thread_make_base_views_at_the_same_time) {
  World w;
  w.build();
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  const std::vector<uint8_t> snapshot = save(w.engine);
  auto saved = std::make_shared<SavedAccounts>();
  pipe::Pipeline p(pipeline_config(), load(snapshot, saved.get()), nullptr, nullptr,
                   pipe::AccountBase{saved, {}});
  EXPECT_EQ(p.read_side().accounts().size(), 0u);
  p.start();
  std::atomic<bool> done{false};
  std::atomic<uint64_t> missing{0};
  auto reader = [&](uint64_t seed) {
    Rng rng(seed);
    auto r = p.read_side().accounts().reader();
    while (!done.load(std::memory_order_relaxed)) {
      const AccountIndex a = kFirst + rng.below(kAccounts);
      r.read([&] {
        const pipe::AccountView* v = p.read_side().accounts().find(a);
        if (v == nullptr || v->index != a) missing.fetch_add(1);
      });
    }
  };
  std::thread r1(reader, 1), r2(reader, 2);
  // Trading through the pipeline: cancels of resting orders, new orders that trade, on accounts
  // nobody has used since the start.
  TxBuilder b(w.b.now_ns() + 1'000'000);
  Rng rng(5);
  uint64_t cookie = 0;
  auto submit = [&](const Tx& tx) {
    ASSERT_TRUE(p.submit(0, tx, ++cookie, 0));
    std::optional<pipe::Result> res;
    for (uint64_t n = 0; !res && n < kSpinCap; ++n, std::this_thread::yield())
      p.poll_results(0, [&](const pipe::Result& x) { res = x; });
    ASSERT_TRUE(res && res->cookie == cookie) << "no result for cookie " << cookie;
  };
  auto keys = p.read_side().accounts().reader();
  for (int i = 0; i < 400 && !::testing::Test::HasFatalFailure(); ++i) {
    const AccountIndex a = kFirst + rng.below(kAccounts);
    int64_t n = 0;  // a result leaves once its batch's views show the next nonce
    keys.read([&] { n = p.read_side().accounts().find(a)->keys.front().next_nonce; });
    const bool ask = rng.chance(50);
    submit(rng.chance(30) ? b.cancel_all(a, n)
                          : b.limit(a, n, 0, ask, ask ? 299'000 : 301'000, rng.range(10, 300)));
  }
  done.store(true);
  r1.join();
  r2.join();
  p.stop();
  EXPECT_EQ(missing.load(), 0u);
  pipe::Pipeline fresh(pipeline_config(), load(save(p.engine()), nullptr), nullptr, nullptr);
  expect_same_views(p.engine(), p.read_side(), fresh.read_side());
}

}  // namespace
}  // namespace tachyon::testing
