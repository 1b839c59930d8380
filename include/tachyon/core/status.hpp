#pragma once
// Status: the error channel of I/O edges (files, sockets, config). A broken invariant is not a
// Status, it is a TACHYON_ASSERT. Must be looked at.
#include <string>
#include <utility>

namespace tachyon {

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status error(std::string message) { return Status(std::move(message), 0); }
  // A failed system call: the errno it set, for callers that act on the kind (ENOSPC, EIO).
  static Status sys_error(std::string message, int err) { return Status(std::move(message), err); }
  bool ok() const { return !failed_; }
  const std::string& message() const { return message_; }
  int sys_errno() const { return errno_; }  // 0 unless made by sys_error

 private:
  Status(std::string m, int err) : failed_(true), errno_(err), message_(std::move(m)) {}
  bool failed_ = false;
  int errno_ = 0;
  std::string message_;
};

}  // namespace tachyon
