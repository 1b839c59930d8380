// The table-driven Ed25519 check against libsodium's crypto_sign_verify_detached (the oracle):
// the same answer for valid signatures, every single-bit corruption, non-canonical S, R of small
// order, and keys with a torsion component (where libsodium accepts one signature in eight).
#include "tachyon/api/ed25519.hpp"

#include <gtest/gtest.h>
#include <sodium.h>

#include <random>
#include <string>
#include <vector>

namespace tachyon::api {
namespace {

struct Key {
  PublicKey pk;
  SecretKey sk;
};

Key new_key() {
  crypto_init();
  Key k;
  keygen(k.pk, k.sk);
  return k;
}

Signature sign(const Key& k, std::string_view m) {
  Signature s;
  crypto_sign_detached(s.data(), nullptr, reinterpret_cast<const uint8_t*>(m.data()), m.size(),
                       k.sk.data());
  return s;
}

std::string message(std::mt19937_64& rng) {
  static const size_t kLens[] = {0, 1, 63, 64, 111, 127, 128, 129, 1000};
  std::string m(kLens[rng() % std::size(kLens)], '\0');
  for (char& c : m) c = char(rng());
  return m;
}

// Checks one (message, signature, key) both ways and returns the answer they agree on.
bool agreed(std::string_view m, const Signature& s, const PublicKey& pk) {
  const bool want = ed25519::verify_reference(m, s, pk);
  EXPECT_EQ(ed25519::verify(m, s, pk), want);
  return want;
}

TEST(Ed25519, accepts_what_libsodium_accepts_once_the_key_has_tables) {
  std::mt19937_64 rng(7);
  const auto before = ed25519::cache_totals();
  for (int k = 0; k < 20; ++k) {
    const Key key = new_key();
    for (int i = 0; i < 10; ++i) {
      const std::string m = message(rng);
      ASSERT_TRUE(agreed(m, sign(key, m), key.pk)) << "key " << k << " message " << i;
    }
  }
  const auto after = ed25519::cache_totals();
  EXPECT_GE(after.builds - before.builds, 20u);
  // Each key's first check, and its second when its slot was held, go to libsodium; the rest
  // use the key's tables.
  EXPECT_GE(after.hits - before.hits, 20u * 8);
}

TEST(Ed25519, refuses_every_single_bit_corruption_of_signature_key_or_message) {
  std::mt19937_64 rng(11);
  const Key key = new_key();
  const std::string m = "tachyon ed25519 bit flips";
  const Signature s = sign(key, m);
  ASSERT_TRUE(agreed(m, s, key.pk));
  for (int bit = 0; bit < 512; ++bit) {
    Signature bad = s;
    bad[bit / 8] ^= uint8_t(1 << (bit % 8));
    EXPECT_FALSE(agreed(m, bad, key.pk)) << "signature bit " << bit;
  }
  for (size_t bit = 0; bit < m.size() * 8; ++bit) {
    std::string bad = m;
    bad[bit / 8] ^= char(1 << (bit % 8));
    EXPECT_FALSE(agreed(bad, s, key.pk)) << "message bit " << bit;
  }
  for (int bit = 0; bit < 256; ++bit) {  // another key: tables are never built for a refusal
    PublicKey bad = key.pk;
    bad[bit / 8] ^= uint8_t(1 << (bit % 8));
    EXPECT_FALSE(agreed(m, s, bad)) << "key bit " << bit;
  }
  for (int i = 0; i < 200; ++i) {  // random signatures
    Signature r;
    for (auto& b : r) b = uint8_t(rng());
    EXPECT_FALSE(agreed(m, r, key.pk));
  }
}

TEST(Ed25519, refuses_s_plus_the_group_order_and_s_at_or_above_it) {
  const Key key = new_key();
  const std::string m = "malleability";
  const Signature s = sign(key, m);
  ASSERT_TRUE(agreed(m, s, key.pk));
  static constexpr uint8_t kL[32] = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58,
                                     0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
                                     0,    0,    0,    0,    0,    0,    0,    0,
                                     0,    0,    0,    0,    0,    0,    0,    0x10};
  Signature plus_l = s;  // S + L: the same point, a second encoding
  unsigned carry = 0;
  for (int i = 0; i < 32; ++i) {
    const unsigned v = unsigned(s[32 + i]) + kL[i] + carry;
    plus_l[32 + i] = uint8_t(v), carry = v >> 8;
  }
  EXPECT_FALSE(agreed(m, plus_l, key.pk));
  Signature at_l = s;
  std::copy(std::begin(kL), std::end(kL), at_l.begin() + 32);
  EXPECT_FALSE(agreed(m, at_l, key.pk));
  Signature below_l = at_l;
  below_l[32] -= 1;  // L - 1: canonical, just not this signature's S
  EXPECT_FALSE(agreed(m, below_l, key.pk));
}

// The points of order 1, 2, 4 and 8 as R, with either sign bit.
TEST(Ed25519, refuses_r_of_small_order) {
  const Key key = new_key();
  const std::string m = "small order";
  ASSERT_TRUE(agreed(m, sign(key, m), key.pk));
  const char* ys[] = {"0000000000000000000000000000000000000000000000000000000000000000",
                      "0100000000000000000000000000000000000000000000000000000000000000",
                      "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
                      "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
                      "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"};
  for (const char* y : ys) {
    uint8_t r[32];
    ASSERT_TRUE(from_hex(y, r, 32));
    // A point of small order: 8 times it is the identity (libsodium's scalar mult refuses small
    // order results, so the check is that it refuses).
    uint8_t eight[32] = {8}, out[32];
    EXPECT_NE(crypto_scalarmult_ed25519_noclamp(out, eight, r), 0) << y;
    for (int sign_bit = 0; sign_bit < 2; ++sign_bit) {
      Signature s = sign(key, m);
      std::copy(r, r + 32, s.begin());
      s[31] = uint8_t((s[31] & 0x7f) | (sign_bit << 7));
      EXPECT_FALSE(agreed(m, s, key.pk)) << y;
    }
  }
}

// A key A + T (T of order 8) and signatures made with A's scalar: libsodium's check (no cofactor)
// passes exactly when [h]T is the identity, i.e. h is a multiple of 8.
TEST(Ed25519, agrees_with_libsodium_on_keys_with_a_torsion_component) {
  crypto_init();
  uint8_t a[32], a_pub[32], t8[32], pk[32];
  crypto_core_ed25519_scalar_random(a);
  ASSERT_EQ(crypto_scalarmult_ed25519_base_noclamp(a_pub, a), 0);
  ASSERT_TRUE(from_hex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", t8, 32));
  ASSERT_EQ(crypto_core_ed25519_add(pk, a_pub, t8), 0);
  PublicKey key;
  std::copy(pk, pk + 32, key.begin());
  int accepted = 0, refused = 0;
  for (int i = 0; i < 400; ++i) {
    const std::string m = "torsion " + std::to_string(i);
    uint8_t r[32], big_r[32], digest[64], h[32], ha[32], s[32];
    crypto_core_ed25519_scalar_random(r);
    ASSERT_EQ(crypto_scalarmult_ed25519_base_noclamp(big_r, r), 0);
    crypto_hash_sha512_state st;
    crypto_hash_sha512_init(&st);
    crypto_hash_sha512_update(&st, big_r, 32);
    crypto_hash_sha512_update(&st, pk, 32);
    crypto_hash_sha512_update(&st, reinterpret_cast<const uint8_t*>(m.data()), m.size());
    crypto_hash_sha512_final(&st, digest);
    crypto_core_ed25519_scalar_reduce(h, digest);
    crypto_core_ed25519_scalar_mul(ha, h, a);
    crypto_core_ed25519_scalar_add(s, r, ha);
    Signature sig;
    std::copy(big_r, big_r + 32, sig.begin());
    std::copy(s, s + 32, sig.begin() + 32);
    (agreed(m, sig, key) ? accepted : refused)++;
  }
  EXPECT_GT(accepted, 10);  // ~50 expected: both answers were exercised on the tables
  EXPECT_GT(refused, 300);
}

// Keys that share a cache slot take turns: each answer stays right.
TEST(Ed25519, keys_sharing_a_cache_slot_stay_correct) {
  std::vector<Key> keys;
  std::vector<uint64_t> slots;
  int first = -1, second = -1;
  while (second < 0) {
    keys.push_back(new_key());
    uint64_t w;
    std::memcpy(&w, keys.back().pk.data(), 8);
    for (size_t i = 0; i < slots.size() && second < 0; ++i) {
      if (slots[i] == w % ed25519::kCacheSlots) first = int(i), second = int(keys.size() - 1);
    }
    slots.push_back(w % ed25519::kCacheSlots);
  }
  std::mt19937_64 rng(3);
  for (int i = 0; i < 40; ++i) {
    const Key& k = keys[size_t((i / 3) % 2 ? first : second)];
    const std::string m = message(rng);
    Signature s = sign(k, m);
    ASSERT_TRUE(agreed(m, s, k.pk)) << i;
    s[40] ^= 1;
    ASSERT_FALSE(agreed(m, s, k.pk)) << i;
  }
}

}  // namespace
}  // namespace tachyon::api
