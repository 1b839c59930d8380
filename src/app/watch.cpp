// tachyon-cli watch (watch.hpp). One io_context on the calling thread; a NodeClient per node runs
// its requests one after another on its own connection, so with every client started before the
// context runs, the nodes are read at once.
#include "watch.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <tuple>

#include <simdjson.h>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json/src.hpp>

namespace tachyon::app {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// GETs on one node, one after another: on a kept-alive connection, or each on a new one.
class NodeClient : public std::enable_shared_from_this<NodeClient> {
 public:
  using Done = std::function<void(const std::string& error)>;
  NodeClient(asio::io_context& io, std::string name, tcp::resolver::results_type where, bool reuse)
      : name_(std::move(name)), where_(std::move(where)), reuse_(reuse), stream_(io) {}
  const std::string& name() const { return name_; }
  // Reads `paths`; bodies() and micros() hold each answer and its round trip once `done` ran.
  void get(std::vector<std::string> paths, Done done) {
    paths_ = std::move(paths);
    done_ = std::move(done);
    bodies_.assign(paths_.size(), {});
    micros_.assign(paths_.size(), 0);
    i_ = 0;
    next();
  }
  const std::vector<std::string>& bodies() const { return bodies_; }
  const std::vector<double>& micros() const { return micros_; }

 private:
  void next() {
    if (i_ == paths_.size()) return done_("");
    t0_ = Clock::now();
    if (connected_ && reuse_) return send();
    beast::error_code ignored;
    stream_.socket().close(ignored);
    stream_.expires_after(std::chrono::seconds(5));
    stream_.async_connect(where_, [self = shared_from_this()](beast::error_code ec, auto) {
      if (ec) return self->fail("connect: " + ec.message());
      self->connected_ = true;
      self->stream_.socket().set_option(tcp::no_delay(true), ec);
      self->send();
    });
  }
  void send() {
    req_ = {http::verb::get, paths_[i_], 11};
    req_.set(http::field::host, name_);
    req_.keep_alive(reuse_);
    stream_.expires_after(std::chrono::seconds(5));
    http::async_write(stream_, req_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->fail("write: " + ec.message());
      self->res_ = {};
      http::async_read(self->stream_, self->buf_, self->res_,
                       [self](beast::error_code e, size_t) { self->on_read(e); });
    });
  }
  void on_read(beast::error_code ec) {
    if (ec) return fail("read: " + ec.message());
    micros_[i_] = us_since(t0_);
    bodies_[i_] = std::move(res_.body());
    if (!reuse_ || !res_.keep_alive()) connected_ = false;
    ++i_;
    next();
  }
  void fail(const std::string& e) {
    connected_ = false;
    done_(name_ + ": " + e);
  }

  std::string name_;
  tcp::resolver::results_type where_;
  bool reuse_;
  beast::tcp_stream stream_;
  bool connected_ = false;
  beast::flat_buffer buf_;
  http::request<http::empty_body> req_;
  http::response<http::string_body> res_;
  std::vector<std::string> paths_, bodies_;
  std::vector<double> micros_;
  size_t i_ = 0;
  Clock::time_point t0_;
  Done done_;
};

// A node's order_book/{m} over WebSocket: how old each frame is when it arrives (now minus the
// engine time of the change, `engine_ts_us`, or Lighter's `timestamp` from a server without it).
class Freshness : public std::enable_shared_from_this<Freshness> {
 public:
  Freshness(asio::io_context& io, std::string host, tcp::resolver::results_type where, int market)
      : host_(std::move(host)), where_(std::move(where)), market_(market), ws_(io) {}
  void start() {
    beast::get_lowest_layer(ws_).expires_after(std::chrono::seconds(5));
    beast::get_lowest_layer(ws_).async_connect(where_, [self = shared_from_this()](
                                                           beast::error_code ec, auto) {
      if (ec) return self->fail("connect: " + ec.message());
      beast::get_lowest_layer(self->ws_).expires_never();
      self->ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::client));
      self->ws_.async_handshake(self->host_, "/stream", [self](beast::error_code e) {
        if (e) return self->fail("handshake: " + e.message());
        self->subscribe();
      });
    });
  }
  // The newest frame's age in ms and the oldest seen since the last call (-1: no frame).
  std::pair<double, double> take() {
    const auto r = std::pair(last_ms_, worst_ms_);
    worst_ms_ = -1;
    return r;
  }

 private:
  void subscribe() {
    out_ = R"({"type":"subscribe","channel":"order_book/)" + std::to_string(market_) + "\"}";
    ws_.async_write(asio::buffer(out_), [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->fail("subscribe: " + ec.message());
      self->read();
    });
  }
  void read() {
    ws_.async_read(buf_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->fail("read: " + ec.message());
      self->on_frame(beast::buffers_to_string(self->buf_.data()));
      self->buf_.consume(self->buf_.size());
      self->read();
    });
  }
  void on_frame(const std::string& text) {
    simdjson::dom::element f;
    std::string_view type;
    if (parser_.parse(text).get(f) || f["type"].get_string().get(type) ||
        type != "update/order_book")  // the snapshot's time is the book's last change: not news
      return;
    const double now_ms = std::chrono::duration<double, std::milli>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
    int64_t engine_us = 0, stamp_ms = 0;
    double age = -1;
    if (!f["engine_ts_us"].get_int64().get(engine_us) && engine_us > 0)
      age = now_ms - static_cast<double>(engine_us) / 1e3;
    else if (!f["timestamp"].get_int64().get(stamp_ms))
      age = now_ms - static_cast<double>(stamp_ms);
    if (age < 0) return;
    last_ms_ = age;
    worst_ms_ = std::max(worst_ms_, age);
  }
  // The node's REST line shows its errors; a WebSocket that failed shows no freshness ("-").
  void fail(const std::string&) {}

  std::string host_;
  tcp::resolver::results_type where_;
  int market_;
  websocket::stream<beast::tcp_stream> ws_;
  beast::flat_buffer buf_;
  std::string out_;
  simdjson::dom::parser parser_;
  double last_ms_ = -1, worst_ms_ = -1;
};

// What the watch shows of one node.
struct NodeState {
  std::string error;
  std::string bid, ask, last;  // prices as the node writes them ("" when none)
  double rtt_us = 0;           // the book read's round trip
  int64_t applied = -1;
  bool ready = false;
  double fresh_ms = -1, fresh_worst_ms = -1;  // order_book frames' age (WebSocket)
};

std::string first_price(simdjson::dom::element doc, const char* side) {
  simdjson::dom::array rows;
  std::string_view p;
  if (doc[side].get_array().get(rows) || rows.size() == 0 ||
      rows.at(0)["price"].get_string().get(p))
    return "";
  return std::string(p);
}

// Book, last trade and readiness of one node from its three bodies (simdjson).
NodeState parse_node(simdjson::dom::parser& p, const NodeClient& c) {
  NodeState s;
  simdjson::dom::element book, trades, ready;
  const auto& b = c.bodies();
  if (p.parse(b[0]).get(book)) {
    s.error = "book: not JSON";
    return s;
  }
  s.bid = first_price(book, "bids");
  s.ask = first_price(book, "asks");
  s.rtt_us = c.micros()[0];
  if (!p.parse(b[1]).get(trades)) s.last = first_price(trades, "trades");
  if (!p.parse(b[2]).get(ready)) {
    int64_t seq = -1;
    bool r = false;
    if (!ready["applied_seq"].get_int64().get(seq)) s.applied = seq;
    if (!ready["ready"].get_bool().get(r)) s.ready = r;
  }
  return s;
}

// The same book fields with Boost.JSON (the bench's general-purpose parser).
std::pair<std::string, std::string> boost_book(const std::string& body) {
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(body, ec);
  if (ec || !v.is_object()) return {};
  auto side = [&](const char* k) -> std::string {
    const auto* rows = v.as_object().if_contains(k);
    if (rows == nullptr || !rows->is_array() || rows->as_array().empty()) return "";
    const auto* p = rows->as_array()[0].as_object().if_contains("price");
    return p && p->is_string() ? std::string(p->as_string()) : "";
  };
  return {side("bids"), side("asks")};
}

struct Setup {
  asio::io_context io;
  std::vector<std::pair<std::string, tcp::resolver::results_type>> nodes;
};

std::string resolve_all(const std::vector<std::string>& nodes, Setup& s) {
  tcp::resolver r(s.io);
  for (const std::string& n : nodes) {
    const size_t colon = n.rfind(':');
    if (colon == std::string::npos) return "node " + n + ": want host:port";
    beast::error_code ec;
    auto where = r.resolve(n.substr(0, colon), n.substr(colon + 1), ec);
    if (ec) return "node " + n + ": " + ec.message();
    s.nodes.emplace_back(n, std::move(where));
  }
  return "";
}

// One round: `paths` from every client, all at once (`concurrent`) or one node after another.
std::string fetch_round(Setup& s, std::vector<std::shared_ptr<NodeClient>>& clients,
                        const std::vector<std::string>& paths, bool concurrent) {
  std::string error;
  auto done = [&error](const std::string& e) {
    if (!e.empty() && error.empty()) error = e;
  };
  for (auto& c : clients) {
    c->get(paths, done);
    if (!concurrent) {
      s.io.run();
      s.io.restart();
    }
  }
  if (concurrent) {
    s.io.run();
    s.io.restart();
  }
  return error;
}

std::vector<std::shared_ptr<NodeClient>> make_clients(Setup& s, bool reuse) {
  std::vector<std::shared_ptr<NodeClient>> out;
  for (auto& [name, where] : s.nodes)
    out.push_back(std::make_shared<NodeClient>(s.io, name, where, reuse));
  return out;
}

double as_price(const std::string& p) { return p.empty() ? 0 : std::strtod(p.c_str(), nullptr); }

void print_round(const std::vector<std::shared_ptr<NodeClient>>& clients,
                 const std::vector<NodeState>& st) {
  int64_t top = -1;
  for (const auto& s : st) top = std::max(top, s.applied);
  std::printf("%-22s %12s %12s %10s %12s %9s %15s %10s %6s\n", "node", "bid", "ask", "spread",
              "last", "rtt ms", "fresh ms (max)", "applied", "lag");
  int best_bid = -1, best_ask = -1;
  for (size_t i = 0; i < st.size(); ++i) {
    const NodeState& s = st[i];
    const std::string& name = clients[i]->name();
    if (!s.error.empty()) {  // the error names the node first
      const bool named = s.error.rfind(name + ": ", 0) == 0;
      std::printf("%-22s %s\n", name.c_str(), s.error.c_str() + (named ? name.size() + 2 : 0));
      continue;
    }
    const double b = as_price(s.bid), a = as_price(s.ask);
    char spread[32] = "-";
    const size_t dot = s.bid.find('.');
    const int decimals = dot == std::string::npos ? 0 : static_cast<int>(s.bid.size() - dot - 1);
    if (b > 0 && a > 0) std::snprintf(spread, sizeof spread, "%.*f", decimals, a - b);
    char fresh[40] = "-";
    if (s.fresh_ms >= 0)
      std::snprintf(fresh, sizeof fresh, "%.1f (%.1f)", s.fresh_ms,
                    std::max(s.fresh_worst_ms, 0.0));
    std::printf("%-22s %12s %12s %10s %12s %9.2f %15s %10lld %6lld%s\n", name.c_str(),
                s.bid.empty() ? "-" : s.bid.c_str(), s.ask.empty() ? "-" : s.ask.c_str(), spread,
                s.last.empty() ? "-" : s.last.c_str(), s.rtt_us / 1000, fresh,
                static_cast<long long>(s.applied), static_cast<long long>(top - s.applied),
                s.ready ? "" : "  not ready");
    if (b > 0 && (best_bid < 0 || b > as_price(st[best_bid].bid))) best_bid = static_cast<int>(i);
    if (a > 0 && (best_ask < 0 || a < as_price(st[best_ask].ask))) best_ask = static_cast<int>(i);
  }
  std::printf("best bid %s @ %s, best ask %s @ %s\n\n",
              best_bid < 0 ? "-" : st[best_bid].bid.c_str(),
              best_bid < 0 ? "-" : clients[best_bid]->name().c_str(),
              best_ask < 0 ? "-" : st[best_ask].ask.c_str(),
              best_ask < 0 ? "-" : clients[best_ask]->name().c_str());
  std::fflush(stdout);
}

struct Way {
  const char* name;
  bool concurrent, reuse, simd;
};

// Rounds of every node's book under one way of fetching and parsing; µs per round, sorted.
std::vector<double> bench_way(Setup& s, const Way& w, const std::string& path, int rounds,
                              std::string& error, uint64_t& empty_books) {
  auto clients = make_clients(s, w.reuse);
  simdjson::dom::parser p;
  std::vector<double> us;
  for (int r = 0; r < rounds + 1 && error.empty(); ++r) {  // round 0 connects: not counted
    const auto t0 = Clock::now();
    error = fetch_round(s, clients, {path}, w.concurrent);
    for (auto& c : clients) {  // the best bid and ask, as the watch reads them
      if (!error.empty()) break;
      if (w.simd) {
        simdjson::dom::element doc;
        if (p.parse(c->bodies()[0]).get(doc))
          error = c->name() + ": the book is not JSON";
        else if (first_price(doc, "bids").size() + first_price(doc, "asks").size() == 0)
          ++empty_books;
      } else if (auto [b, a] = boost_book(c->bodies()[0]); b.empty() && a.empty()) {
        ++empty_books;
      }
    }
    if (r > 0) us.push_back(us_since(t0));
  }
  std::sort(us.begin(), us.end());
  return us;
}

// The parsers alone on the books just read: ns per book, simdjson against Boost.JSON.
void parse_only(Setup& s, const std::string& path) {
  auto clients = make_clients(s, true);
  if (!fetch_round(s, clients, {path}, true).empty()) return;
  simdjson::dom::parser p;
  constexpr int kReps = 2000;
  size_t bytes = 0, found = 0;
  const auto t0 = Clock::now();
  for (int r = 0; r < kReps; ++r)
    for (auto& c : clients) {
      simdjson::dom::element doc;
      if (!p.parse(c->bodies()[0]).get(doc)) found += first_price(doc, "bids").size();
    }
  const double simd_ns = us_since(t0) * 1000 / (kReps * clients.size());
  const auto t1 = Clock::now();
  for (int r = 0; r < kReps; ++r)
    for (auto& c : clients) found += boost_book(c->bodies()[0]).first.size();
  const double boost_ns = us_since(t1) * 1000 / (kReps * clients.size());
  for (auto& c : clients) bytes += c->bodies()[0].size();
  std::printf(
      "\nparsing alone, %zu books of %zu bytes on average: simdjson %.0f ns, Boost.JSON %.0f "
      "ns a book (%.2fx)%s\n",
      clients.size(), bytes / clients.size(), simd_ns, boost_ns, boost_ns / simd_ns,
      found == 0 ? " (no bids found)" : "");
}

int bench(Setup& s, const WatchOptions& o) {
  const std::string path = "/api/v1/orderBookOrders?market_id=" + std::to_string(o.market) +
                           "&limit=" + std::to_string(o.book_rows);
  const Way ways[] = {{"concurrent, kept-alive, simdjson (the watch)", true, true, true},
                      {"sequential, kept-alive, simdjson", false, true, true},
                      {"concurrent, new connection per request, simdjson", true, false, true},
                      {"concurrent, kept-alive, Boost.JSON", true, true, false}};
  std::printf(
      "| %zu nodes, every book (%d orders a side), %d rounds | round p50 µs | p90 µs | "
      "p50 vs the watch |\n|---|---|---|---|\n",
      s.nodes.size(), o.book_rows, o.bench_rounds);
  double base = 0;
  uint64_t empty_books = 0;
  for (const Way& w : ways) {
    std::string error;
    const auto us = bench_way(s, w, path, o.bench_rounds, error, empty_books);
    if (!error.empty() || us.empty()) {
      std::fprintf(stderr, "watch --bench: %s\n", error.c_str());
      return 1;
    }
    const double p50 = us[us.size() / 2], p90 = us[us.size() * 9 / 10];
    if (base == 0) base = p50;
    std::printf("| %s | %.0f | %.0f | %.2fx |\n", w.name, p50, p90, p50 / base);
  }
  parse_only(s, path);
  if (empty_books > 0)
    std::printf("(%llu of the books read were empty)\n",
                static_cast<unsigned long long>(empty_books));
  return 0;
}

}  // namespace

int watch_cmd(const WatchOptions& o) {
  Setup s;
  if (std::string e = resolve_all(o.nodes, s); !e.empty()) {
    std::fprintf(stderr, "watch: %s\n", e.c_str());
    return 2;
  }
  if (o.bench_rounds > 0) return bench(s, o);
  const std::string m = std::to_string(o.market);
  const std::vector<std::string> paths = {"/api/v1/orderBookOrders?market_id=" + m + "&limit=1",
                                          "/api/v1/recentTrades?market_id=" + m + "&limit=1",
                                          "/health/ready"};
  auto clients = make_clients(s, true);
  std::vector<std::shared_ptr<Freshness>> fresh;
  for (auto& [name, where] : s.nodes) {
    fresh.push_back(std::make_shared<Freshness>(s.io, name, where, o.market));
    fresh.back()->start();
  }
  simdjson::dom::parser p;
  s.io.run_for(std::chrono::milliseconds(200));  // the subscriptions' snapshots
  for (int round = 0; o.rounds == 0 || round < o.rounds; ++round) {
    const auto t0 = Clock::now();
    std::vector<NodeState> st(clients.size());
    size_t pending = clients.size();
    for (size_t i = 0; i < clients.size(); ++i) {
      clients[i]->get(paths, [&st, &pending, i](const std::string& e) {
        st[i].error = e;
        --pending;
      });
    }
    while (pending > 0) s.io.run_one();  // the WebSocket reads go on meanwhile
    for (size_t i = 0; i < clients.size(); ++i) {
      if (st[i].error.empty()) st[i] = parse_node(p, *clients[i]);
      std::tie(st[i].fresh_ms, st[i].fresh_worst_ms) = fresh[i]->take();
    }
    print_round(clients, st);
    const auto left = std::chrono::milliseconds(o.interval_ms) - (Clock::now() - t0);
    if (o.rounds == 0 || round + 1 < o.rounds) s.io.run_for(left);
  }
  return 0;
}

}  // namespace tachyon::app
