#pragma once
// The server's configuration: TOML (configs/tachyon.toml, embedded as the defaults) plus
// command-line overrides. Errors name the key and the line.
#include <cstdint>
#include <string>
#include <vector>

#include "tachyon/core/status.hpp"
#include "tachyon/engine/engine.hpp"
#include "tachyon/store/journal.hpp"

namespace tachyon::app {

struct MarketSeed {
  MarketId id = 0;
  MarketParams params{};
  Ticks index_price = 0;
};

struct Config {
  std::string listen_address = "0.0.0.0";
  int port = 8080;
  std::string admin_address = "127.0.0.1";
  int admin_port = 8081;
  std::string data_dir = "./tachyon-data";
  store::Durability durability = store::Durability::kFsync;
  uint64_t segment_bytes = 64ull << 20;
  bool group_commit_on_apply = true;  // false: the journal's own writer thread
  uint32_t commit_linger_us = 450;
  bool preallocate_segments = true;
  uint64_t snapshot_every_txs = 1'000'000;
  uint32_t snapshot_interval_s = 300;
  uint32_t snapshot_keep = 2;
  bool snapshot_from_replica = true;  // false: fork() the sequencer (copy-on-write)
  uint32_t block_max_txs = 1000;
  uint32_t block_interval_ms = 100;
  uint32_t chain_id = 304;
  uint32_t api_workers = 1;
  uint32_t push_interval_us = 1000;
  std::string operator_pubkey;  // hex; empty: <data_dir>/operator.key (made on first start)
  // [tls]: HTTPS and WSS on the public listener when both files are set
  std::string tls_cert_file, tls_key_file;
  std::string tls_plain_address = "127.0.0.1";
  int tls_plain_port = 8082;  // -1: no plain listener beside the TLS one
  // [limits]
  uint32_t max_body_bytes = 65536;
  uint32_t max_ws_message_bytes = 65536;
  uint32_t max_subscriptions = 100;
  uint32_t ws_queue_bytes = 4 << 20;
  uint32_t ws_stall_timeout_ms = 10'000;                // 0: off
  uint64_t ws_total_queue_bytes = uint64_t{256} << 20;  // 0: no bound
  uint32_t idle_timeout_s = 120;
  uint32_t max_connections_per_ip = 100;
  uint32_t ip_rate_per_s = 200;
  uint32_t ip_burst = 400;
  uint32_t account_rate_per_s = 100;
  uint32_t account_burst = 200;
  uint32_t max_connections = 10000;
  EngineConfig engine;
  uint32_t funding_sample_ms = 60'000;  // the server's funding tick (premium sample); 0 = off
  std::string wait_strategy = "park";
  std::string apply_wait_strategy;  // empty: wait_strategy
  // 1: the sequencer and apply loops on one thread; 2: a thread each; 0: one unless a setting
  // needs the apply thread apart (one_pipeline_thread()).
  uint32_t pipeline_threads = 0;
  // Where the one pipeline thread's loop runs: "api" (api worker 0's thread, between its socket
  // handlers: PipelineConfig::hosted), "own" (a thread of its own), "auto" (api when it may).
  std::string pipeline_loop = "auto";
  // Threads that share the Ed25519 checks of the txs api worker 0 reads while it hosts the
  // pipeline loop (api::VerifyPool); 0: none, the worker checks them itself. Unused otherwise.
  uint32_t verify_helpers = 1;
  uint32_t apply_keep_warm_rounds = 64;  // a spinning apply thread's cache warming; 0: off
  uint32_t apply_batch_updates = 0;      // a batch ends at the first tx boundary past this; 0: 4096
  int sequencer_core = -1;
  int apply_core = -1;
  int sched_fifo_priority = 0;
  std::string lock_memory = "on_fault";  // off | on_fault | all
  std::string log_file;
  std::string log_level = "info";
  // [obs]
  std::string obs_detail = "off";  // "loadtest": per-step timing and allocation counting
  std::string trace_dir;           // automatic flight-recorder dumps; empty: <data_dir>/traces
  uint32_t trace_events_per_thread = 1 << 17;
  uint32_t trace_window_ms = 5000;
  uint32_t trace_min_interval_s = 60;
  uint32_t dump_apply_batch_us = 1000;  // a batch slower than this dumps (0: never)
  uint32_t dump_tx_ms = 10;             // a tx life (recv -> reply) longer than this dumps
  // [cluster] (docs/ARCHITECTURE.md "Cluster")
  std::string role = "single";  // single | primary | standby | replica
  std::string nats;             // comma-separated NATS server URLs
  std::string node_name;        // in the lease and logs; empty: <host>:<port>
  std::string stream = "TACHYON";
  uint32_t stream_replicas = 1;  // 1 for one nats-server, 3 in a NATS cluster
  uint32_t nats_timeout_ms = 2000;
  uint32_t lease_ms = 1000;  // the primary's lease: a standby takes over once it lapses
  uint32_t demo_load_tps = 0;
  uint64_t demo_seed = 1;
  std::vector<MarketSeed> markets;
};

extern const char* const kDefaultConfigToml;  // configs/tachyon.toml, embedded at build time

// Parses TOML text into `out` (starting from `out`'s values). `origin` names the source in errors.
Status parse_config(const std::string& text, const std::string& origin, Config& out);
// Checks values that parse but make no sense (ports, capacities, market parameters).
Status check_config(const Config& c);
// The effective configuration as TOML.
std::string describe(const Config& c);
// Whether the sequencer and apply loops share one thread: pipeline_threads 1, or 0 with no
// setting that needs the apply thread apart (its own core or wait strategy, fork snapshots, a
// spinning sequencer).
inline bool one_pipeline_thread(const Config& c) {
  if (c.pipeline_threads != 0) return c.pipeline_threads == 1;
  return c.apply_wait_strategy.empty() && c.apply_core < 0 && c.snapshot_from_replica &&
         c.wait_strategy != "spin";
}
// Why the pipeline's loop cannot run on api worker 0's thread (nullptr: it can): it needs one
// pipeline thread that parks and is not pinned.
inline const char* pipeline_loop_stays_apart(const Config& c) {
  return !one_pipeline_thread(c)     ? "the pipeline has two threads"
         : c.wait_strategy == "spin" ? "threads.wait_strategy is \"spin\""
         : c.sequencer_core >= 0     ? "threads.sequencer_core is set"
                                     : nullptr;
}
// Whether it does (threads.pipeline_loop "api", or "auto" where it can).
inline bool pipeline_on_api(const Config& c) {
  return c.pipeline_loop == "api" ||
         (c.pipeline_loop == "auto" && pipeline_loop_stays_apart(c) == nullptr);
}

}  // namespace tachyon::app
