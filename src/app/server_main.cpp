// tachyon: the exchange server. Configuration, recovery (newest snapshot + journal), the hot path
// (api workers -> ingress rings -> sequencer -> apply thread -> read side), the Beast api, the
// markets of a fresh data dir, periodic copy-on-write snapshots taken on the sequencer thread,
// systemd readiness and watchdog, and a clean shutdown on SIGTERM (stop accepting, drain the
// pipeline, answer the last requests, sync the journal, write a snapshot, exit 0).
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

#include <fcntl.h>

#include <atomic>
#include <memory>
#include <optional>
#include <thread>

#include "cluster_node.hpp"
#include "config.hpp"
#include "history_file.hpp"
#include "observability.hpp"
#include "server_parts.hpp"
#include "tachyon/api/crypto.hpp"
#include "tachyon/api/server.hpp"
#include "tachyon/core/alloc.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/core/huge_page_allocator.hpp"
#include "tachyon/pipe/pipeline.hpp"
#include "tachyon/pipe/placement.hpp"
#include "tachyon/store/commit.hpp"
#include "tachyon/store/snapshot.hpp"
#include "tx_index_file.hpp"

// jemalloc's settings (read before the first allocation; ignored when jemalloc is not linked):
// its heaps follow the system's huge-page setting (thp:default). Huge pages for them shortened
// the pause of a copy-on-write fork() snapshot, but a start at 1M accounts touches ~0.7 GB of
// heap, and where the host hands out reclaimed memory slowly a huge page's first touch costs
// many times that of small pages: the read side took 2.1 s instead of 0.6 s after the machine
// sat idle (docs/PERFORMANCE.md, "Start-up on memory the host reclaimed"). MALLOC_CONF=
// "thp:always,metadata_thp:always" restores them, e.g. with snapshot_from = "fork".
// Freed memory goes back to the system (docs/PERFORMANCE.md, "Stalled readers and memory"): the
// server locks its pages (threads.lock_memory), madvise cannot purge locked pages, so jemalloc
// unmaps the pages it gives back instead of keeping their addresses (retain:false; kept, RSS
// never fell after 100 stalled WebSocket readers had queued 256 MiB and were closed). Dirty pages
// go back after dirty_decay_ms (the analog of Go's GOGC; 1 s and 5 s returned no more 30 s later
// and fault more), at once, not through a lazy MADV_FREE stage (muzzy_decay_ms:0). No
// background_thread: its threads ignore threads.*_core placement; purging rides on allocations.
extern "C" {
const char* malloc_conf = "thp:default,retain:false,dirty_decay_ms:10000,muzzy_decay_ms:0";
}

using namespace tachyon;
using app::DemoLoad;
using app::LocalSubmitter;
using app::Recovered;
using app::Server;
using app::SnapshotScheduler;

namespace {

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

struct Overrides {
  std::string config_file, data_dir, durability, listen_address, role, nats;
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
  if (!o.listen_address.empty()) c.listen_address = o.listen_address;
  if (o.demo_load_tps >= 0) c.demo_load_tps = static_cast<uint32_t>(o.demo_load_tps);
  if (!o.durability.empty()) {
    if (Status s = store::parse_durability(o.durability, c.durability); !s.ok()) return s;
  }
  if (!o.role.empty()) c.role = o.role;
  if (!o.nats.empty()) c.nats = o.nats;
  return app::check_config(c);
}

// The operator key: configured public key, or a key pair kept in the data dir.
Status operator_key(const app::Config& c, api::PublicKey& pk) {
  if (!c.operator_pubkey.empty()) {
    if (!api::from_hex(c.operator_pubkey, pk.data(), pk.size()))
      return Status::error("server.operator_pubkey must be 64 hex characters");
    return Status();
  }
  const std::string path = c.data_dir + "/operator.key";
  std::ifstream in(path);
  std::string hex;
  api::SecretKey sk;
  if (in >> hex) {
    if (!api::secret_from_hex(hex, sk)) return Status::error(path + " is not a key file");
  } else {
    api::keygen(pk, sk);
    const std::string text = api::secret_to_hex(sk) + "\n";
    if (Status s = store::posix_disk().write_file_new(path, text); !s.ok())
      return Status::error("cannot create the operator key: " + s.message());
    spdlog::info("operator key pair created in {} (public key {})", path,
                 api::to_hex(pk.data(), 32));
  }
  pk = api::public_of(sk);
  return Status();
}

// ---- start-up: what the process sets before any other thread exists ----

struct Startup {
  sigset_t signals;  // SIGTERM, SIGINT, SIGHUP: blocked in every thread, taken by the main loop
  std::chrono::steady_clock::time_point at;
};

Startup start_up(const app::Config& c) {
  Startup start;
  // Signals are taken synchronously by the main loop; block them before any thread starts.
  sigemptyset(&start.signals);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&start.signals, s);
  pthread_sigmask(SIG_BLOCK, &start.signals, nullptr);
  api::crypto_init();
  start.at = std::chrono::steady_clock::now();
  // The engine's big arrays fault in with small pages during the start and get huge pages
  // afterwards, from khugepaged (see huge_page_allocator.hpp); not with fork() snapshots, whose
  // pause is the page tables the fork copies.
  if (c.snapshot_from_replica) defer_huge_pages();
  // Before any other thread starts: they inherit it (the hot threads then pin themselves).
  if (c.sequencer_core >= 0 || c.apply_core >= 0) {
    std::string report;
    if (pipe::keep_off_cores({c.sequencer_core, c.apply_core}, report))
      spdlog::info("{}", report);
    else
      spdlog::warn("{}", report);
  }
  // Before anything big is mapped: with "all", everything mapped from here on is made resident.
  if (c.lock_memory != "off") {
    std::string report;
    if (pipe::lock_all_memory(c.lock_memory == "on_fault", report))
      spdlog::info("{}", report);
    else
      spdlog::warn("{}", report);
  }
  return start;
}

// ---- build: the store's writers, the hot path and its read side, the api, the markets ----

// The operator key, the journal (appending after the recovered seq) and the committer. False
// (logged) when one of them cannot be opened.
bool open_store(const app::Config& c, const Recovered& rec, Server& srv) {
  if (Status s = operator_key(c, srv.op_key); !s.ok()) {
    spdlog::critical("operator key: {}", s.message());
    return false;
  }
  if (c.role != "single") {
    if (Status s = app::ClusterNode::open(c, rec.rep.last_seq, srv.op_key, srv.cluster); !s.ok()) {
      spdlog::critical("cluster ({}): {}", c.role, s.message());
      return false;
    }
  }
  store::JournalConfig jc{c.data_dir, c.durability, c.segment_bytes};
  jc.replicator = srv.cluster ? srv.cluster->replicator() : nullptr;
  jc.preallocate = c.preallocate_segments;
  jc.group_commit =
      c.group_commit_on_apply ? store::GroupCommit::kFlusher : store::GroupCommit::kWriterThread;
  // A standby configured "replicated" syncs its copy until it takes over (nothing to wait for).
  if (jc.durability == store::Durability::kReplicated && jc.replicator == nullptr)
    jc.durability = store::Durability::kFsync;
  if (Status s = store::Journal::open(jc, rec.rep.last_seq + 1, srv.journal); !s.ok()) {
    spdlog::critical("journal: {}", s.message());
    return false;
  }
  // The committer replays on a replica of its own, rebuilt at its last commitment; if it lagged
  // at a crash, it first commits the journal txs it had not reached.
  store::CommitterStart cs;
  // Paused until the server is ready: rebuilding its replica would take a core from the start.
  if (Status s = store::open_committer(c.data_dir, c.engine, c.chain_id, rec.rep.last_seq,
                                       srv.committer, cs, /*outside_fork=*/srv.fork_snapshots,
                                       /*start_paused=*/true);
      !s.ok()) {
    spdlog::critical("committer: {}", s.message());
    return false;
  }
  if (cs.dropped_commits != 0)
    spdlog::warn("blocks.log had {} commitments past the recovered journal; removed",
                 cs.dropped_commits);
  if (cs.chain_starts_at != 0)
    spdlog::warn(
        "blocks.log is empty and the journal does not reach back to seq 1: commitments "
        "start after seq {}",
        cs.chain_starts_at);
  if (cs.catch_up_txs != 0)
    spdlog::info("committer catching up in the background: {} txs after seq {} (replica from {})",
                 cs.catch_up_txs, cs.committed_seq,
                 cs.replica_from == 0 ? std::string("the empty state")
                                      : "snapshot " + std::to_string(cs.replica_from));
  return true;
}

pipe::PipelineConfig pipeline_config(const app::Config& c, Server& srv) {
  pipe::PipelineConfig pc;
  pc.metrics = srv.obs->pipe_metrics();
  pc.read_side_outside_fork = srv.fork_snapshots;  // snapshots fork on the sequencer thread only
  pc.workers = c.api_workers + 1;  // the last ingress ring is the server's own (markets, demo)
  pc.block_max_txs = c.block_max_txs;
  pc.block_interval_ms = c.block_interval_ms;
  pc.sequencer_core = c.sequencer_core;
  pc.apply_core = c.apply_core;
  pc.fifo_priority = c.sched_fifo_priority;
  pc.max_readers = c.api_workers + 4;
  pc.read.max_readers = c.api_workers + 4;
  (void)pipe::parse_wait_strategy(c.wait_strategy, pc.wait);
  if (pipe::WaitStrategy w{}; pipe::parse_wait_strategy(c.apply_wait_strategy, w))
    pc.apply_wait = w;
  pc.one_thread = app::one_pipeline_thread(c);
  pc.hosted = app::pipeline_on_api(c);
  pc.keep_warm_rounds = c.apply_keep_warm_rounds;
  pc.apply_batch_updates = c.apply_batch_updates;
  pc.push_interval_us = c.push_interval_us;
  pc.commit_linger_us = c.commit_linger_us;
  pc.follower = srv.cluster != nullptr && !srv.cluster->primary();
  return pc;
}

// The market histories and account trade lists: history.bin, then the replayed trades and
// payments.
void restore_history(const app::Config& c, Recovered& rec, pipe::Pipeline& pipeline) {
  std::vector<pipe::MarketHistory> saved;
  std::vector<pipe::AccountTrades> saved_accounts;
  app::TradeHashes saved_hashes;
  if (Status s = app::load_history(c.data_dir, saved, saved_accounts, saved_hashes); !s.ok())
    spdlog::warn("market history not restored from the file: {}", s.message());
  rec.trade_hashes.insert(rec.trade_hashes.begin(), saved_hashes.begin(), saved_hashes.end());
  auto& replayed = rec.replayed_history.updates;
  pipeline.read_side().restore_history(saved, saved_accounts, replayed, rec.replayed_history.sides,
                                       pipeline.engine(), realtime_ns());
  spdlog::info(
      "market history: {} markets and {} accounts' trades from history.bin, {} replayed trades "
      "and payments",
      saved.size(), saved_accounts.size(), replayed.size());
  replayed = {};
  rec.replayed_history.sides = {};
}

// The pipeline on the recovered engine, with its read side as the engine and the histories were.
// False (logged) when the recovered state hash is not the snapshot's.
bool build_read_side(const app::Config& c, Recovered& rec, Server& srv) {
  srv.obs.emplace(c);
  const pipe::PipelineConfig pc = pipeline_config(c, srv);
  srv.op_nonce = rec.engine->operator_next_nonce();
  srv.recovered_seq = rec.engine->last_seq();
  const auto read_side_from = std::chrono::steady_clock::now();
  srv.mem_before_read_side = tachyon::alloc_stats();
  rec.account_base.replayed.assign(rec.replayed_history.changed.begin(),
                                   rec.replayed_history.changed.end());
  rec.replayed_history.changed = {};
  pipe::Pipeline& pipeline = srv.pipeline.emplace(pc, std::move(rec.engine), srv.journal.get(),
                                                  srv.committer.get(), std::move(rec.account_base));
  pipeline.want_publishes(c.api_workers, false);  // the server's own ring is polled, never woken
  if (const uint64_t refused = pipeline.read_side().accounts().refused(); refused != 0)
    spdlog::error("{} accounts have no read-side view: the account table is full", refused);
  if (const size_t total = pipeline.engine().accounts().size(),
      made = pipeline.read_side().accounts().size();
      made < total)
    spdlog::info(
        "read side: {} of {} account views made at start (made or changed since snapshot {}); "
        "the others are made from it on first use",
        made, total, rec.rep.snapshot_seq);
  restore_history(c, rec, pipeline);
  srv.read_side_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - read_side_from).count();
  srv.mem_after_read_side = tachyon::alloc_stats();
  rec.hasher.join();
  const store::RecoveryReport& rep = rec.rep;
  if (rep.hash_check_pending && rec.state_hash != rep.snapshot_hash) {
    spdlog::critical(
        "snapshot {} of {}: state hash differs after loading ({:016x}, the file says {:016x}); "
        "move it aside to recover from an older snapshot and the journal",
        rep.snapshot_seq, c.data_dir, rec.state_hash, rep.snapshot_hash);
    return false;
  }
  spdlog::info(
      "recovered {}: seq {} (snapshot {}, {} journal txs replayed) in {:.3f} s, state hash {:016x}",
      c.data_dir, rep.last_seq, rep.snapshot_seq, rep.replayed, rep.seconds, rec.state_hash);
  return true;
}

api::ApiConfig api_config(const app::Config& c, const api::PublicKey& op_key) {
  api::ApiConfig ac;
  ac.listen_address = c.listen_address;
  ac.port = c.port;
  ac.admin_address = c.admin_address;
  ac.admin_port = c.admin_port;
  ac.tls_cert_file = c.tls_cert_file;
  ac.tls_key_file = c.tls_key_file;
  ac.plain_address = c.tls_plain_address;
  ac.plain_port = c.tls_plain_port;
  ac.workers = c.api_workers;
  ac.verify_helpers = c.verify_helpers;  // (the api starts them for a worker hosting the loop)
  if (c.verify_helpers > 0 && !app::pipeline_on_api(c))
    spdlog::info(
        "threads.verify_helpers = {} not used: the pipeline loop has its own thread, and "
        "each api worker checks its own txs' signatures",
        c.verify_helpers);
  ac.chain_id = c.chain_id;
  ac.max_body_bytes = c.max_body_bytes;
  ac.max_ws_message_bytes = c.max_ws_message_bytes;
  ac.max_subscriptions = c.max_subscriptions;
  ac.ws_queue_bytes = c.ws_queue_bytes;
  ac.ws_stall_timeout_ms = c.ws_stall_timeout_ms;
  ac.ws_total_queue_bytes = c.ws_total_queue_bytes;
  ac.idle_timeout_s = static_cast<int>(c.idle_timeout_s);
  ac.max_connections_per_ip = c.max_connections_per_ip;
  ac.ip_rate_per_s = c.ip_rate_per_s;
  ac.ip_burst = c.ip_burst;
  ac.account_rate_per_s = c.account_rate_per_s;
  ac.account_burst = c.account_burst;
  ac.max_connections = c.max_connections;
  ac.operator_pubkey = op_key;
  return ac;
}

// GET /api/v1/tx keeps answering across a restart: the saved index, then the replayed txs.
void restore_tx_index(const app::Config& c, Recovered& rec, api::ApiShared& shared) {
  {
    app::TxRecords saved;
    if (Status s = app::load_tx_index(c.data_dir, saved); !s.ok()) {
      spdlog::warn("tx index not restored: {}", s.message());
    }
    for (const auto& [hash, record] : saved) shared.remember_tx(hash, record);
    if (!saved.empty()) spdlog::info("tx index: {} txs restored", saved.size());
  }
  for (const auto& [tx, r] : rec.replayed_txs) {
    const int64_t ms = tx.h.time_ns / 1'000'000;
    shared.remember_tx(
        api::tx_hash_hex(tx, c.chain_id),
        api::ApiShared::TxRecord{tx, tx.h.seq, tx.h.block, ms, ms, r.reject, r.order_index});
  }
  rec.replayed_txs = {};
}

// The api's shared state (restored trade hashes and tx index, the admin hooks) and its
// listeners; then the pipeline's threads start. False (logged) when the api cannot start.
bool start_api(const app::Config& c, Recovered& rec, Server& srv) {
  pipe::Pipeline& pipeline = *srv.pipeline;
  api::ApiShared& shared = srv.shared.emplace(api_config(c, srv.op_key), &srv.obs->registry());
  // Restored trades name their taker tx by hash too. The newest 200k are kept: more than the
  // histories and account trade lists (100 each) can show of a replay.
  const app::TradeHashes& hashes = rec.trade_hashes;
  for (size_t i = hashes.size() > 200'000 ? hashes.size() - 200'000 : 0; i < hashes.size(); ++i)
    shared.restored_trade_hashes.emplace(hashes[i].first, hashes[i].second);
  rec.trade_hashes = {};
  shared.start_ms = realtime_ns() / 1'000'000;
  {
    api::JsonWriter w(shared.node_info);
    w.obj().kv_s("role", c.role).kv_s("durability", store::durability_name(c.durability));
    w.kv_s("group_commit", c.group_commit_on_apply ? "apply" : "writer");
    w.kv_i("pipeline_threads", app::one_pipeline_thread(c) ? 1 : 2);
    w.kv_s("pipeline_loop", app::pipeline_on_api(c) ? "api" : "own").kv_s("data_dir", c.data_dir);
    w.kv_b("tls", !c.tls_cert_file.empty()).end_obj();
  }
  restore_tx_index(c, rec, shared);
  shared.snapshot_trigger = [&requested = srv.snapshot_requested] {
    requested.store(true);
    return std::string("snapshot scheduled");
  };
  shared.storage_refusal = [&journal = *srv.journal, node = srv.cluster.get()] {
    if (journal.failed()) return "the journal failed (" + journal.failure() + "); restarting";
    if (journal.out_of_space())
      return std::string("the journal's disk is full; txs are taken again once space returns");
    return node != nullptr ? node->replication_refusal() : std::string();
  };
  if (app::ClusterNode* node = srv.cluster.get()) {
    shared.not_primary = [node] { return node->not_primary(); };
    shared.forward_txs = [node](std::span<const Tx> txs, bool batch,
                                api::ApiShared::ForwardDone done) {
      node->forward(txs, batch, std::move(done));
    };
    shared.cluster_status = [node](api::JsonWriter& w) { node->status(w); };
  }
  srv.obs->attach(srv.journal.get(), pipeline, shared);
  if (srv.cluster) srv.cluster->register_metrics(srv.obs->registry());
  store::Committer& committer = *srv.committer;
  shared.blocks = [&committer](uint64_t from, size_t limit) {
    return committer.recent(from, limit);
  };
  shared.current_height = [&committer] { return committer.recent_height(); };
  api::ApiServer& server = srv.api.emplace(shared, pipeline);
  if (Status s = server.start(); !s.ok()) {
    spdlog::critical("api: {}", s.message());
    return false;
  }
  srv.obs->start();
  pipeline.start();
  spdlog::info("threads: {}api workers {}, verify helpers {}", pipeline.placement_report(),
               c.api_workers, app::pipeline_on_api(c) ? c.verify_helpers : 0);
  spdlog::info("obs: detail {}, flight-recorder dumps into {}", c.obs_detail, srv.obs->trace_dir());
  if (server.tls() && server.plain_port() >= 0)
    spdlog::info("plain on {}:{} (REST + WebSocket /stream, without TLS)", c.tls_plain_address,
                 server.plain_port());
  spdlog::info("listening on {}:{} (REST + WebSocket /stream{}), admin on {}:{}", c.listen_address,
               server.port(), server.tls() ? ", TLS" : "", c.admin_address, server.admin_port());
  return true;
}

// A fresh data dir gets the configured markets, through the server's own ingress ring.
void create_markets(const app::Config& c, Server& srv) {
  LocalSubmitter& local = srv.local.emplace(*srv.pipeline, c.api_workers, *srv.shared, c.chain_id);
  for (const app::MarketSeed& m : c.markets) {
    if (srv.pipeline->read_side().market_exists(m.id)) continue;
    Tx tx;
    tx.h.type = TxType::kCreateMarket;
    tx.h.nonce = srv.op_nonce;
    tx.create_market = CreateMarketTx{m.id, m.params, m.index_price};
    local.submit(tx);
    local.drain([&](const pipe::Result& r) {
      if (r.reject == Reject::kOk) ++srv.op_nonce;
      spdlog::info("market {} ({}) {}", int(m.id), m.params.symbol.data(),
                   r.reject == Reject::kOk ? "created"
                                           : "refused: " + std::string(reject_message(r.reject)));
    });
  }
  srv.shared->operator_nonce.store(srv.op_nonce);
}

// False (logged) when a step fails: the server cannot start.
bool build(const app::Config& c, Recovered& rec, Server& srv) {
  if (!open_store(c, rec, srv) || !build_read_side(c, rec, srv) || !start_api(c, rec, srv))
    return false;
  if (srv.cluster) {
    const std::string url = "http://" + c.listen_address + ":" + std::to_string(srv.api->port());
    srv.cluster->start(*srv.pipeline, c.api_workers, *srv.journal, *srv.shared, c.chain_id, url);
    if (!srv.cluster->primary()) return true;  // the markets come from the stream
  }
  create_markets(c, srv);
  return true;
}

// ---- run: the main loop ----

// Ready: systemd hears it, the log says how long the start took, and the work held back for the
// start begins (khugepaged's huge pages for the engine, the committer's replica and catch-up).
void report_ready(const app::Config& c, const Startup& start, const Recovered& rec, Server& srv) {
  srv.shared->ready.store(true);
  sd_notify("READY=1\nSTATUS=serving");
  spdlog::info("ready: seq {}, {} durability, data dir {}",
               std::max(srv.pipeline->applied_seq(), srv.recovered_seq),
               store::durability_name(c.durability), c.data_dir);
  const store::RecoveryReport& rep = rec.rep;
  spdlog::info(
      "ready {:.3f} s after start: engine recovery {:.3f} s (snapshot mapped in {:.3f} s, read and "
      "checked in {:.3f} s alongside its decode, which ended {:.3f} s after), read side {:.3f} s",
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start.at).count(),
      rep.seconds, rep.snapshot_read_seconds, rep.snapshot_verify_seconds,
      rep.snapshot_decode_seconds, srv.read_side_s);
  if (srv.mem_after_read_side.available)
    spdlog::info("memory: {} MB allocated before the read side, {} MB by it; {} MB resident",
                 srv.mem_before_read_side.allocated >> 20,
                 (srv.mem_after_read_side.allocated - srv.mem_before_read_side.allocated) >> 20,
                 srv.mem_after_read_side.resident >> 20);
  if (const size_t promoted = promote_deferred_huge_pages(); promoted > 0)
    spdlog::info("huge pages: {} MB of the engine's arrays advised for khugepaged to collapse",
                 promoted >> 20);
  srv.committer->set_paused(false);  // now it may rebuild its replica and catch up
}

// Waits up to round_ms for a signal. False on SIGTERM or SIGINT: time to shut down. SIGHUP reopens
// the log file and loads the TLS certificate again.
bool no_stop_signal(const app::Config& c, const sigset_t& signals, api::ApiServer* api,
                    long round_ms) {
  timespec ts{0, round_ms * 1'000'000};
  const int sig = sigtimedwait(&signals, nullptr, &ts);
  if (sig == SIGTERM || sig == SIGINT) {
    spdlog::info("signal {}: shutting down", sig);
    return false;
  }
  if (sig == SIGHUP) {
    setup_logging(c);
    spdlog::info("SIGHUP: logs reopened");
    if (api != nullptr && api->tls()) {
      if (Status s = api->reload_tls(); s.ok())
        spdlog::info("SIGHUP: TLS certificate {} reloaded", c.tls_cert_file);
      else
        spdlog::error("SIGHUP: TLS certificate not reloaded ({}); the previous one stays",
                      s.message());
    }
  }
  return true;
}

// 3 (logged) when the journal or the committer failed: the server must stop, and a restart
// recovers from what the disk holds (a failed fsync is never retried). Else 0. A full disk is
// logged when it starts and ends; the journal retries by itself meanwhile.
int store_failure(Server& srv, bool& out_of_space) {
  if (srv.journal->failed()) {
    spdlog::critical(
        "journal failed: {}; nothing more is acknowledged; stopping for a restart "
        "into recovery",
        srv.journal->failure());
    return 3;
  }
  if (srv.journal->out_of_space() != out_of_space) {
    out_of_space = !out_of_space;
    if (out_of_space)
      spdlog::error(
          "journal: the disk is full; new txs are refused (code 23003) until it has room");
    else
      spdlog::info("journal: space is back; txs are taken again");
  }
  if (const std::string f = srv.committer->failure(); !f.empty()) {
    spdlog::critical("{}; stopping (commitments must not have holes)", f);
    return 3;
  }
  return 0;
}

// Rounds until SIGTERM or SIGINT (0) or a store failure (3): 10 ms with a demo load, which paces
// its txs from here, else 100 ms (each round is a wake-up of this thread: under light load a 10 ms
// round cost half a context switch per tx; the funding clock's ticks are due by the clock).
int run(const app::Config& c, const Startup& start, Server& srv, SnapshotScheduler& snapshots) {
  std::optional<DemoLoad> demo;
  if (srv.local) demo.emplace(c, srv);
  const bool watchdog = std::getenv("WATCHDOG_USEC") != nullptr;
  bool committer_logged = false, out_of_space = false;
  const long round_ms = c.demo_load_tps > 0 ? 10 : 100;
  while (no_stop_signal(c, start.signals, srv.api ? &*srv.api : nullptr, round_ms)) {
    if (watchdog) sd_notify("WATCHDOG=1");
    if (!committer_logged && srv.committer->prepared()) {
      committer_logged = true;
      spdlog::info("committer ready: replica rebuilt and caught up in {:.3f} s",
                   srv.committer->prepare_seconds());
    }
    if (demo) demo->poll();
    snapshots.poll();
    if (const int code = store_failure(srv, out_of_space); code != 0) return code;
    if (srv.cluster) {
      if (const std::string f = srv.cluster->failure(); !f.empty()) {
        spdlog::critical("cluster: {}; stopping (this node no longer matches the stream)", f);
        return 3;
      }
    }
  }
  return 0;
}

// ---- shut down: stop accepting, drain, save, sync, a final snapshot ----

// 0, or 4 when the final snapshot cannot be written.
int shut_down(const app::Config& c, Server& srv, SnapshotScheduler& snapshots) {
  sd_notify("STOPPING=1");
  srv.shared->ready.store(false);
  srv.api->stop_accepting();
  snapshots.wait_for_child();
  if (srv.cluster) srv.cluster->stop_following();
  srv.pipeline->stop();  // drains the rings: everything submitted is sequenced, journaled, answered
  srv.api->stop();       // delivers the last replies, closes connections
  if (Status s = app::save_tx_index(c.data_dir, srv.shared->tx_records()); !s.ok())
    spdlog::warn("tx index not saved: {}", s.message());
  app::save_history(c, srv);
  store::Committer& committer = *srv.committer;
  committer.stop();  // drains: every sealed block is committed
  srv.obs->stop();
  const store::BlockCommitment last = committer.last();
  spdlog::info("committed height {} (seq {}), commitment {}", last.block, last.last_seq,
               store::to_hex(last.commitment.data(), last.commitment.size()));
  store::Journal& journal = *srv.journal;
  journal.close();  // everything sequenced is now durable
  if (srv.cluster) srv.cluster->stop();
  const Engine& e = srv.pipeline->engine();
  if (e.last_seq() != snapshots.covered()) {
    store::SnapshotInfo info;
    if (Status s = store::write_snapshot(e, c.data_dir, &info); !s.ok()) {
      spdlog::error("final snapshot failed: {}", s.message());
      return 4;
    }
    (void)store::retire_covered(journal, c.data_dir, info.seq, c.snapshot_keep,
                                committer.committed_through(journal.durable_seq()));
    spdlog::info("final snapshot at seq {} ({} bytes)", info.seq, info.bytes);
  }
  spdlog::info("stopped cleanly at seq {}, state hash {:016x}", e.last_seq(), e.state_hash());
  return 0;
}

// A failure while serving (exit 3): nothing more is answered, the threads stop in the order their
// users need (the api, the cluster's following, the pipeline, the journal, the cluster's
// publisher), and no snapshot or history is written: a restart recovers from the disk.
void stop_after_failure(Server& srv) {
  srv.shared->ready.store(false);
  srv.api->stop();
  if (srv.cluster) srv.cluster->stop_following();
  srv.pipeline->stop();
  srv.journal->close();
  if (srv.cluster) srv.cluster->stop();
}

// recover -> build -> run -> shut down. Exit codes: 2 the server cannot start, 3 the journal or
// the committer failed while serving, 4 the final snapshot failed.
int serve(const app::Config& c) {
  const Startup start = start_up(c);
  Recovered rec;
  if (!app::recover(c, rec)) return 2;
  Server srv(c);
  if (!build(c, rec, srv)) return 2;
  SnapshotScheduler snapshots(c, srv, rec.rep.snapshot_seq);
  report_ready(c, start, rec, srv);
  if (const int code = run(c, start, srv, snapshots); code != 0) {
    stop_after_failure(srv);
    return code;
  }
  return shut_down(c, srv, snapshots);
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
  app.add_option("--listen-address", o.listen_address, "public listener address");
  app.add_option("--durability", o.durability, "fsync | write | none | replicated");
  app.add_option("--role", o.role, "cluster role: single | primary | standby | replica");
  app.add_option("--nats", o.nats, "NATS servers for a cluster role: nats://host:port[,...]");
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
