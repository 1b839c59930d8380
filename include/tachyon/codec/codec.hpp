#pragma once
// Binary codecs for every Tx and every StateUpdate. A record is an 8-byte header (length of the
// whole record, type, version, flags) followed by a fixed-layout body. Decoding untrusted bytes
// never reads out of bounds and says precisely what was wrong.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "tachyon/engine/tx.hpp"
#include "tachyon/engine/update.hpp"

namespace tachyon::codec {

struct RecordHeader {
  uint32_t length;  // whole record, header included
  uint16_t type;    // kTxBase | tx type, or kUpdateBase | update type
  uint8_t version;
  uint8_t flags;
};
static_assert(sizeof(RecordHeader) == 8);
static_assert(offsetof(RecordHeader, type) == 4 && offsetof(RecordHeader, version) == 6);

inline constexpr uint16_t kTxBase = 0x0100;
inline constexpr uint16_t kUpdateBase = 0x0200;
inline constexpr uint8_t kVersion = 2;  // tx records (journals): 2: funding, breaker, liquidation
// State update records: 3: positions carry their margin mode and isolated margin.
inline constexpr uint8_t kUpdateVersion = 4;
inline constexpr size_t kMaxRecordSize = 256;  // every record fits; buffers are sized from this

enum class Error : uint8_t {
  kOk = 0,
  kTruncated,  // fewer bytes than the header or the declared length
  kBadLength,  // declared length does not match the type's layout
  kUnknownType,
  kBadVersion,
  kBufferTooSmall,  // encoder: output span too small
};
std::string_view error_message(Error e);

struct Decoded {
  Error error = Error::kOk;
  size_t consumed = 0;  // bytes of the record (its declared length) when ok
  bool ok() const { return error == Error::kOk; }
};

// Encoded size of a tx / update (header included); 0 for an unknown type.
size_t encoded_size(const Tx& tx);
size_t encoded_size(const StateUpdate& u);

// Write one record; returns bytes written, 0 if `out` is too small or the type unknown.
size_t encode(const Tx& tx, std::span<uint8_t> out);
size_t encode(const StateUpdate& u, std::span<uint8_t> out);

Decoded decode(std::span<const uint8_t> in, Tx& out);
Decoded decode(std::span<const uint8_t> in, StateUpdate& out);

// Peeks at the header of the next record (for framing); kTruncated if fewer than 8 bytes.
Decoded peek_header(std::span<const uint8_t> in, RecordHeader& h);

}  // namespace tachyon::codec
