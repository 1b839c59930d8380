#include "tachyon/store/snapshot.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <thread>

#include "tachyon/core/crc32c.hpp"

namespace tachyon::store {

namespace fs = std::filesystem;

namespace {
constexpr char kMagic[8] = {'T', 'C', 'H', 'Y', 'S', 'N', 'A', 'P'};
// Version 2: the body is checked in chunks of kChunkBytes, whose CRC-32Cs follow it (the
// header's checksum field holds the CRC of that table), so a start decodes each chunk as soon as
// it is read and checked instead of after the whole file. Version 1 (one CRC over the whole body)
// still loads.
constexpr uint32_t kSnapshotVersion = 2;
constexpr size_t kChunkBytes = size_t{1} << 20;
constexpr size_t kMaxChunks = size_t{1} << 16;  // 64 GB of body

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

std::string snapshot_path(const std::string& dir, uint64_t seq) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "/snapshot-%020llu.snap", static_cast<unsigned long long>(seq));
  return dir + buf;
}

std::vector<SnapshotInfo> list_snapshots(const std::string& dir, Disk& disk) {
  std::vector<SnapshotInfo> out;
  std::vector<std::string> names;
  if (!disk.list(dir, names).ok()) return out;
  for (const std::string& name : names) {
    unsigned long long seq = 0;
    if (name.size() == 34 && std::sscanf(name.c_str(), "snapshot-%20llu.snap", &seq) == 1) {
      SnapshotInfo s;
      s.seq = seq;
      s.path = dir + "/" + name;
      out.push_back(s);
    }
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.seq > b.seq; });
  return out;
}

namespace {
// Streams the body straight into the file with a checksum per chunk: no 200 MB staging buffer.
// The buffer is the caller's (kWriteBuffer bytes: the write buffer, then the chunks' table), so
// writing allocates nothing.
constexpr size_t kSinkBuffer = size_t{1} << 20;
constexpr size_t kWriteBuffer = kSinkBuffer + kMaxChunks * sizeof(uint32_t);
class FileSink final : public ByteSink {
 public:
  FileSink(Disk& disk, int fd, uint8_t* buf) : disk_(disk), fd_(fd), buf_(buf) {}
  void put(const void* data, size_t n) override {
    len_ += n;
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t done = 0; done < n;) {
      const size_t take = std::min(n - done, kChunkBytes - chunk_fill_);
      chunk_crc_ = crc32c(p + done, take, chunk_crc_);
      chunk_fill_ += take;
      done += take;
      if (chunk_fill_ == kChunkBytes) end_chunk();
    }
    if (used_ + n > kSinkBuffer) flush();
    if (n >= kSinkBuffer) {
      write_all(p, n);
    } else {
      std::memcpy(buf_ + used_, p, n);
      used_ += n;
    }
  }
  void flush() {
    write_all(buf_, used_);
    used_ = 0;
  }
  // After the body: the chunks' table (the last chunk may be short). Returns its CRC.
  uint32_t write_table() {
    if (chunk_fill_ > 0) end_chunk();
    if (chunks_ > kMaxChunks) {  // a body past 64 GB: the table holds only kMaxChunks
      ok_ = false;
      error_ = Status::sys_error("snapshot body past 64 GB", EFBIG);
      return 0;
    }
    const auto* table = buf_ + kSinkBuffer;
    if (ok_) write_all(table, chunks_ * sizeof(uint32_t));
    return crc32c(table, chunks_ * sizeof(uint32_t));
  }
  bool ok() const { return ok_; }
  const Status& error() const { return error_; }
  uint64_t length() const { return len_; }

 private:
  void write_all(const uint8_t* p, size_t n) {
    if (!ok_) return;
    if (Status s = disk_.write(fd_, p, n); !s.ok()) {
      ok_ = false;
      error_ = std::move(s);
    }
  }
  void end_chunk() {
    if (chunks_ < kMaxChunks) std::memcpy(buf_ + kSinkBuffer + chunks_ * 4, &chunk_crc_, 4);
    ++chunks_;
    chunk_crc_ = 0;
    chunk_fill_ = 0;
  }
  Disk& disk_;
  int fd_;
  uint8_t* buf_;
  Status error_;
  size_t used_ = 0;
  uint64_t len_ = 0;
  uint32_t chunk_crc_ = 0;
  size_t chunk_fill_ = 0, chunks_ = 0;
  bool ok_ = true;
};

// What writing a snapshot needs, made before it starts: in a fork() child the write itself must
// not allocate (another thread of the parent may have held an allocator lock at the fork).
struct SnapshotTarget {
  Disk* disk;
  std::string dir, path, tmp;
  uint8_t* buf = nullptr;  // kWriteBuffer bytes
};

SnapshotTarget make_target(Disk& disk, const std::string& dir, uint64_t seq, uint8_t* buf) {
  SnapshotTarget t{&disk, dir, snapshot_path(dir, seq), {}, buf};
  t.tmp = t.path + ".tmp";
  return t;
}

// The header: what the body holds and its checksums.
std::array<uint8_t, kSnapshotHeaderSize> snapshot_header(uint64_t seq, uint64_t hash, uint64_t len,
                                                         uint32_t table_crc) {
  std::array<uint8_t, kSnapshotHeaderSize> head{};
  std::memcpy(head.data(), kMagic, 8);
  std::memcpy(head.data() + 8, &kSnapshotVersion, 4);
  std::memcpy(head.data() + 16, &seq, 8);
  std::memcpy(head.data() + 24, &hash, 8);
  std::memcpy(head.data() + 32, &len, 8);
  std::memcpy(head.data() + 40, &table_crc, 4);
  const uint32_t head_crc = crc32c(head.data(), 44);
  std::memcpy(head.data() + 44, &head_crc, 4);
  return head;
}

// Allocates nothing unless it fails (the error's message). The file appears under its name only
// whole and synced (a temp file renamed), and the name is synced before it counts as written.
Status write_to(const Engine& e, const SnapshotTarget& t, SnapshotInfo* out) {
  Disk& disk = *t.disk;
  const uint64_t seq = e.last_seq(), hash = e.state_hash();
  int fd = -1;
  if (Status s = disk.open(t.tmp, OpenMode::kCreateTruncate, fd); !s.ok()) return s;
  std::array<uint8_t, kSnapshotHeaderSize> head{};
  Status s = disk.write(fd, head.data(), head.size());  // the real one is written last
  FileSink body(disk, fd, t.buf);
  uint32_t table_crc = 0;
  if (s.ok()) {
    e.save(body);
    body.flush();
    table_crc = body.write_table();
    if (!body.ok()) s = body.error();
  }
  const uint64_t len = body.length();
  head = snapshot_header(seq, hash, len, table_crc);
  if (s.ok()) s = disk.pwrite(fd, head.data(), head.size(), 0);
  if (s.ok()) s = disk.sync(fd);
  disk.close(fd);
  if (s.ok()) s = disk.rename(t.tmp, t.path);
  if (!s.ok()) {
    (void)disk.remove(t.tmp);
    return Status::sys_error("write snapshot " + t.tmp + ": " + s.message(), s.sys_errno());
  }
  if (Status d = disk.sync_dir(t.dir); !d.ok()) return d;
  const uint64_t table = (len + kChunkBytes - 1) / kChunkBytes * sizeof(uint32_t);
  if (out != nullptr) *out = SnapshotInfo{seq, hash, head.size() + len + table, t.path};
  return Status();
}
}  // namespace

Status write_snapshot(const Engine& e, const std::string& dir, SnapshotInfo* out, Disk& disk) {
  if (Status s = disk.make_dirs(dir); !s.ok()) return s;
  std::vector<uint8_t> buf(kWriteBuffer);
  return write_to(e, make_target(disk, dir, e.last_seq(), buf.data()), out);
}

Status load_snapshot(const std::string& path, Engine& fresh, SnapshotInfo& info, bool check_hash,
                     std::shared_ptr<const SavedAccounts>* saved, Disk& disk) {
  // Mapped, not copied: start-up reads the file once. Kept mapped by `saved`, if asked.
  const int64_t t0 = now_ns();
  std::shared_ptr<const FileBytes> mapping;
  if (Status s = disk.map(path, mapping); !s.ok()) return s;
  const FileBytes& data = *mapping;
  info.read_seconds = static_cast<double>(now_ns() - t0) / 1e9;
  auto bad = [&](const std::string& why) { return Status::error("snapshot " + path + ": " + why); };
  if (data.size() < kSnapshotHeaderSize) return bad("shorter than its header");
  uint32_t version = 0, body_crc = 0, head_crc = 0;
  uint64_t len = 0;
  std::memcpy(&version, data.data() + 8, 4);
  std::memcpy(&info.seq, data.data() + 16, 8);
  std::memcpy(&info.state_hash, data.data() + 24, 8);
  std::memcpy(&len, data.data() + 32, 8);
  std::memcpy(&body_crc, data.data() + 40, 4);
  std::memcpy(&head_crc, data.data() + 44, 4);
  if (std::memcmp(data.data(), kMagic, 8) != 0 || head_crc != crc32c(data.data(), 44))
    return bad("header corrupt");
  if (version != 1 && version != kSnapshotVersion)
    return bad("unsupported version " + std::to_string(version));
  const size_t room = data.size() - kSnapshotHeaderSize;
  const uint64_t chunks = version == 1 ? 0 : (len + kChunkBytes - 1) / kChunkBytes;
  if (len > room || (version == 1 ? room - len : (room - len) / sizeof(uint32_t)) != chunks ||
      (room - len) % sizeof(uint32_t) != 0)
    return bad("body length does not match the file (truncated?)");
  const uint8_t* body = data.data() + kSnapshotHeaderSize;
  // No byte is decoded before its checksum held: the decoder bounds every count and index, but
  // corrupt prices and sizes would reach its arithmetic before a mismatch could refuse them.
  // Version 1: the whole body first. Version 2: a helper checks the chunks in order while this
  // thread decodes behind it (the decoder's reads wait for `ready`), so reading the file from
  // the disk, checking it and decoding it overlap.
  const int64_t t1 = now_ns();
  std::atomic<size_t> ready{0};
  std::atomic<bool> stop{false};
  uint64_t bad_chunk = UINT64_MAX;
  std::jthread verifier;
  if (version == 1) {
    if (crc32c(body, len) != body_crc) return bad("body checksum mismatch");
    ready.store(len);
    info.verify_seconds = static_cast<double>(now_ns() - t1) / 1e9;
  } else {
    const uint8_t* table = body + len;
    if (crc32c(table, chunks * sizeof(uint32_t)) != body_crc) return bad("chunk table corrupt");
    verifier = std::jthread([&, table] {
      for (uint64_t k = 0; k < chunks && !stop.load(std::memory_order_relaxed); ++k) {
        const size_t from = k * kChunkBytes, n = std::min<size_t>(kChunkBytes, len - from);
        uint32_t want;
        std::memcpy(&want, table + k * sizeof(uint32_t), sizeof(want));
        if (crc32c(body + from, n) != want) {
          bad_chunk = k;
          ready.store(ByteSource::kNotReady, std::memory_order_release);
          return;
        }
        ready.store(from + n, std::memory_order_release);
      }
      info.verify_seconds = static_cast<double>(now_ns() - t1) / 1e9;
    });
  }
  ByteSource in(body, len, &ready);
  // The state hash, checked right after, proves the loaded state is the one that was saved
  // (whose invariants held): the separate validate() pass would only repeat that.
  auto accounts = saved != nullptr ? std::make_shared<SavedAccounts>() : nullptr;
  Status loaded = fresh.load(in, /*validate_after=*/false, accounts.get());
  stop.store(true, std::memory_order_relaxed);
  if (verifier.joinable()) verifier.join();
  if (bad_chunk != UINT64_MAX)
    return bad("checksum mismatch in chunk " + std::to_string(bad_chunk) + " (bytes from " +
               std::to_string(bad_chunk * kChunkBytes) + ")");
  if (!loaded.ok()) return bad(loaded.message());
  if (check_hash && fresh.state_hash() != info.state_hash)
    return bad("state hash differs after loading");
  if (fresh.last_seq() != info.seq) return bad("seq differs after loading");
  info.path = path;
  info.bytes = data.size();
  if (saved != nullptr) {
    accounts->owner = std::move(mapping);
    *saved = std::move(accounts);
  }
  return Status();
}

Status prune_snapshots(const std::string& dir, size_t keep, uint64_t also_keep, Disk& disk) {
  const auto all = list_snapshots(dir, disk);
  for (size_t i = keep; i < all.size(); ++i) {
    if (also_keep != 0 && all[i].seq == also_keep) continue;
    if (Status s = disk.remove(all[i].path); !s.ok()) return s;
  }
  return Status();
}

// ---- copy-on-write snapshots ----

ForkSnapshotter::~ForkSnapshotter() {
  if (busy()) (void)wait();
}

Status ForkSnapshotter::start(const Engine& e, const std::string& dir, int64_t* pause_ns) {
  if (busy()) return Status::error("a snapshot is already being written");
  if (dir != made_dir_) {
    if (Status s = posix_disk().make_dirs(dir); !s.ok()) return s;
    made_dir_ = dir;
  }
  if (buf_ == nullptr) buf_ = std::make_unique<uint8_t[]>(kWriteBuffer);
  const SnapshotTarget target = make_target(posix_disk(), dir, e.last_seq(), buf_.get());
  const pid_t parent = ::getpid();
  const int64_t t0 = now_ns();
  const pid_t pid = ::fork();
  if (pid < 0) return Status::error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // The child: a frozen copy of the engine; write it and leave without cleanup. It calls no
    // malloc (write_to() allocates nothing on success): a thread of the parent may have held an
    // allocator lock at the fork, and the child has only this thread to ever release it (ASan's
    // allocator, for one, would deadlock here). A writer whose server died is killed with it: a
    // restarted server must not find an orphan still writing into its data dir.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(2);  // died before the prctl took effect
    const Status s = write_to(e, target, nullptr);
    if (!s.ok()) std::fprintf(stderr, "snapshot: %s\n", s.message().c_str());
    ::_exit(s.ok() ? 0 : 1);
  }
  if (pause_ns != nullptr) *pause_ns = now_ns() - t0;
  child_ = pid;
  dir_ = dir;
  seq_ = e.last_seq();
  return Status();
}

Status ForkSnapshotter::reap(int wstatus) {
  child_ = -1;
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) {
    last_written_ = seq_;
    return Status();
  }
  const std::string how = WIFEXITED(wstatus) ? "exit code " + std::to_string(WEXITSTATUS(wstatus))
                          : WIFSIGNALED(wstatus) ? "signal " + std::to_string(WTERMSIG(wstatus))
                                                 : "status " + std::to_string(wstatus);
  return Status::error("snapshot writer for seq " + std::to_string(seq_) + " failed (" + how + ")");
}

bool ForkSnapshotter::poll(Status& result) {
  if (!busy()) return false;
  int ws = 0;
  const pid_t r = ::waitpid(child_, &ws, WNOHANG);
  if (r == 0) return false;
  result = r < 0 ? (child_ = -1, Status::error("waitpid failed")) : reap(ws);
  return true;
}

Status ForkSnapshotter::wait() {
  if (!busy()) return Status();
  int ws = 0;
  while (::waitpid(child_, &ws, 0) < 0) {
    if (errno != EINTR) {
      child_ = -1;
      return Status::error("waitpid failed");
    }
  }
  return reap(ws);
}

Status retire_covered(Journal& journal, const std::string& dir, uint64_t seq, size_t keep,
                      uint64_t committed_seq) {
  Disk& disk = journal.disk();
  if (committed_seq >= seq) {  // the committer is past the snapshot: the usual case
    if (Status s = journal.drop_segments_through(seq); !s.ok()) return s;
    return prune_snapshots(dir, keep, 0, disk);
  }
  uint64_t base = 0;  // the newest snapshot the committer could restart from (0: none)
  for (const SnapshotInfo& s : list_snapshots(dir, disk)) {
    if (s.seq <= committed_seq) {
      base = s.seq;
      break;
    }
  }
  if (base != 0) {
    if (Status s = journal.drop_segments_through(base); !s.ok()) return s;
  }
  return prune_snapshots(dir, keep, base, disk);
}

// ---- recovery ----

Status recover(const std::string& dir, const EngineConfig& cfg, std::unique_ptr<Engine>& out,
               RecoveryReport& report, const RecoverOptions& opt) {
  const ReplayedFn& replayed = opt.replayed;
  const uint64_t until_seq = opt.until_seq;
  UpdateSink* const updates = opt.updates;
  const bool repair = opt.repair, defer_hash_check = opt.defer_hash_check;
  std::shared_ptr<const SavedAccounts>* const saved_accounts = opt.saved_accounts;
  const int64_t t0 = now_ns();
  report = RecoveryReport{};
  Disk& disk = *opt.disk;
  if (saved_accounts != nullptr) saved_accounts->reset();
  if (Status s = disk.make_dirs(dir); !s.ok()) return s;
  std::unique_ptr<Engine> engine;
  std::string snapshot_path;
  for (const SnapshotInfo& cand : list_snapshots(dir, disk)) {
    if (cand.seq > until_seq) continue;
    const int64_t t_load = now_ns();
    auto e = std::make_unique<Engine>(cfg);
    SnapshotInfo info;
    if (Status s = load_snapshot(cand.path, *e, info, !defer_hash_check, saved_accounts, disk);
        !s.ok()) {
      report.skipped_snapshots.push_back(s.message());
      continue;
    }
    engine = std::move(e);
    report.snapshot_read_seconds = info.read_seconds;
    report.snapshot_verify_seconds = info.verify_seconds;
    report.snapshot_decode_seconds = std::max(0.0, static_cast<double>(now_ns() - t_load) / 1e9 -
                                                       info.read_seconds - info.verify_seconds);
    report.from_snapshot = true;
    report.snapshot_seq = info.seq;
    report.snapshot_hash = info.state_hash;
    report.hash_check_pending = defer_hash_check;
    snapshot_path = cand.path;
    break;
  }
  if (!engine) engine = std::make_unique<Engine>(cfg);
  // The journal must continue the state recovery starts from. One that begins later (its older
  // segments were retired under a snapshot that no longer loads) would lose everything before
  // it without a word when it holds no record yet.
  if (const uint64_t first = first_journal_seq(dir, disk); first > report.snapshot_seq + 1) {
    std::string why = "the journal starts at seq " + std::to_string(first) + ", but " +
                      (report.from_snapshot ? "the newest snapshot that loads covers seq " +
                                                  std::to_string(report.snapshot_seq)
                                            : std::string("no snapshot loads"));
    for (const std::string& skipped : report.skipped_snapshots) why += "; skipped: " + skipped;
    return Status::error(why);
  }
  NullSink sink;
  if (opt.before_replay) opt.before_replay(*engine);
  uint64_t next = report.snapshot_seq + 1;
  Status gap;
  Status s = replay_journal(
      dir, report.snapshot_seq,
      [&](const Tx& tx) {
        if (!gap.ok() || tx.h.seq > until_seq) return;
        if (tx.h.seq != next) {
          gap = Status::error("journal does not continue the snapshot: expected seq " +
                              std::to_string(next) + ", found " + std::to_string(tx.h.seq));
          return;
        }
        if (report.hash_check_pending) {  // deferred, but the state is about to move: check now
          report.hash_check_pending = false;
          if (engine->state_hash() != report.snapshot_hash) {
            gap = Status::error("snapshot " + snapshot_path + ": state hash differs after loading");
            return;
          }
        }
        const TxResult r = engine->execute(tx, updates != nullptr ? *updates : sink);
        if (replayed) replayed(tx, r);
        ++next;
        ++report.replayed;
      },
      report.journal, repair, disk);
  if (!s.ok()) return s;
  if (!gap.ok()) return gap;
  report.last_seq = next - 1;
  report.seconds = static_cast<double>(now_ns() - t0) / 1e9;
  out = std::move(engine);
  return Status();
}

}  // namespace tachyon::store
