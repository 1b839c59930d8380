#pragma once
// The api worker's logic, free of Beast (server.cpp holds the sockets): REST routing, sendTx with
// dry-run and deferred replies, WebSocket subscriptions and fan-out from the read side. One
// WorkerLogic per worker thread; nothing in it is shared except through ApiShared.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/functional/function_ref.h>

#include "tachyon/api/api_metrics.hpp"
#include "tachyon/api/dry_run.hpp"
#include "tachyon/api/form.hpp"
#include "tachyon/api/json_writer.hpp"
#include "tachyon/api/tx_info.hpp"
#include "tachyon/codec/tx_hash.hpp"
#include "tachyon/core/thread_owner.hpp"
#include "tachyon/pipe/front.hpp"

namespace tachyon::api {

struct ApiConfig {
  std::string listen_address = "127.0.0.1";
  int port = 8080;  // 0: any free port (tests)
  std::string admin_address = "127.0.0.1";
  int admin_port = 8081;
  // TLS on the public listener (HTTPS, WSS) when both are set: PEM files, reloaded on SIGHUP.
  std::string tls_cert_file, tls_key_file;
  // With TLS on: a plain listener serving the same API (loopback use); -1: none, 0: a free port.
  std::string plain_address = "127.0.0.1";
  int plain_port = -1;
  uint32_t workers = 2;
  // With the pipeline loop on worker 0: threads that share its txs' signature checks (VerifyPool).
  uint32_t verify_helpers = 0;
  uint32_t chain_id = 304;
  size_t max_body_bytes = 64 * 1024;
  size_t max_ws_message_bytes = 64 * 1024;
  size_t max_subscriptions = 100;
  size_t ws_queue_bytes = 4 << 20;  // per connection (held memory); beyond: one resync, then close
  // A send queue not once drained for this long: one resync, then close (0: off). Checked by
  // each worker's tick, so it acts up to one tick late.
  int64_t ws_stall_timeout_ms = 10'000;
  // All connections' send queues together; beyond: the largest are cut (0: no bound).
  size_t ws_total_queue_bytes = size_t{256} << 20;
  int idle_timeout_s = 120;
  uint32_t max_connections = 1000;
  uint32_t max_connections_per_ip = 100;
  double ip_rate_per_s = 200;  // requests and WS messages per IP (token bucket)
  double ip_burst = 400;
  double account_rate_per_s = 100;  // txs per account (token bucket)
  double account_burst = 200;
  size_t tx_index_capacity = 100000;  // txs kept for GET /api/v1/tx
  size_t book_history = 1024;         // book deltas kept per market for resume (per worker)
  PublicKey operator_pubkey{};
};

class WorkerLogic;

// The console's share of a /metrics page (the series its page reads) as one JSON string value
// (console.cpp), ready to be written raw into every frame.
std::string console_metrics_json(std::string_view prometheus);

// Whether auth token `token` grants reading account `a`: signed by one of its keys, not expired,
// and living at most 8 h (crypto.hpp).
bool token_grants(const pipe::AccountView& a, std::string_view token, uint32_t chain_id);

// State every worker shares: all synchronised.
class ApiShared {
 public:
  // `reg`: where the api's metrics register (the app's obs::Registry); null: a private
  // registrar that keeps them unexposed.
  explicit ApiShared(const ApiConfig& c, MetricRegistrar* reg = nullptr)
      : cfg(c),
        own_registry_(reg == nullptr ? std::make_unique<LocalRegistrar>() : nullptr),
        registry(reg != nullptr ? *reg : *own_registry_),
        metrics(registry, c.workers) {
    // One log per worker, and one for the server's own submitter (ring index `workers`).
    for (uint32_t w = 0; w <= c.workers; ++w)
      tx_hashes_.push_back(std::make_unique<BroadcastLog<TxHashBytes>>(1 << 17));
  }
  const ApiConfig cfg;

 private:
  std::unique_ptr<MetricRegistrar> own_registry_;

 public:
  MetricRegistrar& registry;
  ApiMetrics metrics;
  InflightNonces inflight;
  std::atomic<bool> ready{false};
  // Why the storage refuses new txs now ("" when it does not): the journal failed for good, or
  // the disk is full, or (a cluster primary) the journal stream stores nothing. Any worker
  // thread; set before the workers start.
  std::function<std::string()> storage_refusal;
  // A cluster node that does not sequence: why it takes no txs, naming the primary when known
  // ("" on the primary or a single node). Any worker thread; set before the workers start.
  std::function<std::string()> not_primary;
  // A cluster follower: sends dry-run-clean txs on to the primary (cluster/tx_forward.hpp).
  // `done` (any thread) gets the primary's HTTP status and body; status 0: no answer in time
  // (the txs may have executed), -1: not delivered (no primary takes txs now). Null on the
  // primary and on a single node. Set before the workers start.
  using ForwardDone = std::function<void(int status, std::string body)>;
  std::function<void(std::span<const Tx> txs, bool batch, ForwardDone done)> forward_txs;
  // Runs f on api worker `w`'s thread, soon (any thread). Set by ApiServer::start before its
  // workers run; a function posted while the server stops may never run.
  std::function<void(uint32_t w, std::function<void(WorkerLogic&)> f)> post_to_worker;
  // /health/ready's cluster fields (role, primary, applied and stream seqs, lag, stale), written
  // into its open object; null on a single node.
  std::function<void(JsonWriter&)> cluster_status;
  std::atomic<int64_t> operator_nonce{0};
  // An operator tx with `nonce` was accepted: the next one is at least nonce + 1 (any thread).
  void operator_nonce_used(int64_t nonce) {
    int64_t cur = operator_nonce.load();
    while (cur < nonce + 1 && !operator_nonce.compare_exchange_weak(cur, nonce + 1)) {
    }
  }
  std::atomic<uint64_t> connections{0};
  std::function<std::string()> snapshot_trigger;  // admin: returns a status line
  std::function<std::string()> metrics_text;      // admin /metrics (Prometheus text)
  std::function<std::string()> latency_text;      // admin /admin/latency (percentile table)
  std::function<std::string()> trace_json;        // admin /admin/trace (Chrome trace JSON)
  // Block commitments (the committer's recent ones), oldest first; null: not served.
  std::function<std::vector<codec::BlockCommitment>(uint64_t from, size_t limit)> blocks;
  std::function<uint64_t()> current_height;
  int64_t start_ms = 0;
  // The console's description of this node (a JSON object: durability, threads, ...); set once
  // before the workers start.
  std::string node_info;
  // Open consoles, and the metrics their frames carry (console_metrics_json): rendered (~1.5 ms)
  // every 500 ms by the api server's console thread while any is open, never on a worker (an ack
  // would wait).
  std::atomic<int> consoles{0};
  void set_console_metrics(std::shared_ptr<const std::string> text) {
    std::lock_guard lk(console_mu_);
    console_metrics_ = std::move(text);
  }
  std::shared_ptr<const std::string> console_metrics() const {
    std::lock_guard lk(console_mu_);
    return console_metrics_;
  }

  bool ip_connect(const std::string& ip);  // false: too many connections from ip (or in all)
  void ip_disconnect(const std::string& ip);
  bool ip_allow(const std::string& ip);  // rate limit: false means 429 / 23000
  bool account_allow(AccountIndex a);    // per-account tx rate: false means 429 / 23000

  // Txs this server sequenced since it started, by hash (GET /api/v1/tx); the oldest go first.
  struct TxRecord {
    Tx tx;
    uint64_t seq = 0, block = 0;
    int64_t queued_ms = 0, executed_ms = 0;
    Reject reject = Reject::kOk;
    OrderIndex order_index = 0;
  };
  void remember_tx(const std::string& hash, const TxRecord& r);

  // The hash of every tx each worker submitted, by cookie (log position = cookie - 1), written
  // by that worker before the tx reaches the sequencer: any worker can name a trade's taker tx
  // (StateUpdate origin) when it renders the trade. "" when unknown or too old.
  using TxHashBytes = std::array<uint8_t, 40>;
  void record_tx_hash(uint32_t worker, uint64_t cookie, std::string_view hash_hex);
  std::string tx_hash_of(uint32_t worker, uint32_t cookie_low) const;
  // A trade's taker tx hash: by its origin (this run), else from the trades restored at start
  // (history.bin and the journal replay; set before the server starts, read-only after).
  std::string trade_tx_hash(const pipe::TradeRecord& r) const;
  absl::flat_hash_map<uint64_t, TxHashBytes> restored_trade_hashes;
  std::optional<TxRecord> find_tx(const std::string& hash);
  // Everything remembered, oldest first (the server saves it at a clean stop).
  std::vector<std::pair<std::string, TxRecord>> tx_records();

 private:
  struct Bucket {
    uint32_t conns = 0;
    double tokens = 0;
    int64_t last_ns = 0;
  };
  bool take(Bucket& b, double rate, double burst);
  std::mutex mu_;
  absl::flat_hash_map<std::string, Bucket> ips_;
  absl::flat_hash_map<AccountIndex, Bucket> accounts_;
  std::vector<std::unique_ptr<BroadcastLog<TxHashBytes>>> tx_hashes_;  // per worker
  mutable std::mutex console_mu_;
  std::shared_ptr<const std::string> console_metrics_;
  // Keyed by the hash's bytes: no string to allocate, copy or free per tx on the reply path.
  std::mutex tx_mu_;
  absl::flat_hash_map<TxHashBytes, TxRecord> txs_;
  std::deque<TxHashBytes> tx_order_;
};

struct HttpRequest {
  std::string_view method;
  std::string_view target;  // path + query
  std::string_view body;
  std::string_view content_type;
  std::string_view authorization;
  std::string ip;
  bool admin = false;  // arrived on the admin listener
};
struct HttpReply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
};
using ReplyFn = std::function<void(HttpReply)>;

// A WebSocket connection as the logic sees it (server.cpp implements it on Beast). Owner: its
// worker's thread. The implementation reports every change of its queue's size to
// ApiMetrics::ws_queued_add (the total budget reads the sum).
class WsConn {
 public:
  virtual ~WsConn() = default;
  virtual void send_text(std::string frame) = 0;
  // A graceful close: the close frame is queued behind what is already queued.
  virtual void close_conn(std::string_view reason) = 0;
  // A hard cut, for a reader that does not read: the queue dropped, the socket shut at once (a
  // close frame could never be written to it); the close reaches the logic as ws_closed later.
  virtual void cut_conn(std::string_view reason) = 0;
  // The memory the queued frames hold (buffers, not only their text), the frame being written
  // included.
  virtual size_t queued_bytes() const = 0;
  virtual void clear_queue() = 0;  // all but the frame being written

  uint64_t id = 0;
  std::string ip;
  uint64_t offset = 0;    // per-connection frame counter (`offset`)
  bool resynced = false;  // its one resync is spent: the next overflow or stall cuts it
  bool cut = false;       // cut_conn was called: nothing more is sent or counted
  // Kept by the implementation: how many times the send queue drained (its last frame written).
  uint64_t drains = 0;
  // Kept by the worker's stall sweep: `drains` as it last saw it, and the sweep that first found
  // the queue non-empty and not drained since (0: not behind).
  uint64_t drains_seen = 0;
  int64_t behind_since_ns = 0;
  std::vector<std::string> subs;  // channel names as subscribed ("order_book/0")
  bool console = false;           // the admin listener's /console/ws: state frames, no channels
  bool counted = false;           // a console counted in ApiShared::consoles (ws_open)
  int64_t last_rx_ns = 0;         // the last frame from the client (idle timeout)
  // Cancel-on-disconnect: a signed CancelAllOrders the server submits when the connection drops.
  std::optional<SignedTx> on_disconnect;
};

// Owner: its api worker thread (every public method asserts it in checking builds); built on
// the thread that starts the server, which owns it again once the worker thread is joined.
class WorkerLogic {
 public:
  WorkerLogic(ApiShared& shared, pipe::Front& pipe, uint32_t index);
  ~WorkerLogic();
  // The owning thread is gone (joined): the next caller owns it.
  void release_owner() { owner_.release(); }

  // REST (public or admin). `done` may be called later (sendTx waits for the sequencer).
  void handle_http(const HttpRequest& req, ReplyFn done);
  // WebSocket
  void ws_open(const std::shared_ptr<WsConn>& c);
  void ws_message(const std::shared_ptr<WsConn>& c, std::string_view text);
  void ws_closed(const std::shared_ptr<WsConn>& c);
  // The apply thread rang: route results, fan out what changed.
  void on_wake();
  // A cluster primary: txs a follower checked (signature, nonce, margin) and forwarded. They
  // are submitted as they are, without a second signature check; `done` gets what sendTx (or
  // sendTxBatch) would answer.
  void take_forwarded(std::vector<Tx> txs, bool batch, ReplyFn done);
  // Every tick (250 ms): idle and stalled connections; keep-alive pings and the market_stats
  // refresh when theirs are due.
  void on_tick();
  // The worker that hosts the pipeline loop with verify helpers (threads.verify_helpers): its
  // users' txs (REST and WebSocket) are put off until the end of each pass over its sockets, and
  // run_deferred then checks their signatures together on the pool before it handles them, in
  // arrival order, as they would have been handled at once.
  // Set before the worker's thread starts; the pool outlives the worker's loop.
  void set_verify_pool(VerifyPool* pool) { pool_ = pool; }
  // The txs put off in this pass, handled; how many. Called by the worker's loop between passes.
  size_t run_deferred();

 private:
  struct Pending {
    std::function<void(const pipe::Result&)> done;
  };
  // Records a tx's stages once its reply is on its way (t_dry: the dry-run finished).
  void record_stages(const pipe::Result& r, int64_t t_dry_ns, int64_t t_sent_ns);
  struct BookCache {
    uint64_t nonce = 0;
    int64_t engine_ts_ns = 0;
    std::vector<pipe::PriceLevel> bids, asks;
    bool valid = false;
  };
  struct Sub {
    std::weak_ptr<WsConn> conn;
    std::string channel;  // as sent back ("order_book:0")
  };

  // REST: a table of routes (rest.cpp), one handler per endpoint. A handler writes its reply
  // through c.w into c.r, or sets c.deferred and answers later through c.done.
  struct RestCall {
    const HttpRequest& req;
    std::string_view path;
    bool& deferred;
    ReplyFn& done;
    HttpReply r{};
    JsonWriter w{r.body};
  };
  struct Route;
  static const Route kRoutes[];
  HttpReply route(const HttpRequest& req, bool& deferred, ReplyFn& done);
  HttpReply no_endpoint(std::string_view path);
  HttpReply admin_metrics(RestCall& c);
  HttpReply admin_latency(RestCall& c);
  HttpReply admin_trace(RestCall& c);
  HttpReply admin_next_nonce(RestCall& c);
  HttpReply admin_process(RestCall& c);
  HttpReply admin_snapshot(RestCall& c);
  HttpReply post_tx(RestCall& c);
  HttpReply post_tx_batch(RestCall& c);
  HttpReply post_dry_run(RestCall& c);
  HttpReply get_root(RestCall& c);
  HttpReply get_live(RestCall& c);
  HttpReply get_ready(RestCall& c);
  HttpReply get_asset_details(RestCall& c);
  HttpReply get_order_books(RestCall& c);
  HttpReply get_order_book_orders(RestCall& c);
  HttpReply get_market_history(RestCall& c);
  HttpReply get_funding_rates(RestCall& c);
  HttpReply get_fundings(RestCall& c);
  HttpReply get_account(RestCall& c);
  HttpReply get_api_keys(RestCall& c);
  HttpReply get_exchange_stats(RestCall& c);
  HttpReply get_blocks(RestCall& c);
  HttpReply get_tx(RestCall& c);
  HttpReply get_accounts_by_l1(RestCall& c);
  HttpReply get_accounts_of_l1(RestCall& c);
  std::vector<const pipe::AccountView*> accounts_of_l1(const std::array<uint8_t, 20>& l1);
  HttpReply get_order_book_updates(RestCall& c);
  // rest_account.cpp: an account's orders and trades, private reads.
  HttpReply private_read(RestCall& c, absl::FunctionRef<void(const pipe::AccountView&)> f);
  HttpReply get_active_orders(RestCall& c);
  HttpReply get_inactive_orders(RestCall& c);
  HttpReply get_trades(RestCall& c);
  HttpReply get_money_history(RestCall& c);
  // console.cpp: the operator's console (admin listener).
  static constexpr int64_t kConsolePeriodNs = 500'000'000;
  HttpReply admin_console(RestCall& c);
  std::string console_frame();
  void console_markets(JsonWriter& w);
  void push_consoles(int64_t now);
  int64_t last_console_ns_ = 0;

  // sendTx / sendTxBatch / dryRun (send_tx.cpp), from a REST form or a WS jsonapi/sendtx.
  enum class SendKind : uint8_t { kTx, kBatch, kDryRun };
  struct SendBatch;
  HttpReply send_tx(RestCall& c, SendKind kind);
  HttpReply send_form(const FormFields& f, bool admin, SendKind kind, bool& deferred,
                      ReplyFn& done);
  std::optional<HttpReply> decode_txs(const FormFields& f, SendKind kind, std::vector<int>& types,
                                      std::vector<std::string>& infos);
  std::optional<HttpReply> admit(bool admin, SendKind kind, const std::vector<int>& types,
                                 const std::vector<std::string>& infos, std::vector<SignedTx>& txs);
  std::optional<HttpReply> dry_run(SendKind kind, int type, SignedTx& st, int64_t now_ms,
                                   std::span<const SignedTx> reserved);
  HttpReply submit_all(const std::vector<SignedTx>& txs, const std::vector<int>& types, bool admin,
                       SendKind kind, int64_t t_recv, bool& deferred, ReplyFn& done,
                       bool forwarded = false);
  void on_sent_result(SendBatch& b, size_t i, const Tx& tx, const pipe::Result& res);
  // A follower: the txs go to the primary; the answer waits until this node applied them.
  HttpReply forward(const std::vector<SignedTx>& txs, SendKind kind, bool& deferred, ReplyFn& done);
  void forwarded_answer(const std::vector<Tx>& txs, const std::vector<std::string>& hashes,
                        int status, std::string body, ReplyFn done);
  // Answers held for read-your-writes whose seq this node applied (or, `expire`, held too long).
  void release_awaiting(bool expire);
  struct Awaiting {
    uint64_t seq;
    int64_t deadline_ns;
    HttpReply reply;
    ReplyFn done;
    std::vector<Tx> txs;  // their nonces stay reserved until then
  };
  std::deque<Awaiting> awaiting_;  // in the order the answers came (few: scanned whole)
  // Submits a dry-run-clean tx; `done` runs with the sequencer's result.
  // t_recv_ns: when the request arrived (0: now).
  bool submit(const SignedTx& st, std::function<void(const pipe::Result&)> done,
              int64_t t_recv_ns = 0, std::string_view hash_hex = {});

  // WS
  void ws_subscribe(const std::shared_ptr<WsConn>& c, std::string_view channel,
                    std::string_view auth, std::string_view id);
  void ws_unsubscribe(const std::shared_ptr<WsConn>& c, std::string_view channel);
  void ws_sendtx(const std::shared_ptr<WsConn>& c, std::string_view data_json, bool batch,
                 std::string id);
  // A user's sendTx / sendTxBatch put off to the end of the pass (run_deferred).
  struct Deferred {
    FormFields fields;
    SendKind kind;
    ReplyFn done;
  };
  // Defers a request to submit (not a dry run, not the admin listener's) when there is a pool,
  // taking `f` and `done` (both left as they were when it returns false).
  bool defer(FormFields& f, bool admin, SendKind kind, ReplyFn& done);
  void add_verify_jobs(const Deferred& d, std::vector<VerifyPool::Job>& jobs);
  void ws_resume(const std::shared_ptr<WsConn>& c, std::string_view channel, uint64_t nonce);
  void ws_cancel_on_disconnect(const std::shared_ptr<WsConn>& c, std::string_view data,
                               std::string_view id);
  void cancel_on_disconnect(const SignedTx& st);
  void push(WsConn& c, std::string frame);
  // The slow-reader policy (docs/ARCHITECTURE.md "Bad input"): one resync in a connection's life
  // (its queue replaced by fresh book snapshots), then a hard cut, counted once in `closes`.
  void resync(WsConn& c, tachyon::Counter& resyncs);
  void cut(WsConn& c, tachyon::Counter& closes, std::string_view reason);
  void sweep_stalled(int64_t now_ns);
  static constexpr size_t kStallActionsPerTick = 4;
  void shed_over_budget();
  void drop_subscriber(const std::string& key, const WsConn& c);
  struct FanOutBatch;
  void fan_out();
  void refresh_publish_interest();
  void fan_out_account(AccountIndex a, const FanOutBatch& batch);
  // f(conn) for every live connection subscribed to `key`.
  template <typename F>
  void each_subscriber(const std::string& key, F&& f) {
    auto it = subs_.find(key);
    if (it == subs_.end()) return;
    for (auto& s : it->second)
      if (auto c = s.conn.lock()) f(*c);
  }
  // A frame that is the same for every subscriber of `key`: rendered once, for the first.
  template <typename Render>
  void each_subscriber_same(const std::string& key, Render&& render) {
    std::string frame;
    each_subscriber(key, [&](WsConn& c) {
      if (frame.empty()) frame = render(c);
      push(c, frame);
    });
  }
  void fan_out_books();
  void fan_out_height();
  void resync_all();

  // frames
  std::string book_frame_at_zero(MarketId m, bool snapshot, const BookCache& cache,
                                 const std::vector<pipe::PriceLevel>* dbids,
                                 const std::vector<pipe::PriceLevel>* dasks, uint64_t begin_nonce);
  static std::string with_offset(std::string_view at_zero, WsConn& c);
  std::string book_frame(WsConn& c, MarketId m, bool snapshot, const BookCache& cache,
                         const std::vector<pipe::PriceLevel>* dbids,
                         const std::vector<pipe::PriceLevel>* dasks, uint64_t begin_nonce);
  std::string market_stats_frame(WsConn& c, MarketId m, bool all, bool snapshot);
  std::string trades_frame(WsConn& c, MarketId m, const std::vector<pipe::TradeRecord>& trades,
                           bool snapshot);
  std::string account_frame(WsConn& c, std::string_view kind, AccountIndex a, bool snapshot,
                            const std::vector<pipe::TradeRecord>* new_trades,
                            const std::vector<pipe::OrderView>* changed_orders, MarketId only);
  bool refresh_book(MarketId m);  // loads the newest snapshot into the cache; true if it changed

  ApiShared& shared_;
  const ApiConfig& cfg_;
  pipe::Front& pipe_;
  uint32_t index_;
  DryRunner dry_;
  VerifyPool* pool_ = nullptr;
  std::vector<Deferred> deferred_;
  std::vector<std::optional<pipe::Published<pipe::BookSnapshot>::Reader>> book_readers_;
  std::vector<std::optional<pipe::Published<pipe::MarketHistory>::Reader>> history_readers_;
  absl::flat_hash_map<uint64_t, Pending> pending_;
  uint64_t next_cookie_ = 1;
  uint64_t next_conn_id_ = 1;
  uint64_t log_pos_ = 0;
  bool wants_publishes_ = false;  // what the pipeline was last told (refresh_publish_interest)
  std::vector<BookCache> books_;
  // channel key -> subscribers (channel key = the subscribed name, e.g. "trade/0")
  absl::flat_hash_map<std::string, std::vector<Sub>> subs_;
  ThreadOwner owner_{"api worker"};
  absl::flat_hash_map<uint64_t, std::weak_ptr<WsConn>> conns_;
  int64_t last_stats_push_ns_ = 0;
  int64_t last_ping_ns_ = 0;
  uint64_t last_height_ = 0;
  uint64_t height() const;  // the newest committed block (the applied seq without a committer)
};

}  // namespace tachyon::api
