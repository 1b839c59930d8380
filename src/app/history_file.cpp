#include "history_file.hpp"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <type_traits>

#include "binary_io.hpp"
#include "tachyon/api/crypto.hpp"
#include "tachyon/core/crc32c.hpp"
#include "tachyon/store/disk.hpp"

namespace tachyon::app {

namespace {

constexpr char kMagic[8] = {'T', 'H', 'I', 'S', 'T', 'O', 'R', '2'};
static_assert(std::is_trivially_copyable_v<pipe::TradeRecord>);
static_assert(std::is_trivially_copyable_v<pipe::Candle>);
static_assert(std::is_trivially_copyable_v<pipe::FundingRecord>);

template <typename T>
void put_all(std::string& out, const std::vector<T>& v) {
  put<uint32_t>(out, static_cast<uint32_t>(v.size()));
  if (!v.empty()) out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}
template <typename T>
bool get_all(std::string_view& in, std::vector<T>& v, size_t max) {
  uint32_t n = 0;
  if (!get(in, n) || n > max || in.size() < size_t{n} * sizeof(T)) return false;
  v.resize(n);
  if (n != 0) std::memcpy(v.data(), in.data(), size_t{n} * sizeof(T));  // empty: data() may be null
  in.remove_prefix(size_t{n} * sizeof(T));
  return true;
}

std::string path_of(const std::string& dir) { return dir + "/history.bin"; }

// Each trade's 40-byte taker tx hash, in the order of `trades` (zero when unknown).
void put_hashes(std::string& out, const std::vector<pipe::TradeRecord>& trades,
                const std::function<std::string(const pipe::TradeRecord&)>& hash_hex) {
  for (const pipe::TradeRecord& t : trades) {
    TradeHash th{};
    (void)api::from_hex(hash_hex(t), th.data(), th.size());
    out.append(reinterpret_cast<const char*>(th.data()), th.size());
  }
}
bool get_hashes(std::string_view& in, std::vector<pipe::TradeRecord>& trades, TradeHashes& hashes) {
  for (pipe::TradeRecord& t : trades) {
    TradeHash th{};
    if (!get(in, th)) return false;
    if (th != TradeHash{}) hashes.emplace_back(t.t.trade_id, th);
    t.origin_cookie = 0;  // a cookie of the run that saved it: meaningless now
    t.origin_worker = 0;
  }
  return true;
}

// The record sizes of this build: a file of another layout is refused, not misread.
constexpr uint32_t kLayout[3] = {sizeof(pipe::TradeRecord), sizeof(pipe::Candle),
                                 sizeof(pipe::FundingRecord)};

}  // namespace

// Layout (little endian): magic, the three record sizes (u32 each), market count u32; per
// market: id u8, engine_ts_ns i64, then trades (a u32 count, the raw records, then each one's
// 40-byte taker tx hash, zero when unknown), each resolution's candles and the fundings (a u32
// count and raw records each); then the accounts' trades: the distinct trades (a u32 count, the
// raw records, their 40-byte hashes), the account count u32, per account: index u64, trade count
// u64, and its trades as a u32 count of u32 positions in the distinct trades; then CRC-32C u32
// of everything before it.
Status save_history(const std::string& data_dir, pipe::ReadSide& rs,
                    const std::function<std::string(const pipe::TradeRecord&)>& hash_hex) {
  std::string out(kMagic, sizeof kMagic);
  for (uint32_t v : kLayout) put(out, v);
  std::string body;
  uint32_t markets = 0;
  std::array<uint64_t, kMaxMarkets> last_trade{};  // the newest trade each saved history has
  for (int m = 0; m < kMaxMarkets; ++m) {
    if (!rs.market_exists(static_cast<MarketId>(m))) continue;
    auto reader = rs.history(static_cast<MarketId>(m)).reader();
    reader.read([&](const pipe::MarketHistory* h) {
      if (h == nullptr) return;
      ++markets;
      put<uint8_t>(body, h->id);
      put<int64_t>(body, h->engine_ts_ns);
      put_all(body, h->trades);
      put_hashes(body, h->trades, hash_hex);
      for (const pipe::TradeRecord& t : h->trades)
        last_trade[m] = std::max(last_trade[m], t.t.trade_id);
      for (const auto& c : h->candles) {
        put_all(body, c);
        if (!c.empty()) last_trade[m] = std::max(last_trade[m], c.back().last_trade_id);
      }
      put_all(body, h->fundings);
    });
  }
  put(out, markets);
  out += body;
  // Accounts: a trade is in both its maker's and its taker's list, so it is written once.
  std::vector<pipe::TradeRecord> distinct;
  absl::flat_hash_map<uint64_t, uint32_t> position;  // trade id -> index in distinct
  std::string refs;
  uint32_t accounts = 0;
  auto reader = rs.accounts().reader();
  reader.read([&] {
    rs.accounts().for_each([&](const pipe::AccountView& v) {
      uint32_t n = 0;
      for (const pipe::TradeRecord& t : v.trades()) n += t.t.trade_id <= last_trade[t.t.market];
      if (n == 0) return;
      ++accounts;
      put<uint64_t>(refs, v.index);
      put<uint64_t>(refs, v.trade_count - (v.trades().size() - n));
      put<uint32_t>(refs, n);
      for (const pipe::TradeRecord& t : v.trades()) {
        if (t.t.trade_id > last_trade[t.t.market]) continue;
        auto [it, fresh] =
            position.try_emplace(t.t.trade_id, static_cast<uint32_t>(distinct.size()));
        if (fresh) distinct.push_back(t);
        put<uint32_t>(refs, it->second);
      }
    });
  });
  put_all(out, distinct);
  put_hashes(out, distinct, hash_hex);
  put(out, accounts);
  out += refs;
  put<uint32_t>(out, crc32c(reinterpret_cast<const uint8_t*>(out.data()), out.size()));
  // all or nothing: a temp file, synced, renamed over the old one
  return store::posix_disk().write_file_atomic(path_of(data_dir),
                                               std::vector<uint8_t>(out.begin(), out.end()), {});
}

Status load_history(const std::string& data_dir, std::vector<pipe::MarketHistory>& out,
                    std::vector<pipe::AccountTrades>& accounts, TradeHashes& hashes) {
  out.clear();
  accounts.clear();
  hashes.clear();
  const std::string path = path_of(data_dir);
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status();  // none: nothing to restore
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto bad = [&](const std::string& why) {
    out.clear();
    accounts.clear();
    hashes.clear();
    return Status::error(path + ": " + why);
  };
  if (all.size() < sizeof kMagic + 20 || std::memcmp(all.data(), kMagic, sizeof kMagic) != 0)
    return bad("not a history file");
  uint32_t crc = 0;
  std::memcpy(&crc, all.data() + all.size() - 4, 4);
  if (crc32c(reinterpret_cast<const uint8_t*>(all.data()), all.size() - 4) != crc)
    return bad("checksum mismatch");
  std::string_view in(all.data() + sizeof kMagic, all.size() - sizeof kMagic - 4);
  for (uint32_t want : kLayout) {
    uint32_t v = 0;
    if (!get(in, v) || v != want) return bad("written by a build with other record layouts");
  }
  uint32_t markets = 0;
  if (!get(in, markets) || markets > kMaxMarkets) return bad("market count");
  for (uint32_t i = 0; i < markets; ++i) {
    pipe::MarketHistory h;
    uint8_t id = 0;
    if (!get(in, id) || !get(in, h.engine_ts_ns) ||
        !get_all(in, h.trades, pipe::ReadSide::kHistoryTrades))
      return bad("market record");
    h.id = static_cast<MarketId>(id);
    if (!get_hashes(in, h.trades, hashes)) return bad("trade hashes");
    for (auto& c : h.candles) {
      if (!get_all(in, c, pipe::ReadSide::kHistoryCandles)) return bad("candles");
    }
    if (!get_all(in, h.fundings, pipe::kHistoryFundings)) return bad("fundings");
    out.push_back(std::move(h));
  }
  std::vector<pipe::TradeRecord> distinct;
  uint32_t n_accounts = 0;
  if (!get_all(in, distinct, in.size() / sizeof(pipe::TradeRecord)) ||
      !get_hashes(in, distinct, hashes) || !get(in, n_accounts) || n_accounts > in.size() / 20)
    return bad("account trades");
  accounts.resize(n_accounts);
  for (pipe::AccountTrades& at : accounts) {
    uint64_t index = 0;
    uint32_t n = 0;
    if (!get(in, index) || !get(in, at.trade_count) || !get(in, n) ||
        n > pipe::ReadSide::kAccountTrades)
      return bad("account trades");
    at.account = index;
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t pos = 0;
      if (!get(in, pos) || pos >= distinct.size()) return bad("account trades");
      at.trades.push_back(distinct[pos]);
    }
  }
  if (!in.empty()) return bad("trailing bytes");
  return Status();
}

}  // namespace tachyon::app
