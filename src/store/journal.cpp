#include "tachyon/store/journal.hpp"

#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "tachyon/codec/codec.hpp"
#include "tachyon/core/assert.hpp"
#include "tachyon/core/crc32c.hpp"

namespace tachyon::store {

namespace {
constexpr char kMagic[8] = {'T', 'C', 'H', 'Y', 'J', 'R', 'N', 'L'};
constexpr uint32_t kJournalVersion = 1;

std::string segment_name(uint64_t first_seq) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "journal-%020llu.wal",
                static_cast<unsigned long long>(first_seq));
  return buf;
}

std::vector<uint8_t> segment_header(uint64_t first_seq) {
  std::vector<uint8_t> h(kSegmentHeaderSize);
  std::memcpy(h.data(), kMagic, 8);
  std::memcpy(h.data() + 8, &first_seq, 8);
  std::memcpy(h.data() + 16, &kJournalVersion, 4);
  const uint32_t crc = crc32c(h.data(), 20);
  std::memcpy(h.data() + 20, &crc, 4);
  return h;
}

struct Segment {
  uint64_t first_seq;
  std::string path;
};

std::vector<Segment> list_segments(Disk& disk, const std::string& dir) {
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

// A failed sync is never retried (see Journal::failed()), whatever its errno says.
Status final_error(const Status& s) { return s.ok() ? s : Status::error(s.message()); }

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool all_zero(const uint8_t* p, size_t n) {
  return std::all_of(p, p + n, [](uint8_t b) { return b == 0; });
}
}  // namespace

Status parse_durability(const std::string& s, Durability& out) {
  if (s == "fsync")
    out = Durability::kFsync;
  else if (s == "write")
    out = Durability::kWrite;
  else if (s == "none")
    out = Durability::kNone;
  else if (s == "replicated")
    out = Durability::kReplicated;
  else
    return Status::error("durability must be fsync, write, none or replicated, not '" + s + "'");
  return Status();
}

const char* durability_name(Durability d) {
  switch (d) {
    case Durability::kFsync: return "fsync";
    case Durability::kWrite: return "write";
    case Durability::kNone: return "none";
    case Durability::kReplicated: return "replicated";
  }
  return "?";
}

// ---- scanning and recovery ----

uint64_t first_journal_seq(const std::string& dir, Disk& disk) {
  const auto segments = list_segments(disk, dir);
  return segments.empty() ? 0 : segments.front().first_seq;
}

namespace {

// Reads one segment's records. `tail`: the last segment, where a torn end is expected.
class SegmentScan {
 public:
  SegmentScan(const Segment& seg, bool tail, const std::vector<uint8_t>& data, JournalScan& scan)
      : seg_(seg), tail_(tail), data_(data), scan_(scan) {}

  // Calls `apply` for each record after after_seq; `expect` is the next seq (0: not yet known).
  // Sets torn_at when the segment ends in a torn tail (SIZE_MAX: it does not).
  Status run(uint64_t after_seq, uint64_t& expect, const std::function<void(const Tx&)>& apply);
  size_t torn_at = SIZE_MAX;
  std::string torn_why;

 private:
  Status damaged(size_t off, const std::string& why);
  Status header(uint64_t expect);
  std::string where(size_t off) const { return seg_.path + " at offset " + std::to_string(off); }

  const Segment& seg_;
  const bool tail_;
  const std::vector<uint8_t>& data_;
  JournalScan& scan_;
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

Status SegmentScan::header(uint64_t expect) {
  if (data_.size() < kSegmentHeaderSize) return damaged(0, "segment header incomplete");
  if (all_zero(data_.data(), kSegmentHeaderSize)) return damaged(0, "segment header not written");
  uint32_t crc = 0;
  std::memcpy(&crc, data_.data() + 20, 4);
  uint64_t first = 0;
  std::memcpy(&first, data_.data() + 8, 8);
  if (std::memcmp(data_.data(), kMagic, 8) != 0 || crc != crc32c(data_.data(), 20) ||
      first != seg_.first_seq)
    return Status::error("journal segment header corrupt: " + seg_.path);
  if (expect != 0 && first != expect)
    return Status::error("journal gap: " + seg_.path + " starts at seq " + std::to_string(first) +
                         ", expected " + std::to_string(expect));
  return Status();
}

Status SegmentScan::run(uint64_t after_seq, uint64_t& expect,
                        const std::function<void(const Tx&)>& apply) {
  if (Status s = header(expect); !s.ok() || torn_at != SIZE_MAX) return s;
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
    off += kFrameHeaderSize + len;
  }
  return Status();
}

}  // namespace

Status replay_journal(const std::string& dir, uint64_t after_seq,
                      const std::function<void(const Tx&)>& apply, JournalScan& scan, bool repair,
                      Disk& disk) {
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
    if (seg_scan.torn_at < kSegmentHeaderSize) return disk.remove(seg.path);
    return disk.truncate_file(seg.path, seg_scan.torn_at);
  }
  return Status();
}

// ---- appending ----

Status Journal::open(const JournalConfig& cfg, uint64_t next_seq, std::unique_ptr<Journal>& out) {
  Disk& disk = *cfg.disk;
  if (Status s = disk.make_dirs(cfg.dir); !s.ok()) return s;
  std::unique_ptr<Journal> j(new Journal(cfg));
  if (cfg.durability == Durability::kReplicated && cfg.replicator == nullptr)
    return Status::error("journal: replicated durability needs a replicator (a cluster role)");
  j->next_seq_ = next_seq;
  j->durable_seq_.store(next_seq - 1);
  j->handed_seq_.store(next_seq - 1);
  j->written_seq_.store(next_seq - 1);
  j->synced_seq_ = j->replicated_seq_ = next_seq - 1;
  j->replicator_.store(cfg.replicator, std::memory_order_relaxed);
  j->waits_for_replicas_ = cfg.durability == Durability::kReplicated;
  const auto segments = list_segments(disk, cfg.dir);
  if (!segments.empty() && segments.back().first_seq <= next_seq) {
    const std::string& path = segments.back().path;
    if (Status s = disk.open(path, OpenMode::kAppend, j->fd_); !s.ok()) return s;
    if (Status s = disk.size(j->fd_, j->segment_size_); !s.ok()) return s;
    // What recovery read is what later records build on: durable before any of them is.
    if (syncs(cfg.durability)) {
      if (Status s = disk.sync(j->fd_); !s.ok()) return s;
    }
  } else if (Status s = j->roll_segment(next_seq); !s.ok()) {
    return s;
  }
  j->pending_.reserve(cfg.max_pending_bytes);
  j->writing_.reserve(cfg.max_pending_bytes);
  j->staged_.reserve(cfg.max_pending_bytes / 2);
  if (cfg.group_commit == GroupCommit::kWriterThread) {
    j->writer_ = std::thread([p = j.get()] {
      pthread_setname_np(pthread_self(), "journal");
      p->writer_loop();
    });
  }
  out = std::move(j);
  return Status();
}

Journal::~Journal() { close(); }

// Syncs and closes the current segment (when there is one) and starts the next. Fails without a
// trace of the new segment, so that a retry after ENOSPC starts it again.
Status Journal::roll_segment(uint64_t first_seq) {
  Disk& disk = *cfg_.disk;
  if (fd_ >= 0) {
    if (syncs(cfg_.durability)) {
      if (Status s = disk.sync(fd_); !s.ok()) return final_error(s);
    }
    disk.close(fd_);
    fd_ = -1;
  }
  const std::string path = cfg_.dir + "/" + segment_name(first_seq);
  (void)disk.remove(path);  // left by a start that failed: its header may be partial
  int fd = -1;
  if (Status s = disk.open(path, OpenMode::kCreateAppend, fd); !s.ok()) return s;
  const auto h = segment_header(first_seq);
  Status s = disk.write(fd, h.data(), h.size());
  if (s.ok() && syncs(cfg_.durability)) s = final_error(disk.sync_dir(cfg_.dir));
  if (!s.ok()) {
    disk.close(fd);
    (void)disk.remove(path);
    return s;
  }
  fd_ = fd;
  segment_size_ = h.size();
  return Status();
}

void Journal::stage(const Tx& tx) {
  TACHYON_ASSERT(tx.h.seq == next_seq_, "journal: seqs must be consecutive");
  uint8_t rec[kFrameHeaderSize + codec::kMaxRecordSize];
  const size_t len =
      codec::encode(tx, std::span<uint8_t>(rec + kFrameHeaderSize, codec::kMaxRecordSize));
  TACHYON_ASSERT(len > 0, "journal: tx type without a codec layout");
  const uint32_t l32 = static_cast<uint32_t>(len), crc = crc32c(rec + kFrameHeaderSize, len);
  std::memcpy(rec, &l32, 4);
  std::memcpy(rec + 4, &crc, 4);
  // Within the reserved capacity: the sequencer never allocates here.
  if (staged_.size() + kFrameHeaderSize + len > staged_.capacity()) hand_off();
  staged_.insert(staged_.end(), rec, rec + kFrameHeaderSize + len);
  if (staged_first_ == 0) staged_first_ = tx.h.seq;
  staged_last_ = tx.h.seq;
  ++next_seq_;
}

// Waits for room only while older records are pending (a hand-off larger than the bound still
// goes through once the group commit took everything before it), and only when another thread
// makes that room: never on the thread that runs the group commits itself.
void Journal::hand_off() {
  if (staged_.empty()) return;
  std::unique_lock lk(mu_);
  const bool room_comes = cfg_.group_commit == GroupCommit::kWriterThread ||
                          (cfg_.group_commit == GroupCommit::kFlusher &&
                           flusher_.load(std::memory_order_relaxed) != std::this_thread::get_id());
  space_cv_.wait(lk, [&] {
    return pending_.empty() || pending_.size() + staged_.size() <= cfg_.max_pending_bytes ||
           failed() || !room_comes;
  });
  if (pending_.empty()) pending_first_ = staged_first_;
  pending_.insert(pending_.end(), staged_.begin(), staged_.end());
  pending_last_ = staged_last_;
  lk.unlock();
  handed_seq_.store(staged_last_, std::memory_order_release);
  if (cfg_.durability == Durability::kNone) {
    durable_seq_.store(staged_last_, std::memory_order_release);
  }
  staged_.clear();
  staged_first_ = staged_last_ = 0;
  if (cfg_.group_commit == GroupCommit::kWriterThread) work_cv_.notify_one();
}

// Moves what append() buffered into writing_, unless a batch the disk had no room for is still
// there. False: nothing to write (or, waiting, the journal is closing).
bool Journal::take_pending(bool wait_for_work) {
  if (!writing_.empty()) return true;
  {
    std::unique_lock lk(mu_);
    if (wait_for_work) work_cv_.wait(lk, [&] { return !pending_.empty() || stop_; });
    if (pending_.empty()) return false;
    writing_.swap(pending_);
    pending_.clear();
    writing_first_ = pending_first_;
    writing_last_ = pending_last_;
  }
  space_cv_.notify_all();
  return true;
}

// One group commit's I/O. Out of space, the partial write is cut off again, so the segment holds
// whole records only and the retry appends where the failed write started.
Status Journal::write_group() {
  Disk& disk = *cfg_.disk;
  if (fd_ < 0 || (segment_size_ + writing_.size() > cfg_.segment_bytes &&
                  segment_size_ > kSegmentHeaderSize)) {
    if (Status s = roll_segment(writing_first_); !s.ok()) return s;
  }
  if (Status s = disk.write(fd_, writing_.data(), writing_.size()); !s.ok()) {
    if (!store::out_of_space(s)) return s;
    if (Status t = disk.truncate(fd_, segment_size_); !t.ok()) return t;  // cannot cut: failed
    return s;
  }
  segment_size_ += writing_.size();
  if (Replicator* r = replicator_.load(std::memory_order_acquire); r != nullptr) {
    r->send(*this, writing_first_, writing_last_, writing_.data(), writing_.size());
  }
  if (syncs(cfg_.durability)) return final_error(disk.sync(fd_));
  return Status();
}

void Journal::fail(const Status& s) {
  std::lock_guard lk(mu_);
  if (failed()) return;  // the first failure is the one reported (failure_ is then read unlocked)
  failure_ = s.message();
  failed_.store(true, std::memory_order_release);  // after failure_: readers check failed() first
  durable_cv_.notify_all();
  space_cv_.notify_all();
}

void Journal::committed(int64_t started_ns) {
  const uint64_t first = writing_first_, last = writing_last_;
  std::function<void(uint64_t)> on_durable;
  bool moved = false;
  {
    std::lock_guard lk(mu_);
    ++stats_.commits;
    stats_.records += last - first + 1;
    stats_.bytes += writing_.size();
    if (m_group_records_ != nullptr) m_group_records_->record(last - first + 1);
    if (m_commit_ns_ != nullptr)
      m_commit_ns_->record(static_cast<uint64_t>(steady_ns() - started_ns));
    synced_seq_ = last;
    if (waits_for_replicas_) {
      moved = advance_durable_locked();
    } else {
      if (cfg_.durability != Durability::kNone) durable_seq_.store(last, std::memory_order_release);
      moved = true;  // (kNone: durable at append; the callback still marks each commit)
    }
    if (moved && on_durable_) on_durable = on_durable_;
  }
  writing_.clear();
  written_seq_.store(last, std::memory_order_release);
  out_of_space_.store(false, std::memory_order_release);
  if (on_durable) on_durable(durable_seq());
  if (moved) durable_cv_.notify_all();  // its predicate was checked under mu_, which we held
}

bool Journal::advance_durable_locked() {
  const uint64_t d = std::min(synced_seq_, replicated_seq_);
  if (d <= durable_seq_.load(std::memory_order_relaxed)) return false;
  durable_seq_.store(d, std::memory_order_release);
  return true;
}

void Journal::replicated(uint64_t seq) {
  std::function<void(uint64_t)> on_durable;
  bool moved = false;
  {
    std::lock_guard lk(mu_);
    replicated_seq_ = std::max(replicated_seq_, seq);
    moved = advance_durable_locked();
    if (moved && on_durable_) on_durable = on_durable_;
  }
  if (on_durable) on_durable(durable_seq());
  if (moved) durable_cv_.notify_all();
}

void Journal::replication_failed(const std::string& why) { fail(Status::error(why)); }

void Journal::replicate_from_now(Replicator* r, bool wait_for_replicas) {
  std::lock_guard lk(mu_);
  // Everything durable so far came from the stream (the caller waited for it).
  replicated_seq_ = std::max(replicated_seq_, durable_seq_.load(std::memory_order_acquire));
  waits_for_replicas_ = wait_for_replicas;
  replicator_.store(r, std::memory_order_release);
}

Journal::Commit Journal::commit_once(bool wait_for_work) {
  if (failed()) return Commit::kFailed;
  if (!take_pending(wait_for_work)) return Commit::kIdle;
  const int64_t c0 = steady_ns();
  const Status s = write_group();
  if (s.ok()) {
    committed(c0);
    return Commit::kDone;
  }
  if (store::out_of_space(s)) {
    if (!out_of_space_.exchange(true, std::memory_order_acq_rel)) {
      std::lock_guard lk(mu_);
      ++stats_.space_waits;
    }
    return Commit::kNoSpace;
  }
  fail(s);  // nothing after this can be acknowledged
  return Commit::kFailed;
}

void Journal::writer_loop() {
  for (;;) {
    switch (commit_once(/*wait_for_work=*/true)) {
      case Commit::kDone: break;
      case Commit::kIdle: return;  // closing, and everything is written
      case Commit::kFailed: return;
      case Commit::kNoSpace: {
        std::unique_lock lk(mu_);
        if (work_cv_.wait_for(lk, std::chrono::milliseconds(cfg_.space_retry_ms),
                              [&] { return stop_; })) {
          lk.unlock();
          fail(Status::error("journal closed while the disk was full; " +
                             std::to_string(writing_last_ - writing_first_ + 1) +
                             " records were never written"));
          return;
        }
        break;
      }
    }
  }
}

Status Journal::flush() {
  TACHYON_ASSERT(cfg_.group_commit != GroupCommit::kWriterThread,
                 "journal: flush() is for a journal without a writer thread");
  while (true) {
    switch (commit_once(/*wait_for_work=*/false)) {
      case Commit::kDone: continue;
      case Commit::kIdle: return Status();
      case Commit::kNoSpace:
        return Status::sys_error("journal: the disk is full; the records wait for space", ENOSPC);
      case Commit::kFailed: return Status::error(failure_);
    }
  }
}

Status Journal::flush_once() {
  TACHYON_ASSERT(cfg_.group_commit != GroupCommit::kWriterThread,
                 "journal: flush_once() is for a journal without a writer thread");
  flusher_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  switch (commit_once(/*wait_for_work=*/false)) {
    case Commit::kDone:
    case Commit::kIdle: return Status();
    case Commit::kNoSpace:
      return Status::sys_error("journal: the disk is full; the records wait for space", ENOSPC);
    case Commit::kFailed: return Status::error(failure_);
  }
  return Status();
}

bool Journal::wait_durable(uint64_t seq) {
  std::unique_lock lk(mu_);
  durable_cv_.wait(lk, [&] { return durable_seq() >= seq || failed(); });
  return durable_seq() >= seq;
}

void Journal::close() {
  hand_off();  // (the appender, or any thread once it stopped appending)
  {
    std::lock_guard lk(mu_);
    if (stop_) return;
    stop_ = true;
  }
  work_cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  if (cfg_.group_commit != GroupCommit::kWriterThread && !failed()) (void)flush();
  if (fd_ >= 0) {
    if (!failed() && cfg_.durability != Durability::kNone) (void)cfg_.disk->sync(fd_);
    cfg_.disk->close(fd_);
    fd_ = -1;
  }
}

Journal::Stats Journal::stats() const {
  std::lock_guard lk(mu_);
  return stats_;
}

Status Journal::drop_segments_through(uint64_t seq) {
  const auto segments = list_segments(*cfg_.disk, cfg_.dir);
  // A segment is covered when the next one starts at or before seq + 1; the last one never is.
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    if (segments[i + 1].first_seq > seq + 1) break;
    if (Status s = cfg_.disk->remove(segments[i].path); !s.ok()) return s;
  }
  return Status();
}

}  // namespace tachyon::store
