// Journal and snapshot benchmarks (percentile tables, not Google Benchmark):
//  1. appends/s per durability mode (as fast as possible, then wait for durability);
//  2. append -> durable latency p50/p99/p99.9/max per mode at a constant offered rate, beside the
//     floor measured in the same run (one 4 KiB write + fdatasync on the same disk);
//  3. snapshots at scale (1M accounts, 100 markets x 10k resting orders): the sequencer pause of a
//     fork()-based snapshot, the snapshot's size and write time, and start-up (load + verify).
// Usage: bench_store [--dir DIR] [--quick] [--snapshots-only]
//        bench_store --load FILE ACCOUNTS ORDERS [--plain]   (start-up in a fresh process, used by
//        the above; --plain: without recording where each account lies, SavedAccounts)
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "support/tx_builder.hpp"
#include "tachyon/store/commit.hpp"
#include "tachyon/store/journal.hpp"
#include "tachyon/store/snapshot.hpp"

// The server's allocator settings (src/app/server_main.cpp), so the pause is the server's.
extern "C" {
const char* malloc_conf = "thp:always,metadata_thp:always";
}

using namespace tachyon;
using Clock = std::chrono::steady_clock;

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

struct Pct {
  double p50, p99, p999, max;
};
Pct percentiles(std::vector<int64_t> v) {
  if (v.empty()) return {0, 0, 0, 0};
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))] / 1e3;
  };
  return {at(0.50), at(0.99), at(0.999), v.back() / 1e3};
}

std::vector<Tx> order_stream(size_t n) {
  testing::TxBuilder b;
  std::vector<Tx> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    Tx tx = b.limit(1000 + i % 64, static_cast<int64_t>(i / 64), 0, i % 2, 300000 + i % 100,
                    10 + i % 7);
    tx.h.seq = i + 1;
    out.push_back(tx);
  }
  return out;
}

// A /proc field of this process, in kB ("VmPTE" from status, "AnonHugePages" from smaps_rollup).
long proc_kb(const char* file, const char* field) {
  FILE* f = std::fopen(file, "r");
  if (f == nullptr) return -1;
  char line[256];
  long v = -1;
  const size_t n = std::strlen(field);
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, field, n) == 0 && line[n] == ':') v = std::atol(line + n + 1);
  }
  std::fclose(f);
  return v;
}

// fork() pauses of this process as it is now (the child exits at once).
std::vector<int64_t> fork_pauses(int n) {
  std::vector<int64_t> v;
  for (int i = 0; i < n; ++i) {
    const int64_t t0 = now_ns();
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    v.push_back(now_ns() - t0);
    if (pid > 0) ::waitpid(pid, nullptr, 0);
  }
  return v;
}

EngineConfig big_config(size_t accounts, size_t orders) {
  EngineConfig cfg;
  cfg.max_orders = static_cast<uint32_t>(orders + 1024);
  cfg.expected_accounts = static_cast<uint32_t>(accounts + 16);
  cfg.levels_per_side = 1024;
  return cfg;
}

// Start-up as the server does it, in a fresh process: construct, map, verify, load (recording
// where each account lies, for the read side's account base, unless `plain`), hash check.
int load_only(const char* path, size_t accounts, size_t orders, bool plain) {
  const int64_t t0 = now_ns();
  Engine e(big_config(accounts, orders));
  store::SnapshotInfo info;
  std::shared_ptr<const SavedAccounts> saved;
  Status s = store::load_snapshot(path, e, info, /*check_hash=*/false, plain ? nullptr : &saved);
  const int64_t t1 = now_ns();
  if (s.ok() && e.state_hash() != info.state_hash) s = Status::error("state hash differs");
  const int64_t t2 = now_ns();
  // total first (the caller reads it), then its two parts
  std::printf("%.3f %s (load %.3f s: file read %.3f s, checksum %.3f s; state hash check %.3f s)\n",
              (t2 - t0) / 1e9, s.ok() ? "ok" : s.message().c_str(), (t1 - t0) / 1e9,
              info.read_seconds, info.verify_seconds, (t2 - t1) / 1e9);
  return s.ok() ? 0 : 1;
}

// Runs `this_binary --load` and returns what it printed.
std::string load_in_fresh_process(const std::string& path, size_t accounts, size_t orders) {
  const std::string cmd = "/proc/" + std::to_string(::getpid()) + "/exe --load " + path + " " +
                          std::to_string(accounts) + " " + std::to_string(orders);
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return "popen failed";
  char buf[512] = {};
  const bool got = std::fgets(buf, sizeof buf, p) != nullptr;
  ::pclose(p);
  std::string out = got ? buf : "no output";
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

void fresh(const std::string& dir) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
}

double throughput(const std::string& dir, store::Durability d, size_t n) {
  fresh(dir);
  const auto txs = order_stream(n);
  store::JournalConfig jc{dir, d};
  std::unique_ptr<store::Journal> j;
  if (!store::Journal::open(jc, 1, j).ok()) return 0;
  const int64_t t0 = now_ns();
  for (const Tx& tx : txs) j->append(tx);
  j->wait_durable(n);
  const int64_t t1 = now_ns();
  j->close();
  return n / ((t1 - t0) / 1e9);
}

Pct latency(const std::string& dir, store::Durability d, double rate, double seconds,
            uint64_t* commits) {
  fresh(dir);
  const size_t n = static_cast<size_t>(rate * seconds);
  const auto txs = order_stream(n);
  std::vector<int64_t> t_append(n + 1), lat;
  lat.reserve(n);
  std::atomic<uint64_t> done_upto{0};
  store::JournalConfig jc{dir, d};
  std::unique_ptr<store::Journal> j;
  if (!store::Journal::open(jc, 1, j).ok()) return {};
  std::vector<int64_t> durable_at(n + 1, 0);
  j->set_on_durable([&](uint64_t last) {  // writer thread
    const int64_t t = now_ns();
    for (uint64_t s = done_upto.load(std::memory_order_relaxed) + 1; s <= last; ++s)
      durable_at[s] = t;
    done_upto.store(last, std::memory_order_release);
  });
  const int64_t start = now_ns(), gap = static_cast<int64_t>(1e9 / rate);
  for (size_t i = 0; i < n; ++i) {
    const int64_t due = start + static_cast<int64_t>(i) * gap;  // constant offered rate
    while (now_ns() < due) {
    }
    t_append[i + 1] = due;  // latency from the scheduled time: no coordinated omission
    j->append(txs[i]);
  }
  j->wait_durable(n);
  if (d == store::Durability::kNone) {  // acknowledged at append: latency is the append itself
    for (size_t s = 1; s <= n; ++s) lat.push_back(0);
  } else {
    for (size_t s = 1; s <= n; ++s) lat.push_back(durable_at[s] - t_append[s]);
  }
  *commits = j->stats().commits;
  j->close();
  return percentiles(lat);
}

Pct fsync_floor(const std::string& dir, int reps) {
  fresh(dir);
  const std::string path = dir + "/floor";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<uint8_t> page(4096, 7);
  std::vector<int64_t> v;
  for (int i = 0; i < reps; ++i) {
    const int64_t t0 = now_ns();
    if (::write(fd, page.data(), page.size()) != 4096 || ::fdatasync(fd) != 0) break;
    v.push_back(now_ns() - t0);
  }
  ::close(fd);
  return percentiles(v);
}

// 1M accounts; 100 markets x 10k resting orders over 500 price levels a side.
void build_big(Engine& e, size_t accounts, int markets, int orders_per_market) {
  testing::TxBuilder b;
  NullSink sink;
  for (int m = 0; m < markets; ++m) {
    char sym[16];
    std::snprintf(sym, sizeof(sym), "M%03d", m);
    MarketParams p = testing::demo_market_params(sym);
    p.max_orders_per_account = 1 << 20;
    e.execute(b.create_market(static_cast<MarketId>(m), p, 300000), sink);
  }
  for (size_t a = 0; a < accounts; ++a) e.execute(b.deposit(1000 + a, 1'000'000'000'000LL), sink);
  std::vector<int64_t> nonce(accounts, 0);
  for (int m = 0; m < markets; ++m) {
    for (int i = 0; i < orders_per_market; ++i) {
      const size_t a = (static_cast<size_t>(m) * orders_per_market + i) % accounts;
      const bool ask = i % 2;
      const Ticks px = ask ? 300100 + (i / 2) % 500 * 10 : 299900 - (i / 2) % 500 * 10;
      const TxResult r = e.execute(
          b.limit(1000 + a, nonce[a], static_cast<MarketId>(m), ask, px, 100 + i % 50), sink);
      if (r.ok()) ++nonce[a];
    }
  }
}

// What a snapshot costs the sequencer while it trades, at scale. One thread plays the sequencer:
// a tx every 20 µs (50k/s; crossing IOC-sized limit orders on market 0 from 64 accounts), each
// executed on `e` and handed to a block committer whose replica was loaded from `snap_path`
// (sealed every 1000 txs, as the server does). Latency = scheduled time -> executed and handed
// off, so a stall shows in every tx it delays. Three phases in the same run: no snapshot; a
// replica snapshot (the committer writes, the sequencer is not asked); a fork() snapshot.
void sequencer_during_snapshots(Engine& e, const EngineConfig& cfg, const std::string& dir,
                                const std::string& snap_path) {
  auto replica = std::make_unique<Engine>(cfg);
  store::SnapshotInfo li;
  if (Status s = store::load_snapshot(snap_path, *replica, li); !s.ok()) {
    std::printf("replica not loaded: %s\n", s.message().c_str());
    return;
  }
  store::Committer committer(dir, std::move(replica), 1);
  if (!committer.start().ok()) return;
  // Tx time continues build_big's (its builder's clock, 1 µs per tx): a realtime stamp would be
  // years after the resting orders' 28-day expiry and the first tx would expire all of them.
  testing::TxBuilder b(e.last_seq() * 1000 + 1'700'000'010'000'000'000);
  NullSink sink;
  std::vector<int64_t> nonce(64);
  for (int a = 0; a < 64; ++a) nonce[a] = e.account(1000 + a)->keys.front().next_nonce;
  uint64_t seq = e.last_seq(), block = e.last_block() + 1, i = 0;
  uint32_t in_block = 0;
  constexpr int64_t kGapNs = 20'000;
  // Runs until `done()` (checked every 256 txs) or `max_ms`; returns each tx's latency.
  auto phase = [&](auto&& done, int max_ms) {
    std::vector<int64_t> lat;
    lat.reserve(static_cast<size_t>(max_ms) * 1'000'000 / kGapNs + 16);
    const int64_t start = now_ns(), end = start + int64_t{max_ms} * 1'000'000;
    for (int64_t k = 0;; ++k) {
      const int64_t due = start + k * kGapNs;
      if (due > end || (k % 256 == 255 && done())) break;
      while (now_ns() < due) {
      }
      const size_t a = i % 64;
      const bool ask = i % 2;
      Tx tx = b.limit(1000 + a, nonce[a], 0, ask, ask ? 299000 : 301000, 10);
      tx.h.seq = ++seq;
      tx.h.block = block;
      ++i;
      if (e.execute(tx, sink).ok()) ++nonce[a];
      committer.push(tx);
      if (++in_block == 1000) {
        committer.seal(block++, tx.h.time_ns);
        in_block = 0;
      }
      lat.push_back(now_ns() - due);
    }
    return lat;
  };
  const auto none = phase([] { return false; }, 1000);
  // The committer must have caught up before its snapshot is asked for (as in a server at rest):
  // the open block's txs handed over too.
  committer.hand_off();
  while (committer.applied_seq() < seq) std::this_thread::yield();
  if (!committer.request_snapshot(nullptr)) return;
  Status rs;
  store::SnapshotInfo ri;
  double write_s = 0;
  bool replica_done = false;
  const auto during_replica = phase(
      [&] { return replica_done || (replica_done = committer.poll_snapshot(rs, ri, &write_s)); },
      5000);
  store::ForkSnapshotter fork;
  int64_t fork_pause = 0;
  bool fork_started = false;
  const auto forked = phase(
      [&] {
        if (!fork_started) {
          fork_started = fork.start(e, dir, &fork_pause).ok();
          return !fork_started;
        }
        Status st;
        return fork.poll(st);
      },
      5000);
  committer.stop();
  std::printf(
      "\n### The sequencer while a snapshot is taken (a tx every 20 us, latency = scheduled -> "
      "executed and handed to the committer, us)\n\n");
  std::printf("| phase | txs | p50 | p99 | p99.9 | max |\n|---|---|---|---|---|---|\n");
  auto row = [](const char* name, const std::vector<int64_t>& v) {
    const Pct p = percentiles(v);
    std::printf("| %s | %zu | %.1f | %.1f | %.1f | %.1f |\n", name, v.size(), p.p50, p.p99, p.p999,
                p.max);
  };
  row("no snapshot", none);
  row(replica_done && rs.ok() ? "replica snapshot being written (by the committer)"
                              : "replica snapshot (NOT finished)",
      during_replica);
  row("fork() snapshot: the fork, then the child writing", forked);
  std::printf("\nreplica snapshot at seq %llu written in %.3f s; fork() pause %.0f us\n",
              static_cast<unsigned long long>(ri.seq), write_s, fork_pause / 1e3);
}

void journal_tables(const std::string& dir, size_t n, bool quick) {
  std::printf("## Journal throughput (append as fast as possible, %zu CreateOrder records)\n\n", n);
  std::printf("| durability | appends/s |\n|---|---|\n");
  for (auto d : {store::Durability::kFsync, store::Durability::kWrite, store::Durability::kNone})
    std::printf("| %s | %.0f |\n", store::durability_name(d), throughput(dir, d, n));

  const Pct floor = fsync_floor(dir, quick ? 200 : 1000);
  std::printf("\n## Append -> durable latency at a constant offered rate (us)\n\n");
  std::printf(
      "| durability | offered rate | p50 | p99 | p99.9 | max | group commits "
      "|\n|---|---|---|---|---|---|---|\n");
  const double secs = quick ? 1.0 : 3.0;
  for (auto [d, rate] : {std::pair{store::Durability::kFsync, 10'000.0},
                         {store::Durability::kFsync, 50'000.0},
                         {store::Durability::kWrite, 100'000.0},
                         {store::Durability::kNone, 100'000.0}}) {
    uint64_t commits = 0;
    const Pct p = latency(dir, d, rate, secs, &commits);
    std::printf("| %s | %.0f/s | %.1f | %.1f | %.1f | %.1f | %llu |\n", store::durability_name(d),
                rate, p.p50, p.p99, p.p999, p.max, static_cast<unsigned long long>(commits));
  }
  std::printf("| floor: one 4 KiB write + fdatasync | - | %.1f | %.1f | %.1f | %.1f | - |\n",
              floor.p50, floor.p99, floor.p999, floor.max);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "/tmp/tachyon-bench-store";
  bool quick = false, snapshots_only = false;
  if ((argc == 5 || argc == 6) && !std::strcmp(argv[1], "--load"))
    return load_only(argv[2], std::strtoull(argv[3], nullptr, 10),
                     std::strtoull(argv[4], nullptr, 10),
                     argc == 6 && !std::strcmp(argv[5], "--plain"));
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    if (!std::strcmp(argv[i], "--snapshots-only")) snapshots_only = true;
  }
  const size_t n = quick ? 50'000 : 500'000;
  if (!snapshots_only) journal_tables(dir, n, quick);
  const size_t accounts = quick ? 100'000 : 1'000'000;
  const int markets = quick ? 10 : 100, per_market = 10'000;
  std::printf("\n## Snapshot at scale: %zu accounts, %d markets x %d resting orders\n\n", accounts,
              markets, per_market);
  const size_t orders = static_cast<size_t>(markets) * per_market;
  const EngineConfig cfg = big_config(accounts, orders);
  const Pct floor = percentiles(fork_pauses(quick ? 3 : 7));  // before the engine exists
  const int64_t b0 = now_ns();
  auto engine = std::make_unique<Engine>(cfg);
  build_big(*engine, accounts, markets, per_market);
  std::printf("built in %.2f s: %zu accounts, %u resting orders\n\n", (now_ns() - b0) / 1e9,
              engine->accounts().size(), engine->orders().live_count());
  fresh(dir);
  store::SnapshotInfo info;
  const int64_t w0 = now_ns();
  if (Status s = store::write_snapshot(*engine, dir, &info); !s.ok()) {
    std::printf("snapshot failed: %s\n", s.message().c_str());
    return 1;
  }
  const double write_s = (now_ns() - w0) / 1e9;
  std::vector<int64_t> pauses, child_total;
  // What fork() copies: the page tables; huge pages keep them few.
  const long rss_mb = proc_kb("/proc/self/status", "VmRSS") / 1024;
  const long huge_mb = proc_kb("/proc/self/smaps_rollup", "AnonHugePages") / 1024;
  const long pte_kb = proc_kb("/proc/self/status", "VmPTE");
  store::ForkSnapshotter snap;
  for (int i = 0; i < (quick ? 3 : 7); ++i) {
    int64_t pause = 0;
    const int64_t t0 = now_ns();
    if (!snap.start(*engine, dir, &pause).ok()) break;
    (void)snap.wait();
    pauses.push_back(pause);
    child_total.push_back(now_ns() - t0);
  }
  const Pct pp = percentiles(pauses), ct = percentiles(child_total);
  // The pause does not depend on what the child does, so many short-lived children give p99.
  const Pct many = percentiles(fork_pauses(quick ? 20 : 200));
  const std::string snap_path = info.path;
  std::vector<std::string> loads;
  for (int i = 0; i < 3; ++i) loads.push_back(load_in_fresh_process(info.path, accounts, orders));
  std::printf("| measure | value |\n|---|---|\n");
  std::printf("| snapshot size | %.1f MB |\n", info.bytes / 1e6);
  std::printf("| synchronous write (serialise + write + fsync + rename) | %.3f s |\n", write_s);
  std::printf(
      "| memory: resident / of it in huge pages / page tables | %ld MB / %ld MB / %ld kB |\n",
      rss_mb, huge_mb, pte_kb);
  std::printf(
      "| fork() of this process before the engine was built (p50 / max) | %.0f us / %.0f us |\n",
      floor.p50, floor.max);
  std::printf("| sequencer pause, fork() (p50 / max of %zu) | %.0f us / %.0f us |\n", pauses.size(),
              pp.p50, pp.max);
  std::printf(
      "| fork() of the engine process, %d children that exit at once (p50 / p99 / max) | "
      "%.0f us / %.0f us / %.0f us |\n",
      quick ? 20 : 200, many.p50, many.p99, many.max);
  std::printf("| child writes the snapshot (p50) | %.3f s |\n", ct.p50 / 1e6);
  bool ok = true;
  std::string shown;
  for (const std::string& l : loads) {
    ok = ok && l.find(" ok (") != std::string::npos;
    shown += (shown.empty() ? "" : ", ") + l.substr(0, l.find(' ')) + " (" +
             l.substr(l.find('(') + 1, l.find(')') - l.find('(') - 1) + ")";
  }
  std::printf(
      "| start-up in a fresh process: construct + map + verify CRC + load + state hash check "
      "(3 runs) | %s s (%s) |\n",
      shown.c_str(), ok ? "ok" : loads.front().c_str());
  // In a directory of its own: its commitments and snapshots follow a sequencer that journals
  // nothing, so they must not join the data dir kept for scripts/snapshot_pause.sh.
  const std::string seq_dir = dir + "-sequencer";
  fresh(seq_dir);
  sequencer_during_snapshots(*engine, cfg, seq_dir, snap_path);
  std::filesystem::remove_all(seq_dir);
  if (!std::getenv("TACHYON_BENCH_KEEP")) std::filesystem::remove_all(dir);
  return ok ? 0 : 1;
}
