#include "tachyon/store/disk.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace tachyon::store {

namespace {

Status sys_error(const std::string& what, const std::string& path) {
  const int err = errno;
  return Status::sys_error(what + " " + path + ": " + std::strerror(err), err);
}
Status fd_error(const char* what, int fd) {
  const int err = errno;
  return Status::sys_error(
      std::string(what) + " (fd " + std::to_string(fd) + "): " + std::strerror(err), err);
}

// A read-only mapping of a whole file.
class MappedBytes final : public FileBytes {
 public:
  MappedBytes(uint8_t* p, size_t n) : p_(p), n_(n) {}
  ~MappedBytes() override {
    if (p_ != nullptr) ::munmap(p_, n_);
  }
  const uint8_t* data() const override { return p_; }
  size_t size() const override { return n_; }

 private:
  uint8_t* p_;
  size_t n_;
};

class PosixDisk final : public Disk {
 public:
  Status open(const std::string& path, OpenMode mode, int& fd) override {
    int flags = O_WRONLY | O_CLOEXEC;
    switch (mode) {
      case OpenMode::kAppend: flags |= O_APPEND; break;
      case OpenMode::kCreateAppend: flags |= O_CREAT | O_APPEND; break;
      case OpenMode::kCreateTruncate: flags |= O_CREAT | O_TRUNC; break;
      case OpenMode::kCreateNew: flags |= O_CREAT | O_EXCL; break;
      case OpenMode::kUpdate: break;
    }
    fd = ::open(path.c_str(), flags, mode == OpenMode::kCreateNew ? 0600 : 0644);
    return fd < 0 ? sys_error("open", path) : Status();
  }
  Status write(int fd, const void* data, size_t n) override {
    const auto* p = static_cast<const uint8_t*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return fd_error("write", fd);
      if (w == 0) return Status::sys_error("write: no progress", EIO);
      p += w;
      n -= static_cast<size_t>(w);
    }
    return Status();
  }
  Status pwrite(int fd, const void* data, size_t n, uint64_t offset) override {
    const auto* p = static_cast<const uint8_t*>(data);
    while (n > 0) {
      const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(offset));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return fd_error("pwrite", fd);
      if (w == 0) return Status::sys_error("pwrite: no progress", EIO);
      p += w;
      n -= static_cast<size_t>(w);
      offset += static_cast<uint64_t>(w);
    }
    return Status();
  }
  Status sync(int fd) override {
    return ::fdatasync(fd) == 0 ? Status() : fd_error("fdatasync", fd);
  }
  Status truncate(int fd, uint64_t size) override {
    return ::ftruncate(fd, static_cast<off_t>(size)) == 0 ? Status() : fd_error("ftruncate", fd);
  }
  Status size(int fd, uint64_t& out) override {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return fd_error("fstat", fd);
    out = static_cast<uint64_t>(st.st_size);
    return Status();
  }
  void close(int fd) override { ::close(fd); }

  Status read(const std::string& path, std::vector<uint8_t>& out) override;
  Status map(const std::string& path, std::shared_ptr<const FileBytes>& out) override;
  Status rename(const std::string& from, const std::string& to) override {
    return ::rename(from.c_str(), to.c_str()) == 0 ? Status() : sys_error("rename", from);
  }
  Status remove(const std::string& path) override {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return sys_error("unlink", path);
    return Status();
  }
  Status list(const std::string& dir, std::vector<std::string>& names) override {
    names.clear();
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
      if (e.is_regular_file(ec)) names.push_back(e.path().filename().string());
    return Status();
  }
  Status make_dirs(const std::string& dir) override {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status::sys_error("create directory " + dir + ": " + ec.message(), ec.value());
    return Status();
  }
  Status sync_dir(const std::string& dir) override {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return sys_error("open directory", dir);
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0)
      return Status::sys_error("fsync directory " + dir + ": " + std::strerror(err), err);
    return Status();
  }
};

// Opens `path` for reading and tells its size; on failure nothing is left open.
Status open_for_read(const std::string& path, int& fd, size_t& size) {
  fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return sys_error("open", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const Status s = sys_error("stat", path);
    ::close(fd);
    return s;
  }
  size = static_cast<size_t>(st.st_size);
  return Status();
}

Status PosixDisk::read(const std::string& path, std::vector<uint8_t>& out) {
  int fd = -1;
  size_t size = 0;
  if (Status s = open_for_read(path, fd, size); !s.ok()) return s;
  out.resize(size);
  size_t got = 0;
  while (got < out.size()) {
    const ssize_t r = ::read(fd, out.data() + got, out.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      const Status s = sys_error("read", path);
      ::close(fd);
      return s;
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  out.resize(got);
  return Status();
}

Status PosixDisk::map(const std::string& path, std::shared_ptr<const FileBytes>& out) {
  int fd = -1;
  size_t n = 0;
  if (Status s = open_for_read(path, fd, n); !s.ok()) return s;
  uint8_t* p = nullptr;
  if (n > 0) {
    void* m = ::mmap(nullptr, n, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (m == MAP_FAILED) {
      const Status s = sys_error("mmap", path);
      ::close(fd);
      return s;
    }
    p = static_cast<uint8_t*>(m);
    // Never locked (mlockall's MCL_FUTURE would): a snapshot's account base keeps it mapped for
    // the server's life, as page cache the kernel may drop and read again.
    (void)::munlock(p, n);
  }
  ::close(fd);
  out = std::make_shared<MappedBytes>(p, n);
  return Status();
}

}  // namespace

Disk& posix_disk() {
  static PosixDisk disk;
  return disk;
}

std::string dir_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

bool out_of_space(const Status& s) { return s.sys_errno() == ENOSPC || s.sys_errno() == EDQUOT; }

Status Disk::truncate_file(const std::string& path, uint64_t size) {
  int fd = -1;
  if (Status s = open(path, OpenMode::kAppend, fd); !s.ok()) return s;
  Status s = truncate(fd, size);
  if (s.ok()) s = sync(fd);
  close(fd);
  return s;
}

Status Disk::write_file_atomic(const std::string& path, const std::vector<uint8_t>& head,
                               const std::vector<uint8_t>& body) {
  const std::string tmp = path + ".tmp";
  int fd = -1;
  if (Status s = open(tmp, OpenMode::kCreateTruncate, fd); !s.ok()) return s;
  Status s = write(fd, head.data(), head.size());
  if (s.ok()) s = write(fd, body.data(), body.size());
  if (s.ok()) s = sync(fd);
  close(fd);
  if (s.ok()) s = rename(tmp, path);
  if (!s.ok()) {
    (void)remove(tmp);
    return s;
  }
  return sync_dir(dir_of(path));
}

Status Disk::write_file_new(const std::string& path, const std::string& bytes) {
  int fd = -1;
  if (Status s = open(path, OpenMode::kCreateNew, fd); !s.ok()) return s;
  Status s = write(fd, bytes.data(), bytes.size());
  if (s.ok()) s = sync(fd);
  close(fd);
  if (!s.ok()) {
    (void)remove(path);
    return s;
  }
  return sync_dir(dir_of(path));
}

}  // namespace tachyon::store
