// What a busy-polling apply thread does while idle (ReadSide::keep_warm, called by
// Pipeline::keep_warm): it reads what its next updates most likely touch so that it stays in this
// core's caches. On this project's VM the same updates ran 6x slower after 200 µs idle
// (bench_read_side; docs/PERFORMANCE.md).
#include "tachyon/core/cache_warm.hpp"
#include "tachyon/pipe/read_side.hpp"

#include <algorithm>
#include <cstddef>

namespace tachyon::pipe {

void AccountTable::keep_warm() const {
  domain_.keep_warm();
  __builtin_prefetch(retired_.data() + retired_.size());
  __builtin_prefetch(spare_.data() + spare_.size());
}

void AccountTable::keep_warm(AccountIndex a) const {
  __builtin_prefetch(&entries_[slot_of(a)], 0, 3);
  if (spare_.empty()) return;
  const AccountView* v = spare_.back();
  warm_lines(v, sizeof(AccountView));
  warm_vector(v->positions);
  warm_vector(v->keys);
  warm_lines(v->small_chunks.data(), v->small_chunks.capacity() * sizeof(void*));
}

void ReadSide::keep_warm(absl::FunctionRef<bool()> work_waiting) {
  uint64_t x = 0;
  for (size_t k = 0; k < kWarmSlice; ++k) {
    if (k > 0 && work_waiting()) return;  // the next batch goes first
    AccountState* s = recent_accounts_[warm_cursor_++ % kWarmAccounts];
    if (s == nullptr) continue;
    x += astate_.find(s->view.index) != astate_.end();
    __builtin_prefetch(&account_cache_[s->view.index & (kAccountCache - 1)]);  // account()'s look
    warm_lines(s, sizeof(AccountState));
    warm_vector(s->view.positions);
    warm_vector(s->view.keys);
    // A small list: its table and chunks (any may change next), else the ends of the tree (new
    // orders go in at the back).
    if (!s->big) {
      warm_vector(s->small.chunks());
      warm_vector(s->small.firsts());
      for (const SmallOrderChunk* c : s->small.chunks())
        warm_lines(c, offsetof(SmallOrderChunk, v) + c->n * sizeof(OrderView));
    } else {
      x += s->orders.begin()->first + s->orders.rbegin()->first;
    }
    if (const TradeChunk* c = s->trade_chunks.back().get()) {  // where the next trade goes
      warm_lines(c->data() + c->size(), sizeof(TradeRecord));
      // While the log grows, at once; a full-size chunk's successor once it is half full. (Made
      // two trades before the end, it often came too late: a market order appends a trade per
      // fill to its taker's log in one batch.)
      if (c->capacity() < kTradeChunkMax || 2 * c->size() >= c->capacity()) {
        // The next chunk, made now if none is ready (while the log grows: 8, 16, 32, 64): a
        // chunk made on the hot path was 10+ µs (allocation and first touch of its memory).
        const size_t cap = next_chunk_capacity(c);
        // (A spare a view still holds is replaced too: it is let go with that view.)
        if (!spare_chunk_ready(s->trade_spare, cap)) {
          s->trade_spare = std::make_shared<TradeChunk>();
          s->trade_spare->resize(cap);  // touched (written) here, not by the first trade in it
          s->trade_spare->clear();
        }
        warm_lines(s->trade_spare->data(), sizeof(TradeRecord));
      }
    }
    accounts_.keep_warm(s->view.index);
  }
  for (const int16_t m : recent_markets_) {
    if (m < 0) continue;
    const MarketState& ms = mstate_[m];
    warm_lines(&ms.view, sizeof(MarketView));
    if (!ms.trade_ring.empty()) {  // where the next trade goes, twice
      const size_t i = ms.trade_n % kHistoryTrades;
      warm_lines(&ms.trade_ring[i], sizeof(TradeRecord));
      warm_lines(&ms.trade_ring[i + kHistoryTrades], sizeof(TradeRecord));
    }
    for (const auto& c : ms.candles)
      if (!c.empty()) warm_lines(&c.back(), sizeof(Candle));
    if (const MarketView* v = markets_[m]->peek_spare()) warm_lines(v, sizeof(MarketView));
    markets_[m]->keep_warm();
    histories_[m]->keep_warm();
    const auto& hours = ms.candles[4];  // refresh_daily reads the last 25
    const size_t h = std::min<size_t>(hours.size(), 25);
    warm_lines(hours.data() + hours.size() - h, h * sizeof(Candle));
    trade_logs_[m]->prefetch_next(8);
  }
  log_.prefetch_next(32);
  chunk_pool_.make_ahead(accounts_.safe_below_seen());
  for (size_t i = 0; i < 4; ++i)  // where the next changes of small lists are copied to
    if (const SmallOrderChunk* c = chunk_pool_.next(i)) warm_lines(c, sizeof(SmallOrderChunk));
  accounts_.keep_warm();
  keep_value(x);
}

}  // namespace tachyon::pipe
