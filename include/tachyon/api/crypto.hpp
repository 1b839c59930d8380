#pragma once
// Ed25519 (libsodium) over the canonical tx bytes (domain tag + chain id + codec record, with
// seq/block/time/key_version zeroed: store/commit.hpp), tx hashes, auth tokens, hex and base64.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tachyon/engine/tx.hpp"

namespace tachyon::api {

using PublicKey = std::array<uint8_t, 32>;
using SecretKey = std::array<uint8_t, 64>;  // libsodium's seed || public key
using Signature = std::array<uint8_t, 64>;

void crypto_init();  // idempotent; call before any other function here
void keygen(PublicKey& pk, SecretKey& sk);
PublicKey public_of(const SecretKey& sk);

Signature sign_tx(const Tx& tx, uint32_t chain_id, const SecretKey& sk);
bool verify_tx(const Tx& tx, uint32_t chain_id, const Signature& sig, const PublicKey& pk);
std::string tx_hash_hex(const Tx& tx, uint32_t chain_id);

// Auth token for private channels and reads: "<deadline_s>:<account>:<api_key>:<sig_hex>", the
// signature over "tachyon-auth-v1:<chain_id>:<deadline_s>:<account>:<api_key>"; lifetime <= 8 h.
std::string make_auth_token(int64_t deadline_s, AccountIndex account, uint8_t api_key,
                            uint32_t chain_id, const SecretKey& sk);
struct AuthToken {
  int64_t deadline_s = 0;
  AccountIndex account = 0;
  uint8_t api_key = 0;
  Signature sig{};
  std::string message;  // what was signed
};
// Parses the token's shape (not the signature): nullopt when malformed.
std::optional<AuthToken> parse_auth_token(std::string_view token, uint32_t chain_id);
inline constexpr int64_t kMaxTokenLifetimeS = 8 * 3600;
bool verify_detached(std::string_view message, const Signature& sig, const PublicKey& pk);

// Public data (hashes, keys, signatures): variable time. from_hex takes either case and a "0x".
std::string to_hex(const uint8_t* p, size_t n);
bool from_hex(std::string_view hex, uint8_t* out, size_t n);  // exactly n bytes
std::string to_base64(const uint8_t* p, size_t n);
bool from_base64(std::string_view b64, uint8_t* out, size_t n);  // exactly n bytes, padded
// Secret keys (key files): libsodium's constant-time hex.
std::string secret_to_hex(const SecretKey& sk);
bool secret_from_hex(std::string_view hex, SecretKey& sk);

}  // namespace tachyon::api
