#pragma once
// The real server for api tests: a child process on 127.0.0.1 with free ports and a temp data
// dir, a blocking HTTP/1.1 client on plain sockets, and signing helpers.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <map>
#include <sstream>
#include <string>

#include "store/store_support.hpp"
#include "support/child_process.hpp"
#include "tachyon/api/crypto.hpp"
#include "tachyon/api/tx_info.hpp"

namespace tachyon::testing {

struct HttpResult {
  int status = 0;
  std::string body;
};

// One request on a fresh connection (Connection: close).
inline HttpResult http(int port, const std::string& method, const std::string& target,
                       const std::string& body = "",
                       const std::string& content_type = "application/x-www-form-urlencoded",
                       const std::string& extra_headers = "") {
  HttpResult r;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    ::close(fd);
    return r;
  }
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  if (!body.empty() || method == "POST")
    req += "Content-Type: " + content_type + "\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n";
  req += extra_headers + "\r\n" + body;
  for (size_t off = 0; off < req.size();) {
    const ssize_t n = ::send(fd, req.data() + off, req.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  std::string resp;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    resp.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (resp.size() > 12) r.status = std::atoi(resp.c_str() + 9);
  const size_t h = resp.find("\r\n\r\n");
  if (h != std::string::npos) r.body = resp.substr(h + 4);
  return r;
}

inline std::string urlencode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string o;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      o += static_cast<char>(c);
    } else {
      o += '%';
      o += hex[c >> 4];
      o += hex[c & 15];
    }
  }
  return o;
}

// Runs a client program through the shell (ccxt, Python, a browser check, promtool ...): its
// output into `out`, echoed unless `quiet` (a report of one line per check), and its status.
inline int run_program(const std::string& cmd, std::string& out, bool quiet = false) {
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) return -1;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof(buf), f)) out.append(buf, n);
  const int rc = ::pclose(f);
  if (!quiet || rc != 0) std::printf("%s", out.c_str());
  return rc;
}

// `body` without the members `"key":<digits>` (and a comma after) of the keys named: the fields
// that differ between two reads by design (times a restored object does not know, ...).
inline std::string without_number_fields(std::string body,
                                         std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    const std::string k = std::string("\"") + key + "\":";
    for (size_t at = body.find(k); at != std::string::npos; at = body.find(k, at)) {
      size_t end = at + k.size();
      while (end < body.size() && std::isdigit(static_cast<unsigned char>(body[end]))) ++end;
      if (end < body.size() && body[end] == ',') ++end;
      body.erase(at, end - at);
    }
  }
  return body;
}

struct Trader;
// tests/api/ccxt/trading.mjs's configuration: the server's URLs (scheme "http" or "https"), the
// shipped signer, traders A (account 3) and B (account 4) with their keys at 254, and account 5,
// which receives a transfer.
inline std::string ccxt_trading_conf(const std::string& scheme, int port, const Trader& a,
                                     const Trader& b);

inline int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class Server {
 public:
  // `data_dir` empty: a fresh temp dir, durability "write" (nothing here outlives the process);
  // else that dir, for the tests that stop, crash and restart a server: durability "fsync", as an
  // operator runs it.
  explicit Server(std::vector<std::string> extra = {}, std::string data_dir = "")
      : data_dir_(data_dir.empty() ? dir_.path() : data_dir) {
    api::crypto_init();
    const char* durability = data_dir.empty() ? "write" : "fsync";
    std::vector<std::string> args = {TACHYON_BIN, "--data-dir", data_dir_, "--listen-address",
                                     "127.0.0.1", "--port",     "0",       "--admin-port",
                                     "0"};
    if (std::find(extra.begin(), extra.end(), "--durability") == extra.end())
      args.insert(args.end(), {"--durability", durability});  // unless `extra` names one
    for (auto& e : extra) args.push_back(e);
    child_ = spawn(args, /*with_stderr=*/true);
    std::string line;
    // "listening on 127.0.0.1:P (REST + WebSocket /stream), admin on 127.0.0.1:Q"
    auto port_after = [](const std::string& l, const std::string& marker) {
      const size_t p = l.find(marker);
      return p == std::string::npos ? 0 : std::atoi(l.c_str() + p + marker.size());
    };
    while (read_line(child_, line, 30000)) {
      log_ += line + "\n";
      if (line.find("plain on 127.0.0.1:") != std::string::npos)
        plain_port_ = port_after(line, "plain on 127.0.0.1:");
      if (line.find("listening on 127.0.0.1:") != std::string::npos) {
        port_ = port_after(line, "listening on 127.0.0.1:");
        admin_port_ = port_after(line, "admin on 127.0.0.1:");
      }
      if (line.find("] ready: ") != std::string::npos) break;
    }
    std::ifstream key(data_dir_ + "/operator.key");
    std::string hex;
    key >> hex;
    ready_ = port_ > 0 && api::from_hex(hex, operator_.data(), operator_.size());
  }
  ~Server() { stop(); }
  pid_t pid() const { return child_.pid; }
  // SIGTERM; returns the exit code (0 = clean).
  int stop() {
    if (child_.pid <= 0) return exit_code_;
    ::kill(child_.pid, SIGTERM);
    std::string line;
    while (read_line(child_, line, 30000)) log_ += line + "\n";
    const int ws = finish(child_, false);
    child_.pid = -1;
    exit_code_ = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    return exit_code_;
  }
  // Reads the server's output until a line holds `needle` (returned), "" when the output ends
  // or `timeout_ms` passes first.
  std::string wait_for_line(const std::string& needle, int timeout_ms = 60000) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    std::string line;
    while (child_.pid > 0 && !child_.eof && std::chrono::steady_clock::now() < until) {
      if (!read_line(child_, line, 200)) continue;
      log_ += line + "\n";
      if (line.find(needle) != std::string::npos) return line;
    }
    return "";
  }
  // Waits for the server to exit by itself (its output ends); returns the exit code.
  int wait_exit() {
    if (child_.pid <= 0) return exit_code_;
    std::string line;
    while (!child_.eof) {
      if (read_line(child_, line, 1000)) log_ += line + "\n";
    }
    const int ws = finish(child_, false);
    child_.pid = -1;
    exit_code_ = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    return exit_code_;
  }
  // SIGKILL: a crash (nothing flushed by the server itself).
  void kill() {
    if (child_.pid <= 0) return;
    (void)finish(child_, true);
    child_.pid = -1;
  }
  bool ready() const { return ready_; }
  int port() const { return port_; }
  int admin_port() const { return admin_port_; }
  int plain_port() const { return plain_port_; }  // with TLS on: the plain listener
  const std::string& log() const { return log_; }
  std::string data_dir() const { return data_dir_; }

  HttpResult get(const std::string& target) { return http(port_, "GET", target); }

  // Signs and sends a user tx through REST sendTx (urlencoded, as the Python SDK does).
  HttpResult send(const Tx& tx, const api::SecretKey& sk,
                  const std::string& path = "/api/v1/sendTx") {
    const api::Signature sig = api::sign_tx(tx, 304, sk);
    const std::string info = api::tx_info_json(tx, &sig);
    return http(
        port_, "POST", path,
        "tx_type=" + std::to_string(static_cast<int>(tx.h.type)) + "&tx_info=" + urlencode(info));
  }
  // Operator deposit with a key registered at index `key_index`; returns the HTTP status.
  HttpResult deposit(AccountIndex to, Usdc amount, const api::PublicKey& pk,
                     uint8_t key_index = 0) {
    Tx tx;
    tx.h.type = TxType::kDeposit;
    tx.h.nonce = operator_nonce_++;
    tx.deposit.to_account = to;
    tx.deposit.amount = amount;
    tx.deposit.pubkey = pk;
    tx.deposit.api_key_index = key_index;
    const api::Signature sig = api::sign_tx(tx, 304, operator_);
    return http(admin_port_, "POST", "/api/v1/sendTx",
                "tx_type=1&tx_info=" + urlencode(api::tx_info_json(tx, &sig)));
  }
  // Any operator tx (SetIndexPrice, SetMarketStatus, FundingTick): signed with the operator key,
  // the next operator nonce, sent to the admin listener.
  HttpResult op(Tx tx) {
    tx.h.nonce = operator_nonce_++;
    const api::Signature sig = api::sign_tx(tx, 304, operator_);
    return http(admin_port_, "POST", "/api/v1/sendTx",
                "tx_type=" + std::to_string(static_cast<int>(tx.h.type)) +
                    "&tx_info=" + urlencode(api::tx_info_json(tx, &sig)));
  }
  void set_operator_nonce(int64_t n) { operator_nonce_ = n; }
  // Signs operator txs with `k` from now on (another node's key: a cluster's operator).
  void use_operator_key(const api::SecretKey& k) { operator_ = k; }
  const api::SecretKey& operator_key() const { return operator_; }

 private:
  TempDir dir_;
  std::string data_dir_;
  Child child_;
  std::string log_;
  int port_ = 0, admin_port_ = 0, plain_port_ = 0;
  bool ready_ = false;
  int exit_code_ = -1;
  api::SecretKey operator_{};
  int64_t operator_nonce_ = 2;  // two markets created at start (embedded defaults)
};

// The admin /metrics page as series -> value (comments skipped).
inline std::map<std::string, double> scrape(Server& s) {
  const HttpResult r = http(s.admin_port(), "GET", "/metrics");
  EXPECT_EQ(r.status, 200);
  std::map<std::string, double> out;
  std::istringstream in(r.body);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t sp = line.rfind(' ');
    out[line.substr(0, sp)] = std::stod(line.substr(sp + 1));
  }
  return out;
}

struct Trader {
  AccountIndex account;
  api::PublicKey pk;
  api::SecretKey sk;
  int64_t nonce = 0;
  explicit Trader(AccountIndex a) : account(a) { api::keygen(pk, sk); }

  Tx order(MarketId m, bool ask, Lots size, Ticks price,
           TimeInForce tif = TimeInForce::kGoodTillTime, uint64_t coi = 0) {
    Tx tx;
    tx.h.type = TxType::kCreateOrder;
    tx.h.account = account;
    tx.h.nonce = nonce++;
    tx.order.market = m;
    tx.order.client_order_index = coi;
    tx.order.base_amount = size;
    tx.order.price = price;
    tx.order.is_ask = ask;
    tx.order.type = OrderType::kLimit;
    tx.order.tif = tif;
    tx.order.order_expiry_ms = tif == TimeInForce::kIoc ? 0 : now_ms() + 3'600'000;
    return tx;
  }
  Tx cancel(MarketId m, uint64_t order_index) {
    Tx c;
    c.h.type = TxType::kCancelOrder;
    c.h.account = account;
    c.h.nonce = nonce++;
    c.cancel.market = m;
    c.cancel.index = order_index;
    return c;
  }
};

inline std::string ccxt_trading_conf(const std::string& scheme, int port, const Trader& a,
                                     const Trader& b) {
  const std::string src = TACHYON_SOURCE_DIR, hp = "127.0.0.1:" + std::to_string(port);
  const std::string ws = scheme == "https" ? "wss" : "ws";
  return "{\"http\":\"" + scheme + "://" + hp + "\",\"ws\":\"" + ws + "://" + hp +
         "/stream\",\"signer_js\":\"" + src +
         "/clients/ccxt/tachyon-signer.mjs\",\"signer_wasm\":\"" + src +
         "/clients/ccxt/tachyon-signer.wasm\",\"traders\":[{\"index\":" +
         std::to_string(a.account) + ",\"key\":\"" + api::to_hex(a.sk.data(), a.sk.size()) +
         "\"},{\"index\":" + std::to_string(b.account) + ",\"key\":\"" +
         api::to_hex(b.sk.data(), b.sk.size()) + "\"}],\"transfer_to\":5}";
}

// The WebSocket message that arms a cancel-on-disconnect of all `t`'s orders: a signed
// CancelAllOrders with a skip-nonce (1 << 40), valid whenever it fires.
inline std::string cancel_on_disconnect_message(const Trader& t) {
  Tx cancel;
  cancel.h.type = TxType::kCancelAllOrders;
  cancel.h.account = t.account;
  cancel.h.nonce = int64_t{1} << 40;
  cancel.h.flags = kTxFlagSkipNonce;
  cancel.cancel_all.market = kAllMarkets;
  const api::Signature sig = api::sign_tx(cancel, 304, t.sk);
  return R"({"type":"cancel_on_disconnect","id":"cod","data":{"tx_type":16,"tx_info":)" +
         api::tx_info_json(cancel, &sig) + "}}";
}

// Damages a file the way a bad disk would: one byte in the middle flipped.
inline void flip_middle_byte(const std::string& path) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good()) << path;
  f.seekg(0, std::ios::end);
  const auto size = static_cast<std::streamoff>(f.tellg());
  f.seekg(size / 2);
  const char old = static_cast<char>(f.get());
  f.seekp(size / 2);
  f.put(static_cast<char>(old ^ 0x5a));
}

// The embedded defaults with some `key = value` lines replaced, as a config file.
class ConfigFile {
 public:
  using Edits = std::vector<std::pair<std::string, std::string>>;
  explicit ConfigFile(const Edits& edits) {
    std::ifstream in(std::string(TACHYON_SOURCE_DIR) + "/configs/tachyon.toml");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string cfg = ss.str();
    for (const auto& [from, to] : edits) {
      const size_t p = cfg.find(from);
      EXPECT_NE(p, std::string::npos) << from;
      if (p != std::string::npos) cfg.replace(p, from.size(), to);
    }
    path_ = dir_.path() + "/tachyon.toml";
    std::ofstream(path_) << cfg;
  }
  std::vector<std::string> args() const { return {"--config", path_}; }

 private:
  TempDir dir_;
  std::string path_;
};

}  // namespace tachyon::testing
