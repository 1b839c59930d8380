// libFuzzer: the StateUpdate decoder on untrusted bytes.
#include <cstring>

#include "tachyon/codec/codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tachyon;
  StateUpdate u;
  const codec::Decoded d = codec::decode(std::span<const uint8_t>(data, size), u);
  if (!d.ok()) return 0;
  uint8_t again[codec::kMaxRecordSize];
  const size_t n = codec::encode(u, again);
  if (n != d.consumed) __builtin_trap();
  StateUpdate back;
  if (!codec::decode(std::span<const uint8_t>(again, n), back).ok()) __builtin_trap();
  if (std::memcmp(&back, &u, sizeof(StateUpdate)) != 0) __builtin_trap();
  return 0;
}
