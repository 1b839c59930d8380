// Account views made on first use (AccountTable's account base) against views made at start, in
// the same run: the pipeline's construction (the read side built at start) with and without the
// base, and a read of an account's view (AccountTable::find) the first time it is used, when it
// is made from the snapshot, against a read of a view that exists.
//
// The engine: N accounts (default 200,000), each with one key and 1-3 resting orders in one
// market, saved and loaded twice (with and without recording where each account lies).
//
// Usage: bench_account_base [accounts]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "support/rng.hpp"
#include "support/tx_builder.hpp"
#include "tachyon/pipe/pipeline.hpp"

using namespace tachyon;
using tachyon::testing::demo_market_params;
using tachyon::testing::Rng;
using tachyon::testing::TxBuilder;

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

EngineConfig config(size_t accounts) {
  EngineConfig c;
  c.max_orders = static_cast<uint32_t>(accounts * 3 + 1024);
  c.expected_accounts = static_cast<uint32_t>(accounts + 16);
  c.levels_per_side = 4096;
  return c;
}

std::unique_ptr<Engine> load(const std::vector<uint8_t>& bytes, size_t accounts,
                             SavedAccounts* saved) {
  auto e = std::make_unique<Engine>(config(accounts));
  ByteSource in(bytes.data(), bytes.size());
  if (Status s = e->load(in, false, saved); !s.ok()) {
    std::fprintf(stderr, "load: %s\n", s.message().c_str());
    std::exit(1);
  }
  return e;
}

void print_row(const char* name, std::vector<int64_t>& ns) {
  std::sort(ns.begin(), ns.end());
  auto q = [&](double p) {
    return ns[static_cast<size_t>(p * static_cast<double>(ns.size() - 1))];
  };
  std::printf("| %s | %zu | %lld | %lld | %lld | %lld |\n", name, ns.size(),
              static_cast<long long>(q(0.5)), static_cast<long long>(q(0.99)),
              static_cast<long long>(q(0.999)), static_cast<long long>(ns.back()));
}

}  // namespace

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200'000;
  std::printf("# account views: made on first use from the snapshot vs made at start\n\n");
  Engine e(config(n));
  NullSink sink;
  TxBuilder b;
  Rng rng(9);
  auto run = [&](const Tx& tx) {
    const TxResult r = e.execute(tx, sink);
    b.sync_op_nonce(e.operator_next_nonce());
    return r;
  };
  (void)run(b.create_market(0, demo_market_params(), 300'000));
  for (size_t i = 0; i < n; ++i) (void)run(b.deposit(1000 + i, 100'000'000'000));
  size_t orders = 0;
  for (size_t i = 0; i < n; ++i) {
    const AccountIndex a = 1000 + i;
    const int k = 1 + static_cast<int>(rng.below(3));
    for (int j = 0; j < k; ++j) {
      const bool ask = rng.chance(50);
      const Ticks px = ask ? 300'100 + rng.range(0, 3000) : 299'900 - rng.range(0, 3000);
      orders += run(b.limit(a, e.account(a)->keys.front().next_nonce, 0, ask, px, 100)).ok();
    }
  }
  VectorSink out;
  e.save(out);
  std::printf("engine: %zu accounts, %zu resting orders, snapshot %.1f MB\n\n", n, orders,
              static_cast<double>(out.bytes.size()) / 1e6);

  pipe::PipelineConfig pc;
  pc.workers = 1;
  auto saved = std::make_shared<SavedAccounts>();
  auto lazy_engine = load(out.bytes, n, saved.get());
  auto eager_engine = load(out.bytes, n, nullptr);
  const int64_t t0 = now_ns();
  pipe::Pipeline lazy(pc, std::move(lazy_engine), nullptr, nullptr, pipe::AccountBase{saved, {}});
  const int64_t t1 = now_ns();
  pipe::Pipeline eager(pc, std::move(eager_engine), nullptr, nullptr);
  const int64_t t2 = now_ns();
  std::printf(
      "pipeline built (read side at start): with the account base %.1f ms, every view "
      "at start %.1f ms (%.1fx)\n\n",
      (t1 - t0) / 1e6, (t2 - t1) / 1e6,
      static_cast<double>(t2 - t1) / static_cast<double>(t1 - t0));

  std::vector<AccountIndex> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = 1000 + i;
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  std::vector<int64_t> first, again, existing;
  first.reserve(n);
  again.reserve(n);
  existing.reserve(n);
  auto rl = lazy.read_side().accounts().reader();
  auto re = eager.read_side().accounts().reader();
  uint64_t check = 0;
  for (AccountIndex a : order) {
    rl.read([&] {
      const int64_t s0 = now_ns();
      const pipe::AccountView* v = lazy.read_side().accounts().find(a);
      const int64_t s1 = now_ns();
      const pipe::AccountView* w = lazy.read_side().accounts().find(a);
      const int64_t s2 = now_ns();
      check += v->open_order_count + (v == w);
      first.push_back(s1 - s0);
      again.push_back(s2 - s1);
    });
    re.read([&] {
      const int64_t s0 = now_ns();
      const pipe::AccountView* v = eager.read_side().accounts().find(a);
      const int64_t s1 = now_ns();
      check -= v->open_order_count;
      existing.push_back(s1 - s0);
    });
  }
  std::printf("find() of each account once, in random order (ns):\n\n");
  std::printf("| read | n | p50 | p99 | p99.9 | max |\n|---|---|---|---|---|---|\n");
  print_row("first use, made from the snapshot", first);
  print_row("the same account again", again);
  print_row("a view made at start (no base)", existing);
  std::printf("\n(check %llu: every view made on first use was found again)\n",
              static_cast<unsigned long long>(check));
  return check == n ? 0 : 1;
}
