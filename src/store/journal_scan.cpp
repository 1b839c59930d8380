// Reading the journal back: recovery's replay, torn tails told from corruption (journal.hpp).
#include <cstring>

#include "journal_format.hpp"
#include "tachyon/codec/codec.hpp"
#include "tachyon/store/journal.hpp"

namespace tachyon::store {

using journal_format::all_zero;
using journal_format::GroupHeader;
using journal_format::list_segments;
using journal_format::Segment;

uint64_t first_journal_seq(const std::string& dir, Disk& disk) {
  const auto segments = list_segments(disk, dir);
  return segments.empty() ? 0 : segments.front().first_seq;
}

namespace {

using Apply = std::function<void(const Tx&)>;

// Reads one segment's records. `tail`: the last segment, where a torn end is expected.
class SegmentScan {
 public:
  SegmentScan(const Segment& seg, bool tail, const std::vector<uint8_t>& data, JournalScan& scan)
      : seg_(seg), tail_(tail), data_(data), scan_(scan) {}

  // Calls `apply` for each record after after_seq; `expect` is the next seq (0: not yet known).
  // Sets torn_at when the segment ends in a torn tail (SIZE_MAX: it does not).
  Status run(uint64_t after_seq, uint64_t& expect, const Apply& apply);
  size_t torn_at = SIZE_MAX;
  std::string torn_why;

 private:
  Status run_records(uint64_t after_seq, uint64_t& expect, const Apply& apply);
  Status run_groups(uint64_t after_seq, uint64_t& expect, const Apply& apply);
  Status group_records(size_t off, const GroupHeader& g, uint64_t after_seq, uint64_t& expect,
                       const Apply& apply);
  Status record(size_t off, const uint8_t* payload, uint32_t len, uint64_t after_seq,
                uint64_t& expect, const Apply& apply);
  Status damaged(size_t off, const std::string& why);
  Status damaged_group(size_t off, const std::string& why);
  Status header(uint64_t expect);
  std::string where(size_t off) const { return seg_.path + " at offset " + std::to_string(off); }

  const Segment& seg_;
  const bool tail_;
  const std::vector<uint8_t>& data_;
  JournalScan& scan_;
  uint32_t version_ = 0;
};

// A power cut during a group commit leaves the unsynced end of the last segment cut short, zeroed,
// or with a last page whose sectors are partly old: damage followed by nothing but zeros, or by at
// most the rest of one page. Damage further back, or in an earlier segment, is corruption.
constexpr size_t kTornBytes = 4096 + kFrameHeaderSize + codec::kMaxRecordSize;

Status SegmentScan::damaged(size_t off, const std::string& why) {
  if (!tail_)
    return Status::error("journal corrupt in " + where(off) + ": " + why +
                         " (not the last segment)");
  const size_t rest = data_.size() - off;
  if (rest > kTornBytes && !all_zero(data_.data() + off + kTornBytes, rest - kTornBytes))
    return Status::error("journal corrupt in " + where(off) + ": " + why +
                         ", with records after it");
  torn_at = off;
  torn_why = why;
  return Status();
}

// Version 2: a group is written only once the one before it is synced, so only the last group can
// be torn, and its pages may have reached the media in any order. Damage with no whole group after
// it is that torn group; a whole group after the damage means the damage hit synced data.
Status SegmentScan::damaged_group(size_t off, const std::string& why) {
  if (!tail_)
    return Status::error("journal corrupt in " + where(off) + ": " + why +
                         " (not the last segment)");
  const uint8_t* d = data_.data();
  for (size_t at = off + 8; at + kGroupHeaderSize <= data_.size(); at += 8) {
    GroupHeader g;
    if (journal_format::whole_group_at(d, data_.size(), at, g))
      return Status::error("journal corrupt in " + where(off) + ": " + why +
                           ", with a whole group after it at offset " + std::to_string(at));
  }
  torn_at = off;
  torn_why = why;
  return Status();
}

Status SegmentScan::header(uint64_t expect) {
  if (data_.size() < kSegmentHeaderSize) return damaged(0, "segment header incomplete");
  if (all_zero(data_.data(), kSegmentHeaderSize)) return damaged(0, "segment header not written");
  uint32_t crc = 0;
  std::memcpy(&crc, data_.data() + 20, 4);
  uint64_t first = 0;
  std::memcpy(&first, data_.data() + 8, 8);
  std::memcpy(&version_, data_.data() + 16, 4);
  if (std::memcmp(data_.data(), journal_format::kMagic, 8) != 0 ||
      crc != crc32c(data_.data(), 20) || first != seg_.first_seq)
    return Status::error("journal segment header corrupt: " + seg_.path);
  if (version_ != journal_format::kRecords && version_ != journal_format::kGroups)
    return Status::error("journal segment " + seg_.path + " has version " +
                         std::to_string(version_) + ", which this build does not read");
  if (expect != 0 && first != expect)
    return Status::error("journal gap: " + seg_.path + " starts at seq " + std::to_string(first) +
                         ", expected " + std::to_string(expect));
  return Status();
}

Status SegmentScan::run(uint64_t after_seq, uint64_t& expect, const Apply& apply) {
  if (Status s = header(expect); !s.ok() || torn_at != SIZE_MAX) return s;
  return version_ == journal_format::kGroups ? run_groups(after_seq, expect, apply)
                                             : run_records(after_seq, expect, apply);
}

// One record whose checksum held at `off`: decoded, in seq order, applied after after_seq.
Status SegmentScan::record(size_t off, const uint8_t* payload, uint32_t len, uint64_t after_seq,
                           uint64_t& expect, const Apply& apply) {
  Tx tx;
  const codec::Decoded d = codec::decode(std::span<const uint8_t>(payload, len), tx);
  if (!d.ok())  // its checksum held: written that way, not torn
    return Status::error("journal record undecodable in " + where(off) + ": " +
                         std::string(codec::error_message(d.error)));
  const uint64_t seq = tx.h.seq;
  if (expect == 0 ? seq != seg_.first_seq : seq != expect)
    return Status::error("journal seq out of order in " + where(off) + ": got " +
                         std::to_string(seq));
  expect = seq + 1;
  if (scan_.first_seq == 0) scan_.first_seq = seq;
  scan_.last_seq = seq;
  ++scan_.records;
  if (seq > after_seq) apply(tx);
  return Status();
}

Status SegmentScan::run_records(uint64_t after_seq, uint64_t& expect, const Apply& apply) {
  for (size_t off = kSegmentHeaderSize; off < data_.size();) {
    const size_t left = data_.size() - off;
    if (left < kFrameHeaderSize) return damaged(off, "partial frame header");
    if (all_zero(data_.data() + off, left)) return damaged(off, "zero-filled tail");
    uint32_t len = 0, fcrc = 0;
    std::memcpy(&len, data_.data() + off, 4);
    std::memcpy(&fcrc, data_.data() + off + 4, 4);
    const uint8_t* payload = data_.data() + off + kFrameHeaderSize;
    if (len == 0 || len > codec::kMaxRecordSize) return damaged(off, "impossible record length");
    if (len > left - kFrameHeaderSize) return damaged(off, "frame runs past the end");
    if (crc32c(payload, len) != fcrc) return damaged(off, "checksum mismatch");
    if (Status s = record(off, payload, len, after_seq, expect, apply); !s.ok()) return s;
    off += kFrameHeaderSize + len;
  }
  return Status();
}

// Zeros after the last group are the preallocated rest of the segment (or nothing at all).
Status SegmentScan::run_groups(uint64_t after_seq, uint64_t& expect, const Apply& apply) {
  const uint8_t* d = data_.data();
  const size_t n = data_.size();
  for (size_t off = kSegmentHeaderSize; off < n;) {
    if (n - off < kGroupHeaderSize || all_zero(d + off, kGroupHeaderSize)) {
      if (all_zero(d + off, n - off)) return Status();
      return damaged_group(off, "no group header before data");
    }
    GroupHeader g;
    if (!journal_format::read_group_header(d, n, off, g))
      return damaged_group(off, "group header damaged");
    if (crc32c(d + off + kGroupHeaderSize, g.len) != g.crc)
      return damaged_group(off, "group checksum mismatch");
    if (Status s = group_records(off, g, after_seq, expect, apply); !s.ok()) return s;
    off += journal_format::group_span(g.len);
  }
  return Status();
}

// A whole group's records: every one is as it was written, so any flaw is corruption.
Status SegmentScan::group_records(size_t off, const GroupHeader& g, uint64_t after_seq,
                                  uint64_t& expect, const Apply& apply) {
  const uint8_t* p = data_.data() + off + kGroupHeaderSize;
  if (g.first_seq != (expect != 0 ? expect : seg_.first_seq))
    return Status::error("journal group header names seq " + std::to_string(g.first_seq) + " in " +
                         where(off));
  for (size_t at = 0; at < g.len;) {
    uint32_t len = 0, fcrc = 0;
    if (g.len - at < kFrameHeaderSize) return Status::error("journal group cut in " + where(off));
    std::memcpy(&len, p + at, 4);
    std::memcpy(&fcrc, p + at + 4, 4);
    if (len == 0 || len > g.len - at - kFrameHeaderSize ||
        crc32c(p + at + kFrameHeaderSize, len) != fcrc)
      return Status::error("journal record damaged inside a whole group in " + where(off));
    const size_t rec_off = off + kGroupHeaderSize + at;
    if (Status s = record(rec_off, p + at + kFrameHeaderSize, len, after_seq, expect, apply);
        !s.ok())
      return s;
    at += kFrameHeaderSize + len;
  }
  return Status();
}

}  // namespace

Status replay_journal(const std::string& dir, uint64_t after_seq, const Apply& apply,
                      JournalScan& scan, bool repair, Disk& disk) {
  scan = JournalScan{};
  const auto segments = list_segments(disk, dir);
  uint64_t expect = 0;  // next seq; 0 = not yet known
  for (size_t si = 0; si < segments.size(); ++si) {
    const Segment& seg = segments[si];
    std::vector<uint8_t> data;
    if (Status s = disk.read(seg.path, data); !s.ok()) return s;
    ++scan.segments;
    SegmentScan seg_scan(seg, si + 1 == segments.size(), data, scan);
    if (Status s = seg_scan.run(after_seq, expect, apply); !s.ok()) return s;
    if (seg_scan.torn_at == SIZE_MAX) continue;
    scan.truncated_tail = true;
    scan.note = "truncated torn tail of " + seg.path + " at offset " +
                std::to_string(seg_scan.torn_at) + ": " + seg_scan.torn_why;
    if (!repair) break;
    // Durable before anything is written after it: a segment whose removal a power cut undid
    // would come back after the records that went on in the segment before it.
    if (seg_scan.torn_at < kSegmentHeaderSize) {
      if (Status s = disk.remove(seg.path); !s.ok()) return s;
      return disk.sync_dir(dir);
    }
    return disk.truncate_file(seg.path, seg_scan.torn_at);
  }
  return Status();
}

}  // namespace tachyon::store
