#include "tachyon/api/crypto.hpp"

#include <sodium.h>

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

std::string to_hex(const uint8_t* p, size_t n) {
  std::string s(2 * n + 1, '\0');
  sodium_bin2hex(s.data(), s.size(), p, n);
  s.pop_back();
  return s;
}

bool from_hex(std::string_view hex, uint8_t* out, size_t n) {
  if (hex.size() >= 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) hex.remove_prefix(2);
  if (hex.size() != 2 * n) return false;
  size_t got = 0;
  return sodium_hex2bin(out, n, hex.data(), hex.size(), nullptr, &got, nullptr) == 0 && got == n;
}

std::string to_base64(const uint8_t* p, size_t n) {
  const size_t len = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL);
  std::string s(len, '\0');
  sodium_bin2base64(s.data(), len, p, n, sodium_base64_VARIANT_ORIGINAL);
  s.resize(std::strlen(s.c_str()));
  return s;
}

bool from_base64(std::string_view b64, uint8_t* out, size_t n) {
  size_t got = 0;
  return sodium_base642bin(out, n, b64.data(), b64.size(), nullptr, &got, nullptr,
                           sodium_base64_VARIANT_ORIGINAL) == 0 &&
         got == n;
}

}  // namespace tachyon::api
