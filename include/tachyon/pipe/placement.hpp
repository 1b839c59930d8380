#pragma once
// Thread placement for the hot threads: the machine's shape from hwloc, pinning to a core, memory
// bound to that core's NUMA node, SCHED_FIFO, mlockall. Every step that is not permitted (EPERM
// as non-root, a core that does not exist) degrades to normal scheduling and says so in the
// report: the caller logs it, nothing fails.
#include <cstdint>
#include <string>
#include <vector>

namespace tachyon::pipe {

struct Topology {
  int numa_nodes = 0;
  int cores = 0;
  int pus = 0;
  std::string text;  // one line, for the log
};
Topology read_topology();
// True when the two cores share a last-level cache (or either is unknown).
bool share_l3(int core_a, int core_b);

struct Placement {
  bool pinned = false;
  bool memory_bound = false;
  bool fifo = false;
  std::string report;  // what was done and what was refused, one line
};
// For the calling thread: core < 0 leaves it unpinned; fifo_priority 0 keeps SCHED_OTHER. A
// thread that `spins` (busy-polls: the spin wait strategy, never yielding its core) gets
// SCHED_FIFO only where that is safe and does not make it worse (spinner_fifo_refusal on this
// machine's settings); else it keeps normal scheduling and the report says why.
Placement place_this_thread(const char* name, int core, int fifo_priority, bool spins = false);

// Why a busy-polling thread must not run SCHED_FIFO on its core, or "" when it may.
// `rt_runtime_us` of every `rt_period_us` is what the kernel lets real-time threads run per core
// (/proc/sys/kernel/sched_rt_runtime_us and sched_rt_period_us; -1: no limit); `isolated`: the
// thread is pinned to a core kept from the scheduler's other work (isolcpus= or nohz_full=). With
// the limit, a SCHED_FIFO thread that never yields is stopped for the rest of each period once it
// used its runtime (50 ms of every second by default: far worse than the preemptions it avoids);
// without it, nothing else ever runs on that core again, the kernel's per-core work included, which
// only an isolated core can afford (on this project's 2-core VM, a spinning SCHED_FIFO thread on
// each core with no limit left the machine unresponsive until it was killed).
std::string spinner_fifo_refusal(int64_t rt_runtime_us, int64_t rt_period_us, bool isolated);
// Whether every hardware thread of hwloc core `core` is listed in /sys/devices/system/cpu/isolated
// or nohz_full (false for core < 0, or when neither can be read).
bool core_isolated(int core);
// For the calling thread and every thread it starts afterwards (they inherit it): the cores
// other than `hot` (hwloc core indexes, -1 ignored), so that the api workers and the other
// threads keep off the hot threads' cores (which pin themselves there). When no other core is
// allowed, nothing changes and the report says so.
bool keep_off_cores(const std::vector<int>& hot, std::string& report);
// mlockall: `on_fault` false locks every page mapped now and later, faulting them all in at once
// (MCL_CURRENT | MCL_FUTURE: what is reserved but never used is made resident too); true locks
// each page when it is first touched (| MCL_ONFAULT: no page is ever paged out, and nothing is
// faulted in ahead). The report says which, or why not when refused.
bool lock_all_memory(bool on_fault, std::string& report);

}  // namespace tachyon::pipe
