#pragma once
// Status: the error channel of I/O edges (files, sockets, config). A broken invariant is not a
// Status, it is a TACHYON_ASSERT. Must be looked at.
#include <string>
#include <utility>

namespace tachyon {

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status error(std::string message) { return Status(std::move(message)); }
  bool ok() const { return !failed_; }
  const std::string& message() const { return message_; }

 private:
  explicit Status(std::string m) : failed_(true), message_(std::move(m)) {}
  bool failed_ = false;
  std::string message_;
};

}  // namespace tachyon
