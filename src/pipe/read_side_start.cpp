// The read side at start: built from the recovered engine (markets, then every account's view,
// in chunks on two threads) and the market histories saved beside the journal.
#include <algorithm>
#include <array>

#include "tachyon/engine/engine.hpp"
#include "tachyon/pipe/read_side.hpp"

namespace tachyon::pipe {

void ReadSide::seed_funding(const Engine& e, const Market& m, int64_t now_ns) {
  StateUpdate u;
  u.type = UpdateType::kFunding;
  u.time_ns = now_ns;
  u.funding = FundingUpdate{e.funding_estimate(m.id),
                            m.last_funding_rate,
                            m.last_funding_ms,
                            m.next_funding_ms,
                            0,
                            0,
                            m.mark_price,
                            m.id,
                            0};
  apply(u);
}

void ReadSide::restore_history(const std::vector<MarketHistory>& saved,
                               const std::vector<AccountTrades>& accounts,
                               const std::vector<StateUpdate>& replayed,
                               const std::vector<TradeSides>& replayed_sides, const Engine& e,
                               int64_t now_ns) {
  TACHYON_ASSERT(replayed_sides.size() == replayed.size(), "one sides entry per replayed update");
  std::array<uint64_t, kMaxMarkets> last_trade{};
  std::array<int64_t, kMaxMarkets> last_funding{};
  auto tail = [](const auto& v, size_t n) { return v.end() - std::min(v.size(), n); };
  for (const MarketHistory& h : saved) {
    if (e.market(h.id) == nullptr) continue;
    MarketState& m = mstate_[h.id];
    ++m.history_epoch;
    m.trade_n = 0;
    for (auto it = tail(h.trades, kHistoryTrades); it != h.trades.end(); ++it) {
      TradeRecord t = *it;
      t.origin_cookie = 0;  // the saving run's cookies name nothing in this one
      t.origin_worker = 0;
      m.push_trade(t);
      trade_logs_[h.id]->append(t);
      last_trade[h.id] = std::max(last_trade[h.id], t.t.trade_id);
    }
    for (int r = 0; r < kResolutions; ++r) {
      m.candles[r].assign(tail(h.candles[r], kHistoryCandles), h.candles[r].end());
      m.view.current[r] = m.candles[r].empty() ? Candle{} : m.candles[r].back();
      if (!m.candles[r].empty())
        last_trade[h.id] = std::max(last_trade[h.id], m.candles[r].back().last_trade_id);
    }
    m.fundings.assign(tail(h.fundings, kHistoryFundings), h.fundings.end());
    if (!m.fundings.empty()) last_funding[h.id] = m.fundings.back().time_ms;
    m.view.engine_ts_ns = std::max(m.view.engine_ts_ns, h.engine_ts_ns);
    touch(m);
    if (!m.history_changed) {
      m.history_changed = true;
      history_changed_.push_back(h.id);
    }
  }
  for (const AccountTrades& at : accounts) {
    if (accounts_.find(at.account) == nullptr) continue;  // not in the engine
    AccountState& s = account(at.account);
    s.trade_chunks = {};
    for (auto t = tail(at.trades, kAccountTrades); t != at.trades.end(); ++t) {
      TradeRecord r = *t;
      r.origin_cookie = 0;  // the saving run's cookies name nothing in this one
      r.origin_worker = 0;
      append_trade(s, r);
    }
    s.view.trade_count = at.trade_count;
    touch(s);
  }
  for (size_t i = 0; i < replayed.size(); ++i) {
    const StateUpdate& u = replayed[i];
    if (u.type == UpdateType::kTrade && e.market(u.trade.market) != nullptr &&
        u.trade.trade_id > last_trade[u.trade.market])
      record_trade(u, replayed_sides[i]);
    if (u.type == UpdateType::kFunding && e.market(u.funding.market) != nullptr &&
        u.funding.last_time_ms > last_funding[u.funding.market])
      apply(u);
  }
  for (int mi = 0; mi < kMaxMarkets; ++mi) {  // the engine's counters, not the replay's
    const Market* m = e.market(static_cast<MarketId>(mi));
    if (m == nullptr) continue;
    seed_funding(e, *m, now_ns);
    mstate_[mi].view.last_trade_price = m->last_trade_price;
    mstate_[mi].view.trade_count = m->trade_count;
  }
  publish(now_ns, /*force_history=*/true, /*force_orders=*/true);
}

void ReadSide::seed_done(int64_t now_ns) { publish(now_ns, true); }

void ReadSide::seed_markets(const Engine& e, int64_t now_ns) {
  for (int mi = 0; mi < kMaxMarkets; ++mi) {
    const Market* m = e.market(static_cast<MarketId>(mi));
    if (m == nullptr) continue;
    StateUpdate u;
    u.type = UpdateType::kMarket;
    u.time_ns = now_ns;
    u.market = MarketUpdate{m->id, m->status(), m->params};
    apply(u);
    seed_funding(e, *m, now_ns);
    u = StateUpdate();
    u.type = UpdateType::kMarkPrice;
    u.time_ns = now_ns;
    u.mark = MarkPriceUpdate{m->mark_price, m->index_price, m->open_interest, m->id};
    apply(u);
    MarketState& ms = mstate_[m->id];
    ms.view.last_trade_price = m->last_trade_price;
    ms.view.trade_count = m->trade_count;
  }
}

OrderView order_view(const Order& o, int64_t now_ns) {
  OrderView ov;
  ov.o = OrderUpdate{o.order_index,   o.client_order_index,
                     o.account,       o.price,
                     o.remaining,     o.initial,
                     o.expiry_ms,     o.market,
                     o.is_ask,        o.type,
                     o.tif,           RemoveReason::kFilled,
                     o.reduce_only,   o.pending,
                     o.trigger_price, o.parent,
                     o.child,         0,
                     o.sibling,       0};
  ov.created_ns = ov.updated_ns = now_ns;
  return ov;
}

std::unique_ptr<AccountView> first_view(const Account& a, std::vector<OrderView>& orders,
                                        int64_t now_ns, size_t orders_in_view) {
  auto v = std::make_unique<AccountView>();
  v->index = a.index;
  v->master = a.master;
  v->l1_address = a.l1_address;
  v->collateral = a.collateral;
  // Both sorted as the views keep them (keys by index, positions by market); every market with
  // an open order has a position entry whose open-order aggregates count what on_order counts.
  v->keys.reserve(a.keys.size());
  for (const ApiKey& k : a.keys)
    v->keys.push_back(KeyView{k.index, k.version, k.next_nonce, k.pubkey});
  v->positions.reserve(a.positions.size());
  for (const Position& p : a.positions) {
    v->positions.push_back(PositionView{p.market, p.size, p.entry_notional, p.realized_pnl,
                                        p.buy_open, p.sell_open, p.imf, p.open_orders,
                                        p.funding_paid, p.allocated, p.isolated});
  }
  std::sort(orders.begin(), orders.end(), [](const OrderView& x, const OrderView& y) {
    return x.o.order_index < y.o.order_index;
  });
  // A primary's second child is its first child's OCO partner (a group is one account's).
  for (OrderView& ov : orders) {
    if (ov.o.child == 0) continue;
    auto kid =
        std::lower_bound(orders.begin(), orders.end(), ov.o.child,
                         [](const OrderView& x, OrderIndex id) { return x.o.order_index < id; });
    if (kid != orders.end() && kid->o.order_index == ov.o.child) ov.o.child2 = kid->o.sibling;
  }
  if (orders.size() <= orders_in_view) {
    v->small_orders.assign(orders.begin(), orders.end());
  } else {
    v->orders = OrderList::from_sorted(orders);
  }
  v->open_order_count = static_cast<uint32_t>(orders.size());
  v->engine_ts_ns = now_ns;
  v->version = 1;
  return v;
}

namespace {
std::unique_ptr<AccountView> engine_view(const Engine& e, const Account& a, int64_t now_ns,
                                         size_t orders_in_view, std::vector<OrderView>& orders) {
  orders.clear();
  for (uint32_t slot = a.order_head; slot != kNoSlot; slot = e.orders()[slot].acct_next)
    orders.push_back(order_view(e.orders()[slot], now_ns));
  return first_view(a, orders, now_ns, orders_in_view);
}
}  // namespace

// Accounts: their views are made and published directly, without an AccountState each (made at
// an account's first update, from its view) and without going through the update log. With an
// account base (Pipeline's AccountBase) only the accounts it does not hold as they are now come
// here; the others get their view on first use (AccountTable::find). Reads only the engine and
// cfg_.
void ReadSide::seed_accounts(const Engine& e, int64_t now_ns, size_t begin, size_t end) {
  std::vector<OrderView> orders;
  std::vector<std::unique_ptr<AccountView>> views;
  views.reserve(std::min(end - begin, size_t{4096}));
  const auto& accounts = e.accounts();
  for (size_t ai = begin; ai < end && ai < accounts.size(); ++ai) {
    views.push_back(engine_view(e, accounts[ai], now_ns, cfg_.orders_in_view, orders));
    if (views.size() == 4096) (void)accounts_.insert_concurrent(views);
  }
  if (!views.empty()) (void)accounts_.insert_concurrent(views);
}

void ReadSide::seed_listed(const Engine& e, int64_t now_ns,
                           std::span<const AccountIndex> accounts) {
  std::vector<OrderView> orders;
  std::vector<std::unique_ptr<AccountView>> views;
  for (AccountIndex ai : accounts) {
    const Account* a = e.account(ai);
    if (a == nullptr) continue;
    views.push_back(engine_view(e, *a, now_ns, cfg_.orders_in_view, orders));
    if (views.size() == 4096) (void)accounts_.insert_concurrent(views);
  }
  if (!views.empty()) (void)accounts_.insert_concurrent(views);
}

}  // namespace tachyon::pipe
