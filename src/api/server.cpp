// Beast plumbing only: listeners, HTTP and WebSocket sessions, the worker threads
// (worker_thread.hpp). The protocol logic lives in WorkerLogic (rest.cpp, ws.cpp, ws_fanout.cpp).
#include "tachyon/api/server.hpp"
#include "tachyon/core/clock.hpp"

#include <unistd.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "worker_thread.hpp"

namespace tachyon::api {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
// Sessions run on their worker's io_context, named by its concrete executor type: Beast's
// operations copy and destroy the stream's executor several times per read and write, and the
// type-erased any_io_executor made each of those an indirect call (about 1% of the server's CPU
// under load).
using Executor = asio::io_context::executor_type;
using Socket = asio::basic_stream_socket<tcp, Executor>;
using PlainStream = beast::basic_stream<tcp, Executor>;
using TlsStream = beast::ssl_stream<PlainStream>;
using TlsContext = std::shared_ptr<ssl::context>;

namespace {
int64_t now_ns() { return realtime_ns(); }

// A server context for TLS 1.2 and 1.3 from PEM files: the certificate chain and its key.
Status load_tls_context(const std::string& cert, const std::string& key, TlsContext& out) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                   ssl::context::single_dh_use);
  beast::error_code ec;
  ctx->use_certificate_chain_file(cert, ec);
  if (ec) return Status::error("tls.cert_file " + cert + ": " + ec.message());
  ctx->use_private_key_file(key, ssl::context::pem, ec);
  if (ec) return Status::error("tls.key_file " + key + ": " + ec.message());
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1)
    return Status::error("tls.key_file " + key + " does not match the certificate " + cert);
  out = std::move(ctx);
  return Status{};
}
}  // namespace

// ---- WebSocket session ----

// Over a plain TCP stream or a TLS one (Stream: PlainStream or TlsStream).
template <class Stream>
class WsSession final : public WsConn, public std::enable_shared_from_this<WsSession<Stream>> {
  using std::enable_shared_from_this<WsSession<Stream>>::shared_from_this;

 public:
  WsSession(Stream&& s, Worker& w, ApiShared& shared, TlsContext ctx)
      : ws_(std::move(s)), ctx_(std::move(ctx)), w_(w), shared_(shared), worker_(w.index) {}
  ~WsSession() override {
    account(-static_cast<int64_t>(queued_));
    if (!console) shared_.ip_disconnect(ip);  // the admin listener's connections are not counted
  }

  void run(http::request<http::string_body> req) {
    websocket::stream_base::timeout t =
        websocket::stream_base::timeout::suggested(beast::role_type::server);
    t.idle_timeout = std::chrono::seconds(std::max(10, shared_.cfg.idle_timeout_s / 2));
    t.keep_alive_pings = true;  // protocol pings from our side; a dead peer is dropped
    ws_.set_option(t);
    ws_.read_message_max(shared_.cfg.max_ws_message_bytes);
    // A client ping counts as activity; a pong to our own keep-alive ping does not.
    ws_.control_callback([this](websocket::frame_type t, beast::string_view) {
      if (t == websocket::frame_type::ping) last_rx_ns = now_ns();
    });
    ws_.async_accept(req, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return self->closed();
      self->w_.logic.ws_open(self);
      self->do_read();
    });
  }
  void send_text(std::string frame) override {
    if (closing_) return;
    account(held(frame));
    queue_.push_back(std::move(frame));
    if (!writing_) do_write();
  }
  void close_conn(std::string_view reason) override {
    if (closing_) return;
    closing_ = true;
    websocket::close_reason cr(websocket::close_code::policy_error,
                               std::string(reason.substr(0, 120)));
    ws_.async_close(cr, [self = shared_from_this()](beast::error_code) { self->closed(); });
  }
  void cut_conn(std::string_view) override {
    if (closing_) return;
    closing_ = true;
    clear_queue();  // all but a frame being written (its buffer is in use until it fails)
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().shutdown(tcp::socket::shutdown_both, ec);
    // The logic may be iterating its subscribers: it hears of the close after this call.
    asio::post(ws_.get_executor(), [self = shared_from_this()] { self->closed(); });
  }
  size_t queued_bytes() const override { return queued_; }
  void clear_queue() override {
    while (queue_.size() > (writing_ ? 1u : 0u)) {
      account(-held(queue_.back()));
      queue_.pop_back();
    }
  }

 private:
  // What a queued frame holds in memory: its buffer (JsonWriter grows it by doubling, so up to
  // twice its text) and its slot in the queue. The queue bounds count this, not the text.
  static int64_t held(const std::string& frame) {
    return static_cast<int64_t>(sizeof(std::string) + frame.capacity());
  }
  // The queue's size, here and in the worker's total (the total budget's gauge).
  void account(int64_t delta) {
    queued_ += static_cast<size_t>(delta);  // modulo 2^64: a negative delta subtracts
    shared_.metrics.ws_queued_add(worker_, delta);
  }
  void do_read() {
    ws_.async_read(buf_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->closed();
      if (!self->ws_.got_text()) {
        self->buf_.consume(self->buf_.size());
        self->send_text(
            "{\"error\":{\"code\":30000,\"message\":\"binary frames are not supported\"}}");
        return self->do_read();
      }
      // The message, read in place (a flat buffer is one span); the logic copies what it keeps.
      const auto msg = self->buf_.data();
      self->w_.logic.ws_message(self, {static_cast<const char*>(msg.data()), msg.size()});
      self->buf_.consume(self->buf_.size());
      self->do_read();
    });
  }
  void do_write() {
    writing_ = true;
    ws_.text(true);
    ws_.async_write(asio::buffer(queue_.front()),
                    [self = shared_from_this()](beast::error_code ec, size_t) {
                      self->account(-held(self->queue_.front()));
                      self->queue_.pop_front();
                      if (ec) {
                        self->writing_ = false;
                        return self->closed();
                      }
                      if (!self->queue_.empty()) return self->do_write();
                      self->writing_ = false;
                      ++self->drains;  // the reader keeps up (the stall sweep's sign)
                    });
  }
  void closed() {
    if (done_) return;
    done_ = true;
    closing_ = true;
    w_.logic.ws_closed(shared_from_this());
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().close(ec);
  }

  websocket::stream<Stream> ws_;
  TlsContext ctx_;  // a TLS session's context (null when plain): kept while the session lives
  beast::flat_buffer buf_;
  std::deque<std::string> queue_;
  size_t queued_ = 0;
  bool writing_ = false, closing_ = false, done_ = false;
  Worker& w_;
  ApiShared& shared_;
  const uint32_t worker_;  // w_.index, kept: the session may outlive its Worker's other members
};

// ---- HTTP session ----

// Over a plain TCP stream or a TLS one (Stream: PlainStream or TlsStream).
template <class Stream>
class HttpSession : public std::enable_shared_from_this<HttpSession<Stream>> {
  using std::enable_shared_from_this<HttpSession<Stream>>::shared_from_this;
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

 public:
  HttpSession(Socket s, Worker& w, ApiShared& shared, bool admin) requires(!kTls)
      : stream_(std::move(s)), w_(w), shared_(shared), admin_(admin) {
    init_ip();
  }
  // A TLS connection whose first bytes (`seen`) were read while telling TLS from plain HTTP.
  HttpSession(PlainStream&& s, beast::flat_buffer&& seen, Worker& w, ApiShared& shared,
              TlsContext ctx) requires kTls : stream_(std::move(s), *ctx),
                                              ctx_(std::move(ctx)),
                                              buf_(std::move(seen)),
                                              w_(w),
                                              shared_(shared),
                                              admin_(false) {
    init_ip();
  }
  ~HttpSession() {
    if (counted_) shared_.ip_disconnect(ip_);
  }
  // The TLS handshake (bounded by the idle timeout), then run().
  void handshake() requires kTls {
    beast::get_lowest_layer(stream_).expires_after(
        std::chrono::seconds(shared_.cfg.idle_timeout_s));
    // (Boost 1.81 checks the buffered handshake's handler against void(error_code) although it
    // calls it with the bytes used too: the default argument satisfies both.)
    stream_.async_handshake(ssl::stream_base::server, buf_.data(),
                            [self = shared_from_this()](beast::error_code ec, size_t used = 0) {
                              if (ec) return;  // not a TLS client after all, or it went away
                              self->buf_.consume(used);
                              self->run();
                            });
  }
  void run() {
    if (!admin_ && !shared_.ip_connect(ip_)) {  // answer once, then close
      keep_alive_ = false;
      HttpReply r;
      r.status = 429;
      r.body = "{\"code\":23002,\"message\":\"too many connections from this address\"}";
      return write(std::move(r));
    }
    counted_ = !admin_;
    do_read();
  }

 private:
  void do_read() {
    parser_.emplace();
    parser_->body_limit(shared_.cfg.max_body_bytes);
    parser_->header_limit(16 * 1024);
    beast::get_lowest_layer(stream_).expires_after(
        std::chrono::seconds(shared_.cfg.idle_timeout_s));
    http::async_read(
        stream_, buf_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }
  void on_read(beast::error_code ec) {
    if (ec == http::error::body_limit || ec == http::error::header_limit) {
      keep_alive_ = false;
      HttpReply r;
      r.status = 413;
      r.body = "{\"code\":21501,\"message\":\"request too large (body limit " +
               std::to_string(shared_.cfg.max_body_bytes) + " bytes)\"}";
      return write(std::move(r));
    }
    if (ec) {
      if (ec != http::error::end_of_stream && ec != beast::error::timeout &&
          ec != asio::error::eof && ec != asio::error::connection_reset) {
        keep_alive_ = false;
        HttpReply r;
        r.status = 400;
        r.body = "{\"code\":21501,\"message\":\"malformed HTTP request\"}";
        return write(std::move(r));
      }
      beast::error_code ignored;
      beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_send, ignored);
      return;
    }
    req_ = parser_->release();
    keep_alive_ = req_.keep_alive();
    version_ = req_.version();
    if (websocket::is_upgrade(req_)) {
      const std::string_view target(req_.target().data(), req_.target().size());
      const std::string_view path = target.substr(0, target.find('?'));
      // The public /stream; the admin listener's /console/ws (the operator's console).
      if (admin_ ? path == "/console/ws" : path == "/stream") {
        beast::get_lowest_layer(stream_).expires_never();
        auto ws = std::make_shared<WsSession<Stream>>(std::move(stream_), w_, shared_, ctx_);
        ws->ip = ip_;
        ws->console = admin_;
        counted_ = false;  // the WebSocket session owns the connection count now
        ws->run(std::move(req_));
        return;
      }
      keep_alive_ = false;
      HttpReply r;
      r.status = 404;
      r.body = "{\"code\":29404,\"message\":\"WebSocket is served at /stream\"}";
      return write(std::move(r));
    }
    HttpRequest hr;
    hr.method = std::string_view(req_.method_string().data(), req_.method_string().size());
    hr.target = std::string_view(req_.target().data(), req_.target().size());
    hr.body = req_.body();
    const auto ct = req_[http::field::content_type];
    hr.content_type = std::string_view(ct.data(), ct.size());
    const auto au = req_[http::field::authorization];
    hr.authorization = std::string_view(au.data(), au.size());
    hr.ip = ip_;
    hr.admin = admin_;
    w_.logic.handle_http(hr,
                         [self = shared_from_this()](HttpReply r) { self->write(std::move(r)); });
  }
  void write(HttpReply r) {
    res_ = {};
    res_.version(version_);
    res_.result(static_cast<http::status>(r.status));
    res_.set(http::field::server, "tachyon");
    res_.set(http::field::content_type, r.content_type);
    res_.set(http::field::access_control_allow_origin, "*");
    res_.keep_alive(keep_alive_);
    res_.body() = std::move(r.body);
    res_.prepare_payload();
    http::async_write(stream_, res_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return;
      if (!self->keep_alive_) return self->linger();
      self->do_read();
    });
  }

  // The connection's last reply is out: the send side shut, then whatever the client still sends
  // (the rest of a body over the limit) read and dropped until it closes, for at most
  // kLingerSeconds and kLingerBytes. Closing with unread bytes would reset the connection, and
  // the reset can destroy the reply before the client reads it.
  static constexpr int kLingerSeconds = 2;
  static constexpr size_t kLingerBytes = 64u << 20;
  void linger() {
    auto& tcp = beast::get_lowest_layer(stream_);
    beast::error_code ignored;
    tcp.socket().shutdown(tcp::socket::shutdown_send, ignored);
    tcp.expires_after(std::chrono::seconds(kLingerSeconds));  // one deadline for every read
    drain_.resize(64 * 1024);
    drain_more();
  }
  // Raw bytes from the TCP stream (under TLS too: they are only dropped).
  void drain_more() {
    beast::get_lowest_layer(stream_).async_read_some(
        asio::buffer(drain_), [self = shared_from_this()](beast::error_code ec, size_t n) {
          self->drained_ += n;
          if (!ec && self->drained_ < kLingerBytes) self->drain_more();
        });
  }

  void init_ip() {
    beast::error_code ec;
    const auto ep = beast::get_lowest_layer(stream_).socket().remote_endpoint(ec);
    ip_ = ec ? "?" : ep.address().to_string();
  }

  Stream stream_;
  TlsContext ctx_;  // a TLS session's context (null when plain): kept while the session lives
  beast::flat_buffer buf_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::request<http::string_body> req_;
  http::response<http::string_body> res_;
  Worker& w_;
  ApiShared& shared_;
  bool admin_;
  bool keep_alive_ = true;
  bool counted_ = false;
  unsigned version_ = 11;
  std::vector<char> drain_;  // linger(): what the client sent after the last reply
  size_t drained_ = 0;
  std::string ip_;
};

// A connection to the TLS listener: its first bytes decide. A TLS ClientHello goes on to the
// handshake and an HttpSession over TLS; anything else (plain HTTP sent to the TLS port) gets
// one clear error in plain HTTP, and the connection closes.
class TlsDetect : public std::enable_shared_from_this<TlsDetect> {
 public:
  TlsDetect(Socket s, Worker& w, ApiShared& shared, TlsContext ctx)
      : stream_(std::move(s)), w_(w), shared_(shared), ctx_(std::move(ctx)) {}
  void run() {
    stream_.expires_after(std::chrono::seconds(shared_.cfg.idle_timeout_s));
    beast::async_detect_ssl(
        stream_, buf_, [self = shared_from_this()](beast::error_code ec, bool tls) {
          if (ec) return;
          if (tls) {
            std::make_shared<HttpSession<TlsStream>>(std::move(self->stream_),
                                                     std::move(self->buf_), self->w_, self->shared_,
                                                     std::move(self->ctx_))
                ->handshake();
          } else {
            self->refuse_plain();
          }
        });
  }

 private:
  void refuse_plain() {
    static constexpr std::string_view kBody =
        "{\"code\":21501,\"message\":\"this port speaks TLS: use https:// or wss://\"}";
    reply_ =
        "HTTP/1.1 400 Bad Request\r\nServer: tachyon\r\nContent-Type: application/json\r\n"
        "Connection: close\r\nContent-Length: " +
        std::to_string(kBody.size()) + "\r\n\r\n" + std::string(kBody);
    asio::async_write(stream_, asio::buffer(reply_),
                      [self = shared_from_this()](beast::error_code, size_t) {
                        beast::error_code ignored;
                        self->stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
                      });
  }

  PlainStream stream_;
  beast::flat_buffer buf_;
  Worker& w_;
  ApiShared& shared_;
  TlsContext ctx_;
  std::string reply_;
};

// ---- server ----

// A batch of fewer txs is checked by api worker 0 alone. A helper's wake-up costs a context switch
// and, woken tens of µs late, it often finds little left to take. With checks of ~20 µs (key
// tables), 12 cost 0.13-0.16 fewer switches per tx at 10,000 tx/s here than 5, with the same ack
// p99 (2.3-2.6 ms); no helper at all cost another 0.0-0.04 but let that p99 grow to 3.1-3.7 ms.
constexpr size_t kVerifyMinBatch = 12;

struct ApiServer::Impl {
  Impl(ApiShared& s, pipe::Front& p) : shared(s), pipe(p) {}
  ApiShared& shared;
  pipe::Front& pipe;
  std::unique_ptr<VerifyPool> verify;  // (outlives the workers: declared before them)
  std::vector<std::unique_ptr<Worker>> workers;
  // ApiShared::post_to_worker against stop(): nothing is posted once the workers are stopped.
  std::mutex post_mu;
  bool stopped = false;  // guarded by post_mu
  std::unique_ptr<tcp::acceptor> pub, admin, plain;
  // The consoles' /metrics text, rendered every 500 ms while any console is open.
  std::thread console_thread;
  std::mutex console_mu;
  std::condition_variable console_cv;
  bool console_stop = false;  // guarded by console_mu
  void console_loop() {
    pthread_setname_np(pthread_self(), "console");
    std::unique_lock lk(console_mu);
    while (!console_stop) {
      if (shared.consoles.load() > 0 && shared.metrics_text) {
        lk.unlock();
        shared.set_console_metrics(
            std::make_shared<const std::string>(console_metrics_json(shared.metrics_text())));
        lk.lock();
      }
      console_cv.wait_for(lk, std::chrono::milliseconds(500), [this] { return console_stop; });
    }
  }
  uint32_t next = 0;
  int port = 0, admin_port = 0, plain_port = -1;
  // The public listener's TLS context (null: plain). Replaced by reload_tls() on any thread, read
  // by worker 0 at each accept.
  std::mutex tls_mu;
  TlsContext tls;  // guarded by tls_mu
  TlsContext tls_context() {
    std::lock_guard lk(tls_mu);
    return tls;
  }

  // An accept that failed for want of descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM) is
  // retried after kAcceptBackoffMs, not at once: an immediate retry fails again at once, and that
  // loop would take the worker's core from the connections already open. Logged once per spell.
  static constexpr int kAcceptBackoffMs = 50;
  bool accept_failing = false;
  enum Listener : uint8_t { kPublic, kAdmin, kPlain };
  std::unique_ptr<asio::steady_timer> accept_retry[3];  // by Listener (worker 0's context)
  void accept(tcp::acceptor& a, Listener which) {
    a.async_accept([this, &a, which](beast::error_code ec, tcp::socket s) {
      if (ec == asio::error::operation_aborted) return;
      if (ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
          ec == asio::error::no_memory || ec.value() == ENFILE) {
        if (!accept_failing)
          spdlog::warn("accept failed ({}): retrying every {} ms", ec.message(), kAcceptBackoffMs);
        accept_failing = true;
        auto& t = accept_retry[which];
        if (!t) t = std::make_unique<asio::steady_timer>(a.get_executor());
        t->expires_after(std::chrono::milliseconds(kAcceptBackoffMs));
        t->async_wait([this, &a, which](beast::error_code e) {
          if (!e) accept(a, which);
        });
        return;
      }
      if (!ec && accept_failing) {
        spdlog::info("accepting connections again");
        accept_failing = false;
      }
      if (!ec) {
        Worker& w = *workers[next++ % workers.size()];
        const int fd = s.release();
        TlsContext ctx = which == kPublic ? tls_context() : nullptr;
        asio::post(w.ioc, [this, &w, fd, which, ctx = std::move(ctx)]() mutable {
          Socket sock(w.ioc);
          beast::error_code e2;
          sock.assign(tcp::v4(), fd, e2);
          if (e2) {
            ::close(fd);
            return;
          }
          // Replies and pushes are small and latency-bound: no Nagle delay behind an un-ACKed
          // segment (measured: ms of extra ack latency under load without it).
          sock.set_option(tcp::no_delay(true), e2);
          if (ctx) {
            std::make_shared<TlsDetect>(std::move(sock), w, shared, std::move(ctx))->run();
          } else {
            std::make_shared<HttpSession<PlainStream>>(std::move(sock), w, shared, which == kAdmin)
                ->run();
          }
        });
      }
      accept(a, which);
    });
  }
};

ApiServer::ApiServer(ApiShared& shared, pipe::Front& pipe)
    : impl_(std::make_unique<Impl>(shared, pipe)) {}

ApiServer::~ApiServer() { stop(); }

static Status bind(asio::io_context& ioc, const std::string& addr, int port,
                   std::unique_ptr<tcp::acceptor>& out, int& bound) {
  beast::error_code ec;
  const auto ip = asio::ip::make_address(addr, ec);
  if (ec) return Status::error("bad listen address " + addr);
  auto a = std::make_unique<tcp::acceptor>(ioc);
  const tcp::endpoint ep(ip, static_cast<uint16_t>(port));
  a->open(ep.protocol(), ec);
  if (!ec) a->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) a->bind(ep, ec);
  if (!ec) a->listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return Status::error("cannot listen on " + addr + ":" + std::to_string(port) + ": " +
                         ec.message());
  bound = a->local_endpoint().port();
  out = std::move(a);
  return Status{};
}

Status ApiServer::reload_tls() {
  Impl& d = *impl_;
  const ApiConfig& cfg = d.shared.cfg;
  if (cfg.tls_cert_file.empty()) return Status::error("TLS is off (no tls.cert_file)");
  TlsContext ctx;
  if (Status s = load_tls_context(cfg.tls_cert_file, cfg.tls_key_file, ctx); !s.ok()) return s;
  std::lock_guard lk(d.tls_mu);
  d.tls = std::move(ctx);
  return Status{};
}

bool ApiServer::tls() const { return !impl_->shared.cfg.tls_cert_file.empty(); }

Status ApiServer::start() {
  Impl& d = *impl_;
  if (tls()) {
    if (Status s = reload_tls(); !s.ok()) return s;
  }
  const uint32_t n = std::max<uint32_t>(1, d.shared.cfg.workers);
  for (uint32_t i = 0; i < n; ++i)
    d.workers.push_back(std::make_unique<Worker>(d.shared, d.pipe, i));
  Worker& w0 = *d.workers[0];
  if (Status s = bind(w0.ioc, d.shared.cfg.listen_address, d.shared.cfg.port, d.pub, d.port);
      !s.ok())
    return s;
  if (Status s =
          bind(w0.ioc, d.shared.cfg.admin_address, d.shared.cfg.admin_port, d.admin, d.admin_port);
      !s.ok())
    return s;
  if (tls() && d.shared.cfg.plain_port >= 0) {
    if (Status s = bind(w0.ioc, d.shared.cfg.plain_address, d.shared.cfg.plain_port, d.plain,
                        d.plain_port);
        !s.ok())
      return s;
  }
  d.pipe.set_notify([&d](uint64_t workers) {
    for (size_t i = 0; i < d.workers.size() && i < 64; ++i)
      if ((workers >> i) & 1) d.workers[i]->ring();
  });
  d.shared.post_to_worker = [&d](uint32_t i, std::function<void(WorkerLogic&)> f) {
    std::lock_guard lk(d.post_mu);
    if (d.stopped) return;  // the server stops: nobody is left to answer
    Worker& w = *d.workers[i % d.workers.size()];
    asio::post(w.ioc, [&w, f = std::move(f)] { f(w.logic); });
  };
  d.console_thread = std::thread([&d] { d.console_loop(); });
  d.accept(*d.pub, Impl::kPublic);
  d.accept(*d.admin, Impl::kAdmin);
  if (d.plain) d.accept(*d.plain, Impl::kPlain);
  for (auto& w : d.workers) {
    w->arm();
    w->schedule_tick();
    w->hosting = w->index == 0 && d.pipe.hosted();
    if (w->hosting && d.shared.cfg.verify_helpers > 0) {
      MetricRegistrar& reg = d.shared.metrics.registry();
      d.verify = std::make_unique<VerifyPool>(
          d.shared.cfg.verify_helpers, kVerifyMinBatch,
          reg.counter("tachyon_verify_shared_batches",
                      "Batches of signatures api worker 0 shared with the verify helpers"),
          reg.counter("tachyon_verify_helper_jobs", "Signatures the verify helpers checked"),
          &d.shared.metrics);
      w->logic.set_verify_pool(d.verify.get());
    }
    w->thread = std::thread([&w = *w, &pipe = d.pipe] {
      pthread_setname_np(pthread_self(), ("api-" + std::to_string(w.index)).c_str());
      if (w.hosting)
        w.host(pipe);
      else
        w.ioc.run();
    });
  }
  return Status{};
}

void ApiServer::stop_accepting() {
  Impl& d = *impl_;
  if (d.workers.empty()) return;
  asio::post(d.workers[0]->ioc, [&d] {
    beast::error_code ec;
    if (d.pub) d.pub->close(ec);
    if (d.admin) d.admin->close(ec);
    if (d.plain) d.plain->close(ec);
  });
}

void ApiServer::stop() {
  Impl& d = *impl_;
  if (d.workers.empty()) return;
  stop_accepting();
  for (auto& w : d.workers) {
    asio::post(w->ioc, [&w = *w] { w.logic.on_wake(); });  // the last results
  }
  // A short grace period for those replies to be written, then stop.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  {
    std::lock_guard lk(d.post_mu);
    d.stopped = true;
  }
  {
    std::lock_guard lk(d.console_mu);
    d.console_stop = true;
  }
  d.console_cv.notify_all();
  if (d.console_thread.joinable()) d.console_thread.join();
  for (auto& w : d.workers) w->ioc.stop();
  for (auto& w : d.workers) {
    if (w->thread.joinable()) w->thread.join();
    w->logic.release_owner();  // what the teardown below closes runs on this thread
  }
  d.pub.reset();
  d.admin.reset();
  d.plain.reset();
  for (auto& t : d.accept_retry) t.reset();
  d.workers.clear();
}

int ApiServer::port() const { return impl_->port; }
int ApiServer::admin_port() const { return impl_->admin_port; }
int ApiServer::plain_port() const { return impl_->plain_port; }

}  // namespace tachyon::api
