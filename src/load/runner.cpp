#include "runner.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <charconv>
#include <ctime>
#include <deque>
#include <memory>
#include <unordered_map>

#include "tachyon/api/crypto.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/core/histogram.hpp"

namespace tachyon::load {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

namespace {

// The integer after `"key":` (or `"key":"` for ids sent as strings), from `from` on.
bool find_int(std::string_view s, std::string_view key, int64_t& v, size_t from = 0,
              size_t* end = nullptr) {
  std::string pat;
  pat.reserve(key.size() + 3);
  pat += '"';
  pat += key;
  pat += "\":";
  const size_t p = s.find(pat, from);
  if (p == std::string_view::npos) return false;
  size_t i = p + pat.size();
  if (i < s.size() && s[i] == '"') ++i;
  const auto r = std::from_chars(s.data() + i, s.data() + s.size(), v);
  if (r.ec != std::errc()) return false;
  if (end != nullptr) *end = static_cast<size_t>(r.ptr - s.data());
  return true;
}

class Conn;

struct Shared {
  Shared(const RunConfig& c, const std::vector<Planned>& p) : cfg(c), plan(p) {}
  const RunConfig& cfg;
  const std::vector<Planned>& plan;
  int64_t start_ns = 0;  // realtime of due time 0
  std::vector<int64_t> sent_ns;
  std::vector<uint8_t> answered;
  uint64_t answered_count = 0;
  tachyon::Histogram ack, service, fill;
  tachyon::Histogram fresh_engine[kFreshCount], fresh_api[kFreshCount];
  std::vector<std::unique_ptr<tachyon::Histogram>> per_second;
  std::vector<uint64_t> acks_per_second;
  RunResult* out = nullptr;
  // fills: the first trade push naming an order, and takers acknowledged but not yet filled
  std::unordered_map<int64_t, int64_t> filled_at;
  std::unordered_map<int64_t, size_t> waiting_fill;  // order index -> plan index

  void on_frame(std::string_view f, bool subscriber, Conn& c);
  void answered_one(size_t i, int64_t now) {
    answered[i] = 1;
    ++answered_count;
    const int64_t due = start_ns + plan[i].at_ns;
    ack.record(static_cast<uint64_t>(std::max<int64_t>(0, now - due)));
    service.record(static_cast<uint64_t>(std::max<int64_t>(0, now - sent_ns[i])));
    const size_t sec = static_cast<size_t>(plan[i].at_ns / 1'000'000'000);
    if (sec < per_second.size()) {
      per_second[sec]->record(static_cast<uint64_t>(std::max<int64_t>(0, now - due)));
      ++acks_per_second[sec];
    }
  }
};

class Conn : public std::enable_shared_from_this<Conn> {
 public:
  Conn(asio::io_context& io, Shared& sh, bool subscriber)
      : ws_(io), sh_(sh), subscriber_(subscriber) {}

  std::string connect(const std::string& host, int port) {
    beast::error_code ec;
    tcp::resolver res(ws_.get_executor());
    auto eps = res.resolve(host, std::to_string(port), ec);
    if (ec) return "resolve " + host + ": " + ec.message();
    beast::get_lowest_layer(ws_).connect(eps, ec);
    if (ec) return "connect " + host + ":" + std::to_string(port) + ": " + ec.message();
    beast::get_lowest_layer(ws_).socket().set_option(tcp::no_delay(true));
    ws_.handshake(host, "/stream", ec);
    if (ec) return "WebSocket handshake: " + ec.message();
    return "";
  }
  void send(const std::string* frame) {
    out_.push_back(frame);
    if (!writing_) write_next();
  }
  void send_owned(std::string frame) {
    owned_.push_back(std::move(frame));
    send(&owned_.back());
  }
  void start_reading() { read_next(); }
  void close() {
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().close(ec);
  }

 private:
  void write_next() {
    if (out_.empty()) {
      writing_ = false;
      return;
    }
    writing_ = true;
    const std::string* f = out_.front();
    ws_.text(true);
    ws_.async_write(asio::buffer(*f), [self = shared_from_this()](beast::error_code ec, size_t) {
      self->out_.pop_front();
      if (ec) {
        ++self->sh_.out->protocol_errors;
        self->out_.clear();
        self->writing_ = false;
        return;
      }
      while (!self->owned_.empty() && self->out_.empty()) self->owned_.pop_front();
      self->write_next();
    });
  }
  void read_next() {
    ws_.async_read(buf_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return;  // closed (end of run) or failed: the unanswered count says so
      const auto data = self->buf_.cdata();
      self->sh_.on_frame(std::string_view(static_cast<const char*>(data.data()), data.size()),
                         self->subscriber_, *self);
      self->buf_.consume(self->buf_.size());
      self->read_next();
    });
  }

  websocket::stream<beast::tcp_stream> ws_;
  Shared& sh_;
  bool subscriber_;
  beast::flat_buffer buf_;
  std::deque<const std::string*> out_;
  std::deque<std::string> owned_;
  bool writing_ = false;
};

void Shared::on_frame(std::string_view f, bool subscriber, Conn& c) {
  const int64_t now = realtime_ns();
  ++out->frames_received;
  if (f.find("\"type\":\"ping\"") != std::string_view::npos) {
    c.send_owned(R"({"type":"pong"})");
    return;
  }
  int64_t id = -1;
  if (f.rfind("{\"type\":\"jsonapi/sendtx\"", 0) == 0) {  // a reply: accepted
    if (!find_int(f, "id", id) || id < 0 || size_t(id) >= plan.size() || answered[id]) {
      ++out->protocol_errors;
      return;
    }
    ++out->acked_ok;
    answered_one(size_t(id), now);
    int64_t oi = 0;
    if (plan[id].expects_fill && find_int(f, "order_index", oi)) {
      if (auto it = filled_at.find(oi); it != filled_at.end()) {
        fill.record(uint64_t(std::max<int64_t>(0, it->second - (start_ns + plan[id].at_ns))));
        filled_at.erase(it);
      } else {
        waiting_fill[oi] = size_t(id);
      }
    }
    return;
  }
  if (f.rfind("{\"error\":", 0) == 0) {  // refused: by the dry-run or the sequencer
    int64_t code = 0;
    (void)find_int(f, "code", code);
    if (!find_int(f, "id", id) || id < 0 || size_t(id) >= plan.size() || answered[id]) {
      ++out->protocol_errors;
      return;
    }
    ++out->rejected;
    ++out->rejects[static_cast<int>(code)];
    answered_one(size_t(id), now);
    return;
  }
  const size_t tp = f.find("\"type\":\"update/");
  if (tp == std::string_view::npos) return;  // greetings, subscribed/... snapshots
  const std::string_view kind = f.substr(tp + 15, 24);
  if (kind.rfind("account_all_trades", 0) == 0) {
    // Every order index named by the pushed trades: the first push of a taker's order is its fill.
    for (const char* key : {"ask_id", "bid_id"}) {
      size_t pos = 0;
      int64_t oi = 0;
      while (find_int(f, key, oi, pos, &pos)) {
        if (auto it = waiting_fill.find(oi); it != waiting_fill.end()) {
          fill.record(uint64_t(std::max<int64_t>(0, now - (start_ns + plan[it->second].at_ns))));
          waiting_fill.erase(it);
        } else {
          filled_at.emplace(oi, now);
        }
      }
    }
    return;
  }
  if (!subscriber) return;
  int ch = -1;
  if (kind.rfind("order_book", 0) == 0) ch = kFreshBook;
  if (kind.rfind("trade", 0) == 0) ch = kFreshTrade;
  if (kind.rfind("account_all", 0) == 0) ch = kFreshAccount;
  if (ch < 0) return;
  int64_t engine_us = 0, sent_us = 0;
  if (find_int(f, "engine_ts_us", engine_us) && engine_us > 0)
    fresh_engine[ch].record(uint64_t(std::max<int64_t>(0, now - engine_us * 1000)));
  if (find_int(f, "sent_ts_us", sent_us) && sent_us > 0)
    fresh_api[ch].record(uint64_t(std::max<int64_t>(0, now - sent_us * 1000)));
}

struct Conns {
  std::vector<std::shared_ptr<Conn>> senders, subs;
};

// The sending connections (takers hear their fills on theirs) and the subscribers, all reading.
// "" or why a connection failed.
std::string connect_all(asio::io_context& io, Shared& sh, const std::vector<Trader>& traders,
                        Conns& conns) {
  const RunConfig& cfg = sh.cfg;
  auto target = [&](unsigned i) {
    return cfg.targets.empty() ? std::pair(cfg.host, cfg.port)
                               : cfg.targets[i % cfg.targets.size()];
  };
  const unsigned nsend = std::max(1u, cfg.connections);
  for (unsigned i = 0; i < nsend; ++i) {
    auto c = std::make_shared<Conn>(io, sh, false);
    if (std::string e = c->connect(target(i).first, target(i).second); !e.empty()) return e;
    conns.senders.push_back(c);
  }
  // Takers hear their fills on their sending connection (a private channel: their API key 0's
  // auth token).
  const int64_t deadline_s = static_cast<int64_t>(std::time(nullptr)) + api::kMaxTokenLifetimeS / 2;
  for (size_t t = 0; t < traders.size(); ++t) {
    if (traders[t].maker) continue;
    const Trader& tr = traders[t];
    const std::string token = api::make_auth_token(deadline_s, tr.account, 0, cfg.chain_id, tr.sk);
    conns.senders[t % nsend]->send_owned(R"({"type":"subscribe","channel":"account_all_trades/)" +
                                         std::to_string(tr.account) + R"(","auth":")" + token +
                                         "\"}");
  }
  for (unsigned i = 0; i < cfg.subscribers; ++i) {
    auto c = std::make_shared<Conn>(io, sh, true);
    if (std::string e = c->connect(target(i).first, target(i).second); !e.empty()) return e;
    const std::string m = std::to_string(cfg.market);
    c->send_owned(R"({"type":"subscribe","channel":"order_book/)" + m + "\"}");
    c->send_owned(R"({"type":"subscribe","channel":"trade/)" + m + "\"}");
    if (!traders.empty()) {
      c->send_owned(R"({"type":"subscribe","channel":"account_all/)" +
                    std::to_string(traders[i % traders.size()].account) + "\"}");
    }
    conns.subs.push_back(c);
  }
  for (auto& c : conns.senders) c->start_reading();
  for (auto& c : conns.subs) c->start_reading();
  return "";
}

// Sends each planned tx when it is due, then waits for the last replies (up to drain_s) and
// closes the connections. Returns how many txs went out.
size_t send_plan(asio::io_context& io, Shared& sh, Conns& conns) {
  const RunConfig& cfg = sh.cfg;
  const std::vector<Planned>& plan = sh.plan;
  RunResult& res = *sh.out;
  const unsigned nsend = std::max(1u, cfg.connections);
  // Let the subscriptions settle (their snapshots arrive) before the clock starts.
  asio::steady_timer settle(io);
  settle.expires_after(std::chrono::milliseconds(300));
  asio::steady_timer pump_timer(io), drain_timer(io);
  size_t next = 0;
  std::function<void()> pump;
  auto finish_when_quiet = std::make_shared<std::function<void()>>();
  pump = [&] {
    const int64_t now = realtime_ns();
    for (; next < plan.size() && sh.start_ns + plan[next].at_ns <= now; ++next) {
      const Planned& p = plan[next];
      sh.sent_ns[next] = realtime_ns();
      if (sh.sent_ns[next] - (sh.start_ns + p.at_ns) > 1'000'000) ++res.late_sends;
      conns.senders[p.trader % nsend]->send(&p.frame);
      ++res.sent;
    }
    if (next < plan.size()) {
      const int64_t wait = sh.start_ns + plan[next].at_ns - realtime_ns();
      pump_timer.expires_after(std::chrono::nanoseconds(std::max<int64_t>(wait, 0)));
      pump_timer.async_wait([&](beast::error_code ec) {
        if (!ec) pump();
      });
      return;
    }
    (*finish_when_quiet)();
  };
  const auto drain_deadline = std::make_shared<int64_t>(0);
  *finish_when_quiet = [&, drain_deadline] {
    if (*drain_deadline == 0) *drain_deadline = realtime_ns() + int64_t(cfg.drain_s * 1e9);
    if (sh.answered_count >= res.sent || realtime_ns() >= *drain_deadline) {
      for (auto& c : conns.senders) c->close();
      for (auto& c : conns.subs) c->close();
      io.stop();
      return;
    }
    drain_timer.expires_after(std::chrono::milliseconds(5));
    drain_timer.async_wait([finish_when_quiet](beast::error_code ec) {
      if (!ec) (*finish_when_quiet)();
    });
  };
  settle.async_wait([&](beast::error_code) {
    sh.start_ns = realtime_ns() + 1'000'000;
    pump();
  });
  io.run();
  return next;
}

// What the run measured, into res; `sent`: the txs that went out.
void collect(Shared& sh, size_t sent, RunResult& res) {
  const std::vector<Planned>& plan = sh.plan;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (i < sent && !sh.answered[i]) ++res.unanswered;
  }
  res.seconds = plan.empty() ? 0 : double(plan.back().at_ns) / 1e9;
  res.ack = sh.ack.snapshot();
  res.service = sh.service.snapshot();
  res.fill = sh.fill.snapshot();
  for (int c = 0; c < kFreshCount; ++c) {
    res.fresh_engine[c] = sh.fresh_engine[c].snapshot();
    res.fresh_api[c] = sh.fresh_api[c].snapshot();
  }
  for (auto& h : sh.per_second) res.ack_per_second.push_back(h->snapshot());
  res.acks_per_second = sh.acks_per_second;
}

}  // namespace

RunResult run_plan(const RunConfig& cfg, const std::vector<Planned>& plan,
                   const std::vector<Trader>& traders) {
  RunResult res;
  asio::io_context io;
  Shared sh(cfg, plan);
  sh.out = &res;
  sh.sent_ns.assign(plan.size(), 0);
  sh.answered.assign(plan.size(), 0);
  const size_t seconds = plan.empty() ? 0 : size_t(plan.back().at_ns / 1'000'000'000) + 1;
  for (size_t s = 0; s < seconds; ++s)
    sh.per_second.push_back(std::make_unique<tachyon::Histogram>());
  sh.acks_per_second.assign(seconds, 0);

  Conns conns;
  if (std::string e = connect_all(io, sh, traders, conns); !e.empty()) {
    res.error = e;
    return res;
  }
  const size_t sent = send_plan(io, sh, conns);
  collect(sh, sent, res);
  return res;
}

}  // namespace tachyon::load
