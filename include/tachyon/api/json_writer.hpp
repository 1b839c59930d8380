#pragma once
// A hand-written JSON writer that appends to a caller-owned std::string: reuse the string and
// steady-state writing allocates nothing. Numbers go through std::to_chars; fixed-point values
// (ticks, lots, micro-USDC) are written with exactly their decimals, so a price renders the same
// string in every frame (clients key book levels by it). Each token (with its separator and
// quotes) is formatted in a small buffer and appended once, where it took up to four appends
// (each a library call that checks the capacity and writes the terminator).
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace tachyon::api {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& obj() {
    open('{');
    return *this;
  }
  JsonWriter& end_obj() {
    out_ += '}';
    first_ = false;
    return *this;
  }
  JsonWriter& arr() {
    open('[');
    return *this;
  }
  JsonWriter& end_arr() {
    out_ += ']';
    first_ = false;
    return *this;
  }
  JsonWriter& key(std::string_view k) {  // keys are our own literals: no escaping needed
    char buf[64];
    if (k.size() + 4 > sizeof(buf)) {
      sep();
      out_ += '"';
      out_ += k;
      out_ += "\":";
    } else {
      size_t n = 0;
      if (!first_) buf[n++] = ',';
      buf[n++] = '"';
      std::memcpy(buf + n, k.data(), k.size());
      n += k.size();
      buf[n++] = '"';
      buf[n++] = ':';
      out_.append(buf, n);
    }
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
    char buf[24];
    char* p = lead(buf);
    auto r = std::to_chars(p, buf + sizeof(buf), v);
    out_.append(buf, static_cast<size_t>(r.ptr - buf));
    return *this;
  }
  JsonWriter& u64(uint64_t v) {
    char buf[24];
    char* p = lead(buf);
    auto r = std::to_chars(p, buf + sizeof(buf), v);
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
    fixed(v, decimals, true);
    return *this;
  }
  // The same as a JSON number (fields clients read as numbers).
  JsonWriter& dec_num(__int128 v, int decimals) {
    fixed(v, decimals, false);
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
  // The separator a value needs, written at the start of buf; returns where the value goes.
  char* lead(char* buf) {
    char* p = buf;
    if (!first_) *p++ = ',';
    first_ = false;
    return p;
  }
  void open(char c) {
    const char buf[2] = {',', c};
    out_.append(first_ ? buf + 1 : buf, first_ ? 1 : 2);
    first_ = true;
  }
  // Written from the back of one buffer: closing quote, digits, opening quote, separator.
  void fixed(__int128 v, int decimals, bool quoted) {
    char buf[96];  // an __int128 has at most 39 digits; every caller's decimals are below 20
    char* p = buf + sizeof(buf);
    if (quoted) *--p = '"';
    const bool neg = v < 0;
    unsigned __int128 u =
        neg ? static_cast<unsigned __int128>(-v) : static_cast<unsigned __int128>(v);
    if (u <= UINT64_MAX) {  // 64-bit division: __int128 division is a library call per digit
      // Two digits per division (a table of the pairs): half the chain of dependent multiplies
      // that the conversion of a number is.
      uint64_t x = static_cast<uint64_t>(u);
      int d = decimals;
      for (; d >= 2; d -= 2) {
        p -= 2;
        std::memcpy(p, kPairs + 2 * (x % 100), 2);
        x /= 100;
      }
      if (d == 1) {
        *--p = static_cast<char>('0' + x % 10);
        x /= 10;
      }
      if (decimals > 0) *--p = '.';
      for (; x >= 100; x /= 100) {
        p -= 2;
        std::memcpy(p, kPairs + 2 * (x % 100), 2);
      }
      if (x >= 10) {
        p -= 2;
        std::memcpy(p, kPairs + 2 * x, 2);
      } else {
        *--p = static_cast<char>('0' + x);
      }
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
    if (quoted) *--p = '"';
    if (!first_) *--p = ',';
    first_ = false;
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
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  std::string& out_;
  bool first_ = true;
};

}  // namespace tachyon::api
