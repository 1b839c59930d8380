// WorkerLogic: what happens when the apply thread rings. Results go back to their requests;
// the update log is tailed from this worker's cursor and turned into frames for the channels
// that have subscribers here; books are diffed against the last state this worker sent.
#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "tachyon/api/json_writer.hpp"
#include "tachyon/api/worker.hpp"
#include "tachyon/core/clock.hpp"

namespace tachyon::api {

namespace {
int64_t now_ns() { return realtime_ns(); }

// Levels that differ between two sides kept best first; removed ones with size 0.
void diff_side(const std::vector<pipe::PriceLevel>& old_lv,
               const std::vector<pipe::PriceLevel>& new_lv, bool is_ask,
               std::vector<pipe::PriceLevel>& out) {
  auto better = [is_ask](Ticks a, Ticks b) { return is_ask ? a < b : a > b; };
  size_t i = 0, j = 0;
  while (i < old_lv.size() || j < new_lv.size()) {
    if (j == new_lv.size() || (i < old_lv.size() && better(old_lv[i].price, new_lv[j].price))) {
      out.push_back(pipe::PriceLevel{old_lv[i++].price, 0, 0});
    } else if (i == old_lv.size() || better(new_lv[j].price, old_lv[i].price)) {
      out.push_back(new_lv[j++]);
    } else {
      if (old_lv[i].size != new_lv[j].size) out.push_back(new_lv[j]);
      ++i;
      ++j;
    }
  }
}
}  // namespace

bool WorkerLogic::refresh_book(MarketId m) {
  auto& rd = book_readers_[m];
  if (!rd) rd.emplace(pipe_.book(m).reader());
  BookCache& c = books_[m];
  return rd->read([&](const pipe::BookSnapshot* s) {
    const bool current = s == nullptr || (c.valid && s->nonce == c.nonce);
    shared_.metrics.read(ReadKind::kWorkerBook, current);
    if (current) return false;
    c.nonce = s->nonce;
    c.engine_ts_ns = s->engine_ts_ns;
    c.bids.assign(s->bids.begin(), s->bids.end());  // best first
    c.asks.assign(s->asks.begin(), s->asks.end());
    c.valid = true;
    return true;
  });
}

void WorkerLogic::fan_out_height() {
  auto it = subs_.find("height");
  if (it == subs_.end()) return;
  const uint64_t h = height();
  if (h == last_height_) return;
  last_height_ = h;
  for (auto& s : it->second) {
    auto c = s.conn.lock();
    if (!c) continue;
    std::string f;
    JsonWriter w(f);
    const int64_t now = now_ns();
    w.obj().kv_s("channel", "height").kv_i("height", h).kv_i("timestamp", now / 1'000'000);
    w.kv_i("engine_ts_us", now / 1000).kv_i("sent_ts_us", now / 1000);
    w.kv_s("type", "update/height").end_obj();
    push(*c, std::move(f));
  }
}

void WorkerLogic::on_wake() {
  TACHYON_OWNER_ONLY(owner_);
  ApiMetrics& m = shared_.metrics;
  tachyon::Track* const track = m.tracks[index_];
  const int64_t t0 = now_ns();
  const size_t results = pipe_.poll_results(index_, [&](const pipe::Result& r) {
    auto it = pending_.find(r.cookie);
    if (it == pending_.end()) return;
    auto done = std::move(it->second.done);
    pending_.erase(it);
    done(r);
  });
  const int64_t t1 = now_ns();
  const uint64_t pos0 = log_pos_;
  fan_out();
  fan_out_books();
  fan_out_height();
  release_awaiting(/*expire=*/false);
  const int64_t t2 = now_ns();
  const uint64_t updates = log_pos_ - pos0;
  m.fan_out(index_, static_cast<uint64_t>(t2 - t1), updates);
  m.read(ReadKind::kAccountOrders, true, dry_.order_list_reads);
  m.read(ReadKind::kAccountOrders, false, dry_.order_list_lagging);
  dry_.order_list_reads = dry_.order_list_lagging = 0;
  if (track != nullptr) {
    if (results > 0) track->span(m.ev_results, t0, t1, results);
    track->span(m.ev_fan_out, t1, t2, updates);
  }
  shed_over_budget();  // where the queues grow
}

// What one fan-out round found in the update log: per market and per account, the changes its
// subscribers get a frame for.
struct WorkerLogic::FanOutBatch {
  std::map<MarketId, std::vector<pipe::TradeRecord>> trades;  // only subscribed markets
  std::map<AccountIndex, std::vector<pipe::TradeRecord>> acct_trades;
  std::map<AccountIndex, std::vector<pipe::OrderView>> acct_orders;
  std::set<AccountIndex> accounts;
  std::set<MarketId> markets;

  void add(const StateUpdate& u, bool trades_subscribed, const pipe::ReadSide& rs) {
    switch (u.type) {
      case UpdateType::kTrade: {
        const pipe::TradeRecord rec{u.trade, u.time_ns, u.origin_cookie, u.origin_worker,
                                    rs.logged_trade_sides(u.trade.trade_id)};
        if (trades_subscribed) trades[u.trade.market].push_back(rec);
        markets.insert(u.trade.market);
        for (AccountIndex a : {u.trade.maker, u.trade.taker}) {
          acct_trades[a].push_back(rec);
          accounts.insert(a);
          if (u.trade.maker == u.trade.taker) break;
        }
        break;
      }
      case UpdateType::kOrderAdded:
      case UpdateType::kOrderReduced:
      case UpdateType::kOrderRemoved: {
        pipe::OrderView ov{u.order, u.time_ns, u.time_ns, u.type == UpdateType::kOrderRemoved};
        acct_orders[u.order.account].push_back(ov);
        accounts.insert(u.order.account);
        break;
      }
      case UpdateType::kPosition: accounts.insert(u.position.account); break;
      case UpdateType::kBalance: accounts.insert(u.balance.account); break;
      case UpdateType::kMarkPrice: markets.insert(u.mark.market); break;
      case UpdateType::kMarket: markets.insert(u.market.market); break;
      case UpdateType::kFunding: markets.insert(u.funding.market); break;
      default: break;
    }
  }
};

// The update log from where this worker stopped up to what the views show, as frames to the
// subscribers of each market and account it touched. A worker that fell behind the log resyncs
// every connection from the views.
void WorkerLogic::fan_out() {
  const auto& log = pipe_.read_side().log();
  const uint64_t head = pipe_.read_side().log_published();  // not past what the views show
  if (head <= log_pos_) return;
  const bool overrun = head - log_pos_ > log.capacity();
  shared_.metrics.read(ReadKind::kWsLog, !overrun);
  if (overrun) {
    resync_all();
    log_pos_ = head;
    return;
  }
  FanOutBatch batch;
  StateUpdate u;
  for (; log_pos_ < head; ++log_pos_) {
    if (!log.read(log_pos_, u)) {  // overwritten while we read: we fell behind
      resync_all();
      log_pos_ = log.head();
      return;
    }
    batch.add(
        u,
        u.type == UpdateType::kTrade && subs_.contains("trade/" + std::to_string(u.trade.market)),
        pipe_.read_side());
  }
  for (auto& kv : batch.trades) {  // (clang 14 cannot capture structured bindings)
    const MarketId m = kv.first;
    const auto& list = kv.second;
    each_subscriber_same("trade/" + std::to_string(m),
                         [&](WsConn& c) { return trades_frame(c, m, list, false); });
  }
  if (!batch.markets.empty()) {
    for (MarketId m : batch.markets)
      each_subscriber_same("market_stats/" + std::to_string(m),
                           [&](WsConn& c) { return market_stats_frame(c, m, false, false); });
    each_subscriber_same("market_stats/all",
                         [&](WsConn& c) { return market_stats_frame(c, 0, true, false); });
  }
  for (AccountIndex a : batch.accounts) fan_out_account(a, batch);
}

void WorkerLogic::fan_out_account(AccountIndex a, const FanOutBatch& batch) {
  const std::string id = std::to_string(a);
  const auto trades = batch.acct_trades.find(a);
  const std::vector<pipe::TradeRecord>* tl =
      trades == batch.acct_trades.end() ? nullptr : &trades->second;
  each_subscriber_same("account_all/" + id, [&](WsConn& c) {
    return account_frame(c, "account_all", a, false, tl, nullptr, kAllMarkets);
  });
  each_subscriber_same("user_stats/" + id, [&](WsConn& c) {
    return account_frame(c, "user_stats", a, false, nullptr, nullptr, kAllMarkets);
  });
  if (tl != nullptr) {
    each_subscriber_same("account_all_trades/" + id, [&](WsConn& c) {
      return account_frame(c, "account_all_trades", a, false, tl, nullptr, kAllMarkets);
    });
  }
  const auto orders = batch.acct_orders.find(a);
  if (orders == batch.acct_orders.end()) return;
  const std::vector<pipe::OrderView>* ol = &orders->second;
  each_subscriber_same("account_all_orders/" + id, [&](WsConn& c) {
    return account_frame(c, "account_all_orders", a, false, nullptr, ol, kAllMarkets);
  });
  std::set<MarketId> ms;
  for (const auto& o : *ol) ms.insert(o.o.market);
  for (MarketId m : ms)
    each_subscriber_same("account_orders/" + std::to_string(m) + "/" + id, [&](WsConn& c) {
      return account_frame(c, "account_orders", a, false, nullptr, ol, m);
    });
}

uint64_t WorkerLogic::height() const {
  return shared_.current_height ? shared_.current_height() : pipe_.applied_seq();
}

void WorkerLogic::fan_out_books() {
  std::vector<pipe::PriceLevel> dbids, dasks;
  for (auto& [key, list] : subs_) {
    if (key.rfind("order_book/", 0) != 0 || list.empty()) continue;
    const auto m = static_cast<MarketId>(std::stoi(key.substr(11)));
    BookCache& cache = books_[m];
    const BookCache before = cache;  // levels as last sent
    if (!refresh_book(m)) continue;
    dbids.clear();
    dasks.clear();
    diff_side(before.bids, cache.bids, false, dbids);
    diff_side(before.asks, cache.asks, true, dasks);
    const std::string at_zero = book_frame_at_zero(m, false, cache, &dbids, &dasks, before.nonce);
    for (auto& s : list)
      if (auto c = s.conn.lock()) push(*c, with_offset(at_zero, *c));
  }
}

void WorkerLogic::resync_all() {
  for (auto& [id, weak] : conns_) {
    auto c = weak.lock();
    if (!c) continue;
    for (const auto& key : c->subs) {
      if (key.rfind("order_book/", 0) == 0) {
        const auto m = static_cast<MarketId>(std::stoi(key.substr(11)));
        refresh_book(m);
        push(*c, book_frame(*c, m, true, books_[m], nullptr, nullptr, 0));
      }
    }
  }
}

// A reader whose send queue has not once drained for ws_stall_timeout_ms gets its resync; behind
// for as long again, it is cut. Sampled once a tick from the drain count the connection keeps,
// so the send path reads no clock: a stall is seen up to one tick late. At most
// kStallActionsPerTick connections are resynced or cut per tick, the longest behind first: many
// readers stalling together (one client's, one network's) would otherwise free their queues and
// format their snapshots in one go, in the middle of the healthy readers' fan-out.
void WorkerLogic::sweep_stalled(int64_t now) {
  if (cfg_.ws_stall_timeout_ms <= 0) return;
  const int64_t timeout_ns = cfg_.ws_stall_timeout_ms * 1'000'000;
  std::vector<std::shared_ptr<WsConn>> due;
  for (auto& [id, weak] : conns_) {
    auto c = weak.lock();
    if (!c || c->cut) continue;
    if (c->queued_bytes() == 0 || c->drains != c->drains_seen) {  // keeping up
      c->drains_seen = c->drains;
      c->behind_since_ns = 0;
    } else if (c->behind_since_ns == 0) {
      c->behind_since_ns = now;
    } else if (now - c->behind_since_ns >= timeout_ns) {
      due.push_back(std::move(c));
    }
  }
  const size_t n = std::min(due.size(), kStallActionsPerTick);
  std::partial_sort(
      due.begin(), due.begin() + static_cast<std::ptrdiff_t>(n), due.end(),
      [](const auto& a, const auto& b) { return a->behind_since_ns < b->behind_since_ns; });
  for (size_t i = 0; i < n; ++i) {
    WsConn& c = *due[i];
    if (c.resynced)  // cut_conn reports the close later: conns_ stays as it is here
      cut(c, shared_.metrics.stall_closes(), "stalled reader: send queue not drained");
    else
      resync(c, shared_.metrics.stall_resyncs());
  }
}

// All workers' send queues together over ws_total_queue_bytes: this worker cuts its own
// connections, the largest queue first (the reader furthest behind, and the most memory back
// per cut), while the sum stays over and this worker holds more than its share of the budget.
// Over the budget, some worker is over its share, so the sum comes back under it; a worker under
// its share cuts nothing, so a healthy reader is not cut for another worker's stalled ones. Two
// workers over their share at once may both cut, up to a connection each more than needed.
void WorkerLogic::shed_over_budget() {
  const auto budget = static_cast<int64_t>(cfg_.ws_total_queue_bytes);
  if (budget == 0) return;
  ApiMetrics& m = shared_.metrics;
  const int64_t share = budget / m.workers();
  int64_t mine = m.ws_queued(index_);  // this worker's own slot: no other core's line to read
  if (mine <= share) return;
  int64_t total = m.ws_queued_total();
  if (total <= budget) return;
  std::vector<std::pair<size_t, std::shared_ptr<WsConn>>> queues;
  for (auto& [id, weak] : conns_) {
    auto c = weak.lock();
    if (c && !c->cut && c->queued_bytes() > 0) queues.emplace_back(c->queued_bytes(), c);
  }
  std::sort(queues.begin(), queues.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [bytes, c] : queues) {
    if (total <= budget || mine <= share) break;
    cut(*c, m.budget_closes(), "send queues over their total budget: the largest is cut");
    total -= static_cast<int64_t>(bytes);
    mine -= static_cast<int64_t>(bytes);
  }
}

void WorkerLogic::on_tick() {
  TACHYON_OWNER_ONLY(owner_);
  const int64_t now = now_ns();
  std::vector<std::shared_ptr<WsConn>> idle;
  for (auto it = conns_.begin(); it != conns_.end();) {
    auto c = it->second.lock();
    if (!c) {
      conns_.erase(it++);
      continue;
    }
    if (now - c->last_rx_ns > int64_t{cfg_.idle_timeout_s} * 1'000'000'000) idle.push_back(c);
    ++it;
  }
  for (auto& c : idle) c->close_conn("idle timeout: no frame from the client");
  sweep_stalled(now);
  release_awaiting(/*expire=*/true);
  // Keep-alive and a periodic market_stats push (clients that watch the same market twice on
  // one connection wait for a push rather than a second snapshot).
  if (now - last_ping_ns_ >= 30'000'000'000) {  // keep-alive, Lighter style
    last_ping_ns_ = now;
    for (auto& [id, weak] : conns_)
      if (auto c = weak.lock()) push(*c, "{\"type\":\"ping\"}");
  }
  push_consoles(now);
  if (now - last_stats_push_ns_ >= 1'000'000'000) {
    last_stats_push_ns_ = now;
    for (auto& [key, list] : subs_) {
      if (key.rfind("market_stats/", 0) != 0) continue;
      const bool all = key == "market_stats/all";
      const MarketId m = all ? 0 : static_cast<MarketId>(std::stoi(key.substr(13)));
      for (auto& s : list)
        if (auto c = s.conn.lock()) push(*c, market_stats_frame(*c, m, all, false));
    }
  }
}

}  // namespace tachyon::api
