#include "tachyon/core/crc32c.hpp"

#include <array>
#include <cstring>

namespace tachyon {

namespace {

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr auto kTable = make_table();

uint32_t crc_soft(const uint8_t* p, size_t n, uint32_t c) {
  while (n--) c = kTable[(c ^ *p++) & 0xff] ^ (c >> 8);
  return c;
}

__attribute__((target("sse4.2"))) uint32_t crc_hw(const uint8_t* p, size_t n, uint32_t c) {
  uint64_t c64 = c;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c64 = __builtin_ia32_crc32di(c64, v);
    p += 8;
    n -= 8;
  }
  c = static_cast<uint32_t>(c64);
  while (n--) c = __builtin_ia32_crc32qi(c, *p++);
  return c;
}

const bool kHasSse42 = __builtin_cpu_supports("sse4.2");

}  // namespace

uint32_t crc32c(const void* data, size_t n, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  crc = kHasSse42 ? crc_hw(p, n, crc) : crc_soft(p, n, crc);
  return ~crc;
}

}  // namespace tachyon
