// ApiShared: what every api worker shares, behind its own mutexes: per-address and per-account
// token buckets and connection counts, the tx index by hash, and the hashes of txs in flight.
#include <algorithm>

#include "tachyon/api/worker.hpp"
#include "tachyon/codec/tx_hash.hpp"
#include "tachyon/core/clock.hpp"

namespace tachyon::api {

namespace {
int64_t now_ns() { return realtime_ns(); }
}  // namespace

bool ApiShared::ip_connect(const std::string& ip) {
  std::lock_guard lk(mu_);
  Bucket& s = ips_[ip];
  if (s.conns >= cfg.max_connections_per_ip || connections.load() >= cfg.max_connections)
    return false;
  ++s.conns;
  connections.fetch_add(1);
  return true;
}

void ApiShared::ip_disconnect(const std::string& ip) {
  std::lock_guard lk(mu_);
  auto it = ips_.find(ip);
  if (it != ips_.end() && it->second.conns > 0) {
    --it->second.conns;
    connections.fetch_sub(1);
  }
}

bool ApiShared::take(Bucket& b, double rate, double burst) {
  const int64_t now = now_ns();
  if (b.last_ns == 0) b.tokens = burst;
  b.tokens = std::min(burst, b.tokens + static_cast<double>(now - b.last_ns) * 1e-9 * rate);
  b.last_ns = now;
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

bool ApiShared::ip_allow(const std::string& ip) {
  std::lock_guard lk(mu_);
  return take(ips_[ip], cfg.ip_rate_per_s, cfg.ip_burst);
}

bool ApiShared::account_allow(AccountIndex a) {
  std::lock_guard lk(mu_);
  return take(accounts_[a], cfg.account_rate_per_s, cfg.account_burst);
}

void ApiShared::remember_tx(const std::string& hash, const TxRecord& r) {
  TxHashBytes h;
  if (!from_hex(hash, h.data(), h.size())) return;  // not a tx hash (tx_hash_hex makes them)
  std::lock_guard lk(tx_mu_);
  if (!txs_.insert_or_assign(h, r).second) return;
  tx_order_.push_back(h);
  while (tx_order_.size() > cfg.tx_index_capacity) {
    txs_.erase(tx_order_.front());
    tx_order_.pop_front();
  }
}

std::vector<std::pair<std::string, ApiShared::TxRecord>> ApiShared::tx_records() {
  std::lock_guard lk(tx_mu_);
  std::vector<std::pair<std::string, TxRecord>> out;
  out.reserve(tx_order_.size());
  for (const TxHashBytes& h : tx_order_) out.emplace_back(to_hex(h.data(), h.size()), txs_.at(h));
  return out;
}

std::optional<ApiShared::TxRecord> ApiShared::find_tx(const std::string& hash) {
  TxHashBytes h;
  if (!from_hex(hash, h.data(), h.size())) return std::nullopt;
  std::lock_guard lk(tx_mu_);
  auto it = txs_.find(h);
  if (it == txs_.end()) return std::nullopt;
  return it->second;
}

void ApiShared::record_tx_hash(uint32_t worker, uint64_t cookie, std::string_view hash_hex) {
  if (worker >= tx_hashes_.size()) return;
  BroadcastLog<TxHashBytes>& log = *tx_hashes_[worker];
  // Positions are cookies - 1: a worker hands out cookies 1, 2, 3... and records each one.
  if (log.head() + 1 != cookie) return;
  TxHashBytes h{};
  (void)from_hex(hash_hex, h.data(), h.size());
  log.append(h);
}

std::string ApiShared::tx_hash_of(uint32_t worker, uint32_t cookie_low) const {
  if (worker >= tx_hashes_.size() || cookie_low == 0) return "";
  const BroadcastLog<TxHashBytes>& log = *tx_hashes_[worker];
  const uint64_t head = log.head();  // the newest cookie recorded
  uint64_t cookie = (head & ~uint64_t{0xffffffff}) | cookie_low;
  if (cookie > head) {
    if (cookie < (uint64_t{1} << 32)) return "";
    cookie -= uint64_t{1} << 32;  // from the previous window of the low 32 bits
  }
  TxHashBytes h;
  if (cookie == 0 || !log.read(cookie - 1, h)) return "";
  return to_hex(h.data(), h.size());
}

std::string ApiShared::trade_tx_hash(const pipe::TradeRecord& r) const {
  if (r.origin_cookie != 0) return tx_hash_of(r.origin_worker, r.origin_cookie);
  const auto it = restored_trade_hashes.find(r.t.trade_id);
  return it == restored_trade_hashes.end() ? "" : to_hex(it->second.data(), it->second.size());
}

}  // namespace tachyon::api
