#include "tachyon/pipe/read_side.hpp"

#include "tachyon/core/cache_warm.hpp"
#include "tachyon/engine/engine.hpp"

#include <algorithm>
#include <span>
#include <type_traits>

namespace tachyon::pipe {

int resolution_index(std::string_view name) {
  for (int i = 0; i < kResolutions; ++i)
    if (name == kResolutionNames[i]) return i;
  return -1;
}

// ---- ReadSide ----

ReadSide::ReadSide(const ReadSideConfig& cfg)
    : cfg_(cfg),
      mstate_(kMaxMarkets),
      accounts_(cfg.account_capacity, cfg.max_readers),
      log_(cfg.log_capacity),
      sides_tape_(std::max<size_t>(cfg.log_capacity / 2, 1)) {
  for (int m = 0; m < kMaxMarkets; ++m) {
    markets_.push_back(std::make_unique<Published<MarketView>>(cfg.max_readers));
    markets_.back()->enable_recycling(8);
    histories_.push_back(std::make_unique<Published<MarketHistory>>(cfg.max_readers));
    histories_.back()->enable_recycling(8);
    mstate_[m].view.id = static_cast<MarketId>(m);
    trade_logs_.push_back(std::make_unique<BroadcastLog<TradeRecord>>(128));
  }
  trade_published_ = std::make_unique<std::atomic<uint64_t>[]>(kMaxMarkets);
  astate_.reserve(1 << 12);
}

ReadSide::AccountState& ReadSide::account(AccountIndex a) {
  CachedAccount& c = account_cache_[a & (kAccountCache - 1)];
  if (c.key == a + 1) return *c.s;
  AccountState& s = make_account(a);
  c = CachedAccount{a + 1, &s};
  return s;
}

ReadSide::AccountState& ReadSide::make_account(AccountIndex a) {
  auto& p = astate_[a];
  if (!p) {
    p = std::make_unique<AccountState>();
    p->view.index = a;
    p->view.master = a;
    // An account seeded at start has only its published view until its first update: the state
    // starts from that view (the seeding makes views, not states, so a start stays fast at 1M
    // accounts), which find() makes from the account base if nobody has used the account yet.
    // Only this thread publishes, so the view is current.
    if (const AccountView* v = accounts_.find(a)) {
      AccountState& s = *p;
      s.view.master = v->master;
      s.view.l1_address = v->l1_address;
      s.view.collateral = v->collateral;
      s.view.positions = v->positions;
      s.view.keys = v->keys;
      s.view.trade_count = v->trade_count;
      s.view.engine_ts_ns = v->engine_ts_ns;
      s.view.version = v->version;
      if (v->orders) {
        s.big = true;
        for (const OrderView& o : v->order_list()) s.orders.emplace(o.o.order_index, o);
        s.orders_list = v->orders;  // the next rebuild shares its chunks
      } else {  // (a view made at start, or from the account base: the orders are its own)
        const OrderRange own = v->order_list();
        s.small.assign_sorted(own.begin(), own.end(), small_ctx());
      }
      for (const TradeRecord& t : v->trades()) append_trade(s, t);  // chunks of its own
    }
  }
  return *p;
}

ReadSide::AccountState* ReadSide::find_account(AccountIndex a) {
  if (const CachedAccount& c = account_cache_[a & (kAccountCache - 1)]; c.key == a + 1) return c.s;
  if (auto f = astate_.find(a); f != astate_.end()) return &account(a);
  return accounts_.find(a) != nullptr ? &account(a) : nullptr;
}

void ReadSide::touch(AccountState& s) {
  if (!s.changed) {
    s.changed = true;
    accounts_changed_.push_back(&s);
  }
}

void ReadSide::touch(MarketState& m) {
  if (!m.changed) {
    m.changed = true;
    markets_changed_.push_back(m.view.id);
  }
}

void ReadSide::apply(const StateUpdate& u) {
  log_.append(u);
  switch (u.type) {
    case UpdateType::kMarket: on_market(u); break;
    case UpdateType::kMarkPrice: {
      MarketState& m = mstate_[u.mark.market];
      m.view.mark_price = u.mark.mark;
      m.view.index_price = u.mark.index;
      m.view.open_interest = u.mark.open_interest;
      m.view.engine_ts_ns = u.time_ns;
      touch(m);
      break;
    }
    case UpdateType::kTrade: on_trade(u); break;
    case UpdateType::kFunding: on_funding(u); break;
    case UpdateType::kRisk: break;  // carried to the WebSocket workers by the update log
    case UpdateType::kOrderAdded:
    case UpdateType::kOrderReduced:
    case UpdateType::kOrderRemoved: on_order(u); break;
    case UpdateType::kPosition: on_position(u); break;
    case UpdateType::kBalance: {
      AccountState& s = account(u.balance.account);
      s.view.collateral = u.balance.collateral;
      s.view.engine_ts_ns = u.time_ns;
      touch(s);
      on_money(u);
      break;
    }
    case UpdateType::kAccount: {
      AccountState& s = account(u.account.account);
      s.view.master = u.account.master;
      s.view.l1_address = u.account.l1_address;
      s.view.engine_ts_ns = u.time_ns;
      if (s.view.created_ns == 0) s.view.created_ns = u.time_ns;
      touch(s);
      break;
    }
    case UpdateType::kApiKey: on_api_key(u); break;
    case UpdateType::kTxResult: on_result(u); break;
  }
}

void ReadSide::on_market(const StateUpdate& u) {
  MarketState& m = mstate_[u.market.market];
  m.view.params = u.market.params;
  m.view.params.status = u.market.status;  // the circuit breaker's, if stricter
  m.view.quote_multiplier =
      pow10_i64(kQuoteDecimals - u.market.params.size_decimals - u.market.params.price_decimals);
  m.view.engine_ts_ns = u.time_ns;
  touch(m);
  // Release: a reader that sees the bit sees the market's published view (exists()).
  exists_[m.view.id >> 6].fetch_or(uint64_t{1} << (m.view.id & 63), std::memory_order_release);
}

void ReadSide::on_funding(const StateUpdate& u) {
  const FundingUpdate& f = u.funding;
  MarketState& m = mstate_[f.market];
  m.view.funding_estimate = f.estimate_rate;
  m.view.funding_rate = f.last_rate;
  m.view.funding_ms = f.last_time_ms;
  m.view.next_funding_ms = f.next_time_ms;
  m.view.engine_ts_ns = u.time_ns;
  touch(m);
  if (!f.settled) return;
  if (m.fundings.size() == kHistoryFundings) m.fundings.erase(m.fundings.begin());
  m.fundings.push_back(FundingRecord{f.last_time_ms, f.last_rate, f.paid, f.mark});
  history_urgent_ = true;
  if (!m.history_changed) {
    m.history_changed = true;
    history_changed_.push_back(f.market);
  }
}

PositionView& ReadSide::position_entry(AccountState& s, MarketId m) {
  auto& ps = s.view.positions;
  auto it = std::lower_bound(ps.begin(), ps.end(), m,
                             [](const PositionView& p, MarketId x) { return p.market < x; });
  if (it == ps.end() || it->market != m) {
    it = ps.insert(it, PositionView{});
    it->market = m;
  }
  return *it;
}

void ReadSide::on_position(const StateUpdate& u) {
  AccountState& s = account(u.position.account);
  PositionView& p = position_entry(s, u.position.market);
  p.size = u.position.size;
  p.entry_notional = u.position.entry_notional;
  p.realized_pnl = u.position.realized_pnl;
  p.imf = u.position.imf;
  p.funding_paid = u.position.funding_paid;
  p.allocated = u.position.allocated;
  p.isolated = u.position.margin_mode;
  s.view.engine_ts_ns = u.time_ns;
  touch(s);
}

void ReadSide::on_api_key(const StateUpdate& u) {
  AccountState& s = account(u.api_key.account);
  auto& ks = s.view.keys;
  auto it = std::lower_bound(ks.begin(), ks.end(), u.api_key.key_index,
                             [](const KeyView& k, uint8_t i) { return k.index < i; });
  if (it == ks.end() || it->index != u.api_key.key_index) it = ks.insert(it, KeyView{});
  it->index = u.api_key.key_index;
  it->version = u.api_key.version;
  it->next_nonce = u.api_key.next_nonce;
  it->pubkey = u.api_key.pubkey;
  touch(s);
}

// A tx's result carries its key's next nonce (when it moved one).
void ReadSide::on_result(const StateUpdate& u) {
  if (u.result.next_nonce < 0) return;
  AccountState* s = find_account(u.result.account);
  if (s == nullptr) return;
  for (auto& k : s->view.keys) {
    if (k.index == u.result.api_key_index) k.next_nonce = u.result.next_nonce;
  }
  touch(*s);
}

void ReadSide::on_order(const StateUpdate& u) {
  const OrderUpdate& o = u.order;
  AccountState& s = account(o.account);
  auto open_side = [&](MarketId m, bool is_ask, Lots delta, int orders) {
    PositionView& p = position_entry(s, m);
    (is_ask ? p.sell_open : p.buy_open) += delta;
    p.open_orders = static_cast<uint32_t>(static_cast<int>(p.open_orders) + orders);
  };
  // a waiting order (trigger, grouped child, TWAP between slices) carries no open size (no
  // margin) but counts as an order
  auto open_size = [](const OrderUpdate& x) { return x.pending ? 0 : x.remaining; };
  if (u.type == UpdateType::kOrderAdded) {
    const OrderView added{o, u.time_ns, u.time_ns};
    if (s.big) {
      s.orders[o.order_index] = added;
    } else {
      s.small.insert(added, small_ctx());
    }
    open_side(o.market, o.is_ask, open_size(o), 1);
  } else if (u.type == UpdateType::kOrderRemoved) {
    OrderView gone;
    bool rested = true;
    if (s.big) {
      auto it = s.orders.find(o.order_index);
      rested = it != s.orders.end();
      if (rested) {
        gone = it->second;
        s.orders.erase(it);
      }
    } else {
      rested = s.small.erase(o.order_index, small_ctx(), &gone);
    }
    // An order that leaves only to come back under the same index (re-placed by ModifyOrder, a
    // trigger that fired, a grouped child armed) is not closed.
    const bool closed = o.reason != RemoveReason::kModified &&
                        o.reason != RemoveReason::kTriggered && o.reason != RemoveReason::kArmed;
    if (closed)
      closed_log_.append(OrderView{o, rested ? gone.created_ns : u.time_ns, u.time_ns, true});
    if (!rested) return;  // a taker that never rested
    open_side(o.market, o.is_ask, -open_size(gone.o), -1);
  } else {
    OrderView* w = nullptr;
    if (s.big) {
      auto it = s.orders.find(o.order_index);
      w = it == s.orders.end() ? nullptr : &it->second;
    } else {
      w = s.small.writable(o.order_index, small_ctx());
    }
    if (w == nullptr) return;  // a taker that never rested
    open_side(o.market, o.is_ask, open_size(o) - open_size(w->o), 0);
    w->o = o;
    w->updated_ns = u.time_ns;
  }
  if (s.big) {  // (a small list is always current)
    s.orders_dirty = true;
    if (s.orders_list) s.orders_changed.push_back(o.order_index);
  }
  s.view.engine_ts_ns = u.time_ns;
  touch(s);
}

void ReadSide::refresh_daily(MarketState& m) {
  MarketView& v = m.view;
  v.daily_open = v.daily_high = v.daily_low = 0;
  v.daily_base = v.daily_quote = 0;
  v.daily_trades = 0;
  const int64_t now_ms = v.engine_ts_ns / 1'000'000;
  const auto& hours = m.candles[4];
  size_t first = hours.size();  // the hourly candles of the last 24 h: at most 25, from the back
  while (first > 0 && hours[first - 1].start_ms + 3'600'000 > now_ms - 86'400'000) --first;
  for (size_t i = first; i < hours.size(); ++i) {
    const Candle& c = hours[i];
    if (i == first) {
      v.daily_open = c.open;
      v.daily_high = c.high;
      v.daily_low = c.low;
    }
    v.daily_high = std::max(v.daily_high, c.high);
    v.daily_low = std::min(v.daily_low, c.low);
    v.daily_base += c.volume_base;
    v.daily_quote += c.volume_quote;
    v.daily_trades += c.trades;
  }
}

bool ReadSide::orders_due(const AccountState& s, int64_t now_ns) const {
  if (!s.big || !s.orders_list) return true;
  const int64_t interval = std::max(cfg_.orders_interval_ns, static_cast<int64_t>(s.orders.size()) *
                                                                 cfg_.orders_interval_per_order_ns);
  return now_ns - s.orders_built_ns >= interval;
}

void ReadSide::publish_account(AccountState& s, int64_t now_ns, bool force) {
  std::unique_ptr<AccountView> v = accounts_.take_spare();
  if (!v) v = std::make_unique<AccountView>();
  v->make_room();  // (a recycled view has it)
  ++s.view.version;
  v->index = s.view.index;
  v->master = s.view.master;
  v->l1_address = s.view.l1_address;
  v->collateral = s.view.collateral;
  v->positions.assign(s.view.positions.begin(), s.view.positions.end());
  v->keys.assign(s.view.keys.begin(), s.view.keys.end());
  if (s.big && s.orders.size() <= cfg_.orders_in_view) {
    to_small(s);
  } else if (!s.big && s.small.size() > cfg_.orders_in_view) {
    to_big(s);
  }
  // A small list is published as it is (its table: the chunks are shared until they change).
  if (s.big && (s.orders_dirty || !s.orders_list) && (force || orders_due(s, now_ns))) {
    // the chunks that changed, the rest shared with the previous version
    s.orders_list = OrderList::rebuild(s.orders_list.get(), s.orders, s.orders_changed);
    s.orders_dirty = false;
    s.orders_built_ns = now_ns;
  } else if (s.big && s.orders_dirty &&
             std::find(orders_pending_.begin(), orders_pending_.end(), &s) ==
                 orders_pending_.end()) {
    orders_pending_.push_back(&s);
  }
  v->orders = s.orders_list;  // (null while small: to_small resets it)
  v->small_chunks.assign(s.small.chunks().begin(), s.small.chunks().end());
  v->small_orders.clear();
  v->orders_current = !s.orders_dirty;
  v->open_order_count = static_cast<uint32_t>(s.open_orders());
  size_t traded = 0;  // in the chunks held
  for (size_t k = 0; k < s.trade_chunks.size(); ++k) {
    v->trade_chunks[k] = s.trade_chunks[k];
    if (s.trade_chunks[k] != nullptr) traded += s.trade_chunks[k]->size();
  }
  const size_t shown = std::min(traded, kAccountTrades);
  v->trade_first = static_cast<uint32_t>(traded - shown);
  v->trade_shown = static_cast<uint32_t>(shown);
  v->trade_count = s.view.trade_count;
  v->engine_ts_ns = s.view.engine_ts_ns;
  v->version = s.view.version;
  uint64_t tag = 0;
  (void)accounts_.publish(std::move(v), &tag);
  // The chunks the views up to the one just replaced show and this one does not: reusable once
  // that view is unreachable.
  s.small.published(small_gen_++);
  for (const SmallOrderChunk* c : s.small.letting_go()) chunk_pool_.retire(c, tag);
  s.small.letting_go().clear();
}

void ReadSide::to_small(AccountState& s) {
  const SmallOrders::Ctx ctx = small_ctx();
  for (const auto& [id, o] : s.orders) s.small.push_back(o, ctx);
  s.orders.clear();
  s.big = false;
  s.orders_list.reset();
  s.orders_changed.clear();
  s.orders_dirty = false;
}

void ReadSide::to_big(AccountState& s) {
  s.small.for_each([&](const OrderView& o) { s.orders.emplace(o.o.order_index, o); });
  s.small.clear(small_ctx());
  s.big = true;
  s.orders_list.reset();
  s.orders_changed.clear();
  s.orders_dirty = true;
}

namespace {
// `dst` (an older copy of `src`) made equal to `src`, where both are windows of one sequence that
// only grows at the back and is trimmed at the front, ordered by key(), and whose elements never
// change except the last `mutable_tail` ones (an open candle). What the two share is kept: the
// front trimmed, the tail copied. Anything else (no common first element) is a full copy.
template <typename T, typename Key>
void refresh_window(std::vector<T>& dst, std::type_identity_t<std::span<const T>> src,
                    size_t mutable_tail, Key key) {
  if (dst.empty() || src.empty()) {
    dst.assign(src.begin(), src.end());
    return;
  }
  const auto first = std::lower_bound(dst.begin(), dst.end(), key(src.front()),
                                      [&](const T& x, const auto& k) { return key(x) < k; });
  if (first == dst.end() || key(*first) != key(src.front())) {
    dst.assign(src.begin(), src.end());
    return;
  }
  dst.erase(dst.begin(), first);  // what src trimmed since (a memmove, only after a trim)
  const size_t keep = dst.size() > mutable_tail ? dst.size() - mutable_tail : 0;
  if (keep > src.size()) {
    dst.assign(src.begin(), src.end());
    return;
  }
  dst.resize(keep);
  dst.insert(dst.end(), src.begin() + static_cast<std::ptrdiff_t>(keep), src.end());
}
}  // namespace

void ReadSide::publish_history(MarketState& m) {
  std::unique_ptr<MarketHistory> h = histories_[m.view.id]->take_spare();
  if (!h) h = std::make_unique<MarketHistory>();
  // Not an older copy of these arrays (another market's, or from before a restore): start over.
  if (h->id != m.view.id || h->writer_epoch != m.history_epoch || !cfg_.history_incremental) {
    h->trades.clear();
    for (auto& c : h->candles) c.clear();
    h->fundings.clear();
  }
  h->id = m.view.id;
  h->writer_epoch = m.history_epoch;
  refresh_window(h->trades, m.trade_window(), 0, [](const TradeRecord& t) { return t.t.trade_id; });
  for (int r = 0; r < kResolutions; ++r) {  // the last candle may be open: copied again
    h->candles[r].reserve(kCandleRoom);     // once per recycled history
    refresh_window(h->candles[r], m.candles[r], 1, [](const Candle& c) { return c.start_ms; });
  }
  refresh_window(h->fundings, m.fundings, 0, [](const FundingRecord& f) { return f.time_ms; });
  h->engine_ts_ns = m.view.engine_ts_ns;
  histories_[m.view.id]->publish(std::move(h));
}

void ReadSide::publish(int64_t now_ns, bool force_history, bool force_orders) {
  for (MarketId id : markets_changed_) {
    MarketState& m = mstate_[id];
    m.changed = false;
    remember_recent(recent_markets_, recent_market_pos_, static_cast<int16_t>(id));
    refresh_daily(m);
    for (int r = 0; r < kResolutions; ++r)  // the open candles, once per publish
      if (!m.candles[r].empty()) m.view.current[r] = m.candles[r].back();
    ++m.view.version;
    std::unique_ptr<MarketView> v = markets_[id]->take_spare();
    if (!v) v = std::make_unique<MarketView>();
    *v = m.view;
    markets_[id]->publish(std::move(v));
    trade_published_[id].store(trade_logs_[id]->head(), std::memory_order_release);
  }
  markets_changed_.clear();
  // Order lists held back: republish those accounts once due (or forced); the rest keep waiting.
  size_t keep = 0;
  for (AccountState* s : orders_pending_) {
    if (force_orders || orders_due(*s, now_ns)) {
      touch(*s);
    } else {
      orders_pending_[keep++] = s;
    }
  }
  orders_pending_.resize(keep);
  for (AccountState* s : accounts_changed_) {
    s->changed = false;
    publish_account(*s, now_ns, force_orders);
    if (!s->warm_listed) {
      AccountState*& slot = recent_accounts_[recent_account_pos_++ % kWarmAccounts];
      if (slot != nullptr) slot->warm_listed = false;
      slot = s;
      s->warm_listed = true;
    }
  }
  accounts_changed_.clear();
  if (!history_changed_.empty() &&
      (force_history || history_urgent_ || now_ns - last_history_ns_ >= cfg_.history_interval_ns)) {
    history_urgent_ = false;
    for (MarketId id : history_changed_) {
      mstate_[id].history_changed = false;
      publish_history(mstate_[id]);
    }
    history_changed_.clear();
    last_history_ns_ = now_ns;
  }
  accounts_.collect();
  // Held-back order lists aside (orders_current says so), every view now reflects the log.
  log_published_.store(log_.head(), std::memory_order_release);
  closed_published_.store(closed_log_.head(), std::memory_order_release);
  money_published_.store(money_log_.head(), std::memory_order_release);
}

// Deposits, withdrawals and transfers into the money log. A transfer's sending side (its delta
// includes the fee) is held until the receiving side, the engine's next balance update, names
// the amount and the other account; both sides go in then.
void ReadSide::on_money(const StateUpdate& u) {
  const BalanceUpdate& b = u.balance;
  if (b.reason != BalanceReason::kDeposit && b.reason != BalanceReason::kWithdraw &&
      b.reason != BalanceReason::kTransferIn && b.reason != BalanceReason::kTransferOut)
    return;
  MoneyRecord r;
  r.account = b.account;
  r.amount = b.delta < 0 ? -b.delta : b.delta;
  r.time_ns = u.time_ns;
  r.origin_cookie = u.origin_cookie;
  r.origin_worker = u.origin_worker;
  r.reason = b.reason;
  if (b.reason == BalanceReason::kTransferOut) {
    transfer_out_ = r;
    return;
  }
  if (b.reason == BalanceReason::kTransferIn) {
    MoneyRecord out = transfer_out_;
    transfer_out_ = MoneyRecord{};
    out.counterparty = r.account;
    out.fee = out.amount - r.amount;
    out.amount = r.amount;
    out.id = ++money_count_;
    money_log_.append(out);
    r.counterparty = out.account;
  }
  r.id = ++money_count_;
  money_log_.append(r);
}

namespace {
// A log's records up to `head` (published), newest first, that `keep` accepts, at most `limit`.
template <typename T, typename Keep>
std::vector<T> newest_matching(const BroadcastLog<T>& log, uint64_t head, size_t limit, Keep keep) {
  std::vector<T> out;
  T r;
  for (uint64_t pos = head; pos > 0 && out.size() < limit && head - pos < log.capacity() - 1;) {
    --pos;
    if (!log.read(pos, r)) break;  // overwritten meanwhile: the older ones are gone
    if (keep(r)) out.push_back(r);
  }
  return out;
}
}  // namespace

std::vector<MoneyRecord> ReadSide::money_history(AccountIndex a, uint32_t kinds,
                                                 size_t limit) const {
  return newest_matching(money_log_, money_published_.load(std::memory_order_acquire), limit,
                         [&](const MoneyRecord& r) {
                           return r.account == a && (kinds >> static_cast<unsigned>(r.reason) & 1u);
                         });
}

std::vector<OrderView> ReadSide::closed_orders(AccountIndex a, MarketId m, size_t limit) const {
  return newest_matching(closed_log_, closed_published_.load(std::memory_order_acquire), limit,
                         [&](const OrderView& v) {
                           return v.o.account == a && (m == kAllMarkets || v.o.market == m);
                         });
}

std::vector<TradeRecord> ReadSide::recent_trades(MarketId m, size_t limit) const {
  const BroadcastLog<TradeRecord>& log = *trade_logs_[m];
  const uint64_t head = std::min(log.head(), trade_published_[m].load(std::memory_order_acquire));
  std::vector<TradeRecord> out;
  TradeRecord r;
  for (uint64_t pos = head; pos > 0 && out.size() < limit && head - pos < log.capacity() - 1;) {
    --pos;
    if (!log.read(pos, r)) break;  // overwritten meanwhile: what we have is the newest
    out.push_back(r);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace tachyon::pipe
