#include "config.hpp"

#include <toml++/toml.h>
#include <cstring>
#include <sstream>

namespace tachyon::app {

namespace {

std::string where(const toml::node& n, const std::string& origin) {
  const auto& src = n.source();
  return origin + ":" + std::to_string(src.begin.line);
}

// Reads an integer key into `out` if present; refuses wrong types and out-of-range values.
template <typename T>
Status get_int(const toml::table& t, const char* key, T& out, const std::string& origin, int64_t lo,
               int64_t hi) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return Status();
  const auto v = n->value<int64_t>();
  if (!n->is_integer() || !v)
    return Status::error(where(*n, origin) + ": '" + key + "' must be an integer");
  if (*v < lo || *v > hi)
    return Status::error(where(*n, origin) + ": '" + key + "' = " + std::to_string(*v) +
                         " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                         "]");
  out = static_cast<T>(*v);
  return Status();
}

Status get_str(const toml::table& t, const char* key, std::string& out, const std::string& origin) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return Status();
  if (!n->is_string()) return Status::error(where(*n, origin) + ": '" + key + "' must be a string");
  out = *n->value<std::string>();
  return Status();
}

Status get_bool(const toml::table& t, const char* key, bool& out, const std::string& origin) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return Status();
  if (!n->is_boolean())
    return Status::error(where(*n, origin) + ": '" + key + "' must be true or false");
  out = *n->value<bool>();
  return Status();
}

#define TRY(expr)                                \
  do {                                           \
    if (Status s_ = (expr); !s_.ok()) return s_; \
  } while (0)

constexpr int64_t kI32 = INT32_MAX;

Status parse_market(const toml::table& t, const std::string& origin, MarketSeed& m) {
  MarketParams& p = m.params;
  std::string symbol;
  TRY(get_int(t, "id", m.id, origin, 0, 254));
  TRY(get_str(t, "symbol", symbol, origin));
  if (symbol.empty() || symbol.size() > 15)
    return Status::error(where(t, origin) + ": market symbol must have 1 to 15 characters");
  std::memcpy(p.symbol.data(), symbol.data(), symbol.size());
  TRY(get_int(t, "size_decimals", p.size_decimals, origin, 0, 6));
  TRY(get_int(t, "price_decimals", p.price_decimals, origin, 0, 6));
  TRY(get_int(t, "index_price", m.index_price, origin, 1, kMaxPriceTicks));
  TRY(get_int(t, "taker_fee_ppm", p.taker_fee_ppm, origin, 0, 100000));
  TRY(get_int(t, "maker_fee_ppm", p.maker_fee_ppm, origin, 0, 100000));
  TRY(get_int(t, "default_imf", p.default_imf, origin, 1, 10000));
  TRY(get_int(t, "min_imf", p.min_imf, origin, 1, 10000));
  TRY(get_int(t, "mmf", p.mmf, origin, 1, 10000));
  TRY(get_int(t, "cmf", p.cmf, origin, 1, 10000));
  TRY(get_int(t, "price_band", p.price_band, origin, 1, 10000));
  TRY(get_int(t, "market_protection", p.market_protection, origin, 1, 10000));
  TRY(get_int(t, "min_base_lots", p.min_base_lots, origin, 1, kMaxBaseAmount));
  TRY(get_int(t, "min_quote_usdc", p.min_quote_usdc, origin, 0, INT64_MAX));
  TRY(get_int(t, "max_orders_per_account", p.max_orders_per_account, origin, 1, kI32));
  TRY(get_int(t, "max_orders", p.max_orders, origin, 1, UINT32_MAX));
  p.funding_clamp_small = 500;  // Lighter's typical values: 0.05%, 4%, 0.01% per period
  p.funding_clamp_big = 40'000;
  p.interest_rate = 100;
  TRY(get_int(t, "funding_clamp_small", p.funding_clamp_small, origin, 0, 1'000'000));
  TRY(get_int(t, "funding_clamp_big", p.funding_clamp_big, origin, 0, 1'000'000));
  TRY(get_int(t, "interest_rate", p.interest_rate, origin, -1'000'000, 1'000'000));
  TRY(get_int(t, "breaker_band", p.breaker_band, origin, 0, 10000));
  TRY(get_int(t, "breaker_window_s", p.breaker_window_s, origin, 0, 86400));
  TRY(get_int(t, "breaker_cooldown_s", p.breaker_cooldown_s, origin, 0, 86400));
  p.status = MarketStatus::kActive;
  if (!market_params_valid(p))
    return Status::error(where(t, origin) + ": market '" + symbol +
                         "' is inconsistent (need cmf < mmf < min_imf <= default_imf, "
                         "size_decimals + price_decimals <= 6, funding_clamp_small <= "
                         "funding_clamp_big, breaker_window_s > 0 with a breaker_band)");
  return Status();
}

// One reader per section: the keys it may hold, each into its field of the Config.

Status parse_server(const toml::table& t, const std::string& origin, Config& c) {
  TRY(get_str(t, "listen_address", c.listen_address, origin));
  TRY(get_int(t, "port", c.port, origin, 0, 65535));
  TRY(get_str(t, "admin_address", c.admin_address, origin));
  TRY(get_int(t, "admin_port", c.admin_port, origin, 0, 65535));
  TRY(get_int(t, "chain_id", c.chain_id, origin, 0, UINT32_MAX));
  TRY(get_int(t, "workers", c.api_workers, origin, 1, 64));
  TRY(get_int(t, "push_interval_us", c.push_interval_us, origin, 0, 1'000'000));
  TRY(get_str(t, "operator_pubkey", c.operator_pubkey, origin));
  return Status();
}

Status parse_limits(const toml::table& t, const std::string& origin, Config& c) {
  TRY(get_int(t, "max_body_bytes", c.max_body_bytes, origin, 1024, 16 << 20));
  TRY(get_int(t, "max_ws_message_bytes", c.max_ws_message_bytes, origin, 1024, 16 << 20));
  TRY(get_int(t, "max_subscriptions", c.max_subscriptions, origin, 1, 100000));
  TRY(get_int(t, "ws_queue_bytes", c.ws_queue_bytes, origin, 4096, 1 << 30));
  TRY(get_int(t, "ws_stall_timeout_ms", c.ws_stall_timeout_ms, origin, 0, 3'600'000));
  TRY(get_int(t, "ws_total_queue_bytes", c.ws_total_queue_bytes, origin, 0, int64_t{1} << 40));
  TRY(get_int(t, "idle_timeout_s", c.idle_timeout_s, origin, 1, 86400));
  TRY(get_int(t, "account_rate_per_s", c.account_rate_per_s, origin, 1, 10000000));
  TRY(get_int(t, "account_burst", c.account_burst, origin, 1, 10000000));
  TRY(get_int(t, "max_connections", c.max_connections, origin, 1, 10000000));
  TRY(get_int(t, "max_connections_per_ip", c.max_connections_per_ip, origin, 1, 1000000));
  TRY(get_int(t, "ip_rate_per_s", c.ip_rate_per_s, origin, 1, 10000000));
  TRY(get_int(t, "ip_burst", c.ip_burst, origin, 1, 10000000));
  return Status();
}

Status parse_store(const toml::table& t, const std::string& origin, Config& c) {
  std::string durability;
  TRY(get_str(t, "data_dir", c.data_dir, origin));
  TRY(get_str(t, "durability", durability, origin));
  if (!durability.empty()) TRY(store::parse_durability(durability, c.durability));
  TRY(get_int(t, "segment_bytes", c.segment_bytes, origin, 4096, int64_t{1} << 40));
  TRY(get_int(t, "snapshot_every_txs", c.snapshot_every_txs, origin, 0, INT64_MAX));
  TRY(get_int(t, "snapshot_interval_s", c.snapshot_interval_s, origin, 0, 86400 * 30));
  TRY(get_int(t, "snapshot_keep", c.snapshot_keep, origin, 1, 1000));
  std::string from;
  TRY(get_str(t, "snapshot_from", from, origin));
  if (from == "replica") {
    c.snapshot_from_replica = true;
  } else if (from == "fork") {
    c.snapshot_from_replica = false;
  } else if (t.contains("snapshot_from")) {
    return Status::error(where(*t.get("snapshot_from"), origin) +
                         ": 'snapshot_from' must be \"replica\" or \"fork\", not \"" + from + "\"");
  }
  std::string gc;
  TRY(get_int(t, "commit_linger_us", c.commit_linger_us, origin, 0, 100'000));
  TRY(get_bool(t, "preallocate_segments", c.preallocate_segments, origin));
  TRY(get_str(t, "group_commit", gc, origin));
  if (gc == "apply" || gc == "writer") {
    c.group_commit_on_apply = gc == "apply";
  } else if (t.contains("group_commit")) {
    return Status::error(where(*t.get("group_commit"), origin) +
                         ": 'group_commit' must be \"apply\" or \"writer\", not \"" + gc + "\"");
  }
  TRY(get_int(t, "block_max_txs", c.block_max_txs, origin, 1, 1'000'000));
  TRY(get_int(t, "block_interval_ms", c.block_interval_ms, origin, 1, 60'000));
  return Status();
}

Status parse_engine(const toml::table& t, const std::string& origin, Config& c) {
  TRY(get_int(t, "max_orders", c.engine.max_orders, origin, 16, int64_t{1} << 30));
  TRY(get_int(t, "expected_accounts", c.engine.expected_accounts, origin, 16, int64_t{1} << 30));
  TRY(get_int(t, "levels_per_side", c.engine.levels_per_side, origin, 16, int64_t{1} << 24));
  TRY(get_int(t, "fee_account", c.engine.fee_account, origin, 0, kMaxAccountIndex));
  TRY(get_int(t, "insurance_account", c.engine.insurance_account, origin, 0, kMaxAccountIndex));
  TRY(get_int(t, "funding_interval_ms", c.engine.funding_interval_ms, origin, 1000,
              int64_t{86400} * 1000 * 7));
  TRY(get_int(t, "impact_notional", c.engine.impact_notional, origin, 1, int64_t{1} << 53));
  TRY(get_int(t, "liquidation_fee", c.engine.liquidation_fee, origin, 0, 10000));
  TRY(get_int(t, "funding_sample_ms", c.funding_sample_ms, origin, 0, int64_t{3600} * 1000));
  return Status();
}

Status parse_threads(const toml::table& t, const std::string& origin, Config& c) {
  TRY(get_str(t, "wait_strategy", c.wait_strategy, origin));
  TRY(get_str(t, "apply_wait_strategy", c.apply_wait_strategy, origin));
  TRY(get_int(t, "pipeline_threads", c.pipeline_threads, origin, 0, 2));
  TRY(get_str(t, "pipeline_loop", c.pipeline_loop, origin));
  TRY(get_int(t, "verify_helpers", c.verify_helpers, origin, 0, 64));
  TRY(get_int(t, "apply_keep_warm_rounds", c.apply_keep_warm_rounds, origin, 0, 1 << 20));
  TRY(get_int(t, "apply_batch_updates", c.apply_batch_updates, origin, 0, 1 << 20));
  TRY(get_int(t, "sequencer_core", c.sequencer_core, origin, -1, 4095));
  TRY(get_int(t, "apply_core", c.apply_core, origin, -1, 4095));
  TRY(get_int(t, "sched_fifo_priority", c.sched_fifo_priority, origin, 0, 99));
  TRY(get_str(t, "lock_memory", c.lock_memory, origin));
  return Status();
}

Status parse_tls(const toml::table& t, const std::string& origin, Config& c) {
  TRY(get_str(t, "cert_file", c.tls_cert_file, origin));
  TRY(get_str(t, "key_file", c.tls_key_file, origin));
  TRY(get_str(t, "plain_address", c.tls_plain_address, origin));
  TRY(get_int(t, "plain_port", c.tls_plain_port, origin, -1, 65535));
  return Status();
}

Status parse_log(const toml::table& t, const std::string& origin, Config& c) {
  TRY(get_str(t, "file", c.log_file, origin));
  TRY(get_str(t, "level", c.log_level, origin));
  return Status();
}

Status parse_obs(const toml::table& t, const std::string& origin, Config& c) {
  TRY(get_str(t, "detail", c.obs_detail, origin));
  TRY(get_str(t, "trace_dir", c.trace_dir, origin));
  TRY(get_int(t, "trace_events_per_thread", c.trace_events_per_thread, origin, 1024, 1 << 24));
  TRY(get_int(t, "trace_window_ms", c.trace_window_ms, origin, 1, 600'000));
  TRY(get_int(t, "trace_min_interval_s", c.trace_min_interval_s, origin, 0, 86400));
  TRY(get_int(t, "dump_apply_batch_us", c.dump_apply_batch_us, origin, 0, 60'000'000));
  TRY(get_int(t, "dump_tx_ms", c.dump_tx_ms, origin, 0, 600'000));
  return Status();
}

Status parse_cluster(const toml::table& t, const std::string& origin, Config& c) {
  TRY(get_str(t, "role", c.role, origin));
  TRY(get_str(t, "nats", c.nats, origin));
  TRY(get_str(t, "node_name", c.node_name, origin));
  TRY(get_str(t, "stream", c.stream, origin));
  TRY(get_int(t, "stream_replicas", c.stream_replicas, origin, 1, 5));
  TRY(get_int(t, "nats_timeout_ms", c.nats_timeout_ms, origin, 100, 60'000));
  TRY(get_int(t, "lease_ms", c.lease_ms, origin, 500, 600'000));
  return Status();
}

Status parse_demo(const toml::table& t, const std::string& origin, Config& c) {
  TRY(get_int(t, "load_tps", c.demo_load_tps, origin, 0, 1'000'000));
  TRY(get_int(t, "seed", c.demo_seed, origin, 0, INT64_MAX));
  return Status();
}

// [[markets]]: replaces the configured markets.
Status parse_markets(const toml::node& n, const std::string& origin, Config& c) {
  const toml::array* arr = n.as_array();
  if (arr == nullptr)
    return Status::error(where(n, origin) + ": [[markets]] must be an array of tables");
  c.markets.clear();
  for (const toml::node& m : *arr) {
    const toml::table* t = m.as_table();
    if (t == nullptr)
      return Status::error(where(m, origin) + ": each [[markets]] entry must be a table");
    MarketSeed seed;
    TRY(parse_market(*t, origin, seed));
    c.markets.push_back(seed);
  }
  return Status();
}

}  // namespace

Status parse_config(const std::string& text, const std::string& origin, Config& c) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    std::ostringstream os;
    os << origin << ":" << e.source().begin.line << ": " << e.description();
    return Status::error(os.str());
  }
  static const char* kSections[] = {"server",  "store",  "engine", "threads", "log", "demo",
                                    "markets", "limits", "obs",    "cluster", "tls"};
  for (auto&& [key, node] : root) {
    bool known = false;
    for (const char* s : kSections) known |= key.str() == s;
    if (!known)
      return Status::error(where(node, origin) + ": unknown section [" + std::string(key.str()) +
                           "]");
  }
  if (const toml::table* t = root["server"].as_table()) TRY(parse_server(*t, origin, c));
  if (const toml::table* t = root["limits"].as_table()) TRY(parse_limits(*t, origin, c));
  if (const toml::table* t = root["store"].as_table()) TRY(parse_store(*t, origin, c));
  if (const toml::table* t = root["engine"].as_table()) TRY(parse_engine(*t, origin, c));
  if (const toml::table* t = root["threads"].as_table()) TRY(parse_threads(*t, origin, c));
  if (const toml::table* t = root["log"].as_table()) TRY(parse_log(*t, origin, c));
  if (const toml::table* t = root["tls"].as_table()) TRY(parse_tls(*t, origin, c));
  if (const toml::table* t = root["obs"].as_table()) TRY(parse_obs(*t, origin, c));
  if (const toml::table* t = root["demo"].as_table()) TRY(parse_demo(*t, origin, c));
  if (const toml::table* t = root["cluster"].as_table()) TRY(parse_cluster(*t, origin, c));
  if (const toml::node* n = root.get("markets")) TRY(parse_markets(*n, origin, c));
  return check_config(c);
}

namespace {
Status check_cluster(const Config& c) {
  if (c.role != "single" && c.role != "primary" && c.role != "standby" && c.role != "replica")
    return Status::error("cluster.role must be single, primary, standby or replica, not '" +
                         c.role + "'");
  if (c.role != "single" && c.nats.empty())
    return Status::error("cluster.role " + c.role +
                         " needs cluster.nats (--nats nats://host:port[,...])");
  if (c.durability == store::Durability::kReplicated && c.role != "primary" && c.role != "standby")
    return Status::error(
        "store.durability \"replicated\" needs cluster.role primary or standby (it waits for "
        "the NATS stream's ack)");
  return Status();
}
}  // namespace

Status check_config(const Config& c) {
  if (c.sequencer_core >= 0 && c.sequencer_core == c.apply_core)
    return Status::error("threads.sequencer_core and threads.apply_core must differ (both " +
                         std::to_string(c.apply_core) +
                         "): two hot threads on one core take turns, or starve each other "
                         "under SCHED_FIFO");
  if (c.lock_memory != "off" && c.lock_memory != "on_fault" && c.lock_memory != "all")
    return Status::error("threads.lock_memory must be off, on_fault or all, not '" + c.lock_memory +
                         "'");
  if (c.wait_strategy != "spin" && c.wait_strategy != "spin_then_park" && c.wait_strategy != "park")
    return Status::error("threads.wait_strategy must be spin, spin_then_park or park, not '" +
                         c.wait_strategy + "'");
  if (!c.apply_wait_strategy.empty() && c.apply_wait_strategy != "spin" &&
      c.apply_wait_strategy != "spin_then_park" && c.apply_wait_strategy != "park")
    return Status::error(
        "threads.apply_wait_strategy must be empty, spin, spin_then_park or park, not '" +
        c.apply_wait_strategy + "'");
  if (c.pipeline_threads == 1) {
    const char* why = !c.apply_wait_strategy.empty() ? "threads.apply_wait_strategy is set"
                      : c.apply_core >= 0            ? "threads.apply_core is set"
                      : !c.snapshot_from_replica     ? "store.snapshot_from is \"fork\""
                                                     : nullptr;
    if (why != nullptr)
      return Status::error(std::string("threads.pipeline_threads = 1 runs the apply loop on the "
                                       "sequencer's thread, but ") +
                           why + ": set pipeline_threads = 2 (or 0: chosen by the settings)");
  }
  if (c.pipeline_loop != "auto" && c.pipeline_loop != "api" && c.pipeline_loop != "own")
    return Status::error("threads.pipeline_loop must be auto, api or own, not '" + c.pipeline_loop +
                         "'");
  if (const char* why = pipeline_loop_stays_apart(c); c.pipeline_loop == "api" && why != nullptr)
    return Status::error(std::string("threads.pipeline_loop = \"api\" runs the one pipeline "
                                     "loop on api worker 0's thread, but ") +
                         why + ": set pipeline_loop = \"own\" (or \"auto\")");
  if (c.obs_detail != "off" && c.obs_detail != "loadtest")
    return Status::error("obs.detail must be off or loadtest, not '" + c.obs_detail + "'");
  static const char* kLevels[] = {"trace", "debug", "info", "warn", "error"};
  bool level_ok = false;
  for (const char* l : kLevels) level_ok |= c.log_level == l;
  if (!level_ok)
    return Status::error("log.level must be trace, debug, info, warn or error, not '" +
                         c.log_level + "'");
  if (c.data_dir.empty()) return Status::error("store.data_dir must not be empty");
  if (c.engine.fee_account == c.engine.insurance_account)
    return Status::error("engine.fee_account and engine.insurance_account must differ");
  for (size_t i = 0; i < c.markets.size(); ++i)
    for (size_t j = i + 1; j < c.markets.size(); ++j)
      if (c.markets[i].id == c.markets[j].id)
        return Status::error("two [[markets]] entries use id " + std::to_string(c.markets[i].id));
  if (c.port != 0 && c.port == c.admin_port)
    return Status::error("server.port and server.admin_port must differ");
  if (c.tls_cert_file.empty() != c.tls_key_file.empty())
    return Status::error("tls.cert_file and tls.key_file go together: set both (TLS) or neither");
  if (!c.tls_cert_file.empty() && c.tls_plain_port > 0 &&
      (c.tls_plain_port == c.port || c.tls_plain_port == c.admin_port))
    return Status::error("tls.plain_port must differ from server.port and server.admin_port");
  return check_cluster(c);
}

std::string describe(const Config& c) {
  std::ostringstream o;
  o << "[server]\nlisten_address = \"" << c.listen_address << "\"\nport = " << c.port
    << "\nadmin_address = \"" << c.admin_address << "\"\nadmin_port = " << c.admin_port
    << "\nchain_id = " << c.chain_id << "\nworkers = " << c.api_workers
    << "\npush_interval_us = " << c.push_interval_us << "\noperator_pubkey = \""
    << c.operator_pubkey << "\"\n\n[limits]\nmax_body_bytes = " << c.max_body_bytes
    << "\nmax_ws_message_bytes = " << c.max_ws_message_bytes
    << "\nmax_subscriptions = " << c.max_subscriptions << "\nws_queue_bytes = " << c.ws_queue_bytes
    << "\nws_stall_timeout_ms = " << c.ws_stall_timeout_ms
    << "\nws_total_queue_bytes = " << c.ws_total_queue_bytes
    << "\nidle_timeout_s = " << c.idle_timeout_s
    << "\nmax_connections_per_ip = " << c.max_connections_per_ip
    << "\nip_rate_per_s = " << c.ip_rate_per_s << "\nip_burst = " << c.ip_burst
    << "\naccount_rate_per_s = " << c.account_rate_per_s << "\naccount_burst = " << c.account_burst
    << "\nmax_connections = " << c.max_connections << "\n\n[store]\ndata_dir = \"" << c.data_dir
    << "\"\ndurability = \"" << store::durability_name(c.durability)
    << "\"\nsegment_bytes = " << c.segment_bytes << "\ngroup_commit = \""
    << (c.group_commit_on_apply ? "apply" : "writer")
    << "\"\ncommit_linger_us = " << c.commit_linger_us
    << "\npreallocate_segments = " << (c.preallocate_segments ? "true" : "false")
    << "\nsnapshot_every_txs = " << c.snapshot_every_txs
    << "\nsnapshot_interval_s = " << c.snapshot_interval_s
    << "\nsnapshot_keep = " << c.snapshot_keep << "\nsnapshot_from = \""
    << (c.snapshot_from_replica ? "replica" : "fork") << "\"\nblock_max_txs = " << c.block_max_txs
    << "\nblock_interval_ms = " << c.block_interval_ms
    << "\n\n[engine]\nmax_orders = " << c.engine.max_orders
    << "\nexpected_accounts = " << c.engine.expected_accounts
    << "\nlevels_per_side = " << c.engine.levels_per_side
    << "\nfee_account = " << c.engine.fee_account
    << "\ninsurance_account = " << c.engine.insurance_account
    << "\nfunding_interval_ms = " << c.engine.funding_interval_ms
    << "\nimpact_notional = " << c.engine.impact_notional
    << "\nliquidation_fee = " << c.engine.liquidation_fee
    << "\nfunding_sample_ms = " << c.funding_sample_ms << "\n\n[threads]\nwait_strategy = \""
    << c.wait_strategy << "\"\napply_wait_strategy = \"" << c.apply_wait_strategy
    << "\"\npipeline_threads = " << c.pipeline_threads << "\npipeline_loop = \"" << c.pipeline_loop
    << "\"\nverify_helpers = " << c.verify_helpers
    << "\napply_keep_warm_rounds = " << c.apply_keep_warm_rounds
    << "\napply_batch_updates = " << c.apply_batch_updates
    << "\nsequencer_core = " << c.sequencer_core << "\napply_core = " << c.apply_core
    << "\nsched_fifo_priority = " << c.sched_fifo_priority << "\nlock_memory = \"" << c.lock_memory
    << "\"\n\n[tls]\ncert_file = \"" << c.tls_cert_file << "\"\nkey_file = \"" << c.tls_key_file
    << "\"\nplain_address = \"" << c.tls_plain_address << "\"\nplain_port = " << c.tls_plain_port
    << "\n\n[log]\nfile = \"" << c.log_file << "\"\nlevel = \"" << c.log_level
    << "\"\n\n[obs]\ndetail = \"" << c.obs_detail << "\"\ntrace_dir = \"" << c.trace_dir
    << "\"\ntrace_events_per_thread = " << c.trace_events_per_thread
    << "\ntrace_window_ms = " << c.trace_window_ms
    << "\ntrace_min_interval_s = " << c.trace_min_interval_s
    << "\ndump_apply_batch_us = " << c.dump_apply_batch_us << "\ndump_tx_ms = " << c.dump_tx_ms
    << "\n\n[cluster]\nrole = \"" << c.role << "\"\nnats = \"" << c.nats << "\"\nnode_name = \""
    << c.node_name << "\"\nstream = \"" << c.stream << "\"\nstream_replicas = " << c.stream_replicas
    << "\nnats_timeout_ms = " << c.nats_timeout_ms << "\nlease_ms = " << c.lease_ms
    << "\n\n[demo]\nload_tps = " << c.demo_load_tps << "\nseed = " << c.demo_seed << "\n";
  for (const MarketSeed& m : c.markets) {
    const MarketParams& p = m.params;
    o << "\n[[markets]]\nid = " << int(m.id) << "\nsymbol = \"" << p.symbol.data()
      << "\"\nsize_decimals = " << int(p.size_decimals)
      << "\nprice_decimals = " << int(p.price_decimals) << "\nindex_price = " << m.index_price
      << "\ntaker_fee_ppm = " << p.taker_fee_ppm << "\nmaker_fee_ppm = " << p.maker_fee_ppm
      << "\ndefault_imf = " << p.default_imf << "\nmin_imf = " << p.min_imf << "\nmmf = " << p.mmf
      << "\ncmf = " << p.cmf << "\nprice_band = " << p.price_band
      << "\nmarket_protection = " << p.market_protection << "\nmin_base_lots = " << p.min_base_lots
      << "\nmin_quote_usdc = " << p.min_quote_usdc
      << "\nmax_orders_per_account = " << p.max_orders_per_account
      << "\nmax_orders = " << p.max_orders << "\nfunding_clamp_small = " << p.funding_clamp_small
      << "\nfunding_clamp_big = " << p.funding_clamp_big << "\ninterest_rate = " << p.interest_rate
      << "\nbreaker_band = " << p.breaker_band << "\nbreaker_window_s = " << p.breaker_window_s
      << "\nbreaker_cooldown_s = " << p.breaker_cooldown_s << "\n";
  }
  return o.str();
}

}  // namespace tachyon::app
