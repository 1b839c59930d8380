// The read side alone, on one thread: what applying each update (ReadSide::apply) and publishing
// a tx's changes (ReadSide::publish) cost, by update type, with the same updates applied back to
// back and with the thread idle (spinning on the clock, as a busy-polling apply thread does) for
// a while before each tx. The updates are bench_apply's flow (200 accounts, a book of 2 x 400
// levels, 55% limit orders near the touch, 35% cancels, 10% market orders), executed on an engine
// once and recorded; every row replays the same recorded txs on a fresh read side seeded from the
// same engine state, after the same warm-up. At 20k updates/s (bench_apply's lower rate) a
// busy-polling apply thread waits ~240 µs between txs.
//
// Usage: bench_read_side [txs per row] [--back-to-back]   (default 20000; the warm-up is 5000
// more). --back-to-back: only the first row (no idling), e.g. to compare two builds or to profile.
// --row K: the first row and row K only (4: 200 µs idle, keeping warm), e.g. to profile it.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <immintrin.h>
#include <sched.h>

#include <atomic>
#include <thread>

#include "bench_world.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/pipe/read_side.hpp"
#include "tachyon/pipe/spsc_ring.hpp"

using namespace tachyon;

namespace {

// The views of the engine as it is now, on this thread (what ReadModel's seeding does on two).
void seed(pipe::ReadSide& rs, const Engine& e, int64_t now_ns) {
  rs.seed_markets(e, now_ns);
  rs.seed_accounts(e, now_ns, 0, e.accounts().size());
  rs.seed_done(now_ns);
}

class Capture final : public UpdateSink {
 public:
  std::vector<StateUpdate> v;
  void on_update(const StateUpdate& u) override { v.push_back(u); }
};

constexpr size_t kWarmTxs = 5000;

struct Row {
  std::array<uint64_t, 16> ns{}, count{};
  uint64_t publish_ns = 0, txs = 0;
  double per_tx() const {
    uint64_t s = publish_ns;
    for (uint64_t v : ns) s += v;
    return static_cast<double>(s) / static_cast<double>(txs);
  }
  double mean(UpdateType t) const {
    const auto i = static_cast<size_t>(t);
    return count[i] == 0 ? 0 : static_cast<double>(ns[i]) / static_cast<double>(count[i]);
  }
};

// Replays txs [0, tx_end.size()) on `rs`: the first kWarmTxs back to back and unmeasured, the
// rest measured, each after `idle_ns` of spinning.
Row replay(pipe::ReadSide& rs, const std::vector<StateUpdate>& updates,
           const std::vector<size_t>& tx_end, int64_t idle_ns, bool warm) {
  Row row;
  size_t u = 0;
  for (size_t t = 0; t < tx_end.size(); ++t) {
    const bool measured = t >= kWarmTxs;
    if (measured && idle_ns > 0) {
      const int64_t until = realtime_ns() + idle_ns;
      int64_t next_warm = 0;
      for (int64_t now = realtime_ns(); now < until; now = realtime_ns()) {
        if (warm && now >= next_warm) {
          rs.keep_warm([] { return false; });
          next_warm = now + 2'000;
        }
        _mm_pause();
      }
    }
    for (; u < tx_end[t]; ++u) {
      const int64_t a = realtime_ns();
      rs.apply(updates[u]);
      const int64_t z = realtime_ns();
      if (measured) {
        const auto i = static_cast<size_t>(updates[u].type) % row.ns.size();
        row.ns[i] += static_cast<uint64_t>(z - a);
        ++row.count[i];
      }
    }
    const int64_t a = realtime_ns();
    rs.publish(a, false);
    if (measured) {
      row.publish_ns += static_cast<uint64_t>(realtime_ns() - a);
      ++row.txs;
    }
  }
  return row;
}

// The same replay with the updates handed over as the pipeline does: a producer thread on CPU 0
// pushes each tx's updates into an SpscRing, one at a time, `idle_ns` apart; this thread, on CPU 1,
// spins on the ring (keeping warm every 64 idle rounds, as the apply thread does), applies each
// update as it arrives and publishes at each tx's result. Measures as replay() does.
Row replay_ring(pipe::ReadSide& rs, const std::vector<StateUpdate>& updates,
                const std::vector<size_t>& tx_end, int64_t idle_ns) {
  pipe::SpscRing<StateUpdate> ring(1 << 16);
  std::atomic<bool> go{false};
  std::thread producer([&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    ::sched_setaffinity(0, sizeof set, &set);
    while (!go.load()) _mm_pause();
    size_t u = 0;
    for (size_t t = 0; t < tx_end.size(); ++t) {
      if (t >= kWarmTxs) {
        const int64_t until = realtime_ns() + idle_ns;
        while (realtime_ns() < until) _mm_pause();
      }
      for (; u < tx_end[t]; ++u)
        while (!ring.try_push(updates[u])) _mm_pause();
    }
  });
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(1, &set);
  cpu_set_t saved;
  ::sched_getaffinity(0, sizeof saved, &saved);
  ::sched_setaffinity(0, sizeof set, &set);
  go.store(true);
  Row row;
  size_t u = 0, t = 0;
  uint32_t idle_rounds = 0;
  while (u < updates.size()) {
    const bool measured = t >= kWarmTxs;
    const size_t n = ring.drain_until(
        [&](const StateUpdate& x) {
          const int64_t a = realtime_ns();
          rs.apply(x);
          const int64_t z = realtime_ns();
          if (measured) {
            const auto i = static_cast<size_t>(x.type) % row.ns.size();
            row.ns[i] += static_cast<uint64_t>(z - a);
            ++row.count[i];
          }
          ++u;
          if (x.type != UpdateType::kTxResult) return true;
          const int64_t p = realtime_ns();
          rs.publish(p, false);
          if (measured) {
            row.publish_ns += static_cast<uint64_t>(realtime_ns() - p);
            ++row.txs;
          }
          ++t;
          return true;
        },
        4096);
    if (n == 0 && ++idle_rounds % 64 == 0) rs.keep_warm([&] { return ring.size_approx() > 0; });
    if (n == 0) _mm_pause();
  }
  producer.join();
  ::sched_setaffinity(0, sizeof saved, &saved);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  size_t measured = 20000;
  bool back_to_back_only = false, via_ring = false;
  int only_row = -1;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--back-to-back") {
      back_to_back_only = true;
    } else if (std::string(argv[i]) == "--ring") {
      via_ring = true;
    } else if (std::string(argv[i]) == "--row" && i + 1 < argc) {
      only_row = std::atoi(argv[++i]);
    } else {
      measured = static_cast<size_t>(std::atoll(argv[i]));
    }
  }
  const size_t n_txs = kWarmTxs + measured;
  testing::TxBuilder b(realtime_ns());
  bench::ApplyFlow flow(b, 1);
  auto engine = flow.world();
  uint64_t seq = engine->last_seq();
  // One read side per row, seeded from the state the recorded flow starts from.
  // Rows: the idle time before each tx, and whether the idle thread calls ReadSide::keep_warm()
  // every 2 µs meanwhile. The rows alternate with and without it.
  struct RowSpec {
    int64_t idle_ns;
    bool warm;
  };
  const RowSpec kRowSpecs[] = {{0, false},       {20'000, false}, {20'000, true},
                               {200'000, false}, {200'000, true}, {1'000'000, false},
                               {1'000'000, true}};
  const size_t kRows = back_to_back_only ? 1 : std::size(kRowSpecs);
  std::vector<std::unique_ptr<pipe::ReadSide>> sides;
  for (size_t r = 0; r < kRows; ++r) {
    sides.push_back(std::make_unique<pipe::ReadSide>(pipe::ReadSideConfig{}));
    seed(*sides.back(), *engine, realtime_ns());
  }
  Capture cap;
  std::vector<size_t> tx_end;
  for (size_t n = 0; n < n_txs; ++n) {
    AccountIndex limit_account = 0;
    Tx tx = flow.next(limit_account);
    tx.h.seq = ++seq;
    tx.h.time_ns = realtime_ns();
    const TxResult r = engine->execute(tx, cap);
    if (r.reject == Reject::kOk) {
      flow.sent(tx);
      if (limit_account != 0 && r.order_index != 0) flow.rested(limit_account, r.order_index);
    }
    tx_end.push_back(cap.v.size());
  }
  std::printf("## The read side alone: ns per update, back to back and after idling\n\n");
  std::printf("%zu txs measured (after %zu back to back), %.2f updates per tx\n\n", measured,
              kWarmTxs, static_cast<double>(cap.v.size()) / static_cast<double>(n_txs));
  std::printf(
      "| idle before each tx | keep_warm while idle | order_added | order_removed | order_reduced "
      "| trade | position | "
      "balance | tx_result | publish (per tx) | per tx | x back to back |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  double base = 0;
  if (via_ring) {  // 200 µs apart, keeping warm: in one thread, then handed over by a ring
    sides.push_back(std::make_unique<pipe::ReadSide>(pipe::ReadSideConfig{}));
    seed(*sides.back(), *engine, realtime_ns());
    sides.push_back(std::make_unique<pipe::ReadSide>(pipe::ReadSideConfig{}));
    seed(*sides.back(), *engine, realtime_ns());
    const Row rows[2] = {replay(*sides[sides.size() - 2], cap.v, tx_end, 200'000, true),
                         replay_ring(*sides.back(), cap.v, tx_end, 200'000)};
    for (const Row& row : rows)
      std::printf(
          "| 200 µs | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | - |\n",
          &row == &rows[0] ? "yes (one thread)" : "every 64 idle rounds (via a ring from CPU 0)",
          row.mean(UpdateType::kOrderAdded), row.mean(UpdateType::kOrderRemoved),
          row.mean(UpdateType::kOrderReduced), row.mean(UpdateType::kTrade),
          row.mean(UpdateType::kPosition), row.mean(UpdateType::kBalance),
          row.mean(UpdateType::kTxResult),
          static_cast<double>(row.publish_ns) / static_cast<double>(row.txs), row.per_tx());
    return 0;
  }
  for (size_t r = 0; r < kRows; ++r) {
    if (only_row >= 0 && r != static_cast<size_t>(only_row) && r != 0) continue;
    const Row row = replay(*sides[r], cap.v, tx_end, kRowSpecs[r].idle_ns, kRowSpecs[r].warm);
    if (r == 0) base = row.per_tx();
    std::printf(
        "| %.0f µs | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f |\n",
        static_cast<double>(kRowSpecs[r].idle_ns) / 1e3, kRowSpecs[r].warm ? "yes" : "no",
        row.mean(UpdateType::kOrderAdded), row.mean(UpdateType::kOrderRemoved),
        row.mean(UpdateType::kOrderReduced), row.mean(UpdateType::kTrade),
        row.mean(UpdateType::kPosition), row.mean(UpdateType::kBalance),
        row.mean(UpdateType::kTxResult),
        static_cast<double>(row.publish_ns) / static_cast<double>(row.txs), row.per_tx(),
        row.per_tx() / base);
  }
  return 0;
}
