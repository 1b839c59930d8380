// The hot path end to end: one api-worker thread submits limit orders (and cancels of its own
// orders) at a constant offered rate into its ingress ring and polls its result ring; latency =
// result received − scheduled submit time (no coordinated omission), per durability mode and
// wait strategy, and the freshness readers get: from a tx's execution to the publication of the
// views that show it (which waits for the tx to be durable). The worker sleeps on its result
// doorbell between submits, as an api worker blocked in epoll would, so the machine's two vCPUs
// are shared like in the server.
// Usage: bench_pipeline [ops per row] [rate] [steady]   (defaults 200000, 50000/s; "steady": only
// the steady-state row)
#include <x86intrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "../engine/alloc_counter.hpp"
#include "bench_world.hpp"
#include "support/tx_builder.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/pipe/pipeline.hpp"

using namespace tachyon;

namespace {

struct Row {
  double p50, p99, p999, max;
  uint64_t busy;
  double allocs_per_tx;  // whole process, after the first quarter (warm-up)
  // the same, counted on the sequencer's and the apply thread's own slots (-1: thread not found)
  double seq_allocs_per_tx, apply_allocs_per_tx;
  // apply thread: time per batch (drain + read side + snapshot publication), µs, and its size
  double batch_p50, batch_p99, batch_p9999, batch_max, updates_per_batch;
  // freshness: a tx executed -> the views that show it published, µs
  double fresh_p50, fresh_p99;
};

// pinned: the sequencer on CPU 0 and the apply thread on CPU 1 (the submitting thread unpinned).
// `crossing`: the steady-state workload. Every odd tx is an ask that takes the bid the tx before
// it rested (another account, the same price), so nothing accumulates: books, order lists and
// account views keep their size, and what the pipeline allocates per tx in steady state is what
// is left. The default workload rests every order, so the one account's order list grows
// without end.
Row run(store::Durability d, pipe::WaitStrategy w, uint64_t n, double rate, bool pinned,
        bool crossing = false) {
  const std::string dir = "/tmp/tachyon-bench-pipeline";
  std::filesystem::remove_all(dir);
  testing::TxBuilder b(realtime_ns());
  std::unique_ptr<store::Journal> journal;
  store::JournalConfig jc{dir, d};
  if (!store::Journal::open(jc, 1, journal).ok()) std::abort();
  auto engine = bench::bench_world(b, 10, journal.get());
  pipe::PipelineConfig pc;
  pc.workers = 1;
  pc.wait = w;
  if (pinned) {
    pc.sequencer_core = 0;
    pc.apply_core = 1;
  }
  pc.batch_samples = 1 << 20;
  pipe::Pipeline pl(pc, std::move(engine), journal.get(), nullptr);
  pipe::Doorbell results_bell;  // rung by the apply thread after it routed results (set_notify)
  pl.set_notify([&results_bell](uint64_t) { results_bell.ring(); });
  pl.start();
  std::vector<int64_t> lat, fresh;
  lat.reserve(n);
  fresh.reserve(n);
  std::vector<int64_t> nonce(10, 0);
  const int64_t gap = static_cast<int64_t>(1e9 / rate);
  const int64_t t0 = realtime_ns() + 1'000'000;
  uint64_t sent = 0, got = 0, busy = 0, allocs_at_warm = 0, got_at_warm = 0;
  std::optional<uint64_t> seq_at_warm, apply_at_warm;
  while (got < n) {
    const int64_t due = t0 + static_cast<int64_t>(sent) * gap;
    if (sent < n && realtime_ns() >= due) {
      AccountIndex a = 100 + sent % 10;
      bool ask = (sent / 10) % 2;
      Ticks price = 300000 + (ask ? 1 : -1) * static_cast<Ticks>(1 + sent % 50);
      if (crossing) {
        ask = sent % 2 == 1;
        a = static_cast<AccountIndex>(100 + (ask ? (sent + 5) % 10 : sent % 10));
        price = 300000;
      }
      const Tx tx = b.limit(a, nonce[a - 100], 0, ask, price, 1);
      if (pl.submit(0, tx, sent, due)) {
        ++nonce[a - 100];
        ++sent;
      } else {
        ++busy;
      }
    }
    const size_t n_got = pl.poll_results(0, [&](const pipe::Result& r) {
      lat.push_back(realtime_ns() - r.t_recv_ns);
      fresh.push_back(r.t_applied_ns - r.t_exec_ns);
    });
    got += n_got;
    if (got_at_warm == 0 && got >= n / 4) {
      got_at_warm = got;
      allocs_at_warm = tachyon::bench::alloc_count();
      seq_at_warm = tachyon::bench::alloc_count_of_thread("sequencer");
      apply_at_warm = tachyon::bench::alloc_count_of_thread("apply");
      // TACHYON_ALLOC_TRAP=1: who allocates after the warm-up; =apply or =sequencer: on that
      // thread only.
      if (const char* trap = std::getenv("TACHYON_ALLOC_TRAP"); trap != nullptr) {
        tachyon::bench::arm_alloc_trap(3, std::string(trap) == "1" ? nullptr : trap);
      }
    }
    // Like an api worker in epoll: sleep until a result arrives or the next submit is due.
    if (n_got == 0) {
      const int64_t wait_us =
          sent < n ? (t0 + static_cast<int64_t>(sent) * gap - realtime_ns()) / 1000 : 1000;
      if (wait_us > 2) {
        results_bell.sleep([&] { return false; }, wait_us);
      }
    }
  }
  const uint64_t allocs_steady = tachyon::bench::alloc_count() - allocs_at_warm;
  const double steady_txs = static_cast<double>(got - got_at_warm);
  auto per_tx = [&](const char* thread, std::optional<uint64_t> at_warm) {
    const std::optional<uint64_t> now = tachyon::bench::alloc_count_of_thread(thread);
    if (!now || !at_warm) return -1.0;
    return static_cast<double>(*now - *at_warm) / steady_txs;
  };
  const double seq_allocs = per_tx("sequencer", seq_at_warm);
  const double apply_allocs = per_tx("apply", apply_at_warm);
  pl.stop();
  journal->close();
  std::sort(lat.begin(), lat.end());
  std::sort(fresh.begin(), fresh.end());
  auto fr = [&](double q) {
    return fresh[std::min(fresh.size() - 1, static_cast<size_t>(q * fresh.size()))] / 1e3;
  };
  auto at = [&](double q) {
    return lat[std::min(lat.size() - 1, static_cast<size_t>(q * lat.size()))] / 1e3;
  };
  std::filesystem::remove_all(dir);
  std::vector<uint32_t> bt;
  uint64_t updates = 0;
  for (const auto& b : pl.batch_samples()) {
    bt.push_back(b.ns);
    updates += b.updates;
  }
  std::sort(bt.begin(), bt.end());
  auto bat = [&](double q) {
    return bt.empty() ? 0.0 : bt[std::min(bt.size() - 1, static_cast<size_t>(q * bt.size()))] / 1e3;
  };
  return {at(0.5),
          at(0.99),
          at(0.999),
          lat.back() / 1e3,
          busy,
          static_cast<double>(allocs_steady) / steady_txs,
          seq_allocs,
          apply_allocs,
          bat(0.5),
          bat(0.99),
          bat(0.9999),
          bt.empty() ? 0.0 : bt.back() / 1e3,
          bt.empty() ? 0.0 : static_cast<double>(updates) / static_cast<double>(bt.size()),
          fr(0.5),
          fr(0.99)};
}

std::string fmt2(double v) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.2f", v);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200'000;
  const double rate = argc > 2 ? std::atof(argv[2]) : 50'000;
  const bool steady_only = argc > 3 && std::string(argv[3]) == "steady";
  std::printf(
      "## submit -> result, one worker, %.0f orders/s offered, %llu orders per row (µs)\n\n", rate,
      static_cast<unsigned long long>(n));
  std::printf(
      "| durability | wait strategy | hot threads | p50 | p99 | p99.9 | max | busy answers | "
      "allocs/tx (steady) | p50 / p99 vs the first row of its durability |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n");
  const std::pair<store::Durability, const char*> modes[] = {{store::Durability::kNone, "none"},
                                                             {store::Durability::kWrite, "write"},
                                                             {store::Durability::kFsync, "fsync"}};
  struct Wait {
    pipe::WaitStrategy w;
    const char* name;
    bool pinned;
  };
  // Side by side: the default, parking, and (none and fsync only) spinning and pinning. On two
  // vCPUs two spinning pinned threads leave the submitting thread no CPU of its own.
  const Wait waits[] = {{pipe::WaitStrategy::kSpinThenPark, "spin_then_park", false},
                        {pipe::WaitStrategy::kPark, "park", false},
                        {pipe::WaitStrategy::kSpinThenPark, "spin_then_park", true},
                        {pipe::WaitStrategy::kSpin, "spin", true}};
  std::vector<std::string> batches, fresh;
  for (auto [d, dn] : modes) {
    if (steady_only) break;
    Row base{};  // the durability's first row (spin_then_park, unpinned): the others against it
    bool have_base = false;
    for (const Wait& wt : waits) {
      if (wt.pinned && d == store::Durability::kWrite) continue;
      const char* wn = wt.name;
      const char* pn = wt.pinned ? "pinned (CPU 0, 1)" : "unpinned";
      const Row r = run(d, wt.w, n, rate, wt.pinned);
      char vs[64] = "baseline";
      if (have_base) {
        std::snprintf(vs, sizeof vs, "%+.0f%% / %+.0f%%", 100.0 * (r.p50 - base.p50) / base.p50,
                      100.0 * (r.p99 - base.p99) / base.p99);
      } else {
        base = r;
        have_base = true;
      }
      std::printf("| %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %llu | %.4f | %s |\n", dn, wn, pn,
                  r.p50, r.p99, r.p999, r.max, static_cast<unsigned long long>(r.busy),
                  r.allocs_per_tx, vs);
      batches.push_back(std::string("| ") + dn + " | " + wn + " | " + pn + " | " +
                        fmt2(r.updates_per_batch) + " | " + fmt2(r.batch_p50) + " | " +
                        fmt2(r.batch_p99) + " | " + fmt2(r.batch_p9999) + " | " +
                        fmt2(r.batch_max) + " |");
      fresh.push_back(std::string("| ") + dn + " | " + wn + " | " + pn + " | " + fmt2(r.fresh_p50) +
                      " | " + fmt2(r.fresh_p99) + " |");
    }
  }
  {
    const Row r = run(store::Durability::kNone, pipe::WaitStrategy::kSpinThenPark, n, rate, false,
                      /*crossing=*/true);
    std::printf(
        "\n## steady state: every second order trades against the one before (nothing "
        "accumulates)\n\n| durability | wait strategy | p50 | p99 | p99.9 | max | allocs/tx "
        "(steady) | sequencer thread allocs/tx | apply thread allocs/tx |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
        "| none | spin_then_park | %.1f | %.1f | %.1f | %.1f | %.4f | %.6f | %.6f |\n",
        r.p50, r.p99, r.p999, r.max, r.allocs_per_tx, r.seq_allocs_per_tx, r.apply_allocs_per_tx);
  }
  std::printf(
      "\n## apply thread: time per batch (drain, read side, snapshot publication), µs\n\n"
      "| durability | wait strategy | hot threads | updates per batch | p50 | p99 | p99.99 | max "
      "|\n"
      "|---|---|---|---|---|---|---|---|\n");
  for (const auto& line : batches) std::printf("%s\n", line.c_str());
  // Readers see a tx once its views are published, which waits for the tx to be durable.
  std::printf(
      "\n## freshness: a tx executed -> the views that show it published, µs\n\n"
      "| durability | wait strategy | hot threads | p50 | p99 |\n|---|---|---|---|---|\n");
  for (const auto& line : fresh) std::printf("%s\n", line.c_str());
  return 0;
}
