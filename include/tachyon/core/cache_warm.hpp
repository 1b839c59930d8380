#pragma once
// Reading memory into this core's cache ahead of use: an idle busy-polling thread keeps the data
// its next batch most likely touches warm (Pipeline::keep_warm, ReadSide::keep_warm).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tachyon {

// Every cache line of [p, p + bytes), read (prefetched) into this core's caches.
inline void warm_lines(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (size_t b = 0; b < bytes; b += 64) __builtin_prefetch(c + b, 0, 3);
}
template <typename T>
void warm_vector(const std::vector<T>& v) {
  warm_lines(v.data(), v.size() * sizeof(T));
}
// A small ring of the ids published last (-1: an empty slot), for an idle thread to warm: `id`
// goes in, over the oldest, unless it is there already.
template <size_t N>
void remember_recent(std::array<int16_t, N>& ring, uint32_t& pos, int16_t id) {
  if (std::find(ring.begin(), ring.end(), id) == ring.end()) ring[pos++ % N] = id;
}
// Keeps a value computed from memory reads, so that the reads are not dropped as unused.
inline void keep_value(uint64_t x) { asm volatile("" : : "r"(x)); }

}  // namespace tachyon
