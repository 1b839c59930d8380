#include "tachyon/store/sim_disk.hpp"

#include <cerrno>
#include <cstring>

namespace tachyon::store {

namespace {

constexpr size_t kPage = 4096, kSector = 512;

Status fail(const std::string& what, int err) {
  return Status::sys_error("simulated disk: " + what + ": " + std::strerror(err), err);
}

std::string trim_dir(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

class CopiedBytes final : public FileBytes {
 public:
  explicit CopiedBytes(std::vector<uint8_t> b) : b_(std::move(b)) {}
  const uint8_t* data() const override { return b_.data(); }
  size_t size() const override { return b_.size(); }

 private:
  std::vector<uint8_t> b_;
};

}  // namespace

uint64_t SimDisk::next_random() {  // splitmix64
  uint64_t z = (rng_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

Status SimDisk::enter(Call call) {
  if (off_) return fail("the power is off", EIO);
  if (stopped_) return fail("the process is gone", EIO);
  ++calls_;
  if (cut_at_ != 0 && calls_ >= cut_at_) {
    cut_at_ = 0;
    off_ = true;
    return fail("the power went off", EIO);
  }
  if (fail_armed_ && fail_call_ == call) {
    fail_armed_ = false;
    ++faults_;
    return fail("injected fault", fail_err_);
  }
  return Status();
}

SimDisk::Handle* SimDisk::handle(int fd) {
  const auto it = handles_.find(fd);
  return it == handles_.end() ? nullptr : &it->second;
}

Status SimDisk::open(const std::string& path, OpenMode mode, int& fd) {
  std::lock_guard lk(mu_);
  if (Status s = enter(Call::kOpen); !s.ok()) return s;
  if (dirs_.count(dir_of(path)) == 0) return fail("open " + path, ENOENT);
  auto it = names_.find(path);
  if (mode == OpenMode::kCreateNew && it != names_.end()) return fail("open " + path, EEXIST);
  if ((mode == OpenMode::kAppend || mode == OpenMode::kUpdate) && it == names_.end())
    return fail("open " + path, ENOENT);
  if (it == names_.end()) it = names_.emplace(path, std::make_shared<Inode>()).first;
  if (mode == OpenMode::kCreateTruncate) it->second->data.clear();
  fd = next_fd_++;
  handles_[fd] = Handle{it->second, mode, 0};
  return Status();
}

uint64_t SimDisk::used_bytes() const {
  std::lock_guard lk(mu_);
  return used();
}

uint64_t SimDisk::used() const {
  std::set<const Inode*> seen;
  uint64_t used = 0;
  for (const auto& [path, inode] : names_)
    if (seen.insert(inode.get()).second) used += inode->data.size();
  for (const auto& [fd, h] : handles_)  // unlinked but still open
    if (seen.insert(h.inode.get()).second) used += h.inode->data.size();
  return used;
}

Status SimDisk::write_at(Handle& h, const uint8_t* p, size_t n, uint64_t offset) {
  std::vector<uint8_t>& d = h.inode->data;
  const uint64_t used = this->used();
  const uint64_t end = offset + n;
  const uint64_t growth = end > d.size() ? end - d.size() : 0;
  size_t fits = n;
  if (growth > 0 && used + growth > capacity_) {
    const uint64_t room = capacity_ > used ? capacity_ - used : 0;
    fits = static_cast<size_t>(std::max<uint64_t>(d.size() + room, offset) - offset);
    fits = std::min(fits, n);
  }
  if (offset + fits > d.size()) d.resize(offset + fits);
  std::memcpy(d.data() + offset, p, fits);
  h.pos = offset + fits;
  return fits == n ? Status() : fail("write", ENOSPC);
}

Status SimDisk::write(int fd, const void* p, size_t n) {
  std::lock_guard lk(mu_);
  if (Status s = enter(Call::kWrite); !s.ok()) return s;
  Handle* h = handle(fd);
  if (h == nullptr) return fail("write", EBADF);
  const bool append = h->mode == OpenMode::kAppend || h->mode == OpenMode::kCreateAppend;
  return write_at(*h, static_cast<const uint8_t*>(p), n, append ? h->inode->data.size() : h->pos);
}

Status SimDisk::pwrite(int fd, const void* p, size_t n, uint64_t offset) {
  std::lock_guard lk(mu_);
  if (Status s = enter(Call::kWrite); !s.ok()) return s;
  Handle* h = handle(fd);
  if (h == nullptr) return fail("pwrite", EBADF);
  const uint64_t pos = h->pos;
  Status s = write_at(*h, static_cast<const uint8_t*>(p), n, offset);
  h->pos = pos;
  return s;
}

Status SimDisk::sync(int fd) {
  std::lock_guard lk(mu_);
  if (Status s = enter(Call::kSync); !s.ok()) return s;
  Handle* h = handle(fd);
  if (h == nullptr) return fail("fdatasync", EBADF);
  h->inode->synced = h->inode->data;
  return Status();
}

Status SimDisk::truncate(int fd, uint64_t size) {
  std::lock_guard lk(mu_);
  if (Status s = enter(Call::kTruncate); !s.ok()) return s;
  Handle* h = handle(fd);
  if (h == nullptr) return fail("ftruncate", EBADF);
  h->inode->data.resize(size);
  return Status();
}

Status SimDisk::size(int fd, uint64_t& out) {
  std::lock_guard lk(mu_);
  if (off_) return fail("fstat", EIO);
  Handle* h = handle(fd);
  if (h == nullptr) return fail("fstat", EBADF);
  out = h->inode->data.size();
  return Status();
}

void SimDisk::close(int fd) {
  std::lock_guard lk(mu_);
  handles_.erase(fd);
}

Status SimDisk::read(const std::string& path, std::vector<uint8_t>& out) {
  std::lock_guard lk(mu_);
  if (off_) return fail("read " + path, EIO);
  const auto it = names_.find(path);
  if (it == names_.end()) return fail("open " + path, ENOENT);
  out = it->second->data;
  return Status();
}

Status SimDisk::map(const std::string& path, std::shared_ptr<const FileBytes>& out) {
  std::vector<uint8_t> bytes;
  if (Status s = read(path, bytes); !s.ok()) return s;
  out = std::make_shared<CopiedBytes>(std::move(bytes));
  return Status();
}

Status SimDisk::rename(const std::string& from, const std::string& to) {
  std::lock_guard lk(mu_);
  if (Status s = enter(Call::kRename); !s.ok()) return s;
  const auto it = names_.find(from);
  if (it == names_.end()) return fail("rename " + from, ENOENT);
  if (dirs_.count(dir_of(to)) == 0) return fail("rename to " + to, ENOENT);
  names_[to] = it->second;
  names_.erase(from);
  return Status();
}

Status SimDisk::remove(const std::string& path) {
  std::lock_guard lk(mu_);
  if (Status s = enter(Call::kRemove); !s.ok()) return s;
  names_.erase(path);
  return Status();
}

Status SimDisk::list(const std::string& dir, std::vector<std::string>& names) {
  std::lock_guard lk(mu_);
  if (off_) return fail("list " + dir, EIO);
  names.clear();
  const std::string d = trim_dir(dir);
  for (const auto& [path, inode] : names_)
    if (dir_of(path) == d) names.push_back(path.substr(d.size() + 1));
  return Status();
}

Status SimDisk::make_dirs(const std::string& dir) {
  std::lock_guard lk(mu_);
  if (off_) return fail("mkdir " + dir, EIO);
  for (std::string d = trim_dir(dir); !d.empty() && d != "." && d != "/"; d = dir_of(d))
    dirs_.insert(d);
  return Status();
}

Status SimDisk::sync_dir(const std::string& dir) {
  std::lock_guard lk(mu_);
  if (Status s = enter(Call::kSyncDir); !s.ok()) return s;
  const std::string d = trim_dir(dir);
  if (dirs_.count(d) == 0) return fail("open directory " + d, ENOENT);
  for (auto it = durable_.begin(); it != durable_.end();)
    it = dir_of(it->first) == d ? durable_.erase(it) : std::next(it);
  for (const auto& [path, inode] : names_)
    if (dir_of(path) == d) durable_[path] = inode;
  return Status();
}

// ---- faults ----

void SimDisk::cut_power_after(uint64_t calls) {
  std::lock_guard lk(mu_);
  cut_at_ = calls_ + std::max<uint64_t>(calls, 1);
}

bool SimDisk::powered_off() const {
  std::lock_guard lk(mu_);
  return off_;
}

// What a power cut leaves of a file: its synced bytes, and of the rest none, a prefix, or a prefix
// whose last page is torn (each of its 512-byte sectors old or new). A file whose synced bytes were
// written over (a preallocated journal segment) may also keep any mix of its pages old, new or
// torn, in no order (scattered()), the growth past its synced size as a prefix.
std::vector<uint8_t> SimDisk::torn(const Inode& f) {
  const std::vector<uint8_t>& old = f.synced;
  const std::vector<uint8_t>& now = f.data;
  if (old == now) return old;
  const size_t lo = std::min(old.size(), now.size());
  const bool overwritten = lo > 0 && std::memcmp(old.data(), now.data(), lo) != 0;
  const uint64_t mode = next_random() % (overwritten ? 4 : 3);
  if (mode == 0) return old;
  if (mode == 3) {
    ++scattered_;
    return scattered(old, now);
  }
  const size_t hi = std::max(old.size(), now.size());
  const size_t len = lo + static_cast<size_t>(next_random() % (hi - lo + 1));
  std::vector<uint8_t> out(len, 0);
  std::memcpy(out.data(), now.data(), std::min(len, now.size()));
  if (mode == 1 || len == 0) return out;
  for (size_t from = (len - 1) / kPage * kPage; from < len; from += kSector) {
    if ((next_random() & 1) == 0) continue;  // this sector reached the media
    const size_t n = std::min(kSector, len - from);
    std::memset(out.data() + from, 0, n);
    if (from < old.size())
      std::memcpy(out.data() + from, old.data() + from, std::min(n, old.size() - from));
  }
  return out;
}

std::vector<uint8_t> SimDisk::scattered(const std::vector<uint8_t>& old,
                                        const std::vector<uint8_t>& now) {
  const size_t lo = std::min(old.size(), now.size()), hi = std::max(old.size(), now.size());
  const size_t len = lo + static_cast<size_t>(next_random() % (hi - lo + 1));
  std::vector<uint8_t> out(len, 0);
  std::memcpy(out.data(), old.data(), std::min(len, old.size()));
  for (size_t page = 0; page < len; page += kPage) {
    const size_t end = std::min(page + kPage, len);
    if (page < lo &&
        std::memcmp(old.data() + page, now.data() + page, std::min(end, lo) - page) == 0)
      continue;  // not written over
    // 0: old, 1: new, 2: each sector old or new; the growth is a prefix (new).
    const uint64_t fate = page >= lo ? 1 : next_random() % 3;
    for (size_t from = page; from < end && fate != 0; from += kSector) {
      if (fate == 2 && (next_random() & 1) == 0) continue;
      const size_t n = std::min(kSector, end - from);
      if (from < now.size())
        std::memcpy(out.data() + from, now.data() + from, std::min(n, now.size() - from));
    }
  }
  return out;
}

void SimDisk::restart_after_power_cut() {
  std::lock_guard lk(mu_);
  std::map<const Inode*, std::vector<uint8_t>> left;  // each file once, however many names
  for (const auto& [path, inode] : durable_)
    if (left.count(inode.get()) == 0) left[inode.get()] = torn(*inode);
  for (auto& [path, inode] : durable_) {
    inode->data = left[inode.get()];
    inode->synced = inode->data;
  }
  names_ = durable_;
  handles_.clear();
  off_ = false;
  stopped_ = false;
  cut_at_ = 0;
  fail_armed_ = false;
  ++cuts_;
}

void SimDisk::stop_process() {
  std::lock_guard lk(mu_);
  stopped_ = true;
}

void SimDisk::crash() {
  std::lock_guard lk(mu_);
  handles_.clear();
  stopped_ = false;
  off_ = false;
  cut_at_ = 0;
  fail_armed_ = false;
}

void SimDisk::fail_next(Call call, int err) {
  std::lock_guard lk(mu_);
  fail_armed_ = true;
  fail_call_ = call;
  fail_err_ = err;
}

void SimDisk::set_capacity(uint64_t bytes) {
  std::lock_guard lk(mu_);
  capacity_ = bytes;
}

uint64_t SimDisk::mutating_calls() const {
  std::lock_guard lk(mu_);
  return calls_;
}
uint64_t SimDisk::power_cuts() const {
  std::lock_guard lk(mu_);
  return cuts_;
}
uint64_t SimDisk::faults_injected() const {
  std::lock_guard lk(mu_);
  return faults_;
}

uint64_t SimDisk::scattered_restores() const {
  std::lock_guard lk(mu_);
  return scattered_;
}

std::unique_ptr<SimDisk> SimDisk::durable_copy() const {
  std::lock_guard lk(mu_);
  auto copy = std::make_unique<SimDisk>(rng_);
  copy->dirs_ = dirs_;
  std::map<const Inode*, std::shared_ptr<Inode>> made;
  for (const auto& [path, inode] : durable_) {
    auto& c = made[inode.get()];
    if (!c) c = std::make_shared<Inode>(Inode{inode->synced, inode->synced});
    copy->names_[path] = c;
    copy->durable_[path] = c;
  }
  return copy;
}

}  // namespace tachyon::store
