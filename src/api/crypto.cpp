#include "tachyon/api/crypto.hpp"

#include <sodium.h>

#include <array>
#include <charconv>
#include <cstring>

#include "tachyon/api/ed25519.hpp"
#include "tachyon/codec/tx_hash.hpp"

namespace tachyon::api {

void crypto_init() {
  static const int once = sodium_init();
  (void)once;
}

void keygen(PublicKey& pk, SecretKey& sk) { crypto_sign_keypair(pk.data(), sk.data()); }

PublicKey public_of(const SecretKey& sk) {
  PublicKey pk;
  crypto_sign_ed25519_sk_to_pk(pk.data(), sk.data());
  return pk;
}

Signature sign_tx(const Tx& tx, uint32_t chain_id, const SecretKey& sk) {
  const auto msg = codec::canonical_tx_bytes(tx, chain_id);
  Signature sig;
  crypto_sign_detached(sig.data(), nullptr, msg.data(), msg.size(), sk.data());
  return sig;
}

bool verify_tx(const Tx& tx, uint32_t chain_id, const Signature& sig, const PublicKey& pk) {
  const auto msg = codec::canonical_tx_bytes(tx, chain_id);
  return ed25519::verify(std::string_view(reinterpret_cast<const char*>(msg.data()), msg.size()),
                         sig, pk);
}

std::string tx_hash_hex(const Tx& tx, uint32_t chain_id) {
  const codec::TxHash h = codec::tx_hash(tx, chain_id);
  return to_hex(h.data(), h.size());
}

namespace {
std::string auth_message(uint32_t chain_id, int64_t deadline_s, AccountIndex account, uint8_t key) {
  return "tachyon-auth-v1:" + std::to_string(chain_id) + ":" + std::to_string(deadline_s) + ":" +
         std::to_string(account) + ":" + std::to_string(key);
}
template <typename T>
bool parse_num(std::string_view s, T& out) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}
}  // namespace

std::string make_auth_token(int64_t deadline_s, AccountIndex account, uint8_t api_key,
                            uint32_t chain_id, const SecretKey& sk) {
  const std::string msg = auth_message(chain_id, deadline_s, account, api_key);
  Signature sig;
  crypto_sign_detached(sig.data(), nullptr, reinterpret_cast<const uint8_t*>(msg.data()),
                       msg.size(), sk.data());
  return std::to_string(deadline_s) + ":" + std::to_string(account) + ":" +
         std::to_string(api_key) + ":" + to_hex(sig.data(), sig.size());
}

std::optional<AuthToken> parse_auth_token(std::string_view token, uint32_t chain_id) {
  std::string_view parts[4];
  for (int i = 0; i < 3; ++i) {
    const size_t c = token.find(':');
    if (c == std::string_view::npos) return std::nullopt;
    parts[i] = token.substr(0, c);
    token.remove_prefix(c + 1);
  }
  parts[3] = token;
  AuthToken t;
  unsigned key = 0;
  if (!parse_num(parts[0], t.deadline_s) || !parse_num(parts[1], t.account) ||
      !parse_num(parts[2], key) || key >= 255 || !from_hex(parts[3], t.sig.data(), t.sig.size()))
    return std::nullopt;
  t.api_key = static_cast<uint8_t>(key);
  t.message = auth_message(chain_id, t.deadline_s, t.account, t.api_key);
  return t;
}

bool verify_detached(std::string_view message, const Signature& sig, const PublicKey& pk) {
  return ed25519::verify(message, sig, pk);
}

// Hex and base64 of public data (hashes, keys, signatures), by table: variable time, unlike
// libsodium's, which the secret-key forms below keep.
namespace {
constexpr uint8_t kBad = 0xff;
struct DecodeTables {
  std::array<uint8_t, 256> hex{}, b64{};
  constexpr DecodeTables() {
    for (auto& v : hex) v = kBad;
    for (auto& v : b64) v = kBad;
    for (int i = 0; i < 10; ++i) hex['0' + i] = uint8_t(i);
    for (int i = 0; i < 6; ++i) hex['a' + i] = hex['A' + i] = uint8_t(10 + i);
    for (int i = 0; i < 26; ++i) b64['A' + i] = uint8_t(i), b64['a' + i] = uint8_t(26 + i);
    for (int i = 0; i < 10; ++i) b64['0' + i] = uint8_t(52 + i);
    b64['+'] = 62, b64['/'] = 63;
  }
};
constexpr DecodeTables kDecode;

std::string_view strip_0x(std::string_view hex) {
  if (hex.size() >= 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) hex.remove_prefix(2);
  return hex;
}
}  // namespace

std::string to_hex(const uint8_t* p, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(2 * n, '\0');
  for (size_t i = 0; i < n; ++i) s[2 * i] = kDigits[p[i] >> 4], s[2 * i + 1] = kDigits[p[i] & 15];
  return s;
}

bool from_hex(std::string_view hex, uint8_t* out, size_t n) {
  hex = strip_0x(hex);
  if (hex.size() != 2 * n) return false;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t hi = kDecode.hex[uint8_t(hex[2 * i])], lo = kDecode.hex[uint8_t(hex[2 * i + 1])];
    if (hi > 15 || lo > 15) return false;
    out[i] = uint8_t(hi << 4 | lo);
  }
  return true;
}

std::string secret_to_hex(const SecretKey& sk) {
  std::string s(2 * sk.size() + 1, '\0');
  sodium_bin2hex(s.data(), s.size(), sk.data(), sk.size());
  s.pop_back();
  return s;
}

bool secret_from_hex(std::string_view hex, SecretKey& sk) {
  hex = strip_0x(hex);
  if (hex.size() != 2 * sk.size()) return false;
  size_t got = 0;
  return sodium_hex2bin(sk.data(), sk.size(), hex.data(), hex.size(), nullptr, &got, nullptr) ==
             0 &&
         got == sk.size();
}

std::string to_base64(const uint8_t* p, size_t n) {
  const size_t len = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL);
  std::string s(len, '\0');
  sodium_bin2base64(s.data(), len, p, n, sodium_base64_VARIANT_ORIGINAL);
  s.resize(std::strlen(s.c_str()));
  return s;
}

// Standard alphabet, padded: exactly 4 * ceil(n / 3) characters, the pad '=' only at the end and
// the bits past the last byte zero (libsodium's sodium_base642bin refuses the same inputs).
bool from_base64(std::string_view b64, uint8_t* out, size_t n) {
  const size_t pad = (3 - n % 3) % 3, chars = 4 * ((n + 2) / 3);
  if (b64.size() != chars) return false;
  for (size_t i = chars - pad; i < chars; ++i) {
    if (b64[i] != '=') return false;
  }
  uint32_t acc = 0;
  unsigned bits = 0;
  size_t got = 0;
  for (size_t i = 0; i < chars - pad; ++i) {
    const uint8_t v = kDecode.b64[uint8_t(b64[i])];
    if (v == kBad) return false;
    acc = (acc << 6) | v, bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[got++] = uint8_t(acc >> bits);
      acc &= (1u << bits) - 1;
    }
  }
  return got == n && acc == 0;
}

}  // namespace tachyon::api
