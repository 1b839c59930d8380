// Hex and base64 of public data against libsodium's own codecs (the oracle): the same text out,
// and the same verdict and bytes back for valid text and every single-character change of it.
#include <gtest/gtest.h>
#include <sodium.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "tachyon/api/crypto.hpp"

namespace tachyon::api {
namespace {

std::vector<uint8_t> random_bytes(std::mt19937_64& rng, size_t n) {
  std::vector<uint8_t> b(n);
  for (auto& x : b) x = uint8_t(rng());
  return b;
}

std::string sodium_hex(const std::vector<uint8_t>& b) {
  std::string s(2 * b.size() + 1, '\0');
  const uint8_t none = 0;
  sodium_bin2hex(s.data(), s.size(), b.empty() ? &none : b.data(), b.size());
  s.pop_back();
  return s;
}

bool sodium_unhex(std::string_view hex, std::vector<uint8_t>& out) {
  size_t got = 0;
  return sodium_hex2bin(out.data(), out.size(), hex.data(), hex.size(), nullptr, &got, nullptr) ==
             0 &&
         got == out.size() && hex.size() == 2 * out.size();
}

bool sodium_unbase64(std::string_view b64, std::vector<uint8_t>& out) {
  uint8_t room[128];  // (libsodium takes no null buffer, as an empty vector's data() may be)
  size_t got = 0;
  if (out.size() > sizeof room) return false;
  const bool ok = sodium_base642bin(room, out.size(), b64.data(), b64.size(), nullptr, &got,
                                    nullptr, sodium_base64_VARIANT_ORIGINAL) == 0 &&
                  got == out.size();
  std::copy(room, room + got, out.begin());
  return ok;
}

// Every printable character, and a few that are not, at each position of `text`. Bytes above
// 127 are never digits here (libsodium's base64 decoder takes some of them as digits).
template <typename Ours, typename Theirs>
void every_change_agrees(const std::string& text, size_t n, Ours ours, Theirs theirs) {
  for (size_t at = 0; at < text.size(); ++at) {
    for (int c = 0; c < 256; c += (c < 32 || c > 126) ? 37 : 1) {
      std::string t = text;
      t[at] = char(c);
      std::vector<uint8_t> a(n), b(n);
      const bool want = c < 128 && theirs(t, b);
      ASSERT_EQ(ours(t, a), want) << "'" << t << "'";
      if (want) {
        EXPECT_EQ(a, b) << t;
      }
    }
  }
}

TEST(Encoding, hex_matches_libsodium_both_ways_and_refuses_what_it_refuses) {
  std::mt19937_64 rng(5);
  for (size_t n : {0, 1, 20, 32, 40, 64}) {
    const auto bytes = random_bytes(rng, n);
    const std::string hex = to_hex(bytes.data(), n);
    ASSERT_EQ(hex, sodium_hex(bytes));
    std::string upper = hex;
    for (char& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
    for (const std::string& t : {hex, upper, "0x" + hex, "0X" + upper}) {
      std::vector<uint8_t> back(n);
      ASSERT_TRUE(from_hex(t, back.data(), n)) << t;
      EXPECT_EQ(back, bytes);
    }
    std::vector<uint8_t> out(n + 1);
    EXPECT_FALSE(from_hex(hex, out.data(), n + 1)) << "short";
    if (n > 0) {
      EXPECT_FALSE(from_hex(hex.substr(1), out.data(), n)) << "odd length";
    }
  }
  const auto bytes = random_bytes(rng, 20);
  every_change_agrees(
      to_hex(bytes.data(), bytes.size()), bytes.size(),
      [](const std::string& t, std::vector<uint8_t>& o) { return from_hex(t, o.data(), o.size()); },
      [](const std::string& t, std::vector<uint8_t>& o) { return sodium_unhex(t, o); });
}

TEST(Encoding, base64_matches_libsodium_for_every_length_and_single_character_change) {
  std::mt19937_64 rng(9);
  for (size_t n = 0; n <= 70; ++n) {
    const auto bytes = random_bytes(rng, n);
    const std::string b64 = to_base64(bytes.data(), n);
    std::vector<uint8_t> ours(n), theirs(n);
    ASSERT_TRUE(from_base64(b64, ours.data(), n)) << n << " " << b64;
    ASSERT_TRUE(sodium_unbase64(b64, theirs));
    EXPECT_EQ(ours, bytes);
    std::vector<uint8_t> other(n + 1);
    EXPECT_FALSE(from_base64(b64, other.data(), n + 1)) << "a length of its own";
  }
  for (size_t n : {1, 2, 3, 32, 64}) {  // 64: a signature; the padding and trailing bits matter
    const auto bytes = random_bytes(rng, n);
    every_change_agrees(
        to_base64(bytes.data(), n), n,
        [](const std::string& t, std::vector<uint8_t>& o) {
          return from_base64(t, o.data(), o.size());
        },
        [](const std::string& t, std::vector<uint8_t>& o) { return sodium_unbase64(t, o); });
  }
}

TEST(Encoding, secret_keys_round_trip_through_their_own_hex) {
  crypto_init();
  PublicKey pk;
  SecretKey sk, back;
  keygen(pk, sk);
  const std::string hex = secret_to_hex(sk);
  EXPECT_EQ(hex, to_hex(sk.data(), sk.size()));
  ASSERT_TRUE(secret_from_hex(hex, back));
  EXPECT_EQ(back, sk);
  EXPECT_FALSE(secret_from_hex(hex.substr(2), back));
  EXPECT_FALSE(secret_from_hex(hex.substr(0, 127) + "g", back));
}

}  // namespace
}  // namespace tachyon::api
