// The server's cost from /proc (server_stats.hpp).
#include "server_stats.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tachyon::load {

namespace {

// utime + stime (fields 14 and 15 of stat, after the parenthesized name), in seconds.
bool cpu_of(const std::string& stat_path, double& out) {
  std::ifstream in(stat_path);
  std::string line;
  if (!std::getline(in, line)) return false;
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  out = double(utime + stime) / double(::sysconf(_SC_CLK_TCK));
  return true;
}

// The thread's name and its voluntary + nonvoluntary context switches, from its status file.
bool switches_of(const std::string& status_path, std::string& name, ThreadCost& out) {
  std::ifstream in(status_path);
  if (!in) return false;
  out = ThreadCost{};
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Name:", 0) == 0) name = line.substr(line.find_first_not_of(" \t", 5));
    if (line.find("ctxt_switches:") == std::string::npos) continue;
    const uint64_t n = std::stoull(line.substr(line.find(':') + 1));
    out.switches += n;
    if (line.rfind("nonvoluntary", 0) == 0) out.involuntary += n;
  }
  return true;
}

}  // namespace

std::string read_server_cost(pid_t pid, ServerCost& out) {
  out = ServerCost{};
  out.pid = pid;
  const std::string root = "/proc/" + std::to_string(pid);
  if (!cpu_of(root + "/stat", out.process.cpu_s))
    return "no process " + std::to_string(pid) + " to measure (--server-pid)";
  std::error_code ec;
  for (const auto& t : std::filesystem::directory_iterator(root + "/task", ec)) {
    std::string name;
    ThreadCost sw;
    double cpu = 0;
    if (!switches_of(t.path().string() + "/status", name, sw) ||
        !cpu_of(t.path().string() + "/stat", cpu))
      continue;  // it exited meanwhile
    ThreadCost& c = out.threads[name];
    c.switches += sw.switches;
    c.involuntary += sw.involuntary;
    c.cpu_s += cpu;
    out.process.switches += sw.switches;
    out.process.involuntary += sw.involuntary;
  }
  if (ec) return "reading " + root + "/task: " + ec.message();
  return "";
}

double metric_sum(std::string_view metrics, std::string_view name) {
  double sum = -1;
  for (size_t pos = 0; pos < metrics.size();) {
    size_t eol = metrics.find('\n', pos);
    if (eol == std::string_view::npos) eol = metrics.size();
    const std::string_view line = metrics.substr(pos, eol - pos);
    pos = eol + 1;
    // `name value` or `name{labels} value` (a comment or a longer name does not match).
    if (!line.starts_with(name) || line.size() == name.size()) continue;
    if (line[name.size()] != '{' && line[name.size()] != ' ') continue;
    const std::string value(line.substr(line.rfind(' ') + 1));
    sum = std::max(sum, 0.0) + std::strtod(value.c_str(), nullptr);
  }
  return sum;
}

int64_t group_commits_in(std::string_view metrics) {
  return static_cast<int64_t>(metric_sum(metrics, "tachyon_journal_group_commit_txs_count"));
}

ServerCost cost_between(const ServerCost& before, const ServerCost& after) {
  ServerCost d;
  d.pid = after.pid;
  for (const auto& [name, a] : after.threads) {
    const auto it = before.threads.find(name);
    const ThreadCost b = it == before.threads.end() ? ThreadCost{} : it->second;
    d.threads[name] = ThreadCost{a.switches - std::min(a.switches, b.switches),
                                 a.involuntary - std::min(a.involuntary, b.involuntary),
                                 std::max(0.0, a.cpu_s - b.cpu_s)};
  }
  d.process.cpu_s = std::max(0.0, after.process.cpu_s - before.process.cpu_s);
  if (before.group_commits >= 0 && after.group_commits >= before.group_commits)
    d.group_commits = after.group_commits - before.group_commits;
  if (before.signature_checks >= 0 && after.signature_checks >= before.signature_checks) {
    d.signature_checks = after.signature_checks - before.signature_checks;
    d.signature_cpu_s = std::max(0.0, after.signature_cpu_s - before.signature_cpu_s);
  }
  for (const auto& [name, c] : d.threads) {
    d.process.switches += c.switches;
    d.process.involuntary += c.involuntary;
  }
  return d;
}

}  // namespace tachyon::load
