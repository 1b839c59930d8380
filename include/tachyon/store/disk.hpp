#pragma once
// The one door to storage (docs/ARCHITECTURE.md "Storage and the simulated disk"). Every file the
// server writes goes through a Disk: journal segments, snapshots, blocks.log, history.bin,
// txindex.bin, the operator key. posix_disk() is the real one; SimDisk (sim_disk.hpp) keeps files
// in memory and can lose what was not synced, tear it, or fail a chosen call, for the power-cut
// simulation.
//
// The durability contract both implement, and the code above relies on:
// - a file's bytes (and its size) survive a power cut only after sync(fd);
// - a name (a created, renamed or removed file) survives only after sync_dir of its directory;
// - directories themselves (make_dirs) are durable at once.
//
// Threads: PosixDisk is stateless (any thread; a fork() child too: nothing allocates unless a
// call fails). SimDisk takes a lock per call.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tachyon/core/status.hpp"

namespace tachyon::store {

enum class OpenMode : uint8_t {
  kAppend,          // an existing file; every write goes to its end
  kCreateAppend,    // created when missing; every write goes to its end
  kCreateTruncate,  // created or emptied; writes go to the file position, pwrite anywhere
  kCreateNew,       // must not exist yet (a key that must never be overwritten)
  kUpdate,          // an existing file, kept as it is; writes go to the file position, pwrite
                    // anywhere (a preallocated journal segment)
};

// A whole file's bytes, read-only (mapped by the real disk, copied by the simulated one).
class FileBytes {
 public:
  virtual ~FileBytes() = default;
  virtual const uint8_t* data() const = 0;
  virtual size_t size() const = 0;
};

class Disk {
 public:
  virtual ~Disk() = default;

  virtual Status open(const std::string& path, OpenMode mode, int& fd) = 0;
  // All n bytes, or an error; a failure may leave part of them written (a short write, ENOSPC).
  virtual Status write(int fd, const void* p, size_t n) = 0;
  virtual Status pwrite(int fd, const void* p, size_t n, uint64_t offset) = 0;
  virtual Status sync(int fd) = 0;  // fdatasync
  virtual Status truncate(int fd, uint64_t size) = 0;
  virtual Status size(int fd, uint64_t& out) = 0;
  virtual void close(int fd) = 0;

  virtual Status read(const std::string& path, std::vector<uint8_t>& out) = 0;
  virtual Status map(const std::string& path, std::shared_ptr<const FileBytes>& out) = 0;
  virtual Status rename(const std::string& from, const std::string& to) = 0;
  virtual Status remove(const std::string& path) = 0;  // a missing file is not an error
  // The names of the regular files in `dir` (not sorted); a missing dir is empty.
  virtual Status list(const std::string& dir, std::vector<std::string>& names) = 0;
  virtual Status make_dirs(const std::string& dir) = 0;
  virtual Status sync_dir(const std::string& dir) = 0;

  // Built on the calls above.
  // Cuts the file to `size` bytes and syncs it.
  Status truncate_file(const std::string& path, uint64_t size);
  // Writes path.tmp, syncs it, renames it over path and syncs the directory: all or nothing.
  Status write_file_atomic(const std::string& path, const std::vector<uint8_t>& head,
                           const std::vector<uint8_t>& body);
  // Creates path (which must not exist) with `bytes`, synced, its name synced too.
  Status write_file_new(const std::string& path, const std::string& bytes);
};

// The real file system (POSIX calls, errno in every error).
Disk& posix_disk();

// The directory part of a path ("." when it has none).
std::string dir_of(const std::string& path);

// Errors that mean "no room now" (ENOSPC, EDQUOT): the write can be retried once space returns.
bool out_of_space(const Status& s);

}  // namespace tachyon::store
