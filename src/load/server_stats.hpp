#pragma once
// What a run cost a server on the same machine, from /proc (docs/PERFORMANCE.md "The server under
// load"): context switches (voluntary + involuntary) and CPU (user + system) of each thread,
// threads of one name summed ("api-0", "sequencer", "apply", ...), and of the whole process.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace tachyon::load {

struct ThreadCost {
  uint64_t switches = 0;     // voluntary + involuntary
  uint64_t involuntary = 0;  // of those, preemptions (the rest: the thread slept)
  double cpu_s = 0;
};

struct ServerCost {
  pid_t pid = 0;
  std::map<std::string, ThreadCost> threads;  // by thread name
  ThreadCost process;  // every thread, those that exited included (CPU; switches: live threads)
  // The journal's group commits (tachyon_journal_group_commit_txs_count on the admin /metrics),
  // each one fdatasync whose waits are the disk's; -1: not read.
  int64_t group_commits = -1;
  // The api's Ed25519 checks of tx signatures and the CPU they took, all tx types
  // (tachyon_signature_checks_total, tachyon_signature_check_cpu_seconds_total); -1: not read.
  double signature_checks = -1, signature_cpu_s = -1;
};

// tachyon_journal_group_commit_txs_count in a /metrics page; -1 when absent.
int64_t group_commits_in(std::string_view metrics);
// The sum of a metric family's samples in a /metrics page (`name` with any labels); -1 when
// absent.
double metric_sum(std::string_view metrics, std::string_view name);

// The server's counters now; "" or why they cannot be read (no such process, not ours).
std::string read_server_cost(pid_t pid, ServerCost& out);
// after - before, thread by thread (a thread that started meanwhile counts whole).
ServerCost cost_between(const ServerCost& before, const ServerCost& after);

}  // namespace tachyon::load
