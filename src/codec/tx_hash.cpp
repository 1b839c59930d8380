#include "tachyon/codec/tx_hash.hpp"

#include <sodium.h>

#include <cstring>
#include <span>

#include "tachyon/codec/codec.hpp"

namespace tachyon::codec {

namespace {
constexpr char kTxDomain[] = "tachyon-tx-v1";
}  // namespace

std::vector<uint8_t> canonical_tx_bytes(const Tx& tx, uint32_t chain_id) {
  Tx t = tx;
  t.h.seq = 0;
  t.h.block = 0;
  t.h.time_ns = 0;
  t.h.key_version = 0;
  std::vector<uint8_t> out(sizeof(kTxDomain) - 1 + 4 + kMaxRecordSize);
  std::memcpy(out.data(), kTxDomain, sizeof(kTxDomain) - 1);
  std::memcpy(out.data() + sizeof(kTxDomain) - 1, &chain_id, 4);
  const size_t head = sizeof(kTxDomain) - 1 + 4;
  const size_t n = encode(t, std::span<uint8_t>(out.data() + head, kMaxRecordSize));
  out.resize(head + n);
  return out;
}

TxHash tx_hash(const Tx& tx, uint32_t chain_id) {
  const auto bytes = canonical_tx_bytes(tx, chain_id);
  TxHash h;
  crypto_generichash(h.data(), h.size(), bytes.data(), bytes.size(), nullptr, 0);
  return h;
}

std::string to_hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    s[2 * i] = d[p[i] >> 4];
    s[2 * i + 1] = d[p[i] & 15];
  }
  return s;
}

}  // namespace tachyon::codec
