// The slow-reader policy of a WebSocket connection (docs/ARCHITECTURE.md "Bad input"): the first
// time its send queue is over the bound, or has not drained for the stall timeout, what is queued
// is dropped and it gets one fresh snapshot of each book it follows; the next time it is cut at
// once, counted once. All send queues together have a budget: over it, the largest queues are
// cut first. Driven through WorkerLogic with connections whose queue depth the test sets, then
// against the real server with readers on real sockets that stop reading.
#include <gtest/gtest.h>
#include <netinet/tcp.h>
#include <poll.h>

#include <atomic>
#include <map>
#include <sstream>
#include <thread>

#include "api/api_support.hpp"
#include "support/tx_builder.hpp"
#include "tachyon/api/worker.hpp"
#include "tachyon/pipe/pipeline.hpp"

namespace tachyon::testing {
namespace {

class Conn final : public api::WsConn {
 public:
  void send_text(std::string frame) override { frames.push_back(std::move(frame)); }
  void close_conn(std::string_view why) override { closed = std::string(why); }
  void cut_conn(std::string_view why) override { cut_reason = std::string(why); }
  size_t queued_bytes() const override { return queued; }
  void clear_queue() override {
    queued = 0;
    ++cleared;
  }
  std::vector<std::string> frames;
  std::string closed, cut_reason;
  size_t queued = 0;
  int cleared = 0;
};

std::unique_ptr<Engine> engine_with_a_market() {
  auto e = std::make_unique<Engine>(EngineConfig{.max_orders = 1024, .expected_accounts = 16});
  TxBuilder b;
  NullSink sink;
  EXPECT_EQ(e->execute(b.create_market(0, demo_market_params(), 300000), sink).reject, Reject::kOk);
  return e;
}

TEST(SlowConsumer, one_resync_snapshot_then_close) {
  pipe::PipelineConfig pc;
  pc.workers = 1;
  pipe::Pipeline pipeline(pc, engine_with_a_market(), nullptr, nullptr);
  api::ApiConfig ac;
  ac.ws_queue_bytes = 4096;
  api::ApiShared shared(ac);
  api::WorkerLogic logic(shared, pipeline, 0);
  auto c = std::make_shared<Conn>();
  c->ip = "127.0.0.1";
  logic.ws_open(c);
  logic.ws_message(c, R"({"type":"subscribe","channel":"order_book/0"})");
  ASSERT_EQ(c->frames.size(), 2u);  // connected, subscribed/order_book
  EXPECT_NE(c->frames[1].find("subscribed/order_book"), std::string::npos);
  // within the bound: frames go out as usual
  c->queued = 1000;
  logic.ws_message(c, R"({"type":"ping"})");
  EXPECT_EQ(c->frames.back(), R"({"type":"pong"})");
  EXPECT_EQ(c->cleared, 0);
  // over it: the queue is dropped, one fresh snapshot instead of the frame
  c->queued = 1'000'000;
  logic.ws_message(c, R"({"type":"ping"})");
  EXPECT_EQ(c->cleared, 1);
  EXPECT_NE(c->frames.back().find("subscribed/order_book"), std::string::npos) << c->frames.back();
  EXPECT_TRUE(c->closed.empty());
  // over it again: cut at once (a graceful close could not be written), with the reason, counted
  const uint64_t closes = shared.metrics.slow_closes().value();
  c->queued = 1'000'000;
  logic.ws_message(c, R"({"type":"ping"})");
  EXPECT_NE(c->cut_reason.find("slow consumer"), std::string::npos) << c->cut_reason;
  EXPECT_TRUE(c->closed.empty());
  EXPECT_EQ(shared.metrics.slow_closes().value(), closes + 1);
  // until the close arrives, nothing more is sent and the cut is not counted again
  const size_t frames = c->frames.size();
  for (int i = 0; i < 3; ++i) logic.ws_message(c, R"({"type":"ping"})");
  EXPECT_EQ(c->frames.size(), frames);
  EXPECT_EQ(shared.metrics.slow_closes().value(), closes + 1);
  logic.ws_closed(c);
}

// Whether pred() becomes true within `seconds` (polled every millisecond): a generous deadline
// for a condition, never a timing under test.
template <typename P>
bool eventually(P&& pred, int seconds = 60) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

struct LogicUnderTest {
  explicit LogicUnderTest(api::ApiConfig ac)
      : pipeline(config(), engine_with_a_market(), nullptr, nullptr),
        shared(ac),
        logic(shared, pipeline, 0) {}
  static pipe::PipelineConfig config() {
    pipe::PipelineConfig pc;
    pc.workers = 1;
    return pc;
  }
  std::shared_ptr<Conn> open_subscribed() {
    auto c = std::make_shared<Conn>();
    c->ip = "127.0.0.1";
    logic.ws_open(c);
    logic.ws_message(c, R"({"type":"subscribe","channel":"order_book/0"})");
    return c;
  }
  pipe::Pipeline pipeline;
  api::ApiShared shared;
  api::WorkerLogic logic;
};

TEST(SlowConsumer, a_queue_not_drained_for_the_stall_timeout_is_resynced_then_cut_once) {
  api::ApiConfig ac;
  ac.ws_stall_timeout_ms = 1;
  LogicUnderTest t(ac);
  auto stalled = t.open_subscribed(), reading = t.open_subscribed(), idle = t.open_subscribed();
  api::ApiMetrics& m = t.shared.metrics;
  // `stalled` keeps a queue and never drains it; `reading` keeps one too but drains between
  // ticks; `idle` has nothing queued.
  auto tick = [&] {
    stalled->queued = 1000;  // a resync's snapshot sits behind a frame that is never written
    reading->queued = 1000;
    ++reading->drains;
    t.logic.on_tick();
  };
  ASSERT_TRUE(eventually([&] {
    tick();
    return stalled->cleared > 0;
  }));
  EXPECT_EQ(m.stall_resyncs().value(), 1u);
  EXPECT_NE(stalled->frames.back().find("subscribed/order_book"), std::string::npos);
  EXPECT_TRUE(stalled->cut_reason.empty());
  ASSERT_TRUE(eventually([&] {
    tick();
    return !stalled->cut_reason.empty();
  }));
  EXPECT_NE(stalled->cut_reason.find("stalled"), std::string::npos) << stalled->cut_reason;
  EXPECT_EQ(m.stall_closes().value(), 1u);
  for (int i = 0; i < 5; ++i) tick();  // cut: not resynced, cut or counted again
  EXPECT_EQ(m.stall_resyncs().value(), 1u);
  EXPECT_EQ(m.stall_closes().value(), 1u);
  for (const auto* c : {reading.get(), idle.get()}) {
    EXPECT_EQ(c->cleared, 0);
    EXPECT_TRUE(c->cut_reason.empty()) << c->cut_reason;
  }
  for (auto& c : {stalled, reading, idle}) t.logic.ws_closed(c);
}

TEST(SlowConsumer, over_the_total_budget_the_largest_queue_is_cut_and_the_others_kept) {
  api::ApiConfig ac;
  ac.workers = 1;
  ac.ws_total_queue_bytes = 10'000;
  LogicUnderTest t(ac);
  auto small = t.open_subscribed(), large = t.open_subscribed(), healthy = t.open_subscribed();
  small->queued = 3'000;
  large->queued = 8'000;
  api::ApiMetrics& m = t.shared.metrics;
  m.ws_queued_add(0, 9'000);  // under the budget: nothing happens
  t.logic.on_wake();
  EXPECT_EQ(m.budget_closes().value(), 0u);
  m.ws_queued_add(0, 2'000);  // 11,000: over it; cutting the largest (8,000) is enough
  t.logic.on_wake();
  EXPECT_NE(large->cut_reason.find("budget"), std::string::npos) << large->cut_reason;
  EXPECT_TRUE(small->cut_reason.empty()) << small->cut_reason;
  EXPECT_TRUE(healthy->cut_reason.empty()) << healthy->cut_reason;
  EXPECT_EQ(m.budget_closes().value(), 1u);
  m.ws_queued_add(0, -8'000);  // what a real connection gives back when it is cut
  t.logic.on_wake();           // under the budget again: the others stay, nothing is counted twice
  EXPECT_TRUE(small->cut_reason.empty()) << small->cut_reason;
  EXPECT_EQ(m.budget_closes().value(), 1u);
  for (auto& c : {small, large, healthy}) t.logic.ws_closed(c);
}

// ---- against the real server ----

// A WebSocket client on a raw socket that can stop reading: a 1 KiB receive buffer and 536-byte
// segments, so that the kernels on both ends hold little of what the server sends and its own
// send queue takes the rest.
class RawWs {
 public:
  explicit RawWs(int port, bool small_window) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (small_window) {
      const int rcvbuf = 1024, mss = 536;
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
      ::setsockopt(fd_, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof(mss));
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    const std::string req =
        "GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: "
        "Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: "
        "13\r\n\r\n";
    ok_ = ok_ && ::send(fd_, req.data(), req.size(), MSG_NOSIGNAL) == ssize_t(req.size());
    std::string head;  // byte by byte: nothing past the handshake is taken
    char ch = 0;
    while (ok_ && head.find("\r\n\r\n") == std::string::npos && ::recv(fd_, &ch, 1, 0) == 1)
      head += ch;
    ok_ = ok_ && head.find(" 101 ") != std::string::npos;
  }
  ~RawWs() { ::close(fd_); }
  bool ok() const { return ok_; }
  // One masked text frame (shorter than 126 bytes).
  void send_text(const std::string& text) {
    std::string f = {char(0x81), char(0x80 | text.size()), 1, 2, 3, 4};
    for (size_t i = 0; i < text.size(); ++i) f += char(text[i] ^ (1 + i % 4));
    ::send(fd_, f.data(), f.size(), MSG_NOSIGNAL);
  }
  // Reads what arrives within `ms`: false once the server closed the connection (end of stream
  // or reset). `seen` counts the occurrences of `needle` in the stream.
  bool read_for(int ms, const std::string& needle = "", uint64_t* seen = nullptr) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, ms) <= 0) return true;
    char buf[65536];
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    if (seen != nullptr) {  // the tail of the last read, so that a needle across two is found
      tail_.append(buf, static_cast<size_t>(n));
      for (size_t at = tail_.find(needle); at != std::string::npos; at = tail_.find(needle, at + 1))
        ++*seen;
      tail_.erase(0, tail_.size() >= needle.size() ? tail_.size() - needle.size() + 1 : 0);
    }
    return true;
  }
  // Everything the server sent, read until it ends; true if it ended (closed by the server).
  bool reaches_end() {
    return eventually([&] { return !read_for(100); });
  }
  // Whether the connection still answers: what is queued for it read, then its ping answered.
  bool answers_ping() {
    send_text(R"({"type":"ping"})");
    uint64_t pongs = 0;
    bool open = true;
    eventually([&] {
      open = read_for(100, R"({"type":"pong"})", &pongs);
      return !open || pongs > 0;
    });
    return open && pongs > 0;
  }

 private:
  int fd_ = -1;
  bool ok_ = false;
  std::string tail_;
};

// A reader that keeps reading on its own thread, counting order-book updates.
class HealthyReader {
 public:
  explicit HealthyReader(int port) : ws_(port, false) {
    ws_.send_text(R"({"type":"subscribe","channel":"order_book/0"})");
    thread_ = std::thread([this] {
      uint64_t n = 0;
      while (!stop_.load()) {
        if (!ws_.read_for(50, "update/order_book", &n)) {
          closed_.store(true);
          return;
        }
        updates_.store(n);
      }
    });
  }
  ~HealthyReader() {
    stop_.store(true);
    thread_.join();
  }
  bool ok() const { return ws_.ok(); }
  uint64_t updates() const { return updates_.load(); }
  bool closed() const { return closed_.load(); }

 private:
  RawWs ws_;
  std::atomic<bool> stop_{false}, closed_{false};
  std::atomic<uint64_t> updates_{0};
  std::thread thread_;
};

int64_t metric(Server& s, const std::string& series) {
  const auto m = scrape(s);
  auto it = m.find(series);
  return it == m.end() ? -1 : static_cast<int64_t>(it->second);
}

// Book churn from one trader: orders at fresh prices (each one a delta to every order_book/0
// subscriber), the order 200 back cancelled (under the open-order limit), until done() or
// `max` orders; done() is asked every `every` orders. Returns whether done() said so.
template <typename Done>
bool churn_until(Server& s, Trader& t, int& i, int max, int every, Done&& done) {
  for (const int end = i + max; i < end; ++i) {
    const bool ask = i % 2 == 1;
    const Ticks px = ask ? 302000 + i % 2000 : 298000 - i % 2000;
    HttpResult r = s.send(t.order(0, ask, 500, px, TimeInForce::kGoodTillTime, i + 1), t.sk);
    EXPECT_EQ(r.status, 200) << r.body;
    if (i >= 200) {
      r = s.send(t.cancel(0, static_cast<uint64_t>(i + 1 - 200)), t.sk);
      EXPECT_EQ(r.status, 200) << r.body;
    }
    if (i % every == every - 1 && done()) {
      ++i;
      return true;
    }
  }
  return done();
}

ConfigFile::Edits unlimited(ConfigFile::Edits more) {
  ConfigFile::Edits e = {{"ip_rate_per_s = 200", "ip_rate_per_s = 1000000"},
                         {"ip_burst = 400", "ip_burst = 1000000"},
                         {"account_rate_per_s = 100", "account_rate_per_s = 1000000"},
                         {"account_burst = 200", "account_burst = 1000000"}};
  e.insert(e.end(), more.begin(), more.end());
  return e;
}

TEST(SlowConsumer, a_real_reader_that_stalls_is_resynced_then_cut_once_while_a_healthy_one_reads) {
  ConfigFile cfg(unlimited({{"ws_stall_timeout_ms = 10000", "ws_stall_timeout_ms = 200"}}));
  Server s(cfg.args());
  ASSERT_TRUE(s.ready()) << s.log();
  HealthyReader healthy(s.port());
  RawWs stalled(s.port(), true);
  ASSERT_TRUE(healthy.ok() && stalled.ok());
  stalled.send_text(R"({"type":"subscribe","channel":"order_book/0"})");
  Trader t(11);
  ASSERT_EQ(s.deposit(t.account, 1'000'000'000'000, t.pk).status, 200);
  // Churn until the kernel's buffers are full and the queue has waited past the timeout: the
  // resync. Then, still not read, the traffic queues behind the fresh snapshots (which may just
  // fit in what the socket had left): the cut.
  int i = 0;
  ASSERT_TRUE(churn_until(s, t, i, 20000, 20,
                          [&] { return metric(s, "tachyon_ws_stall_resyncs_total") >= 1; }));
  ASSERT_TRUE(churn_until(s, t, i, 20000, 20,
                          [&] { return metric(s, "tachyon_ws_stall_closes_total") >= 1; }));
  EXPECT_TRUE(stalled.reaches_end());  // what was in flight, then the end: the socket was shut
  // The healthy reader keeps receiving; the cut was counted once, as the only close.
  const uint64_t before = healthy.updates();
  EXPECT_TRUE(churn_until(s, t, i, 2000, 10, [&] { return healthy.updates() > before + 10; }));
  EXPECT_FALSE(healthy.closed());
  EXPECT_EQ(metric(s, "tachyon_ws_stall_resyncs_total"), 1);
  EXPECT_EQ(metric(s, "tachyon_ws_stall_closes_total"), 1);
  EXPECT_EQ(metric(s, "tachyon_ws_slow_consumer_closes_total"), 0);
  EXPECT_EQ(metric(s, "tachyon_ws_budget_closes_total"), 0);
  EXPECT_EQ(s.stop(), 0) << s.log();
}

TEST(SlowConsumer, over_a_tiny_total_budget_the_largest_stalled_queue_is_cut_first) {
  // One api worker (the default): its share of the total budget is all of it.
  ConfigFile cfg(
      unlimited({{"ws_queue_bytes = 4194304", "ws_queue_bytes = 67108864"},
                 {"ws_stall_timeout_ms = 10000", "ws_stall_timeout_ms = 0"},
                 {"ws_total_queue_bytes = 268435456", "ws_total_queue_bytes = 262144"}}));
  Server s(cfg.args());
  ASSERT_TRUE(s.ready()) << s.log();
  HealthyReader healthy(s.port());
  RawWs first(s.port(), true);
  ASSERT_TRUE(healthy.ok() && first.ok());
  first.send_text(R"({"type":"subscribe","channel":"order_book/0"})");
  Trader t(11);
  ASSERT_EQ(s.deposit(t.account, 1'000'000'000'000, t.pk).status, 200);
  // The first stalled reader alone holds over a third of the budget, then a second one stalls
  // too: from then on both get the same frames, and the first stays ahead by that third.
  int i = 0;
  ASSERT_TRUE(churn_until(s, t, i, 20000, 10,
                          [&] { return metric(s, "tachyon_ws_queued_bytes") >= 96 * 1024; }));
  RawWs second(s.port(), true);
  ASSERT_TRUE(second.ok());
  second.send_text(R"({"type":"subscribe","channel":"order_book/0"})");
  ASSERT_TRUE(churn_until(s, t, i, 20000, 5,
                          [&] { return metric(s, "tachyon_ws_budget_closes_total") >= 1; }));
  // Only the first was cut: it reaches its end; the second, read at last, still answers.
  EXPECT_EQ(metric(s, "tachyon_ws_budget_closes_total"), 1);
  EXPECT_TRUE(first.reaches_end());
  EXPECT_TRUE(second.answers_ping());
  const uint64_t before = healthy.updates();
  EXPECT_TRUE(churn_until(s, t, i, 2000, 10, [&] { return healthy.updates() > before + 10; }));
  EXPECT_FALSE(healthy.closed());
  EXPECT_EQ(metric(s, "tachyon_ws_budget_closes_total"), 1);
  EXPECT_EQ(metric(s, "tachyon_ws_slow_consumer_closes_total"), 0);
  EXPECT_EQ(s.stop(), 0) << s.log();
}

}  // namespace
}  // namespace tachyon::testing
