// What the instruments cost: ns per operation of each recording primitive, and the
// pipeline's throughput with the instruments off (no PipeMetrics), on (histograms + flight
// recorder, the production default) and with the load-test detail, measured in the same run with
// the modes interleaved round by round so drift on the machine hits all three alike.
// Usage: bench_obs [txs per pipeline run] [rounds]   (defaults 300000, 5)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../pipe/bench_world.hpp"
#include "support/tx_builder.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/obs/metrics.hpp"
#include "tachyon/obs/trace.hpp"
#include "tachyon/pipe/pipeline.hpp"

using namespace tachyon;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <typename F>
double ns_per_op(uint64_t n, F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < n; ++i) f(i);
  return seconds_since(t0) * 1e9 / double(n);
}

void micro() {
  const uint64_t n = 20'000'000;
  tachyon::Histogram h;
  tachyon::Counter c;
  obs::FlightRecorder rec;
  tachyon::Track& t = rec.track("bench");
  const uint16_t name = rec.name_id("span");
  volatile int64_t sink = 0;
  std::printf("## recording primitives, ns per operation (%llu ops each)\n\n",
              static_cast<unsigned long long>(n));
  std::printf("| operation | ns/op |\n|---|---|\n");
  std::printf("| empty loop (baseline) | %.2f |\n",
              ns_per_op(n, [&](uint64_t i) { sink = sink + int64_t(i); }));
  std::printf("| realtime_ns() clock read | %.2f |\n",
              ns_per_op(n, [&](uint64_t) { sink = sink + realtime_ns(); }));
  std::printf("| Histogram::record (one writer) | %.2f |\n",
              ns_per_op(n, [&](uint64_t i) { h.record((i * 2654435761u) & 0xfffff); }));
  std::printf("| Histogram::record_shared (locked add) | %.2f |\n",
              ns_per_op(n, [&](uint64_t i) { h.record_shared((i * 2654435761u) & 0xfffff); }));
  std::printf("| Counter::add (locked add) | %.2f |\n", ns_per_op(n, [&](uint64_t) { c.add(); }));
  std::printf("| Counter::add_single | %.2f |\n", ns_per_op(n, [&](uint64_t) { c.add_single(); }));
  std::printf("| Track::span (flight-recorder event, stamps given) | %.2f |\n",
              ns_per_op(n, [&](uint64_t i) { t.span(name, int64_t(i), int64_t(i) + 5, i); }));
  std::printf("| tachyon::Span (two clock reads + event) | %.2f |\n",
              ns_per_op(n, [&](uint64_t i) { tachyon::Span s(&t, name, i); }));
  std::printf("\n");
}

enum Mode { kOff, kOn, kDetail };
const char* const kModeNames[] = {"off (no instruments)", "on (default: histograms + recorder)",
                                  "load-test detail"};

// Txs/s through the pipeline: one worker submits as fast as the ingress ring takes them (limit
// orders, each followed later by the cancel of its own order 64 orders back: a steady book).
double pipeline_tps(Mode mode, uint64_t n) {
  obs::Registry reg;
  obs::FlightRecorder rec;
  pipe::PipeMetrics pm = pipe::register_pipe_metrics(reg, rec, mode == kDetail);
  testing::TxBuilder b(realtime_ns());
  auto engine = bench::bench_world(b, 10);
  pipe::PipelineConfig pc;
  pc.workers = 1;
  pc.metrics = mode == kOff ? nullptr : &pm;
  pipe::Pipeline pl(pc, std::move(engine), nullptr, nullptr);
  pl.start();
  std::vector<int64_t> nonce(10, 0);
  uint64_t sent = 0, got = 0, refused = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (got < n) {
    while (sent < n) {
      const uint64_t k = sent / 2;
      const AccountIndex a = 100 + k % 10;
      Tx tx;
      if (sent % 2 == 0) {
        const bool ask = (k / 10) % 2;
        tx = b.limit(a, nonce[a - 100], 0, ask, 300000 + (ask ? 1 : -1) * Ticks(1 + k % 50), 1);
        tx.order.client_order_index = k + 1;
      } else {
        tx = b.cancel(a, nonce[a - 100], 0, k >= 640 ? k + 1 - 640 : 1);
      }
      tx.h.flags = kTxFlagSkipNonce;  // a refused cancel must not hold back later txs
      if (!pl.submit(0, tx, sent, 0)) break;
      ++nonce[a - 100];
      ++sent;
    }
    got += pl.poll_results(0, [&](const pipe::Result& r) { refused += r.reject != Reject::kOk; });
  }
  const double s = seconds_since(t0);
  pl.stop();
  if (refused > n / 100)
    std::printf("(%llu of %llu txs refused)\n", (unsigned long long)refused, (unsigned long long)n);
  return double(n) / s;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 300'000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  micro();
  std::vector<double> tps[3];
  for (int r = 0; r < rounds; ++r) {
    for (Mode m : {kOff, kOn, kDetail}) tps[m].push_back(pipeline_tps(m, n));
  }
  std::printf(
      "## pipeline throughput by instrument mode: %llu txs per run, %d rounds interleaved\n\n",
      static_cast<unsigned long long>(n), rounds);
  std::printf(
      "| instruments | median tx/s | min | max | vs off (median) |\n|---|---|---|---|---|\n");
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double base = median(tps[kOff]);
  for (Mode m : {kOff, kOn, kDetail}) {
    const double md = median(tps[m]);
    std::printf("| %s | %.0f | %.0f | %.0f | %+.1f%% |\n", kModeNames[m], md,
                *std::min_element(tps[m].begin(), tps[m].end()),
                *std::max_element(tps[m].begin(), tps[m].end()), (md / base - 1) * 100);
  }
  return 0;
}
