#include "history_file.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <type_traits>

#include "binary_io.hpp"
#include "tachyon/api/crypto.hpp"
#include "tachyon/core/crc32c.hpp"
#include "tachyon/store/files.hpp"

namespace tachyon::app {

namespace {

constexpr char kMagic[8] = {'T', 'H', 'I', 'S', 'T', 'O', 'R', '1'};
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

// The record sizes of this build: a file of another layout is refused, not misread.
constexpr uint32_t kLayout[3] = {sizeof(pipe::TradeRecord), sizeof(pipe::Candle),
                                 sizeof(pipe::FundingRecord)};

}  // namespace

// Layout (little endian): magic, the three record sizes (u32 each), market count u32; per
// market: id u8, engine_ts_ns i64, then trades (a u32 count, the raw records, then each one's
// 40-byte taker tx hash, zero when unknown), each resolution's candles and the fundings (a u32
// count and raw records each); then CRC-32C u32 of everything before it.
Status save_history(const std::string& data_dir, pipe::ReadSide& rs,
                    const std::function<std::string(const pipe::TradeRecord&)>& hash_hex) {
  std::string out(kMagic, sizeof kMagic);
  for (uint32_t v : kLayout) put(out, v);
  std::string body;
  uint32_t markets = 0;
  for (int m = 0; m < kMaxMarkets; ++m) {
    if (!rs.market_exists(static_cast<MarketId>(m))) continue;
    auto reader = rs.history(static_cast<MarketId>(m)).reader();
    reader.read([&](const pipe::MarketHistory* h) {
      if (h == nullptr) return;
      ++markets;
      put<uint8_t>(body, h->id);
      put<int64_t>(body, h->engine_ts_ns);
      put_all(body, h->trades);
      for (const pipe::TradeRecord& t : h->trades) {
        TradeHash th{};
        (void)api::from_hex(hash_hex(t), th.data(), th.size());
        body.append(reinterpret_cast<const char*>(th.data()), th.size());
      }
      for (const auto& c : h->candles) put_all(body, c);
      put_all(body, h->fundings);
    });
  }
  put(out, markets);
  out += body;
  put<uint32_t>(out, crc32c(reinterpret_cast<const uint8_t*>(out.data()), out.size()));
  // all or nothing: a temp file, fsynced, renamed over the old one
  return store::write_file_atomic(path_of(data_dir), std::vector<uint8_t>(out.begin(), out.end()),
                                  {});
}

Status load_history(const std::string& data_dir, std::vector<pipe::MarketHistory>& out,
                    TradeHashes& hashes) {
  out.clear();
  hashes.clear();
  const std::string path = path_of(data_dir);
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status();  // none: nothing to restore
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto bad = [&](const std::string& why) {
    out.clear();
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
    for (pipe::TradeRecord& t : h.trades) {
      TradeHash th{};
      if (!get(in, th)) return bad("trade hashes");
      if (th != TradeHash{}) hashes.emplace_back(t.t.trade_id, th);
      t.origin_cookie = 0;  // a cookie of the run that saved it: meaningless now
      t.origin_worker = 0;
    }
    for (auto& c : h.candles) {
      if (!get_all(in, c, pipe::ReadSide::kHistoryCandles)) return bad("candles");
    }
    if (!get_all(in, h.fundings, pipe::kHistoryFundings)) return bad("fundings");
    out.push_back(std::move(h));
  }
  if (!in.empty()) return bad("trailing bytes");
  return Status();
}

}  // namespace tachyon::app
