#pragma once
// Ed25519 signature checks with per-key tables (docs/ARCHITECTURE.md "Signature checks").
//
// A check computes R' = [S]B - [h]A and compares its encoding with the signature's R, as
// libsodium does, and accepts exactly the signatures libsodium's crypto_sign_verify_detached
// accepts: S below the group order, R not of small order, the key canonical and not of small
// order (a key enters the tables only after libsodium has accepted a signature under it).
// The speed comes from tables: each scalar is split into eight 32-bit parts, B and A get the
// multiples 2^(32 j) of themselves precomputed (their odd multiples up to 15, for width-5 NAF
// digits), and one pass of 33 doublings replaces libsodium's 253. B's table is built once; A's
// when the key is first accepted, and kept in the calling thread's cache.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tachyon/api/crypto.hpp"

namespace tachyon::api::ed25519 {

// The check through the calling thread's key cache (built on first use; thread-safe because each
// thread has its own). A key missing from the cache is checked by libsodium and enters the cache
// when that check passes and its slot is free or the key missed there twice in a row.
bool verify(std::string_view message, const Signature& sig, const PublicKey& pk);

// libsodium's check, always (the reference: tests and tachyon-load's floor compare against it).
bool verify_reference(std::string_view message, const Signature& sig, const PublicKey& pk);

// Checks through a key's tables (hits), checks left to libsodium (misses), tables built, and
// tables held, over every thread since the process started (relaxed counters, for /metrics).
struct CacheStats {
  size_t keys = 0;
  uint64_t hits = 0, misses = 0, builds = 0;
};
CacheStats cache_totals();
inline constexpr size_t kCacheSlots = 4096;  // ~7.5 KB per key held (30 MB full), per thread

}  // namespace tachyon::api::ed25519
