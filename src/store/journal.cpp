#include "tachyon/store/journal.hpp"

#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "journal_format.hpp"
#include "tachyon/codec/codec.hpp"
#include "tachyon/core/assert.hpp"
#include "tachyon/core/crc32c.hpp"

namespace tachyon::store {

namespace {
using journal_format::list_segments;
using journal_format::segment_header;
using journal_format::segment_name;

// A failed sync is never retried (see Journal::failed()), whatever its errno says.
Status final_error(const Status& s) { return s.ok() ? s : Status::error(s.message()); }

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
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

// ---- appending ----

Status Journal::open(const JournalConfig& cfg, uint64_t next_seq, std::unique_ptr<Journal>& out) {
  Disk& disk = *cfg.disk;
  if (Status s = disk.make_dirs(cfg.dir); !s.ok()) return s;
  std::unique_ptr<Journal> j(new Journal(cfg));
  j->cfg_.preallocate = cfg.preallocate && syncs(cfg.durability);
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
    bool goes_on = false;
    if (Status s = j->continue_segment(segments.back().path, goes_on); !s.ok()) return s;
    // What recovery read is what later records build on: durable before any of them is, also
    // when they go into a new segment.
    if (syncs(cfg.durability)) {
      if (Status s = disk.sync(j->fd_); !s.ok()) return s;
    }
    if (!goes_on) {
      disk.close(j->fd_);
      j->fd_ = -1;
    }
  }
  if (j->fd_ < 0) {
    if (Status s = j->roll_segment(next_seq); !s.ok()) return s;
  }
  // (A group's header and padding: 32 bytes more than the records it frames.)
  j->pending_.reserve(cfg.max_pending_bytes + 32);
  j->writing_.reserve(cfg.max_pending_bytes + 32);
  j->staged_.reserve(cfg.max_pending_bytes / 2);
  // (The spare thread first: the writer's rolls look whether there is one.)
  if (j->cfg_.preallocate && cfg.group_commit != GroupCommit::kAppender) {
    j->spare_thread_ = std::thread([p = j.get()] {
      pthread_setname_np(pthread_self(), "journal-spare");
      p->spare_loop();
    });
  }
  if (cfg.group_commit == GroupCommit::kWriterThread) {
    j->writer_ = std::thread([p = j.get()] {
      pthread_setname_np(pthread_self(), "journal");
      p->writer_loop();
    });
  }
  out = std::move(j);
  return Status();
}

// Opens the last segment; `goes_on` when its version is the one this journal writes, so that
// more groups or records go into it (else a new segment starts after it). A version 2 segment's
// end is after its last whole group header (recovery repaired what followed it).
Status Journal::continue_segment(const std::string& path, bool& goes_on) {
  Disk& disk = *cfg_.disk;
  std::shared_ptr<const FileBytes> bytes;
  if (Status s = disk.map(path, bytes); !s.ok()) return s;
  const uint8_t* d = bytes->data();
  const size_t n = bytes->size();
  uint32_t version = 0;
  if (n >= kSegmentHeaderSize) std::memcpy(&version, d + 16, 4);
  const uint32_t mine = cfg_.preallocate ? journal_format::kGroups : journal_format::kRecords;
  goes_on = version == mine;
  if (!goes_on) return disk.open(path, OpenMode::kUpdate, fd_);  // to sync what it holds
  if (!cfg_.preallocate) {
    segment_size_ = n;
    return disk.open(path, OpenMode::kAppend, fd_);
  }
  size_t end = kSegmentHeaderSize;
  journal_format::GroupHeader g;
  while (journal_format::read_group_header(d, n, end, g)) end += journal_format::group_span(g.len);
  segment_size_ = std::min(end, n);
  return disk.open(path, OpenMode::kUpdate, fd_);
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
  // Version 2 segments are written at offsets (pwrite): a spare in place, else a growing file.
  const bool spare = cfg_.preallocate && take_spare(path);
  const OpenMode mode = spare              ? OpenMode::kUpdate
                        : cfg_.preallocate ? OpenMode::kCreateTruncate
                                           : OpenMode::kCreateAppend;
  int fd = -1;
  if (Status s = disk.open(path, mode, fd); !s.ok()) {
    if (spare) (void)disk.remove(path);
    return s;
  }
  const auto h = segment_header(
      first_seq, cfg_.preallocate ? journal_format::kGroups : journal_format::kRecords);
  Status s = disk.pwrite(fd, h.data(), h.size(), 0);
  if (s.ok() && syncs(cfg_.durability)) s = final_error(disk.sync_dir(cfg_.dir));
  if (!s.ok()) {
    disk.close(fd);
    (void)disk.remove(path);
    return s;
  }
  fd_ = fd;
  segment_size_ = h.size();
  if (spare) {
    std::lock_guard lk(mu_);
    ++stats_.spares_used;
  }
  return Status();
}

// The spare, renamed to `path` (false: none is ready). Without a spare thread it is made here and
// now: by the appender (the simulation stays deterministic), and by open() for a new journal's
// first segment (before the spare thread starts).
bool Journal::take_spare(const std::string& path) {
  Disk& disk = *cfg_.disk;
  if (!spare_thread_.joinable()) return make_spare().ok() && disk.rename(spare_path(), path).ok();
  std::lock_guard lk(spare_mu_);
  if (!spare_ready_) return false;
  spare_ready_ = false;
  spare_cv_.notify_all();  // the next one
  return disk.rename(spare_path(), path).ok();
}

// A segment-sized file of zeros, synced (data and size): written over later, its blocks are
// allocated and its size is durable. Stops early (failing) when the journal closes.
Status Journal::make_spare() {
  Disk& disk = *cfg_.disk;
  const std::string p = spare_path();
  (void)disk.remove(p);
  int fd = -1;
  if (Status s = disk.open(p, OpenMode::kCreateTruncate, fd); !s.ok()) return s;
  const std::vector<uint8_t> zeros(std::min<uint64_t>(cfg_.segment_bytes, 1 << 20), 0);
  Status s;
  for (uint64_t at = 0; s.ok() && at < cfg_.segment_bytes; at += zeros.size()) {
    if (spare_stop_.load(std::memory_order_relaxed)) s = Status::error("journal closing");
    if (s.ok())
      s = disk.write(fd, zeros.data(), std::min<uint64_t>(zeros.size(), cfg_.segment_bytes - at));
  }
  if (s.ok()) s = disk.sync(fd);
  disk.close(fd);
  if (!s.ok()) (void)disk.remove(p);
  return s;
}

// The spare thread: a spare ready whenever one was taken. A failure (a full disk) is retried
// after a second; meanwhile segments grow as in version 1.
void Journal::spare_loop() {
  std::unique_lock lk(spare_mu_);
  for (;;) {
    spare_cv_.wait(lk,
                   [&] { return spare_stop_.load(std::memory_order_relaxed) || !spare_ready_; });
    if (spare_stop_.load(std::memory_order_relaxed)) return;
    lk.unlock();
    const Status s = make_spare();
    lk.lock();
    if (s.ok()) {
      spare_ready_ = true;
    } else {
      spare_cv_.wait_for(lk, std::chrono::seconds(1),
                         [&] { return spare_stop_.load(std::memory_order_relaxed); });
    }
  }
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
  if (pending_.empty()) {
    pending_first_ = staged_first_;
    if (cfg_.preallocate) pending_.resize(kGroupHeaderSize);  // the group header's place
  }
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
  if (cfg_.preallocate) frame_group();
  return true;
}

// Version 2: the group header into the place hand_off left for it, and the padding.
void Journal::frame_group() {
  writing_records_ = writing_.size() - kGroupHeaderSize;
  writing_.resize(journal_format::group_span(static_cast<uint32_t>(writing_records_)), 0);
  journal_format::write_group_header(writing_.data(), writing_first_,
                                     writing_.data() + kGroupHeaderSize, writing_records_);
}

// One group commit's I/O. Out of space, the partial write is cut off again, so the segment holds
// whole records (or groups) only and the retry writes where the failed write started.
Status Journal::write_group() {
  Disk& disk = *cfg_.disk;
  const bool full =
      segment_size_ + writing_.size() > cfg_.segment_bytes && segment_size_ > kSegmentHeaderSize;
  if (fd_ < 0 || full) {
    if (Status s = roll_segment(writing_first_); !s.ok()) return s;
  }
  const Status w = cfg_.preallocate
                       ? disk.pwrite(fd_, writing_.data(), writing_.size(), segment_size_)
                       : disk.write(fd_, writing_.data(), writing_.size());
  if (!w.ok()) {
    if (!store::out_of_space(w)) return w;
    if (Status t = disk.truncate(fd_, segment_size_); !t.ok()) return t;  // cannot cut: failed
    return w;
  }
  segment_size_ += writing_.size();
  if (Replicator* r = replicator_.load(std::memory_order_acquire); r != nullptr) {
    const size_t head = cfg_.preallocate ? kGroupHeaderSize : 0;  // the frames only
    r->send(*this, writing_first_, writing_last_, writing_.data() + head,
            cfg_.preallocate ? writing_records_ : writing_.size());
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
  if (spare_thread_.joinable()) {
    {
      std::lock_guard lk(spare_mu_);
      spare_stop_.store(true, std::memory_order_relaxed);
    }
    spare_cv_.notify_all();
    spare_thread_.join();
    (void)cfg_.disk->remove(spare_path());  // a segment's worth of zeros nobody will use
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
