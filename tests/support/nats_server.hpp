#pragma once
// Real nats-servers for tests: one, or a cluster of three, with JetStream, on free loopback ports
// (-a 127.0.0.1), each with its own store dir and log file under a temporary directory. Each can
// be killed (SIGKILL) and started again on the same ports and store; all are stopped at the end.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/temp_dir.hpp"

namespace tachyon::testing {

// A loopback port nothing listens on now (bound, read back, closed).
inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

inline bool port_accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// Debian puts it in /usr/sbin, which a non-root PATH may lack.
inline std::string nats_server_binary() {
  return ::access("/usr/sbin/nats-server", X_OK) == 0 ? "/usr/sbin/nats-server" : "nats-server";
}

class NatsServers {
 public:
  // n = 1: a single server; n = 3: a cluster (routes between all three).
  explicit NatsServers(int n) : nodes_(static_cast<size_t>(n)) {
    for (auto& s : nodes_) {
      s.port = free_loopback_port();
      s.route_port = free_loopback_port();
    }
    for (size_t i = 0; i < nodes_.size(); ++i) start(static_cast<int>(i));
  }
  ~NatsServers() {
    for (size_t i = 0; i < nodes_.size(); ++i) kill(static_cast<int>(i));
  }
  NatsServers(const NatsServers&) = delete;
  NatsServers& operator=(const NatsServers&) = delete;

  int size() const { return static_cast<int>(nodes_.size()); }
  std::string url(int i) const { return "nats://127.0.0.1:" + std::to_string(nodes_[i].port); }
  std::vector<std::string> urls() const {
    std::vector<std::string> u;
    for (int i = 0; i < size(); ++i) u.push_back(url(i));
    return u;
  }
  std::string urls_csv() const {
    std::string c;
    for (const auto& u : urls()) c += (c.empty() ? "" : ",") + u;
    return c;
  }
  const std::string& dir() const { return dir_.path(); }
  bool running(int i) const { return nodes_[i].pid > 0; }

  // Starts server i (again) and waits until it accepts clients.
  void start(int i) {
    Node& s = nodes_[i];
    const std::string name = "n" + std::to_string(i);
    std::vector<std::string> args = {nats_server_binary(),
                                     "-a",
                                     "127.0.0.1",
                                     "-p",
                                     std::to_string(s.port),
                                     "-n",
                                     name,
                                     "-js",
                                     "-sd",
                                     dir() + "/" + name,
                                     "-l",
                                     dir() + "/" + name + ".log"};
    if (size() > 1) {
      std::string routes;
      for (int j = 0; j < size(); ++j) {
        if (j == i) continue;
        routes += (routes.empty() ? "" : ",") + std::string("nats://127.0.0.1:") +
                  std::to_string(nodes_[j].route_port);
      }
      args.insert(args.end(),
                  {"--cluster_name", "tachyon-test", "--cluster",
                   "nats://127.0.0.1:" + std::to_string(s.route_port), "--routes", routes});
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    s.pid = ::fork();
    if (s.pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a test that dies takes its servers along
      ::execvp(argv[0], argv.data());
      ::_exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!port_accepts(s.port) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  // SIGKILLs server i (its store stays for a restart).
  void kill(int i) {
    Node& s = nodes_[i];
    if (s.pid <= 0) return;
    ::kill(s.pid, SIGKILL);
    int ws = 0;
    ::waitpid(s.pid, &ws, 0);
    s.pid = -1;
  }

 private:
  struct Node {
    int port = 0, route_port = 0;
    pid_t pid = -1;
  };
  TempDir dir_;
  std::vector<Node> nodes_;
};

}  // namespace tachyon::testing
