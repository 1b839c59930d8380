// libFuzzer: the table-driven Ed25519 check against libsodium's (the oracle); any disagreement
// traps. Byte 0 picks the case, the rest is `x`:
//   0: a valid signature by one of four keys over x[64..], XORed with x[0..64] (mostly zero
//      bytes: the fuzzer explores signatures near valid ones, on keys with tables);
//   1: key x[0..32], signature x[32..96], message x[96..] (keys never seen, R and S anything);
//   2: a valid signature with S replaced by x[0..32] (edge scalars: 0, L - 1, L, 2^256 - 1).
#include <sodium.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "tachyon/api/crypto.hpp"
#include "tachyon/api/ed25519.hpp"

namespace {

using namespace tachyon::api;

struct Keys {
  std::array<PublicKey, 4> pk;
  std::array<SecretKey, 4> sk;
  Keys() {
    crypto_init();
    for (size_t i = 0; i < pk.size(); ++i) keygen(pk[i], sk[i]);
  }
};

Signature sign(const SecretKey& sk, std::string_view m) {
  Signature s;
  crypto_sign_detached(s.data(), nullptr, reinterpret_cast<const uint8_t*>(m.data()), m.size(),
                       sk.data());
  return s;
}

void same_answer(std::string_view m, const Signature& s, const PublicKey& pk) {
  if (ed25519::verify(m, s, pk) != ed25519::verify_reference(m, s, pk)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Keys keys;
  if (size < 2) return 0;
  const uint8_t mode = data[0] % 3;
  const size_t k = data[1] % keys.pk.size();
  const uint8_t* x = data + 2;
  const size_t n = size - 2;
  if (mode == 1) {
    if (n < 96) return 0;
    PublicKey pk;
    Signature s;
    std::memcpy(pk.data(), x, 32);
    std::memcpy(s.data(), x + 32, 64);
    same_answer(std::string_view(reinterpret_cast<const char*>(x + 96), n - 96), s, pk);
    return 0;
  }
  const size_t head = mode == 0 ? 64 : 32;
  if (n < head) return 0;
  const std::string_view m(reinterpret_cast<const char*>(x + head), n - head);
  Signature s = sign(keys.sk[k], m);
  same_answer(m, s, keys.pk[k]);  // valid: the key gets its tables here
  if (mode == 0) {
    for (size_t i = 0; i < 64; ++i) s[i] ^= x[i];
  } else {
    std::memcpy(s.data() + 32, x, 32);
  }
  same_answer(m, s, keys.pk[k]);
  return 0;
}
