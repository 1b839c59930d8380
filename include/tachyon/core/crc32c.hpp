#pragma once
// CRC-32C (Castagnoli), the checksum of every journal record and snapshot. Hardware (SSE4.2)
// when the CPU has it, a table otherwise; both give the same value.
#include <cstddef>
#include <cstdint>

namespace tachyon {

uint32_t crc32c(const void* data, size_t n, uint32_t crc = 0);

}  // namespace tachyon
