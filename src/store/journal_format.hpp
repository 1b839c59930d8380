#pragma once
// The journal's on-disk layout (journal.hpp describes it), shared by the appender (journal.cpp)
// and recovery (journal_scan.cpp).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tachyon/core/crc32c.hpp"
#include "tachyon/store/disk.hpp"
#include "tachyon/store/journal.hpp"

namespace tachyon::store::journal_format {

inline constexpr char kMagic[8] = {'T', 'C', 'H', 'Y', 'J', 'R', 'N', 'L'};
inline constexpr uint32_t kRecords = 1;              // version 1: records only
inline constexpr uint32_t kGroups = 2;               // version 2: groups of records, preallocated
inline constexpr uint32_t kGroupMagic = 0x50524754;  // "TGRP"

inline std::string segment_name(uint64_t first_seq) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "journal-%020llu.wal",
                static_cast<unsigned long long>(first_seq));
  return buf;
}

inline std::vector<uint8_t> segment_header(uint64_t first_seq, uint32_t version) {
  std::vector<uint8_t> h(kSegmentHeaderSize);
  std::memcpy(h.data(), kMagic, 8);
  std::memcpy(h.data() + 8, &first_seq, 8);
  std::memcpy(h.data() + 16, &version, 4);
  const uint32_t crc = crc32c(h.data(), 20);
  std::memcpy(h.data() + 20, &crc, 4);
  return h;
}

// A group's bytes on disk: its header, its records, zeros up to a multiple of 8.
inline size_t group_span(uint32_t records_bytes) {
  return kGroupHeaderSize + (records_bytes + 7) / 8 * 8;
}

// The group header over `records` (the n bytes after it), into h.
inline void write_group_header(uint8_t* h, uint64_t first_seq, const uint8_t* records, size_t n) {
  const auto len = static_cast<uint32_t>(n);
  const uint32_t crc = crc32c(records, n);
  std::memcpy(h, &kGroupMagic, 4);
  std::memcpy(h + 4, &len, 4);
  std::memcpy(h + 8, &first_seq, 8);
  std::memcpy(h + 16, &crc, 4);
  const uint32_t hcrc = crc32c(h, 20);
  std::memcpy(h + 20, &hcrc, 4);
}

struct GroupHeader {
  uint32_t len = 0;  // of its records
  uint64_t first_seq = 0;
  uint32_t crc = 0;  // of its records
};

// A group header at `off` whose own checksum holds and whose records fit in the n bytes.
inline bool read_group_header(const uint8_t* data, size_t n, size_t off, GroupHeader& g) {
  if (n - off < kGroupHeaderSize) return false;
  const uint8_t* h = data + off;
  uint32_t magic = 0, hcrc = 0;
  std::memcpy(&magic, h, 4);
  std::memcpy(&hcrc, h + 20, 4);
  if (magic != kGroupMagic || hcrc != crc32c(h, 20)) return false;
  std::memcpy(&g.len, h + 4, 4);
  std::memcpy(&g.first_seq, h + 8, 8);
  std::memcpy(&g.crc, h + 16, 4);
  return g.len > 0 && g.len <= n - off - kGroupHeaderSize;
}

// A whole group at `off`: its header and its records' checksum hold.
inline bool whole_group_at(const uint8_t* data, size_t n, size_t off, GroupHeader& g) {
  return read_group_header(data, n, off, g) &&
         crc32c(data + off + kGroupHeaderSize, g.len) == g.crc;
}

inline bool all_zero(const uint8_t* p, size_t n) {
  return std::all_of(p, p + n, [](uint8_t b) { return b == 0; });
}

struct Segment {
  uint64_t first_seq;
  std::string path;
};

// The segments in `dir`, oldest first (a spare or any other file is not one).
inline std::vector<Segment> list_segments(Disk& disk, const std::string& dir) {
  std::vector<Segment> out;
  std::vector<std::string> names;
  if (!disk.list(dir, names).ok()) return out;
  for (const std::string& name : names) {
    unsigned long long seq = 0;
    if (name.size() == 32 && std::sscanf(name.c_str(), "journal-%20llu.wal", &seq) == 1)
      out.push_back({seq, dir + "/" + name});
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.first_seq < b.first_seq; });
  return out;
}

}  // namespace tachyon::store::journal_format
