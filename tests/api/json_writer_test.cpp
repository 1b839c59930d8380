// JsonWriter: separators, keys and fixed-point values exactly as clients read them. A value is
// formatted with exactly its decimals, so a price renders the same string in every frame.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "tachyon/api/json_writer.hpp"

namespace tachyon::testing {
namespace {

// The naive way: one digit at a time over the whole 128-bit value.
std::string naive_fixed(__int128 v, int decimals) {
  const bool neg = v < 0;
  unsigned __int128 u =
      neg ? static_cast<unsigned __int128>(-v) : static_cast<unsigned __int128>(v);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u != 0);
  while (static_cast<int>(digits.size()) <= decimals) digits.insert(digits.begin(), '0');
  if (decimals > 0) digits.insert(digits.end() - decimals, '.');
  if (neg) digits.insert(digits.begin(), '-');
  return digits;
}

TEST(JsonWriter, fixed_point_values_have_exactly_their_decimals) {
  std::mt19937_64 rng(5);
  const __int128 edges[] = {0,
                            1,
                            9,
                            10,
                            99,
                            100,
                            101,
                            999,
                            1000,
                            123456789,
                            static_cast<__int128>(UINT64_MAX),
                            static_cast<__int128>(UINT64_MAX) + 1,
                            static_cast<__int128>(INT64_MAX),
                            -1,
                            -10,
                            -101,
                            static_cast<__int128>(INT64_MIN)};
  int checked = 0;
  for (int decimals = 0; decimals <= 18; ++decimals) {
    std::vector<__int128> values(std::begin(edges), std::end(edges));
    for (int i = 0; i < 300; ++i) {
      const int bits = 1 + static_cast<int>(rng() % 100);  // small and large, past 64 bits
      __int128 v = (static_cast<__int128>(rng()) << 64 | rng()) &
                   ((static_cast<__int128>(1) << std::min(bits, 126)) - 1);
      values.push_back(rng() % 3 == 0 ? -v : v);
    }
    for (__int128 v : values) {
      std::string s, n;
      api::JsonWriter(s).dec(v, decimals);
      api::JsonWriter(n).dec_num(v, decimals);
      const std::string want = naive_fixed(v, decimals);
      ASSERT_EQ(n, want) << "decimals " << decimals;
      ASSERT_EQ(s.size(), want.size() + 2);
      ASSERT_EQ(s.front(), '"');
      ASSERT_EQ(s.back(), '"');
      ASSERT_EQ(s.substr(1, want.size()), want) << "decimals " << decimals;
      ++checked;
    }
  }
  EXPECT_GT(checked, 5000);
  std::string s;
  api::JsonWriter(s).dec(302450, 2);
  EXPECT_EQ(s, "\"3024.50\"");
  s.clear();
  api::JsonWriter(s).dec_num(-5, 4);
  EXPECT_EQ(s, "-0.0005");
}

TEST(JsonWriter, separators_go_between_members_and_elements_only) {
  std::string s;
  api::JsonWriter w(s);
  w.obj().kv_i("code", 200).key("asks").arr();
  for (int i = 0; i < 2; ++i)
    w.obj().key("price").dec(300000 + i, 2).key("size").dec_num(7, 1).kv_i("orders", i).end_obj();
  w.end_arr().key("empty").arr().end_arr().key("o").obj().end_obj();
  w.kv_s("s", "a\"b\\c\n").kv_b("t", true).key("n").null().key("u").u64(UINT64_MAX);
  w.key("a").arr().i64(-1).dec(5, 0).str("x").boolean(false).end_arr().end_obj();
  EXPECT_EQ(s,
            "{\"code\":200,\"asks\":[{\"price\":\"3000.00\",\"size\":0.7,\"orders\":0},"
            "{\"price\":\"3000.01\",\"size\":0.7,\"orders\":1}],\"empty\":[],\"o\":{},"
            "\"s\":\"a\\\"b\\\\c\\u000a\",\"t\":true,\"n\":null,\"u\":18446744073709551615,"
            "\"a\":[-1,\"5\",\"x\",false]}");
}

// The writer buffers tokens and hands them to the string when an object or array closes, when
// its buffer is full, at out() and at destruction: long documents, tokens longer than the
// buffer and reads in the middle must all see exactly what a direct concatenation gives.
TEST(JsonWriter, buffered_tokens_reach_the_string_in_order_whatever_their_length) {
  std::mt19937_64 rng(11);
  std::string s, want;
  {
    api::JsonWriter w(s);
    w.arr();
    want = "[";
    for (int i = 0; i < 3000; ++i) {
      if (i > 0) want += ',';
      switch (rng() % 5) {
        case 0: {
          const size_t n = rng() % 1500;  // up to ~3x the buffer
          std::string v(n, 'x');
          for (size_t k = 0; k < n; k += 97) v[k] = '"';
          w.str(v);
          std::string e;
          for (char c : v) e += c == '"' ? std::string("\\\"") : std::string(1, c);
          want += '"' + e + '"';
          break;
        }
        case 1: {
          const std::string k(1 + rng() % 700, 'k');  // keys longer than the buffer too
          w.obj().key(k).i64(i).end_obj();
          want += "{\"" + k + "\":" + std::to_string(i) + "}";
          break;
        }
        case 2:
          w.dec(i * 37, 3);
          want += '"' + naive_fixed(i * 37, 3) + '"';
          break;
        case 3: {
          const std::string raw = "[" + std::string(rng() % 900, '1') + "]";
          w.raw(raw);
          want += raw;
          break;
        }
        default:
          w.u64(static_cast<uint64_t>(i) << 40);
          want += std::to_string(static_cast<uint64_t>(i) << 40);
      }
      if (i % 500 == 499) {
        ASSERT_EQ(w.out(), want) << "read through out() after element " << i;
      }
    }
    w.i64(-7);  // no object closes after it: it reaches the string at destruction
    want += ",-7";
  }
  EXPECT_EQ(s, want);
}

}  // namespace
}  // namespace tachyon::testing
