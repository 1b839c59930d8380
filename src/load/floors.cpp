#include "floors.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "tachyon/api/ed25519.hpp"
#include "tachyon/codec/tx_hash.hpp"

namespace tachyon::load {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Paced pings on one connection; each waits for its pong (other frames are skipped).
std::string ping_floor(const FloorConfig& cfg, Floors& out) {
  asio::io_context io;
  websocket::stream<tcp::socket> ws(io);
  beast::error_code ec;
  tcp::resolver res(io);
  const auto eps = res.resolve(cfg.host, std::to_string(cfg.port), ec);
  if (!ec) asio::connect(ws.next_layer(), eps, ec);
  if (!ec) ws.next_layer().set_option(tcp::no_delay(true), ec);
  if (!ec) ws.handshake(cfg.host, "/stream", ec);
  if (ec) return "ping floor: cannot open a WebSocket to the server: " + ec.message();
  ws.text(true);
  std::optional<ServerCost> before;
  if (cfg.server_pid > 0) {
    ServerCost c;
    if (read_server_cost(cfg.server_pid, c).empty()) before = c;
  }
  tachyon::Histogram h;
  const std::string ping = R"({"type":"ping"})";
  beast::flat_buffer buf;
  const auto interval = std::chrono::nanoseconds(static_cast<int64_t>(1e9 / cfg.rate));
  auto due = std::chrono::steady_clock::now();
  for (unsigned i = 0; i < cfg.pings; ++i) {
    std::this_thread::sleep_until(due);
    due += interval;
    const int64_t t0 = steady_ns();
    ws.write(asio::buffer(ping), ec);
    bool pong = false;
    while (!ec && !pong) {
      buf.consume(buf.size());
      ws.read(buf, ec);
      const std::string_view s(static_cast<const char*>(buf.cdata().data()), buf.size());
      pong = s.find(R"("type":"pong")") != std::string_view::npos;
    }
    if (ec) return "ping floor: the server stopped answering: " + ec.message();
    h.record(static_cast<uint64_t>(steady_ns() - t0));
  }
  if (before) {
    ServerCost after;
    if (read_server_cost(cfg.server_pid, after).empty())
      out.ping_cost = cost_between(*before, after);
  }
  out.ping = h.snapshot();
  ws.close(websocket::close_code::normal, ec);
  return "";
}

// The median of 5 rounds of 400 checks of one signature: libsodium's (the reference) and the
// server's (the key's tables already built), each with the tx's canonical bytes made per check.
void verify_floor(const Tx& sample, uint32_t chain_id, Floors& out) {
  api::PublicKey pk;
  api::SecretKey sk;
  api::keygen(pk, sk);
  const api::Signature sig = api::sign_tx(sample, chain_id, sk);
  auto median = [&](auto&& check) {
    std::vector<double> rounds;
    unsigned ok = 0;
    for (int r = 0; r < 5; ++r) {
      const int64_t t0 = steady_ns();
      for (int i = 0; i < 400; ++i) ok += check() ? 1 : 0;
      rounds.push_back(double(steady_ns() - t0) / 400);
    }
    std::sort(rounds.begin(), rounds.end());
    return ok == 2000 ? rounds[2] : 0;  // (0: the sample did not verify, nothing was measured)
  };
  out.verify_ns = median([&] {
    const auto msg = codec::canonical_tx_bytes(sample, chain_id);
    return api::ed25519::verify_reference(
        std::string_view(reinterpret_cast<const char*>(msg.data()), msg.size()), sig, pk);
  });
  out.verify_tables_ns = median([&] { return api::verify_tx(sample, chain_id, sig, pk); });
}

// The calling thread's context switches so far (voluntary + involuntary).
uint64_t thread_switches() {
  rusage ru{};
  ::getrusage(RUSAGE_THREAD, &ru);
  return static_cast<uint64_t>(ru.ru_nvcsw + ru.ru_nivcsw);
}

// As the journal's group commit: 200 bytes written over allocated zeros, then fdatasync.
std::string sync_floor(const FloorConfig& cfg, Floors& out) {
  const std::string path = cfg.sync_dir + "/.tachyon-load-fdatasync.tmp";
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return "fdatasync floor: cannot create " + path;
  tachyon::Histogram h;
  const std::vector<char> rec(200, 'x');
  const std::vector<char> zeros(rec.size() * cfg.syncs, 0);
  std::string err;
  if (::write(fd, zeros.data(), zeros.size()) != static_cast<ssize_t>(zeros.size()) ||
      ::fdatasync(fd) != 0)
    err = "fdatasync floor: cannot write " + path;
  const auto interval = std::chrono::nanoseconds(static_cast<int64_t>(1e9 / cfg.rate));
  auto due = std::chrono::steady_clock::now();
  uint64_t switches = 0;
  for (unsigned i = 0; i < cfg.syncs && err.empty(); ++i) {
    std::this_thread::sleep_until(due);  // at the run's pace: an idle device flushes slower
    due += interval;
    const uint64_t s0 = thread_switches();
    const int64_t t0 = steady_ns();
    if (::pwrite(fd, rec.data(), rec.size(), off_t(i * rec.size())) !=
            static_cast<ssize_t>(rec.size()) ||
        ::fdatasync(fd) != 0)
      err = "fdatasync floor: write or fdatasync failed in " + cfg.sync_dir;
    h.record(static_cast<uint64_t>(steady_ns() - t0));
    switches += thread_switches() - s0;
  }
  ::close(fd);
  ::unlink(path.c_str());
  out.fdatasync = h.snapshot();
  out.fdatasync_switches = h.snapshot().count ? double(switches) / double(h.snapshot().count) : 0;
  out.sync_dir = cfg.sync_dir;
  return err;
}

}  // namespace

std::string measure_floors(const FloorConfig& cfg, const Tx& sample, uint32_t chain_id,
                           Floors& out) {
  verify_floor(sample, chain_id, out);
  if (!cfg.sync_dir.empty()) {
    if (std::string e = sync_floor(cfg, out); !e.empty()) return e;
  }
  if (cfg.pings > 0) return ping_floor(cfg, out);
  return "";
}

}  // namespace tachyon::load
