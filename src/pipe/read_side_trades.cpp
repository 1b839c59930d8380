// The read side's trades (include/tachyon/pipe/read_side.hpp): each trade's two sides, the
// market's tape and candles, and each account's trade log.
#include <algorithm>
#include <optional>

#include "tachyon/engine/engine.hpp"
#include "tachyon/pipe/read_side.hpp"

namespace tachyon::pipe {

// The trade's sides come from the two positions as this thread holds them. They are the
// engine's before the fill: the engine emits a trade before it applies it, and a matching's
// taker position update comes only at its end, so each trade moves the positions here (as
// the engine did) for the next one; the position updates then set what the engine has.
void ReadSide::on_trade(const StateUpdate& u) {
  const TradeUpdate& t = u.trade;
  const MarketView& mv = mstate_[t.market].view;
  PositionView& mp = position_entry(account(t.maker), t.market);
  PositionView& tp = position_entry(account(t.taker), t.market);
  FillOutcome after[2];
  const TradeSides sides =
      trade_sides(t, &mp, &tp, mv.params.default_imf, mv.quote_multiplier, after);
  for (auto [p, f] : {std::pair{&mp, &after[0]}, std::pair{&tp, &after[1]}}) {
    p->size = f->size;
    p->entry_notional = f->entry_notional;
    p->realized_pnl += f->pnl;
  }
  if (sides_tape_.head() == 0) tape_first_id_.store(t.trade_id + 1, std::memory_order_release);
  sides_tape_.append(TapeEntry{t.trade_id, sides});
  record_trade(u, sides);
}

TradeSides ReadSide::logged_trade_sides(uint64_t trade_id) const {
  const uint64_t first = tape_first_id_.load(std::memory_order_acquire);
  if (first == 0 || trade_id + 1 < first) return TradeSides{};
  TapeEntry e;
  if (!sides_tape_.read(trade_id + 1 - first, e) || e.trade_id != trade_id) return TradeSides{};
  return e.sides;
}

TradeSides trade_sides(const TradeUpdate& t, const PositionView* maker, const PositionView* taker,
                       Bps4 default_imf, int64_t quote_multiplier, FillOutcome* after) {
  auto side = [&](const PositionView* p, bool is_buy, int k) {
    TradeSide s;
    if (p != nullptr) {
      s.size_before = p->size;
      s.entry_before = p->entry_notional;
      s.imf_before = p->imf;
    }
    if (s.imf_before == 0) s.imf_before = default_imf;
    const FillOutcome f =
        fill_outcome(s.size_before, s.entry_before, is_buy, t.size, t.price, quote_multiplier);
    s.pnl = f.pnl;
    if (after != nullptr) after[k] = f;
    return s;
  };
  return TradeSides{side(maker, t.taker_is_ask != 0, 0), side(taker, t.taker_is_ask == 0, 1)};
}

void ReadSide::record_trade(const StateUpdate& u, const TradeSides& sides) {
  const TradeUpdate& t = u.trade;
  MarketState& m = mstate_[t.market];
  const TradeRecord rec{t, u.time_ns, u.origin_cookie, u.origin_worker, sides};
  // Takeovers and deleverages move positions at the zero price, outside the book: they are on
  // the tape (liquidation_trades) but set neither the last price nor the candles.
  const bool book_trade = t.kind == TradeKind::kTrade || t.kind == TradeKind::kLiquidation;
  if (book_trade) m.view.last_trade_price = t.price;
  ++m.view.trade_count;
  m.view.engine_ts_ns = u.time_ns;
  touch(m);
  m.push_trade(rec);
  trade_logs_[t.market]->append(rec);
  const int64_t t_ms = u.time_ns / 1'000'000;
  const Usdc quote = t.price * t.size * m.view.quote_multiplier;
  for (int r = 0; r < kResolutions && book_trade; ++r) {
    auto& cs = m.candles[r];
    const int64_t len = kResolutionSeconds[r] * 1000;
    if (cs.empty() || t_ms >= cs.back().start_ms + len) {  // no division in the open candle
      const int64_t start = t_ms - t_ms % len;
      if (cs.empty()) {
        cs.reserve(kCandleRoom);
      } else {
        history_urgent_ = true;  // the previous candle closed
      }
      if (cs.size() == kHistoryCandles) cs.erase(cs.begin());
      cs.push_back(Candle{start, t.price, t.price, t.price, t.price, 0, 0, 0, 0});
    }
    Candle& c = cs.back();
    c.high = std::max(c.high, t.price);
    c.low = std::min(c.low, t.price);
    c.close = t.price;
    c.volume_base += t.size;
    c.volume_quote += quote;
    ++c.trades;
    c.last_trade_id = t.trade_id;
  }
  if (!m.history_changed) {
    m.history_changed = true;
    history_changed_.push_back(t.market);
  }
  for (AccountIndex a : {t.maker, t.taker}) {
    AccountState& s = account(a);
    append_trade(s, rec);
    ++s.view.trade_count;
    s.view.engine_ts_ns = u.time_ns;
    touch(s);
    if (t.maker == t.taker) break;
  }
}

TradeSides trade_sides(const TradeUpdate& t, const Engine& e) {
  const Market* m = e.market(t.market);
  if (m == nullptr) return TradeSides{};
  auto view = [&](AccountIndex a) {
    const Account* acct = e.account(a);
    const Position* p = acct != nullptr ? acct->position(t.market) : nullptr;
    std::optional<PositionView> v;
    if (p != nullptr) {
      v.emplace();
      v->size = p->size;
      v->entry_notional = p->entry_notional;
      v->imf = p->imf;
    }
    return v;
  };
  const auto maker = view(t.maker), taker = view(t.taker);
  return trade_sides(t, maker ? &*maker : nullptr, taker ? &*taker : nullptr, m->params.default_imf,
                     m->quote_multiplier);
}

// Appends past the end of every range a view holds (a chunk never reallocates: it is appended to
// only below its capacity), so readers never see the write. A full chunk is followed by a new
// one and the oldest of the kParts held is dropped: the last kAccountTrades are always in the
// other three (growing 8, 16, 32, 64: the three newest full ones hold at least 16 + 32 + 64).
static_assert(ReadSide::kAccountTrades <= 16 + 32 + kTradeChunkMax && TradeRange::kParts == 4);
size_t ReadSide::next_chunk_capacity(const TradeChunk* newest) {
  return newest == nullptr ? 8 : std::min(kTradeChunkMax, 2 * newest->capacity());
}
// No view holds it any more (views let go of chunks on this thread only, so the count is exact
// here) and it is the size the next chunk must be (a view reads a full chunk's capacity).
bool ReadSide::spare_chunk_ready(const std::shared_ptr<TradeChunk>& spare, size_t cap) {
  return spare != nullptr && spare.use_count() == 1 && spare->capacity() == cap;
}
void ReadSide::append_trade(AccountState& s, const TradeRecord& rec) {
  auto& cs = s.trade_chunks;
  const TradeChunk* newest = cs.back().get();
  if (newest == nullptr || newest->size() == newest->capacity()) {
    const size_t cap = next_chunk_capacity(newest);
    std::shared_ptr<TradeChunk> next;
    if (spare_chunk_ready(s.trade_spare, cap)) {
      next = std::move(s.trade_spare);
      next->clear();
    } else {
      next = std::make_shared<TradeChunk>();
      next->reserve(cap);
    }
    std::shared_ptr<TradeChunk> dropped = std::move(cs[0]);
    for (size_t k = 0; k + 1 < cs.size(); ++k) cs[k] = std::move(cs[k + 1]);
    cs.back() = std::move(next);
    if (dropped != nullptr && dropped->capacity() == kTradeChunkMax)
      s.trade_spare = std::move(dropped);
  }
  cs.back()->push_back(rec);
}

}  // namespace tachyon::pipe
