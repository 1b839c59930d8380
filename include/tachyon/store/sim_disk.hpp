#pragma once
// A simulated disk (docs/ARCHITECTURE.md "Storage and the simulated disk"): files in memory, with
// what a power cut would keep kept apart from what the process sees.
//
// Each file has its current bytes and its synced bytes (as of its last sync); each directory
// entry exists for the process at once and for a power cut only after sync_dir. A power cut
// (restart_after_power_cut) keeps the durable names; each of their files keeps its synced bytes
// plus, chosen by the seed, none of the unsynced ones, a prefix of them, or a prefix whose last
// 4 KiB page is torn (each 512-byte sector of it old or new); synced bytes written over since
// may also come back as any mix of old, new and torn pages. Synced bytes the process has not
// written over since never change.
//
// Faults, all deterministic: a power cut after N more mutating calls (that call and every later
// one fail until the restart), one chosen call failing with an errno, a capacity past which
// writes fail with ENOSPC after writing what fits. A process crash (crash()) keeps everything the
// process wrote (the page cache survives it) and closes every handle.
//
// Threads: any; one lock per call.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "tachyon/store/disk.hpp"

namespace tachyon::store {

class SimDisk final : public Disk {
 public:
  enum class Call : uint8_t { kOpen, kWrite, kSync, kTruncate, kRename, kRemove, kSyncDir };

  explicit SimDisk(uint64_t seed) : rng_(seed | 1) {}

  // ---- Disk ----
  Status open(const std::string& path, OpenMode mode, int& fd) override;
  Status write(int fd, const void* p, size_t n) override;
  Status pwrite(int fd, const void* p, size_t n, uint64_t offset) override;
  Status sync(int fd) override;
  Status truncate(int fd, uint64_t size) override;
  Status size(int fd, uint64_t& out) override;
  void close(int fd) override;
  Status read(const std::string& path, std::vector<uint8_t>& out) override;
  Status map(const std::string& path, std::shared_ptr<const FileBytes>& out) override;
  Status rename(const std::string& from, const std::string& to) override;
  Status remove(const std::string& path) override;
  Status list(const std::string& dir, std::vector<std::string>& names) override;
  Status make_dirs(const std::string& dir) override;
  Status sync_dir(const std::string& dir) override;

  // ---- faults ----
  // The power goes off at the `calls`-th mutating call from now (1: the next one).
  void cut_power_after(uint64_t calls);
  bool powered_off() const;
  // Power back on: every file becomes what the cut left of it (see above); handles are gone.
  void restart_after_power_cut();
  // The process is dying: from now on every call fails (a dead process writes nothing more,
  // whatever its destructors try).
  void stop_process();
  // The process died and starts again: handles are gone, the bytes it wrote stay (they are in
  // the page cache, which a crash does not lose).
  void crash();
  // The next call of kind `call` fails with `err` (EIO, ENOSPC...). A failed sync makes nothing
  // durable; a failed write writes nothing.
  void fail_next(Call call, int err);
  // Writes past this many bytes in all files fail with ENOSPC (after writing what fits).
  void set_capacity(uint64_t bytes);
  uint64_t used_bytes() const;

  // ---- what happened ----
  uint64_t mutating_calls() const;
  uint64_t power_cuts() const;
  uint64_t faults_injected() const;
  // Files a power cut gave back as a mix of old, new and torn pages (written-over synced bytes).
  uint64_t scattered_restores() const;
  // A disk holding only what a power cut now would certainly keep: durable names, synced bytes.
  std::unique_ptr<SimDisk> durable_copy() const;

 private:
  struct Inode {
    std::vector<uint8_t> data;    // what the process reads
    std::vector<uint8_t> synced;  // what survives a power cut
  };
  struct Handle {
    std::shared_ptr<Inode> inode;
    OpenMode mode;
    uint64_t pos = 0;
  };
  using Names = std::map<std::string, std::shared_ptr<Inode>>;

  Status enter(Call call);  // counts the call, fires the planned fault (lock held)
  Status write_at(Handle& h, const uint8_t* p, size_t n, uint64_t offset);
  Handle* handle(int fd);
  uint64_t used() const;  // lock held
  std::vector<uint8_t> torn(const Inode& f);
  std::vector<uint8_t> scattered(const std::vector<uint8_t>& old, const std::vector<uint8_t>& now);
  uint64_t next_random();

  mutable std::mutex mu_;
  Names names_, durable_;
  std::set<std::string> dirs_;
  std::map<int, Handle> handles_;
  int next_fd_ = 3;
  uint64_t rng_;
  uint64_t calls_ = 0, cut_at_ = 0, cuts_ = 0, faults_ = 0, scattered_ = 0;
  bool off_ = false;
  bool stopped_ = false;
  bool fail_armed_ = false;
  Call fail_call_ = Call::kWrite;
  int fail_err_ = 0;
  uint64_t capacity_ = UINT64_MAX;
};

}  // namespace tachyon::store
