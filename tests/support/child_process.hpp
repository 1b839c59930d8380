#pragma once
// A child process for tests that run the real binaries (crash tests, the server's lifecycle).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace tachyon::testing {

struct Child {
  pid_t pid = -1;
  int out = -1;
  std::string buffered;
  bool eof = false;  // the child closed its end: it exited (or closed stdout)
};

// Starts argv[0] with its stdout (and, if asked, stderr) on a pipe the test reads.
inline Child spawn(const std::vector<std::string>& args, bool with_stderr = false) {
  int fds[2];
  EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  // argv is built before the fork: the child of a multi-threaded test must not allocate.
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  Child c;
  c.pid = ::fork();
  if (c.pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    if (with_stderr) ::dup2(fds[1], STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  c.out = fds[0];
  return c;
}

// Next full line from the child, waiting at most `timeout_ms`; false on EOF or timeout.
inline bool read_line(Child& c, std::string& line, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (auto nl = c.buffered.find('\n'); nl != std::string::npos) {
      line = c.buffered.substr(0, nl);
      c.buffered.erase(0, nl + 1);
      return true;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) return false;
    pollfd p{c.out, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(c.out, buf, sizeof(buf));
    if (n <= 0) {
      c.eof = true;
      return false;
    }
    c.buffered.append(buf, static_cast<size_t>(n));
  }
}

// Optionally SIGKILLs it, then reaps it; returns the wait status.
inline int finish(Child& c, bool kill_it) {
  if (kill_it) ::kill(c.pid, SIGKILL);
  int ws = 0;
  ::waitpid(c.pid, &ws, 0);
  ::close(c.out);
  return ws;
}

// Processes (other than this one) with `arg` among their command-line arguments.
inline std::vector<pid_t> processes_with_arg(const std::string& arg) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == ::getpid()) continue;
    std::ifstream f(e.path() / "cmdline", std::ios::binary);
    const std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    for (size_t p = 0; p < cmd.size();) {
      const size_t end = std::min(cmd.find('\0', p), cmd.size());
      if (cmd.compare(p, end - p, arg) == 0) {
        out.push_back(pid);
        break;
      }
      p = end + 1;
    }
  }
  return out;
}

// Waits up to `timeout_ms` for every process with `arg` on its command line to be gone (e.g. a
// killed parent's helpers, which must die with it), then SIGKILLs those left; returns how many
// were left, so a test can fail on them without leaving them running.
inline size_t kill_survivors(const std::string& arg, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::vector<pid_t> left = processes_with_arg(arg);
  while (!left.empty() && std::chrono::steady_clock::now() < deadline) {
    pollfd none{};
    ::poll(&none, 0, 5);  // yield between looks at /proc
    left = processes_with_arg(arg);
  }
  for (pid_t p : left) ::kill(p, SIGKILL);
  return left.size();
}

}  // namespace tachyon::testing
