// The sequencer per tx type: ring-in -> update-out, i.e. from the moment the sequencer
// takes a tx from its ingress ring (Result::t_seq_ns) to the moment the tx's last update (its
// result) went into the apply ring (Result::t_exec_ns): engine execution plus the hand-off of
// every update it emitted. Also the ingress hop (submit -> taken). One worker submits a mixed
// stream at a constant rate; no journal (durability none), spin_then_park.
// Usage: bench_seq_types [txs] [rate]   (defaults 200000, 20000/s)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include "bench_world.hpp"
#include "support/tx_builder.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/pipe/pipeline.hpp"

using namespace tachyon;

namespace {

enum Kind { kRest, kTake, kCancel, kModify, kTransfer, kLeverage, kCancelAll, kKinds };
const char* const kNames[] = {"limit order (rests)",
                              "IOC taker (fills 1-3)",
                              "cancel",
                              "modify (re-price)",
                              "transfer",
                              "update leverage",
                              "cancel all (the account's orders)"};
// How often each kind comes in the stream (of 20).
const int kMix[] = {7, 3, 4, 2, 2, 1, 1};

}  // namespace

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200'000;
  const double rate = argc > 2 ? std::atof(argv[2]) : 20'000;
  testing::TxBuilder b(realtime_ns());
  constexpr int kAccounts = 20;
  auto engine = bench::bench_world(b, kAccounts);
  pipe::PipelineConfig pc;
  pc.workers = 1;
  pipe::Pipeline pl(pc, std::move(engine), nullptr, nullptr);
  pl.start();

  std::vector<int> plan;  // kinds, in the mix's proportions, shuffled deterministically
  for (int k = 0; k < kKinds; ++k)
    for (int i = 0; i < kMix[k]; ++i) plan.push_back(k);
  std::vector<int64_t> nonce(kAccounts, 0);
  std::vector<std::vector<uint64_t>> resting(kAccounts);  // client order indices, oldest first
  std::vector<uint64_t> next_coi(kAccounts, 1);
  std::vector<int> kind_of(n);
  std::map<int, std::vector<int64_t>> exec_ns, hop_ns;
  const int64_t gap = static_cast<int64_t>(1e9 / rate);
  const int64_t t0 = realtime_ns() + 1'000'000;
  uint64_t sent = 0, got = 0, refused = 0;
  uint64_t x = 88172645463325252ull;  // xorshift
  auto rnd = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  while (got < n) {
    if (sent < n && realtime_ns() >= t0 + static_cast<int64_t>(sent) * gap) {
      const int i = static_cast<int>(rnd() % kAccounts);
      const AccountIndex a = 100 + i;
      int k = plan[rnd() % plan.size()];
      if ((k == kCancel || k == kModify) && resting[i].empty()) k = kRest;
      const bool ask = rnd() & 1;
      const Ticks off = static_cast<Ticks>(5 + rnd() % 40);
      Tx tx;
      switch (k) {
        case kRest: {
          tx = b.limit(a, nonce[i], 0, ask, ask ? 300000 + off : 300000 - off, 50 + rnd() % 200,
                       TimeInForce::kGoodTillTime, next_coi[i]);
          resting[i].push_back(next_coi[i]++);
          break;
        }
        case kTake:
          tx = b.limit(a, nonce[i], 0, ask, ask ? 300000 - 60 : 300000 + 60, 100 + rnd() % 300,
                       TimeInForce::kIoc);
          break;
        case kCancel:
          tx = b.cancel(a, nonce[i], 0, resting[i].front());
          resting[i].erase(resting[i].begin());
          break;
        case kModify:
          tx = b.modify(a, nonce[i], 0, resting[i].front(), 100, ask ? 300000 + off : 300000 - off);
          break;
        case kTransfer:
          tx = b.transfer(a, nonce[i], 100 + static_cast<AccountIndex>((i + 1) % kAccounts),
                          1'000'000);
          break;
        case kLeverage:
          tx = b.leverage(a, nonce[i], 0, 1000 + static_cast<Bps4>(rnd() % 2) * 500);
          break;
        case kCancelAll:
          tx = b.cancel_all(a, nonce[i], 0);
          resting[i].clear();
          break;
      }
      tx.h.flags = kTxFlagSkipNonce;  // a refused cancel (its order filled) holds nothing back
      if (pl.submit(0, tx, sent, t0 + static_cast<int64_t>(sent) * gap)) {
        ++nonce[i];
        kind_of[sent] = k;
        ++sent;
      }
    }
    got += pl.poll_results(0, [&](const pipe::Result& r) {
      if (r.reject != Reject::kOk) {
        ++refused;
        return;
      }
      exec_ns[kind_of[r.cookie]].push_back(r.t_exec_ns - r.t_seq_ns);
      hop_ns[kind_of[r.cookie]].push_back(r.t_seq_ns - r.t_recv_ns);
    });
  }
  pl.stop();
  auto q = [](std::vector<int64_t>& v, double p) {
    return v.empty() ? 0.0
                     : double(v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))]) / 1000;
  };
  std::printf("## sequencer ring-in -> update-out per tx type, %llu txs at %.0f/s (µs)\n\n",
              static_cast<unsigned long long>(n), rate);
  std::printf("| tx type | accepted | p50 | p90 | p99 | p99.9 | max | ingress hop p50 | p99 |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (int k = 0; k < kKinds; ++k) {
    auto& e = exec_ns[k];
    auto& h = hop_ns[k];
    std::sort(e.begin(), e.end());
    std::sort(h.begin(), h.end());
    std::printf("| %s | %zu | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", kNames[k],
                e.size(), q(e, 0.5), q(e, 0.9), q(e, 0.99), q(e, 0.999),
                e.empty() ? 0.0 : double(e.back()) / 1000, q(h, 0.5), q(h, 0.99));
  }
  std::printf("\n%llu txs refused by the engine (cancels and modifies of orders a taker filled)\n",
              static_cast<unsigned long long>(refused));
  return 0;
}
