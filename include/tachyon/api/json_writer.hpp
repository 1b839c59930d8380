#pragma once
// A hand-written JSON writer that appends to a caller-owned std::string: reuse the string and
// steady-state writing allocates nothing. Numbers go through std::to_chars; fixed-point values
// (ticks, lots, micro-USDC) are written with exactly their decimals, so a price renders the same
// string in every frame (clients key book levels by it).
// Tokens are written in place into the writer's own 512-byte buffer, which goes to the string in
// one append when an object or array closes, when it is full, at out() and at destruction: one
// append per book level where it took one per token (each a call that checks the capacity and
// writes the terminator). So the string holds what was written once the last object or array
// closed; between two calls, read it through out(), never directly.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace tachyon::api {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;
  ~JsonWriter() { flush(); }

  JsonWriter& obj() {
    open('{');
    return *this;
  }
  // A closed object or array is handed to the string (see the header).
  JsonWriter& end_obj() {
    close('}');
    return *this;
  }
  JsonWriter& arr() {
    open('[');
    return *this;
  }
  JsonWriter& end_arr() {
    close(']');
    return *this;
  }
  JsonWriter& key(std::string_view k) {  // keys are our own literals: no escaping needed
    if (k.size() + 4 > kBuf) {
      sep();
      put('"');
      put_long(k);
      put('"');
      put(':');
    } else {
      char* p = room(k.size() + 4);
      if (!first_) *p++ = ',';
      *p++ = '"';
      std::memcpy(p, k.data(), k.size());
      p += k.size();
      *p++ = '"';
      *p++ = ':';
      n_ = static_cast<size_t>(p - buf_);
    }
    first_ = true;
    return *this;
  }
  JsonWriter& str(std::string_view s) {
    sep();
    put('"');
    escape(s);
    put('"');
    return *this;
  }
  JsonWriter& i64(int64_t v) {
    char* p = lead(room(24));
    n_ = static_cast<size_t>(std::to_chars(p, p + 20, v).ptr - buf_);
    return *this;
  }
  JsonWriter& u64(uint64_t v) {
    char* p = lead(room(24));
    n_ = static_cast<size_t>(std::to_chars(p, p + 20, v).ptr - buf_);
    return *this;
  }
  JsonWriter& boolean(bool b) {
    sep();
    put_long(b ? std::string_view("true") : std::string_view("false"));
    return *this;
  }
  JsonWriter& null() {
    sep();
    put_long("null");
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
    put_long(json);
    return *this;
  }
  // Shorthands for "key": value.
  template <typename V>
  JsonWriter& kv_i(std::string_view k, V v) {
    return key(k).i64(static_cast<int64_t>(v));
  }
  JsonWriter& kv_s(std::string_view k, std::string_view v) { return key(k).str(v); }
  JsonWriter& kv_b(std::string_view k, bool v) { return key(k).boolean(v); }

  // The string with everything written so far.
  std::string& out() {
    flush();
    return out_;
  }

 private:
  static constexpr size_t kBuf = 512;
  // Room for k more bytes at buf_ + n_ (k <= kBuf): what is buffered goes to the string first
  // when it would not fit.
  char* room(size_t k) {
    if (n_ + k > kBuf) flush();
    return buf_ + n_;
  }
  void flush() {
    if (n_ != 0) out_.append(buf_, n_);
    n_ = 0;
  }
  void put(char c) { *room(1) = c, ++n_; }
  void put_long(std::string_view s) {  // any length
    if (s.size() <= kBuf) {
      std::memcpy(room(s.size()), s.data(), s.size());
      n_ += s.size();
    } else {
      flush();
      out_.append(s);
    }
  }
  void sep() {
    if (!first_) put(',');
    first_ = false;
  }
  // The separator a value needs, written at p; returns where the value goes.
  char* lead(char* p) {
    if (!first_) *p++ = ',';
    first_ = false;
    return p;
  }
  void open(char c) {
    char* p = room(2);
    if (!first_) *p++ = ',';
    *p++ = c;
    n_ = static_cast<size_t>(p - buf_);
    first_ = true;
  }
  void close(char c) {
    put(c);
    first_ = false;
    flush();
  }
  static int digits64(uint64_t x) {
    int d = 1;
    for (; x >= 100; x /= 100) d += 2;
    return d + (x >= 10);
  }
  // Written in place, from the back: closing quote, digits, opening quote, separator (the length
  // is counted first, so nothing is formatted elsewhere and copied).
  void fixed(__int128 v, int decimals, bool quoted) {
    // an __int128 has at most 39 digits; every caller's decimals are below 20
    const bool neg = v < 0;
    unsigned __int128 u =
        neg ? static_cast<unsigned __int128>(-v) : static_cast<unsigned __int128>(v);
    char* const start = lead(room(96));
    if (u <= UINT64_MAX) {  // 64-bit division: __int128 division is a library call per digit
      uint64_t x = static_cast<uint64_t>(u);
      const int nd = std::max(digits64(x), decimals + 1);
      const size_t len = static_cast<size_t>(neg + nd + (decimals > 0) + 2 * quoted);
      char* p = start + len;
      n_ = static_cast<size_t>(p - buf_);
      if (quoted) *--p = '"';
      // Two digits per division (a table of the pairs): half the chain of dependent multiplies
      // that the conversion of a number is.
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
      if (neg) *--p = '-';
      if (quoted) *--p = '"';
      return;
    }
    char tmp[96];
    char* p = tmp + sizeof(tmp);
    if (quoted) *--p = '"';
    for (int i = 0; i < decimals; ++i) {
      *--p = static_cast<char>('0' + static_cast<int>(u % 10));
      u /= 10;
    }
    if (decimals > 0) *--p = '.';
    do {
      *--p = static_cast<char>('0' + static_cast<int>(u % 10));
      u /= 10;
    } while (u != 0);
    if (neg) *--p = '-';
    if (quoted) *--p = '"';
    const size_t len = static_cast<size_t>(tmp + sizeof(tmp) - p);
    std::memcpy(start, p, len);
    n_ = static_cast<size_t>(start + len - buf_);
  }
  void escape(std::string_view s) {
    static const char* hex = "0123456789abcdef";
    for (char ch : s) {
      const auto c = static_cast<unsigned char>(ch);
      if (c == '"' || c == '\\') {
        char* p = room(2);
        p[0] = '\\';
        p[1] = ch;
        n_ += 2;
      } else if (c < 0x20) {
        char* p = room(6);
        std::memcpy(p, "\\u00", 4);
        p[4] = hex[c >> 4];
        p[5] = hex[c & 15];
        n_ += 6;
      } else {
        put(ch);
      }
    }
  }
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  std::string& out_;
  bool first_ = true;
  size_t n_ = 0;  // bytes in buf_ not yet appended to out_
  char buf_[kBuf];
};

}  // namespace tachyon::api
