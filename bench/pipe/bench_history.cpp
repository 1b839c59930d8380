// The apply thread's market-history publication (ReadSide::publish with the history due: every
// history_interval, 20 ms, for each market that traded, and at once when a candle closes) for a
// market whose windows are full, as in a server that has run for a while: the last 100 trades,
// 500 candles at each of the 9 resolutions (1m..1w) and 1,000 funding payments (~370 KB).
//
// Two read sides get the same updates; one copies every array into the recycled MarketHistory
// (history_incremental = false, the code before), the other brings the recycled copy up to date
// with what changed since it was published. Each round applies one trade (in the open candles)
// to both and times each one's publish(); a round in three closes the 1m candle first. Rounds
// alternate which side goes first and, in the "cold" rows, evict the caches (a 64 MB walk)
// before each publish, as after a parked apply thread.
//
// Usage: bench_history [rounds]   (default 3000)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tachyon/pipe/read_side.hpp"

using namespace tachyon;
using namespace tachyon::pipe;

namespace {

constexpr int64_t kT0Ms = 1'700'000'000'000 / 604'800'000 * 604'800'000;  // a week boundary
uint64_t g_trade_id = 0;

StateUpdate trade(int64_t t_ms, Ticks px) {
  StateUpdate u(UpdateType::kTrade, t_ms * 1'000'000, StateUpdate::NoZero{});
  u.trade = TradeUpdate{++g_trade_id, 0, 0, 7, 8, px, 1, 0, 0, 0, 0, TradeKind::kTrade, 0, 0, 0};
  return u;
}

StateUpdate funding(int64_t t_ms) {
  StateUpdate u(UpdateType::kFunding, t_ms * 1'000'000, StateUpdate::NoZero{});
  u.funding = FundingUpdate{0, 100, t_ms, t_ms + 3'600'000, 1'000, 0, 300'000, 0, 1};
  return u;
}

double pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3000;
  ReadSideConfig inc_cfg;
  inc_cfg.account_capacity = 1 << 10;
  ReadSideConfig full_cfg = inc_cfg;
  full_cfg.history_incremental = false;
  ReadSide sides[2] = {ReadSide(full_cfg), ReadSide(inc_cfg)};
  auto both = [&](const StateUpdate& u) {
    for (ReadSide& s : sides) s.apply(u);
  };
  StateUpdate mk(UpdateType::kMarket, kT0Ms * 1'000'000, StateUpdate::NoZero{});
  MarketParams p{};
  p.symbol[0] = 'E';
  p.size_decimals = 4;
  p.price_decimals = 2;
  p.default_imf = p.min_imf = 500;
  p.mmf = 300;
  p.cmf = 200;
  p.max_orders = p.max_orders_per_account = 1000;
  p.min_base_lots = 1;
  mk.market = MarketUpdate{0, MarketStatus::kActive, p};
  both(mk);
  // Full windows: a trade a week for 520 weeks opens a candle at every resolution each time;
  // then 1,000 hourly funding payments and trades a minute apart.
  int64_t t = kT0Ms;
  for (int w = 0; w < 520; ++w, t += 604'800'000) both(trade(t, 300'000 + w));
  for (int h = 0; h < 1000; ++h, t += 3'600'000) both(funding(t));
  for (int m = 0; m < 600; ++m, t += 60'000) both(trade(t, 300'000 + m % 50));
  for (ReadSide& s : sides) s.publish(t * 1'000'000, true);
  sides[0].history(0).reader().read([&](const MarketHistory* h) {
    size_t bytes =
        h->trades.size() * sizeof(TradeRecord) + h->fundings.size() * sizeof(FundingRecord);
    for (const auto& c : h->candles) bytes += c.size() * sizeof(Candle);
    std::printf(
        "history of one market: %zu trades, %zu x 9 candles (1m: %zu, 1w: %zu), %zu fundings = %zu "
        "KB\n",
        h->trades.size(), h->candles[4].size(), h->candles[0].size(), h->candles[8].size(),
        h->fundings.size(), bytes / 1024);
  });
  std::vector<char> evict(64 << 20);
  std::printf("\n| caches | history publication | p50 µs | p99 | p99.9 | max | rounds |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (bool cold : {false, true}) {
    std::vector<double> us[2];
    for (int r = 0; r < rounds; ++r) {
      t += r % 3 == 0 ? 60'000 : 1'000;  // a round in three closes the 1m candle
      both(trade(t, 300'000 + r % 50));
      for (int k = 0; k < 2; ++k) {
        const int s = (r + k) % 2;  // alternate who goes first
        if (cold)
          for (size_t i = 0; i < evict.size(); i += 64) evict[i] = static_cast<char>(evict[i] + 1);
        const auto t0 = std::chrono::steady_clock::now();
        sides[s].publish(t * 1'000'000, true);
        us[s].push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                .count());
      }
    }
    for (int s = 0; s < 2; ++s)
      std::printf("| %s | %s | %.1f | %.1f | %.1f | %.1f | %d |\n", cold ? "cold" : "warm",
                  s == 0 ? "full copy (before)" : "incremental", pct(us[s], 0.5), pct(us[s], 0.99),
                  pct(us[s], 0.999), pct(us[s], 1.0), rounds);
  }
  // The two sides must publish the same history.
  bool same = true;
  sides[0].history(0).reader().read([&](const MarketHistory* a) {
    sides[1].history(0).reader().read([&](const MarketHistory* b) {
      same = a->trades.size() == b->trades.size() && a->fundings.size() == b->fundings.size();
      for (int r = 0; r < kResolutions && same; ++r)
        same = a->candles[r].size() == b->candles[r].size() &&
               std::equal(a->candles[r].begin(), a->candles[r].end(), b->candles[r].begin(),
                          [](const Candle& x, const Candle& y) {
                            return x.start_ms == y.start_ms && x.close == y.close &&
                                   x.trades == y.trades;
                          });
    });
  });
  std::printf("\nsame history on both sides: %s\n", same ? "yes" : "NO");
  return same ? 0 : 1;
}
