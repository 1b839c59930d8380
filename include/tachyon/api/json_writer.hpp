#pragma once
// A hand-written JSON writer that appends to a caller-owned std::string: reuse the string and
// steady-state writing allocates nothing. Numbers go through std::to_chars; fixed-point values
// (ticks, lots, micro-USDC) are written with exactly their decimals, so a price renders the same
// string in every frame (clients key book levels by it).
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace tachyon::api {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& obj() {
    sep();
    out_ += '{';
    first_ = true;
    return *this;
  }
  JsonWriter& end_obj() {
    out_ += '}';
    first_ = false;
    return *this;
  }
  JsonWriter& arr() {
    sep();
    out_ += '[';
    first_ = true;
    return *this;
  }
  JsonWriter& end_arr() {
    out_ += ']';
    first_ = false;
    return *this;
  }
  JsonWriter& key(std::string_view k) {
    sep();
    out_ += '"';
    out_ += k;  // keys are our own literals: no escaping needed
    out_ += "\":";
    first_ = true;
    return *this;
  }
  JsonWriter& str(std::string_view s) {
    sep();
    out_ += '"';
    escape(s);
    out_ += '"';
    return *this;
  }
  JsonWriter& i64(int64_t v) {
    sep();
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out_.append(buf, static_cast<size_t>(r.ptr - buf));
    return *this;
  }
  JsonWriter& u64(uint64_t v) {
    sep();
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out_.append(buf, static_cast<size_t>(r.ptr - buf));
    return *this;
  }
  JsonWriter& boolean(bool b) {
    sep();
    out_ += b ? "true" : "false";
    return *this;
  }
  JsonWriter& null() {
    sep();
    out_ += "null";
    return *this;
  }
  // A fixed-point value as a JSON string: "3024.50" for (302450, 2).
  JsonWriter& dec(__int128 v, int decimals) {
    sep();
    out_ += '"';
    fixed(v, decimals);
    out_ += '"';
    return *this;
  }
  // The same as a JSON number (fields clients read as numbers).
  JsonWriter& dec_num(__int128 v, int decimals) {
    sep();
    fixed(v, decimals);
    return *this;
  }
  // Pre-encoded JSON.
  JsonWriter& raw(std::string_view json) {
    sep();
    out_ += json;
    return *this;
  }
  // Shorthands for "key": value.
  template <typename V>
  JsonWriter& kv_i(std::string_view k, V v) {
    return key(k).i64(static_cast<int64_t>(v));
  }
  JsonWriter& kv_s(std::string_view k, std::string_view v) { return key(k).str(v); }
  JsonWriter& kv_b(std::string_view k, bool v) { return key(k).boolean(v); }

  std::string& out() { return out_; }

 private:
  void sep() {
    if (!first_) out_ += ',';
    first_ = false;
  }
  void fixed(__int128 v, int decimals) {
    char buf[48];
    char* p = buf + sizeof(buf);
    const bool neg = v < 0;
    unsigned __int128 u =
        neg ? static_cast<unsigned __int128>(-v) : static_cast<unsigned __int128>(v);
    if (u <= UINT64_MAX) {  // 64-bit division: __int128 division is a library call per digit
      uint64_t x = static_cast<uint64_t>(u);
      for (int i = 0; i < decimals; ++i) {
        *--p = static_cast<char>('0' + x % 10);
        x /= 10;
      }
      if (decimals > 0) *--p = '.';
      do {
        *--p = static_cast<char>('0' + x % 10);
        x /= 10;
      } while (x != 0);
    } else {
      for (int i = 0; i < decimals; ++i) {
        *--p = static_cast<char>('0' + static_cast<int>(u % 10));
        u /= 10;
      }
      if (decimals > 0) *--p = '.';
      do {
        *--p = static_cast<char>('0' + static_cast<int>(u % 10));
        u /= 10;
      } while (u != 0);
    }
    if (neg) *--p = '-';
    out_.append(p, static_cast<size_t>(buf + sizeof(buf) - p));
  }
  void escape(std::string_view s) {
    static const char* hex = "0123456789abcdef";
    for (char ch : s) {
      const auto c = static_cast<unsigned char>(ch);
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += ch;
      } else if (c < 0x20) {
        out_ += "\\u00";
        out_ += hex[c >> 4];
        out_ += hex[c & 15];
      } else {
        out_ += ch;
      }
    }
  }
  std::string& out_;
  bool first_ = true;
};

}  // namespace tachyon::api
