// libFuzzer: the Tx decoder on untrusted bytes. Never reads out of bounds; whatever decodes
// re-encodes to the same bytes (padding aside) and executes on an engine without breaking it.
#include <cstring>

#include "tachyon/codec/codec.hpp"
#include "tachyon/engine/engine.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tachyon;
  Tx tx;
  const codec::Decoded d = codec::decode(std::span<const uint8_t>(data, size), tx);
  if (!d.ok()) return 0;
  uint8_t again[codec::kMaxRecordSize];
  const size_t n = codec::encode(tx, again);
  if (n != d.consumed) __builtin_trap();
  Tx back;
  if (!codec::decode(std::span<const uint8_t>(again, n), back).ok()) __builtin_trap();
  if (std::memcmp(&back, &tx, sizeof(Tx)) != 0) __builtin_trap();
  static Engine* engine = new Engine(EngineConfig{.max_orders = 1024, .expected_accounts = 16});
  NullSink sink;
  engine->execute(tx, sink);
  return 0;
}
