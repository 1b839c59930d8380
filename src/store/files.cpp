#include "tachyon/store/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace tachyon::store {

namespace {
Status sys_error(const std::string& what, const std::string& path) {
  return Status::error(what + " " + path + ": " + std::strerror(errno));
}
Status write_fd(int fd, const uint8_t* p, size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return sys_error("write", path);
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status();
}
}  // namespace

Status read_file(const std::string& path, std::vector<uint8_t>& out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return sys_error("open", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return sys_error("stat", path);
  }
  out.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < out.size()) {
    const ssize_t r = ::read(fd, out.data() + got, out.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  out.resize(got);
  return Status();
}

Status truncate_file(const std::string& path, uint64_t size) {
  if (::truncate(path.c_str(), static_cast<off_t>(size)) != 0) return sys_error("truncate", path);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    (void)::fdatasync(fd);
    ::close(fd);
  }
  return Status();
}

Status remove_file(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return sys_error("unlink", path);
  return Status();
}

Status make_dirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::error("create directory " + dir + ": " + ec.message());
  return Status();
}

Status sync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return sys_error("open directory", dir);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return sys_error("fsync directory", dir);
  return Status();
}

Status write_file_atomic(const std::string& path, const std::vector<uint8_t>& head,
                         const std::vector<uint8_t>& body) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return sys_error("create", tmp);
  Status s = write_fd(fd, head.data(), head.size(), tmp);
  if (s.ok()) s = write_fd(fd, body.data(), body.size(), tmp);
  if (s.ok() && ::fsync(fd) != 0) s = sys_error("fsync", tmp);
  ::close(fd);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) return sys_error("rename", tmp);
  const auto slash = path.find_last_of('/');
  return sync_dir(slash == std::string::npos ? "." : path.substr(0, slash));
}

}  // namespace tachyon::store
