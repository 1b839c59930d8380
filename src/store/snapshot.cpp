#include "tachyon/store/snapshot.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "tachyon/core/crc32c.hpp"
#include "tachyon/store/files.hpp"

namespace tachyon::store {

namespace fs = std::filesystem;

namespace {
constexpr char kMagic[8] = {'T', 'C', 'H', 'Y', 'S', 'N', 'A', 'P'};
constexpr uint32_t kSnapshotVersion = 1;

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

std::vector<SnapshotInfo> list_snapshots(const std::string& dir) {
  std::vector<SnapshotInfo> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    unsigned long long seq = 0;
    if (name.size() == 34 && std::sscanf(name.c_str(), "snapshot-%20llu.snap", &seq) == 1) {
      SnapshotInfo s;
      s.seq = seq;
      s.path = e.path().string();
      out.push_back(s);
    }
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.seq > b.seq; });
  return out;
}

Status write_snapshot(const Engine& e, const std::string& dir, SnapshotInfo* out) {
  VectorSink body;
  e.save(body);
  std::vector<uint8_t> head(kSnapshotHeaderSize, 0);
  const uint64_t seq = e.last_seq(), hash = e.state_hash(), len = body.bytes.size();
  const uint32_t body_crc = crc32c(body.bytes.data(), body.bytes.size());
  std::memcpy(head.data(), kMagic, 8);
  std::memcpy(head.data() + 8, &kSnapshotVersion, 4);
  std::memcpy(head.data() + 16, &seq, 8);
  std::memcpy(head.data() + 24, &hash, 8);
  std::memcpy(head.data() + 32, &len, 8);
  std::memcpy(head.data() + 40, &body_crc, 4);
  const uint32_t head_crc = crc32c(head.data(), 44);
  std::memcpy(head.data() + 44, &head_crc, 4);
  if (Status s = make_dirs(dir); !s.ok()) return s;
  const std::string path = snapshot_path(dir, seq);
  if (Status s = write_file_atomic(path, head, body.bytes); !s.ok()) return s;
  if (out != nullptr) *out = SnapshotInfo{seq, hash, head.size() + len, path};
  return Status();
}

Status load_snapshot(const std::string& path, Engine& fresh, SnapshotInfo& info) {
  std::vector<uint8_t> data;
  if (Status s = read_file(path, data); !s.ok()) return s;
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
  if (version != kSnapshotVersion) return bad("unsupported version " + std::to_string(version));
  if (len != data.size() - kSnapshotHeaderSize)
    return bad("body length does not match the file (truncated?)");
  const uint8_t* body = data.data() + kSnapshotHeaderSize;
  if (crc32c(body, len) != body_crc) return bad("body checksum mismatch");
  ByteSource in(body, len);
  if (Status s = fresh.load(in); !s.ok()) return bad(s.message());
  if (fresh.state_hash() != info.state_hash) return bad("state hash differs after loading");
  if (fresh.last_seq() != info.seq) return bad("seq differs after loading");
  info.path = path;
  info.bytes = data.size();
  return Status();
}

Status prune_snapshots(const std::string& dir, size_t keep) {
  const auto all = list_snapshots(dir);
  for (size_t i = keep; i < all.size(); ++i) {
    if (Status s = remove_file(all[i].path); !s.ok()) return s;
  }
  return Status();
}

// ---- copy-on-write snapshots ----

ForkSnapshotter::~ForkSnapshotter() {
  if (busy()) (void)wait();
}

Status ForkSnapshotter::start(const Engine& e, const std::string& dir, int64_t* pause_ns) {
  if (busy()) return Status::error("a snapshot is already being written");
  const int64_t t0 = now_ns();
  const pid_t pid = ::fork();
  if (pid < 0) return Status::error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {  // child: a frozen copy of the engine; write it and leave without cleanup
    const Status s = write_snapshot(e, dir);
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
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) return Status();
  return Status::error("snapshot writer for seq " + std::to_string(seq_) + " failed");
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

// ---- recovery ----

Status recover(const std::string& dir, const EngineConfig& cfg, std::unique_ptr<Engine>& out,
               RecoveryReport& report) {
  const int64_t t0 = now_ns();
  report = RecoveryReport{};
  if (Status s = make_dirs(dir); !s.ok()) return s;
  std::unique_ptr<Engine> engine;
  for (const SnapshotInfo& cand : list_snapshots(dir)) {
    auto e = std::make_unique<Engine>(cfg);
    SnapshotInfo info;
    if (Status s = load_snapshot(cand.path, *e, info); !s.ok()) {
      report.skipped_snapshots.push_back(s.message());
      continue;
    }
    engine = std::move(e);
    report.from_snapshot = true;
    report.snapshot_seq = info.seq;
    break;
  }
  if (!engine) engine = std::make_unique<Engine>(cfg);
  NullSink sink;
  uint64_t next = report.snapshot_seq + 1;
  Status gap;
  Status s = replay_journal(
      dir, report.snapshot_seq,
      [&](const Tx& tx) {
        if (!gap.ok()) return;
        if (tx.h.seq != next) {
          gap = Status::error("journal does not continue the snapshot: expected seq " +
                              std::to_string(next) + ", found " + std::to_string(tx.h.seq));
          return;
        }
        engine->execute(tx, sink);
        ++next;
        ++report.replayed;
      },
      report.journal);
  if (!s.ok()) return s;
  if (!gap.ok()) return gap;
  report.last_seq = next - 1;
  report.seconds = static_cast<double>(now_ns() - t0) / 1e9;
  out = std::move(engine);
  return Status();
}

}  // namespace tachyon::store
