// tachyon: the exchange server. Today (issue 3) it owns the lifecycle: configuration, recovery
// (newest snapshot + journal), the markets of a fresh data dir, the journal, periodic
// copy-on-write snapshots, systemd readiness and watchdog, and a clean shutdown on SIGTERM
// (sync the journal, write a snapshot, exit 0). The rings, hot threads and the API that feed it
// transactions arrive with issues 4 and 5; until then [demo] load_tps can feed the seeded stream.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include "config.hpp"
#include "support/random_stream.hpp"
#include "tachyon/store/commit.hpp"
#include "tachyon/store/snapshot.hpp"

using namespace tachyon;

namespace {

int64_t realtime_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// sd_notify without libsystemd: one datagram to $NOTIFY_SOCKET.
void sd_notify(const char* msg) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || path[0] == 0) return;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const size_t n = std::min(std::strlen(path), sizeof(addr.sun_path) - 1);
  std::memcpy(addr.sun_path, path, n);
  if (addr.sun_path[0] == '@') addr.sun_path[0] = 0;  // abstract namespace
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  (void)::sendto(fd, msg, std::strlen(msg), 0, reinterpret_cast<sockaddr*>(&addr),
                 static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + n));
  ::close(fd);
}

void setup_logging(const app::Config& c) {
  std::shared_ptr<spdlog::logger> log;
  if (c.log_file.empty()) {
    log = std::make_shared<spdlog::logger>("tachyon",
                                           std::make_shared<spdlog::sinks::stderr_sink_mt>());
  } else {
    log = std::make_shared<spdlog::logger>(
        "tachyon",
        std::make_shared<spdlog::sinks::basic_file_sink_mt>(c.log_file, /*truncate=*/false));
  }
  log->set_level(spdlog::level::from_str(c.log_level));
  log->flush_on(spdlog::level::info);
  spdlog::set_default_logger(log);
}

// The sequencer of this issue: stamps seq, block and time, executes, journals, hands the tx to
// the committer and seals blocks. Single-threaded.
class Sequencer {
 public:
  Sequencer(Engine& e, store::Journal& j, store::Committer& c, const app::Config& cfg)
      : engine_(e),
        journal_(j),
        committer_(c),
        max_txs_(cfg.block_max_txs),
        interval_(std::chrono::milliseconds(cfg.block_interval_ms)),
        block_(e.last_block() + 1) {}
  TxResult submit(Tx tx) {
    tx.h.seq = engine_.last_seq() + 1;
    tx.h.block = block_;
    tx.h.time_ns = realtime_ns();
    const TxResult r = engine_.execute(tx, sink_);
    journal_.append(tx);  // every sequenced tx: replay then reproduces rejects and expiries
    committer_.push(tx);
    if (txs_in_block_++ == 0) block_start_ = std::chrono::steady_clock::now();
    if (txs_in_block_ >= max_txs_) seal();
    return r;
  }
  void maybe_seal() {
    if (txs_in_block_ > 0 && std::chrono::steady_clock::now() - block_start_ >= interval_) seal();
  }
  void seal() {
    if (txs_in_block_ == 0) return;
    committer_.seal(block_++, realtime_ns());
    txs_in_block_ = 0;
  }

 private:
  Engine& engine_;
  store::Journal& journal_;
  store::Committer& committer_;
  NullSink sink_;
  uint32_t max_txs_;
  std::chrono::milliseconds interval_;
  uint64_t block_;
  uint32_t txs_in_block_ = 0;
  std::chrono::steady_clock::time_point block_start_;
};

struct Overrides {
  std::string config_file, data_dir, durability;
  int port = -1, admin_port = -1;
  int64_t demo_load_tps = -1;
  bool check_only = false;
};

Status load(const Overrides& o, app::Config& c) {
  std::string text = app::kDefaultConfigToml, origin = "<embedded defaults>";
  if (!o.config_file.empty()) {
    std::ifstream in(o.config_file);
    if (!in) return Status::error("cannot read config file " + o.config_file);
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
    origin = o.config_file;
  }
  if (Status s = app::parse_config(text, origin, c); !s.ok()) return s;
  if (!o.data_dir.empty()) c.data_dir = o.data_dir;
  if (o.port >= 0) c.port = o.port;
  if (o.admin_port >= 0) c.admin_port = o.admin_port;
  if (o.demo_load_tps >= 0) c.demo_load_tps = static_cast<uint32_t>(o.demo_load_tps);
  if (!o.durability.empty()) {
    if (Status s = store::parse_durability(o.durability, c.durability); !s.ok()) return s;
  }
  return app::check_config(c);
}

int serve(const app::Config& c) {
  // Signals are taken synchronously by the main loop; block them before any thread starts.
  sigset_t sigs;
  sigemptyset(&sigs);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&sigs, s);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  std::unique_ptr<Engine> engine;
  store::RecoveryReport rep;
  if (Status s = store::recover(c.data_dir, c.engine, engine, rep); !s.ok()) {
    spdlog::critical("recovery of {} failed: {}", c.data_dir, s.message());
    return 2;
  }
  for (const auto& why : rep.skipped_snapshots) spdlog::warn("skipped snapshot: {}", why);
  if (rep.journal.truncated_tail) spdlog::warn("{}", rep.journal.note);
  spdlog::info(
      "recovered {}: seq {} (snapshot {}, {} journal txs replayed) in {:.3f} s, state hash {:016x}",
      c.data_dir, rep.last_seq, rep.snapshot_seq, rep.replayed, rep.seconds, engine->state_hash());

  store::JournalConfig jc{c.data_dir, c.durability, c.segment_bytes};
  std::unique_ptr<store::Journal> journal;
  if (Status s = store::Journal::open(jc, rep.last_seq + 1, journal); !s.ok()) {
    spdlog::critical("journal: {}", s.message());
    return 2;
  }
  // The committer replays on a replica of its own: a second recovery of the same data dir.
  std::unique_ptr<Engine> replica;
  store::RecoveryReport rep2;
  if (Status s = store::recover(c.data_dir, c.engine, replica, rep2);
      !s.ok() || rep2.last_seq != rep.last_seq) {
    spdlog::critical("committer replica: {}",
                     s.ok() ? "diverged from the recovered state" : s.message());
    return 2;
  }
  store::Committer committer(c.data_dir, std::move(replica), c.chain_id);
  if (Status s = committer.start(); !s.ok()) {
    spdlog::critical("committer: {}", s.message());
    return 2;
  }
  Sequencer seq(*engine, *journal, committer, c);
  for (const app::MarketSeed& m : c.markets) {  // a fresh data dir gets the configured markets
    if (engine->market(m.id) != nullptr) continue;
    Tx tx;
    tx.h.type = TxType::kCreateMarket;
    tx.h.nonce = engine->operator_next_nonce();
    tx.create_market = CreateMarketTx{m.id, m.params, m.index_price};
    const TxResult r = seq.submit(tx);
    spdlog::info(
        "market {} ({}) {}", int(m.id), m.params.symbol.data(),
        r.ok() ? "created" : std::string("refused: ") + std::string(reject_message(r.reject)));
  }
  journal->wait_durable(engine->last_seq());

  testing::StreamConfig sc;
  sc.start_time_ns = realtime_ns();
  testing::RandomStream demo(c.demo_seed, sc);
  demo.set_oracle(engine.get());
  std::vector<Tx> demo_genesis = c.demo_load_tps > 0 ? demo.genesis() : std::vector<Tx>{};
  size_t demo_i = 0;

  store::ForkSnapshotter snapshotter;
  // The newest seq a snapshot on disk covers.
  auto covered = [&] { return std::max(rep.snapshot_seq, snapshotter.last_written()); };
  auto last_snap_time = std::chrono::steady_clock::now();
  const char* watchdog = std::getenv("WATCHDOG_USEC");
  sd_notify("READY=1\nSTATUS=recovered, journal open");
  spdlog::info("ready: seq {}, {} durability, data dir {}", engine->last_seq(),
               store::durability_name(c.durability), c.data_dir);

  for (;;) {
    timespec ts{0, 10'000'000};
    const int sig = sigtimedwait(&sigs, nullptr, &ts);
    if (sig == SIGTERM || sig == SIGINT) {
      spdlog::info("signal {}: shutting down", sig);
      break;
    }
    if (sig == SIGHUP) {
      setup_logging(c);
      spdlog::info("SIGHUP: logs reopened");
    }
    if (watchdog != nullptr) sd_notify("WATCHDOG=1");
    seq.maybe_seal();
    for (uint32_t k = 0; k < c.demo_load_tps / 100; ++k) {  // demo load: tps/100 txs per 10 ms tick
      Tx tx = demo_i < demo_genesis.size() ? demo_genesis[demo_i++] : demo.next();
      if (is_operator_tx(tx.h.type)) tx.h.nonce = engine->operator_next_nonce();
      demo.on_result(tx, seq.submit(tx));
    }
    Status done;
    if (snapshotter.poll(done)) {
      if (!done.ok()) {
        spdlog::error("{}", done.message());
      } else {
        (void)store::retire_covered(*journal, c.data_dir, covered(), c.snapshot_keep);
        spdlog::info("snapshot at seq {} written", covered());
      }
    }
    const uint64_t since = engine->last_seq() - covered();
    const bool by_count = c.snapshot_every_txs != 0 && since >= c.snapshot_every_txs;
    const bool by_time = c.snapshot_interval_s != 0 && since > 0 &&
                         std::chrono::steady_clock::now() - last_snap_time >=
                             std::chrono::seconds(c.snapshot_interval_s);
    if ((by_count || by_time) && !snapshotter.busy()) {
      journal->wait_durable(engine->last_seq());  // a snapshot never runs ahead of the journal
      int64_t pause_ns = 0;
      if (Status s = snapshotter.start(*engine, c.data_dir, &pause_ns); !s.ok())
        spdlog::error("{}", s.message());
      last_snap_time = std::chrono::steady_clock::now();
      spdlog::info("snapshot at seq {} started (sequencer paused {} us)", snapshotter.seq(),
                   pause_ns / 1000);
    }
    if (journal->failed()) {
      spdlog::critical("journal failed: {}; stopping", journal->failure());
      return 3;
    }
  }
  sd_notify("STOPPING=1");
  seq.seal();
  committer.stop();  // drains: every sealed block is committed
  const store::BlockCommitment last = committer.last();
  spdlog::info("committed height {} (seq {}), commitment {}", last.block, last.last_seq,
               store::to_hex(last.commitment.data(), last.commitment.size()));
  if (snapshotter.busy()) (void)snapshotter.wait();
  journal->close();  // everything sequenced is now durable
  if (engine->last_seq() != covered()) {
    store::SnapshotInfo info;
    if (Status s = store::write_snapshot(*engine, c.data_dir, &info); !s.ok()) {
      spdlog::error("final snapshot failed: {}", s.message());
      return 4;
    }
    (void)store::retire_covered(*journal, c.data_dir, info.seq, c.snapshot_keep);
    spdlog::info("final snapshot at seq {} ({} bytes)", info.seq, info.bytes);
  }
  spdlog::info("stopped cleanly at seq {}, state hash {:016x}", engine->last_seq(),
               engine->state_hash());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tachyon: low-latency exchange state server for perpetual futures"};
  Overrides o;
  app.add_option("--config", o.config_file,
                 "TOML config (default: the embedded configs/tachyon.toml)");
  app.add_option("--data-dir", o.data_dir, "journal and snapshot directory");
  app.add_option("--port", o.port, "public REST/WebSocket port");
  app.add_option("--admin-port", o.admin_port, "admin port (loopback)");
  app.add_option("--durability", o.durability, "fsync | write | none");
  app.add_option("--demo-load-tps", o.demo_load_tps, "feed the seeded demo tx stream at this rate");
  app.add_flag("--check-config", o.check_only, "print the effective configuration and exit");
  CLI11_PARSE(app, argc, argv);
  app::Config c;
  if (Status s = load(o, c); !s.ok()) {
    std::fprintf(stderr, "tachyon: configuration error: %s\n", s.message().c_str());
    return 2;
  }
  if (o.check_only) {
    std::printf("%s\n# configuration OK\n", app::describe(c).c_str());
    return 0;
  }
  setup_logging(c);
  return serve(c);
}
