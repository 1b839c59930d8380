// The server's lifecycle as an operator sees it: --check-config, a fresh start with the
// configured markets, readiness, SIGTERM (journal synced, final snapshot, exit 0), a warm
// restart to the same state hash, and clear refusals of bad configuration.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "store/store_support.hpp"
#include "support/child_process.hpp"
#include "tachyon/core/crc32c.hpp"

namespace tachyon::testing {
namespace {

struct ServerRun {
  int exit_code = -1;
  std::string err;
};

// Starts the server; waits for "ready" on its log (stderr), calls `at_ready` with its pid; then
// optionally lets it run and sends SIGTERM. Returns the exit code and everything it logged.
ServerRun run_server(const std::vector<std::string>& args, int run_ms, bool expect_ready = true,
                     const std::function<void(pid_t)>& at_ready = {}) {
  Child c = spawn(args, /*with_stderr=*/true);
  ServerRun r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  bool ready = false, signalled = false;
  std::chrono::steady_clock::time_point ready_at;
  std::string line;
  for (;;) {
    if (read_line(c, line, 20)) {
      r.err += line + "\n";
    } else if (c.eof) {
      break;  // the server exited and everything it wrote is read
    }
    if (!ready && r.err.find("] ready: ") != std::string::npos) {
      ready = true;
      ready_at = std::chrono::steady_clock::now();
      if (at_ready) at_ready(c.pid);
    }
    if (ready && !signalled &&
        std::chrono::steady_clock::now() - ready_at >= std::chrono::milliseconds(run_ms)) {
      ::kill(c.pid, SIGTERM);
      signalled = true;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "server did not finish in time:\n" << r.err;
      finish(c, true);
      return r;
    }
  }
  const int ws = finish(c, false);
  r.exit_code = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
  if (expect_ready) {
    EXPECT_TRUE(ready) << r.err;
  }
  return r;
}

std::string hash_in(const std::string& log, const std::string& marker) {
  const auto p = log.rfind(marker);
  if (p == std::string::npos) return "";
  const auto h = log.find("state hash ", p);
  return h == std::string::npos ? "" : log.substr(h + 11, 16);
}

TEST(Lifecycle, check_config_prints_the_effective_configuration) {
  const ServerRun r = run_server({TACHYON_BIN, "--check-config", "--port", "9100"}, 0, false);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("port = 9100"), std::string::npos);
  EXPECT_NE(r.err.find("symbol = \"ETH\""), std::string::npos);
  EXPECT_NE(r.err.find("# configuration OK"), std::string::npos);
}

TEST(Lifecycle, bad_configuration_is_refused_with_the_reason) {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[store\n", "expected ']'"},
      {"[store]\ndurability = \"fast\"\n", "durability must be fsync, write, none or replicated"},
      {"[server]\nport = 70000\n", "'port' = 70000 is out of range"},
      {"[server]\nport = \"x\"\n", "'port' must be an integer"},
      {"[nonsense]\n", "unknown section [nonsense]"},
      {"[store]\nsnapshot_from = \"magic\"\n",
       "'snapshot_from' must be \"replica\" or \"fork\", not \"magic\""},
      {"[threads]\napply_wait_strategy = \"nap\"\n",
       "threads.apply_wait_strategy must be empty, spin, spin_then_park or park, not 'nap'"},
      {"[threads]\napply_keep_warm_rounds = -1\n", "'apply_keep_warm_rounds' = -1 is out of range"},
      {"[threads]\napply_batch_updates = -8\n", "'apply_batch_updates' = -8 is out of range"},
      {"[threads]\nsequencer_core = 1\napply_core = 1\n",
       "threads.sequencer_core and threads.apply_core must differ"},
      {"[threads]\nlock_memory = \"yes\"\n",
       "threads.lock_memory must be off, on_fault or all, not 'yes'"},
      {"[[markets]]\nid = 0\nsymbol = \"X\"\nsize_decimals = 5\nprice_decimals = 5\nindex_price = "
       "1\n"
       "default_imf = 500\nmin_imf = 200\nmmf = 120\ncmf = 80\nprice_band = "
       "1000\nmarket_protection = 500\n"
       "min_base_lots = 1\nmax_orders_per_account = 10\nmax_orders = 10\n",
       "is inconsistent"},
  };
  for (const auto& [text, expect] : cases) {
    const std::string path = dir.path() + "/bad.toml";
    std::ofstream(path) << text;
    const ServerRun r = run_server({TACHYON_BIN, "--config", path, "--check-config"}, 0, false);
    EXPECT_EQ(r.exit_code, 2) << text;
    EXPECT_NE(r.err.find(expect), std::string::npos) << "config:\n"
                                                     << text << "\noutput:\n"
                                                     << r.err;
  }
}

// The kB a process has locked (VmLck in /proc/<pid>/status), -1 when unreadable.
long locked_kb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmLck:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// threads.lock_memory: "on_fault" (the default) locks what the server touches, where it may (as
// root, or with an unlimited RLIMIT_MEMLOCK); otherwise the log says why not and nothing is
// locked. "off" locks nothing.
TEST(Lifecycle, memory_is_locked_as_configured_or_the_log_says_why_not) {
  TempDir dir;
  for (const std::string mode : {"on_fault", "off"}) {
    SCOPED_TRACE(mode);
    const std::string cfg = dir.path() + "/lock.toml";
    std::ofstream(cfg) << "[threads]\nlock_memory = \"" << mode << "\"\n";
    long kb = -1;
    const ServerRun r =
        run_server({TACHYON_BIN, "--config", cfg, "--data-dir", dir.path() + "/" + mode,
                    "--listen-address", "127.0.0.1", "--port", "0", "--admin-port", "0"},
                   0, true, [&](pid_t pid) { kb = locked_kb(pid); });
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const bool locked = r.err.find("memory locked as it is touched") != std::string::npos;
    const bool refused = r.err.find("mlockall refused") != std::string::npos ||
                         r.err.find("mlockall not attempted") != std::string::npos;
    if (mode == "off") {
      EXPECT_FALSE(locked || refused) << r.err;
      EXPECT_EQ(kb, 0);
    } else {
      EXPECT_TRUE(locked != refused) << r.err;
      if (locked) {
        EXPECT_GT(kb, 1024) << "the server touched more than 1 MB";
      } else {
        EXPECT_EQ(kb, 0);
      }
    }
  }
}

// The CPUs a thread may run on (Cpus_allowed_list), and its name, for every thread of `pid`.
std::vector<std::pair<std::string, std::set<int>>> thread_cpus(pid_t pid) {
  std::vector<std::pair<std::string, std::set<int>>> out;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& t : std::filesystem::directory_iterator(dir)) {
    std::string name, line;
    std::getline(std::ifstream(t.path() / "comm"), name);
    std::set<int> cpus;
    std::ifstream st(t.path() / "status");
    while (std::getline(st, line)) {
      if (line.rfind("Cpus_allowed_list:", 0) != 0) continue;
      std::stringstream ss(line.substr(18));
      std::string part;
      while (std::getline(ss, part, ',')) {
        const auto dash = part.find('-');
        const int a = std::stoi(part),
                  b = dash == std::string::npos ? a : std::stoi(part.substr(dash + 1));
        for (int c = a; c <= b; ++c) cpus.insert(c);
      }
    }
    out.emplace_back(name, cpus);
  }
  return out;
}

// threads.apply_core pins the apply thread to its core and keeps every other thread (the api
// workers, the sequencer, the journal writer, the committer) off it.
TEST(Lifecycle, a_pinned_hot_thread_has_its_core_to_itself) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs two cores";
  TempDir dir;
  const std::string cfg = dir.path() + "/pin.toml";
  std::ofstream(cfg) << "[threads]\napply_core = 1\n";
  std::vector<std::pair<std::string, std::set<int>>> threads;
  const ServerRun r =
      run_server({TACHYON_BIN, "--config", cfg, "--data-dir", dir.path() + "/d", "--listen-address",
                  "127.0.0.1", "--port", "0", "--admin-port", "0"},
                 0, true, [&](pid_t pid) { threads = thread_cpus(pid); });
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("kept off cores 1"), std::string::npos) << r.err;
  std::set<int> apply, others;
  int api = 0;
  for (const auto& [name, cpus] : threads) {
    if (name == "apply") {
      apply = cpus;
    } else {
      others.insert(cpus.begin(), cpus.end());
      api += name.rfind("api-", 0) == 0;
    }
  }
  EXPECT_GE(api, 1);  // the configured api workers (2 by default)
  std::string names;
  for (const auto& t : threads) names += t.first + " ";
  ASSERT_FALSE(apply.empty()) << "no apply thread among: " << names;
  ASSERT_FALSE(others.empty());
  for (int c : apply) EXPECT_EQ(others.count(c), 0u) << "another thread may run on CPU " << c;
}

TEST(Lifecycle, sigterm_syncs_snapshots_and_exits_zero_then_restarts_warm_to_the_same_state) {
  TempDir dir;
  const ServerRun first =
      run_server({TACHYON_BIN, "--data-dir", dir.path(), "--demo-load-tps", "5000",
                  "--listen-address", "127.0.0.1", "--port", "0", "--admin-port", "0"},
                 700);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("market 0 (ETH) created"), std::string::npos);
  EXPECT_NE(first.err.find("final snapshot at seq"), std::string::npos) << first.err;
  const std::string h1 = hash_in(first.err, "stopped cleanly");
  ASSERT_EQ(h1.size(), 16u) << first.err;

  const ServerRun second = run_server({TACHYON_BIN, "--data-dir", dir.path(), "--listen-address",
                                       "127.0.0.1", "--port", "0", "--admin-port", "0"},
                                      100);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.err.find("created"), std::string::npos)
      << "an existing data dir keeps its markets";
  EXPECT_EQ(hash_in(second.err, "recovered"), h1) << second.err;
  EXPECT_EQ(hash_in(second.err, "stopped cleanly"), h1);
  // and the files an operator would check are valid
  Engine e;
  std::unique_ptr<Engine> rec;
  store::RecoveryReport rep;
  ASSERT_TRUE(store::recover(dir.path(), EngineConfig{}, rec, rep).ok());
  EXPECT_TRUE(rep.from_snapshot);
  EXPECT_EQ(rep.replayed, 0u);

  // The start checks the snapshot's state hash while it builds the read side (no journal tx
  // follows it here): a snapshot that claims another state than the one it loads to is refused
  // before the server is ready, with the reason.
  std::vector<std::string> snaps;
  for (const auto& f : std::filesystem::directory_iterator(dir.path()))
    if (f.path().filename().string().rfind("snapshot-", 0) == 0) snaps.push_back(f.path());
  std::sort(snaps.begin(), snaps.end());
  ASSERT_FALSE(snaps.empty());
  {
    std::fstream f(snaps.back(), std::ios::in | std::ios::out | std::ios::binary);
    char head[48];
    f.read(head, sizeof head);
    head[24] ^= 1;  // the stored state hash, under a header checksum that still holds
    const uint32_t crc = crc32c(head, 44);
    std::memcpy(head + 44, &crc, 4);
    f.seekp(0);
    f.write(head, sizeof head);
  }
  const ServerRun third = run_server({TACHYON_BIN, "--data-dir", dir.path(), "--listen-address",
                                      "127.0.0.1", "--port", "0", "--admin-port", "0"},
                                     0, /*expect_ready=*/false);
  EXPECT_EQ(third.exit_code, 2) << third.err;
  EXPECT_NE(third.err.find("state hash differs after loading"), std::string::npos) << third.err;
  EXPECT_EQ(third.err.find("] ready"), std::string::npos) << third.err;
}

// Snapshots under load, by fork() or from the committer's replica, then kill -9: recovery from the
// newest snapshot + journal lands on the same state as a replay of the whole journal.
TEST(Lifecycle, snapshots_under_load_from_a_fork_or_the_replica_recover_to_the_journals_state) {
  for (const std::string from : {"replica", "fork"}) {
    SCOPED_TRACE("snapshot_from = " + from);
    TempDir dir;
    const std::string conf = dir.path() + "/tachyon.toml";
    // One segment that is never retired: the whole journal stays to replay (a preallocated
    // journal would leave its first, growing segment early, for a spare).
    std::ofstream(conf) << "[store]\nsnapshot_every_txs = 1500\nsegment_bytes = 1073741824\n"
                        << "preallocate_segments = false\nsnapshot_from = \"" << from << "\"\n";
    const std::string data = dir.path() + "/data";
    Child c = spawn({TACHYON_BIN, "--config", conf, "--data-dir", data, "--demo-load-tps", "5000",
                     "--listen-address", "127.0.0.1", "--port", "0", "--admin-port", "0"},
                    /*with_stderr=*/true);
    std::string log, line;
    size_t written = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (written < 2 && std::chrono::steady_clock::now() < deadline) {
      if (read_line(c, line, 50)) {
        log += line + "\n";
        written += line.find("snapshot at seq") != std::string::npos &&
                   line.find(" written") != std::string::npos;
      } else if (c.eof) {
        break;
      }
    }
    finish(c, /*kill_it=*/true);  // kill -9: no final snapshot
    ASSERT_EQ(written, 2u) << log;
    if (from == "replica") {
      EXPECT_NE(log.find("written from the committer's replica"), std::string::npos) << log;
      EXPECT_EQ(log.find("sequencer paused"), std::string::npos) << log;
    } else {
      EXPECT_NE(log.find("sequencer paused"), std::string::npos) << log;
    }
    std::unique_ptr<Engine> with_snapshot, journal_only;
    store::RecoveryReport rep, rep_journal;
    ASSERT_TRUE(store::recover(data, EngineConfig{}, with_snapshot, rep).ok());
    EXPECT_TRUE(rep.from_snapshot);
    EXPECT_GT(rep.snapshot_seq, 0u);
    const std::string copy = dir.path() + "/journal-only";
    std::filesystem::create_directories(copy);
    for (const auto& f : std::filesystem::directory_iterator(data)) {
      if (f.path().filename().string().rfind("journal-", 0) == 0)
        std::filesystem::copy_file(f.path(), std::filesystem::path(copy) / f.path().filename());
    }
    const Status replayed = store::recover(copy, EngineConfig{}, journal_only, rep_journal);
    ASSERT_TRUE(replayed.ok()) << replayed.message();
    EXPECT_FALSE(rep_journal.from_snapshot);
    EXPECT_EQ(rep_journal.last_seq, rep.last_seq);
    EXPECT_EQ(journal_only->state_hash(), with_snapshot->state_hash());
  }
}

}  // namespace
}  // namespace tachyon::testing
