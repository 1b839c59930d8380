#include "tachyon/store/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "tachyon/codec/codec.hpp"
#include "tachyon/core/assert.hpp"
#include "tachyon/core/crc32c.hpp"
#include "tachyon/store/files.hpp"

namespace tachyon::store {

namespace fs = std::filesystem;

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

std::vector<Segment> list_segments(const std::string& dir) {
  std::vector<Segment> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    unsigned long long seq = 0;
    if (name.size() == 32 && std::sscanf(name.c_str(), "journal-%20llu.wal", &seq) == 1)
      out.push_back({seq, e.path().string()});
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.first_seq < b.first_seq; });
  return out;
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
  else
    return Status::error("durability must be fsync, write or none, not '" + s + "'");
  return Status();
}

const char* durability_name(Durability d) {
  switch (d) {
    case Durability::kFsync: return "fsync";
    case Durability::kWrite: return "write";
    case Durability::kNone: return "none";
  }
  return "?";
}

// ---- scanning and recovery ----

uint64_t first_journal_seq(const std::string& dir) {
  const auto segments = list_segments(dir);
  return segments.empty() ? 0 : segments.front().first_seq;
}

Status replay_journal(const std::string& dir, uint64_t after_seq,
                      const std::function<void(const Tx&)>& apply, JournalScan& scan, bool repair) {
  scan = JournalScan{};
  const auto segments = list_segments(dir);
  uint64_t expect = 0;  // next seq; 0 = not yet known
  for (size_t si = 0; si < segments.size(); ++si) {
    const Segment& seg = segments[si];
    const bool last = si + 1 == segments.size();
    std::vector<uint8_t> data;
    if (Status s = read_file(seg.path, data); !s.ok()) return s;
    ++scan.segments;
    auto where = [&](size_t off) { return seg.path + " at offset " + std::to_string(off); };
    auto torn = [&](size_t off, const std::string& why) -> Status {
      if (!last)
        return Status::error("journal corrupt in " + where(off) + ": " + why +
                             " (not the last segment)");
      scan.truncated_tail = true;
      scan.note = "truncated torn tail of " + where(off) + ": " + why;
      if (repair) {
        if (off < kSegmentHeaderSize) return remove_file(seg.path);
        return truncate_file(seg.path, off);
      }
      return Status();
    };
    if (data.size() < kSegmentHeaderSize) {
      if (Status s = torn(0, "segment header incomplete"); !s.ok()) return s;
      break;
    }
    uint32_t crc = 0;
    std::memcpy(&crc, data.data() + 20, 4);
    uint64_t first = 0;
    std::memcpy(&first, data.data() + 8, 8);
    if (std::memcmp(data.data(), kMagic, 8) != 0 || crc != crc32c(data.data(), 20) ||
        first != seg.first_seq)
      return Status::error("journal segment header corrupt: " + seg.path);
    if (expect != 0 && first != expect)
      return Status::error("journal gap: " + seg.path + " starts at seq " + std::to_string(first) +
                           ", expected " + std::to_string(expect));
    size_t off = kSegmentHeaderSize;
    bool stop = false;
    while (off < data.size() && !stop) {
      const size_t left = data.size() - off;
      if (left < kFrameHeaderSize) {
        if (Status s = torn(off, "partial frame header"); !s.ok()) return s;
        stop = true;
        break;
      }
      uint32_t len = 0, fcrc = 0;
      std::memcpy(&len, data.data() + off, 4);
      std::memcpy(&fcrc, data.data() + off + 4, 4);
      const uint8_t* payload = data.data() + off + kFrameHeaderSize;
      // A torn write cuts the file: zeros, or a last frame that runs past the end, or one that
      // fails its checksum with nothing but zeros after it. Anything else is corruption.
      if (all_zero(data.data() + off, left)) {
        if (Status s = torn(off, "zero-filled tail"); !s.ok()) return s;
        stop = true;
        break;
      }
      if (len == 0 || len > codec::kMaxRecordSize)
        return Status::error("journal corrupt in " + where(off) + ": impossible record length");
      if (len > left - kFrameHeaderSize) {
        if (Status s = torn(off, "frame runs past the end"); !s.ok()) return s;
        stop = true;
        break;
      }
      if (crc32c(payload, len) != fcrc) {
        const size_t frame_end = off + kFrameHeaderSize + len;
        if (!all_zero(data.data() + frame_end, data.size() - frame_end) || !last)
          return Status::error("journal corrupt in " + where(off) +
                               ": bad checksum with records after it");
        if (Status s = torn(off, "checksum mismatch in the last record"); !s.ok()) return s;
        stop = true;
        break;
      }
      Tx tx;
      const codec::Decoded d = codec::decode(std::span<const uint8_t>(payload, len), tx);
      if (!d.ok())
        return Status::error("journal record undecodable in " + where(off) + ": " +
                             std::string(codec::error_message(d.error)));
      const uint64_t seq = tx.h.seq;
      if (expect == 0 ? seq != seg.first_seq : seq != expect)
        return Status::error("journal seq out of order in " + where(off) + ": got " +
                             std::to_string(seq));
      expect = seq + 1;
      if (scan.first_seq == 0) scan.first_seq = seq;
      scan.last_seq = seq;
      ++scan.records;
      if (seq > after_seq) apply(tx);
      off += kFrameHeaderSize + len;
    }
    if (stop) {
      if (si + 1 < segments.size())
        return Status::error("journal segment after a torn tail: " + segments[si + 1].path);
      break;
    }
  }
  return Status();
}

// ---- appending ----

Status Journal::open(const JournalConfig& cfg, uint64_t next_seq, std::unique_ptr<Journal>& out) {
  if (Status s = make_dirs(cfg.dir); !s.ok()) return s;
  std::unique_ptr<Journal> j(new Journal(cfg));
  j->next_seq_ = next_seq;
  j->durable_seq_.store(next_seq - 1);
  const auto segments = list_segments(cfg.dir);
  if (!segments.empty() && segments.back().first_seq <= next_seq) {
    j->fd_ = ::open(segments.back().path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (j->fd_ < 0)
      return Status::error("open " + segments.back().path + ": " + std::strerror(errno));
    j->segment_size_ = static_cast<uint64_t>(::lseek(j->fd_, 0, SEEK_END));
  } else if (Status s = j->roll_segment(next_seq); !s.ok()) {
    return s;
  }
  j->pending_.reserve(cfg.max_pending_bytes);
  j->writing_.reserve(cfg.max_pending_bytes);
  j->writer_ = std::thread([p = j.get()] { p->writer_loop(); });
  out = std::move(j);
  return Status();
}

Journal::~Journal() { close(); }

Status Journal::roll_segment(uint64_t first_seq) {
  if (fd_ >= 0) {
    if (cfg_.durability == Durability::kFsync && ::fdatasync(fd_) != 0)
      return Status::error(std::string("fdatasync: ") + std::strerror(errno));
    ::close(fd_);
  }
  const std::string path = cfg_.dir + "/" + segment_name(first_seq);
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) return Status::error("create " + path + ": " + std::strerror(errno));
  const auto h = segment_header(first_seq);
  if (Status s = write_all(h.data(), h.size()); !s.ok()) return s;
  segment_size_ = h.size();
  if (cfg_.durability == Durability::kFsync) return sync_dir(cfg_.dir);
  return Status();
}

Status Journal::write_all(const uint8_t* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return Status::error(std::string("journal write: ") + std::strerror(errno));
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status();
}

void Journal::append(const Tx& tx) {
  uint8_t rec[codec::kMaxRecordSize];
  const size_t len = codec::encode(tx, rec);
  TACHYON_ASSERT(len > 0, "journal: tx type without a codec layout");
  TACHYON_ASSERT(tx.h.seq == next_seq_, "journal: seqs must be consecutive");
  ++next_seq_;
  uint8_t frame[kFrameHeaderSize];
  const uint32_t l32 = static_cast<uint32_t>(len), crc = crc32c(rec, len);
  std::memcpy(frame, &l32, 4);
  std::memcpy(frame + 4, &crc, 4);
  std::unique_lock lk(mu_);
  space_cv_.wait(lk,
                 [&] { return pending_.size() + len + 8 <= cfg_.max_pending_bytes || failed(); });
  if (pending_.empty()) pending_first_ = tx.h.seq;
  pending_.insert(pending_.end(), frame, frame + kFrameHeaderSize);
  pending_.insert(pending_.end(), rec, rec + len);
  pending_last_ = tx.h.seq;
  lk.unlock();
  if (cfg_.durability == Durability::kNone) {
    durable_seq_.store(tx.h.seq, std::memory_order_release);
  }
  work_cv_.notify_one();
}

void Journal::writer_loop() {
  for (;;) {
    uint64_t first = 0, last = 0;
    {
      std::unique_lock lk(mu_);
      work_cv_.wait(lk, [&] { return !pending_.empty() || stop_; });
      if (pending_.empty() && stop_) return;
      writing_.swap(pending_);
      pending_.clear();
      first = pending_first_;
      last = pending_last_;
    }
    space_cv_.notify_all();
    const auto c0 = std::chrono::steady_clock::now();
    Status s;
    if (segment_size_ + writing_.size() > cfg_.segment_bytes && segment_size_ > kSegmentHeaderSize)
      s = roll_segment(first);
    if (s.ok()) s = write_all(writing_.data(), writing_.size());
    if (s.ok() && cfg_.durability == Durability::kFsync && ::fdatasync(fd_) != 0)
      s = Status::error(std::string("journal fdatasync: ") + std::strerror(errno));
    if (!s.ok()) {  // nothing after this can be acknowledged
      std::lock_guard lk(mu_);
      failure_ = s.message();
      failed_.store(true, std::memory_order_release);
      durable_cv_.notify_all();
      space_cv_.notify_all();
      return;
    }
    segment_size_ += writing_.size();
    std::function<void(uint64_t)> on_durable;
    {
      std::lock_guard lk(mu_);
      ++stats_.commits;
      stats_.records += last - first + 1;
      stats_.bytes += writing_.size();
      if (on_durable_) on_durable = on_durable_;
      if (m_group_records_ != nullptr) m_group_records_->record(last - first + 1);
      if (m_commit_ns_ != nullptr)
        m_commit_ns_->record(
            static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                      std::chrono::steady_clock::now() - c0)
                                      .count()));
    }
    writing_.clear();
    if (cfg_.durability != Durability::kNone) durable_seq_.store(last, std::memory_order_release);
    if (on_durable) on_durable(last);
    { std::lock_guard lk(mu_); }  // pairs with wait_durable's predicate check
    durable_cv_.notify_all();
  }
}

bool Journal::wait_durable(uint64_t seq) {
  std::unique_lock lk(mu_);
  durable_cv_.wait(lk, [&] { return durable_seq() >= seq || failed(); });
  return durable_seq() >= seq;
}

void Journal::close() {
  {
    std::lock_guard lk(mu_);
    if (stop_) return;
    stop_ = true;
  }
  work_cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  if (fd_ >= 0) {
    if (!failed() && cfg_.durability != Durability::kNone) (void)::fdatasync(fd_);
    ::close(fd_);
    fd_ = -1;
  }
}

Journal::Stats Journal::stats() const {
  std::lock_guard lk(mu_);
  return stats_;
}

Status Journal::drop_segments_through(uint64_t seq) {
  const auto segments = list_segments(cfg_.dir);
  // A segment is covered when the next one starts at or before seq + 1; the last one never is.
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    if (segments[i + 1].first_seq > seq + 1) break;
    if (Status s = remove_file(segments[i].path); !s.ok()) return s;
  }
  return Status();
}

}  // namespace tachyon::store
