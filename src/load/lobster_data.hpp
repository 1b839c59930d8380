#pragma once
// Reading LOBSTER sample files (gzipped CSV; format in tests/data/lobster/SOURCES.md). Used by
// tachyon-load (which replays real order flow into the server) and by the tests, which name it
// testing::lobster.
#include <zlib.h>

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tachyon/core/units.hpp"

namespace tachyon::load::lobster {

inline constexpr int64_t kEmptyPrice = 9'999'999'999;  // LOBSTER's dummy price of an empty level

struct Message {
  int64_t time_ns;  // since midnight
  int type;
  int64_t id;
  Lots size;
  Ticks price;
  int direction;  // side of the resting order: 1 buy, -1 sell
};

// One orderbook row: per level ask price, ask size, bid price, bid size.
using Row = std::vector<int64_t>;

struct Side {  // real levels of one side of a row, best first
  std::vector<std::pair<Ticks, Lots>> levels;
};

inline std::vector<std::string> read_gz_lines(const std::string& path) {
  std::vector<std::string> lines;
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return lines;
  char buf[4096];
  while (gzgets(f, buf, sizeof(buf)) != nullptr) {
    std::string_view s(buf);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
    if (!s.empty()) lines.emplace_back(s);
  }
  gzclose(f);
  return lines;
}

inline std::vector<std::string_view> split_csv(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == ',') {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

inline bool parse_i64(std::string_view s, int64_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

// "34200.017459617" -> ns, without floating point.
inline bool parse_time_ns(std::string_view s, int64_t& ns) {
  const size_t dot = s.find('.');
  int64_t sec = 0;
  if (!parse_i64(s.substr(0, dot), sec)) return false;
  int64_t frac = 0;
  if (dot != std::string_view::npos) {
    std::string_view f = s.substr(dot + 1);
    if (f.size() > 9) f = f.substr(0, 9);
    if (!f.empty() && !parse_i64(f, frac)) return false;
    for (size_t i = f.size(); i < 9; ++i) frac *= 10;
  }
  ns = sec * 1'000'000'000 + frac;
  return true;
}

// Empty with `error` set (when given) on a malformed line or an unreadable file.
inline std::vector<Message> load_messages(const std::string& path, std::string* error = nullptr) {
  std::vector<Message> out;
  const std::vector<std::string> lines = read_gz_lines(path);
  if (lines.empty() && error != nullptr) *error = "cannot read " + path + " (or it is empty)";
  for (const std::string& line : lines) {
    auto f = split_csv(line);
    Message m{};
    int64_t type = 0, dir = 0;
    if (f.size() != 6 || !parse_time_ns(f[0], m.time_ns) || !parse_i64(f[1], type) ||
        !parse_i64(f[2], m.id) || !parse_i64(f[3], m.size) || !parse_i64(f[4], m.price) ||
        !parse_i64(f[5], dir)) {
      if (error != nullptr) *error = "bad message line in " + path + ": " + line;
      return {};
    }
    m.type = static_cast<int>(type);
    m.direction = static_cast<int>(dir);
    out.push_back(m);
  }
  return out;
}

inline std::vector<Row> load_rows(const std::string& path, int levels,
                                  std::string* error = nullptr) {
  std::vector<Row> out;
  for (const std::string& line : read_gz_lines(path)) {
    auto f = split_csv(line);
    Row r(f.size());
    bool ok = f.size() == static_cast<size_t>(4 * levels);
    for (size_t i = 0; ok && i < f.size(); ++i) ok = parse_i64(f[i], r[i]);
    if (!ok) {
      if (error != nullptr) *error = "bad orderbook line in " + path + ": " + line;
      return {};
    }
    out.push_back(std::move(r));
  }
  return out;
}

inline Side row_side(const Row& r, bool is_ask) {
  Side s;
  const size_t off = is_ask ? 0 : 2;
  for (size_t i = 0; i + 3 < r.size(); i += 4) {
    const int64_t px = r[i + off];
    const int64_t sz = r[i + off + 1];
    if (px == kEmptyPrice || px == -kEmptyPrice || sz == 0) continue;
    s.levels.emplace_back(px, sz);
  }
  return s;
}

}  // namespace tachyon::load::lobster
