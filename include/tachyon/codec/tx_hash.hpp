#pragma once
// What names a tx and a block outside the process: the canonical bytes a client signs (domain
// tag, chain id, the codec record with the sequencer's fields zeroed), the 40-byte BLAKE2b tx
// hash over them, and the record of a block commitment (blocks.log, /api/v1/block).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tachyon/engine/tx.hpp"

namespace tachyon::codec {

using Hash32 = std::array<uint8_t, 32>;
using TxHash = std::array<uint8_t, 40>;

// The canonical bytes of a tx as a client signs it: domain tag, chain id, then the codec record
// with the sequencer's fields (seq, block, time, key version) zeroed.
std::vector<uint8_t> canonical_tx_bytes(const Tx& tx, uint32_t chain_id);
TxHash tx_hash(const Tx& tx, uint32_t chain_id);  // BLAKE2b-320 of canonical_tx_bytes
std::string to_hex(const uint8_t* p, size_t n);

struct BlockCommitment {
  uint64_t block = 0;
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  int64_t sealed_time_ns = 0;
  uint32_t tx_count = 0;
  Hash32 tx_root{};
  Hash32 state_root{};
  Hash32 commitment{};
};

}  // namespace tachyon::codec
