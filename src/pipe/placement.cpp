#include "tachyon/pipe/placement.hpp"

#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace tachyon::pipe {

namespace {
// One topology per process, loaded on first use (hwloc's load walks /sys: not for hot paths).
hwloc_topology_t topology() {
  static hwloc_topology_t topo = [] {
    hwloc_topology_t t;
    hwloc_topology_init(&t);
    hwloc_topology_load(t);
    return t;
  }();
  return topo;
}
std::mutex& topo_mu() {
  static std::mutex mu;
  return mu;
}
hwloc_obj_t core_obj(int core) {
  return hwloc_get_obj_by_type(topology(), HWLOC_OBJ_CORE, static_cast<unsigned>(core));
}
}  // namespace

Topology read_topology() {
  std::lock_guard lk(topo_mu());
  Topology t;
  hwloc_topology_t topo = topology();
  t.numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  t.cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  t.pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  const int l3 = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_L3CACHE);
  t.text = std::to_string(t.numa_nodes) + " NUMA node(s), " + std::to_string(t.cores) +
           " core(s), " + std::to_string(t.pus) + " hardware thread(s), " + std::to_string(l3) +
           " L3 cache(s)";
  return t;
}

bool share_l3(int a, int b) {
  std::lock_guard lk(topo_mu());
  hwloc_obj_t ca = core_obj(a), cb = core_obj(b);
  if (ca == nullptr || cb == nullptr) return true;
  hwloc_obj_t la = hwloc_get_ancestor_obj_by_type(topology(), HWLOC_OBJ_L3CACHE, ca);
  hwloc_obj_t lb = hwloc_get_ancestor_obj_by_type(topology(), HWLOC_OBJ_L3CACHE, cb);
  return la == nullptr || lb == nullptr || la == lb;
}

namespace {
// A /proc/sys number, or `fallback` when it cannot be read.
int64_t read_sysctl(const char* path, int64_t fallback) {
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return fallback;
  long long v = 0;
  const bool ok = std::fscanf(f, "%lld", &v) == 1;
  std::fclose(f);
  return ok ? static_cast<int64_t>(v) : fallback;
}
}  // namespace

std::string spinner_fifo_refusal(int64_t rt_runtime_us, int64_t rt_period_us, bool isolated) {
  if (rt_runtime_us >= 0 && rt_runtime_us < rt_period_us) {
    return "RT throttling is on (kernel.sched_rt_runtime_us = " + std::to_string(rt_runtime_us) +
           " of every " + std::to_string(rt_period_us) +
           "): a busy-polling SCHED_FIFO thread would be stopped for " +
           std::to_string((rt_period_us - rt_runtime_us) / 1000) + " ms of every " +
           std::to_string(rt_period_us / 1000) +
           " ms; set it to -1 on a host whose hot cores are isolated (isolcpus= or nohz_full=)";
  }
  if (!isolated) {
    return "the thread is not pinned to an isolated core (isolcpus= or nohz_full=) and RT "
           "throttling is off: a busy-polling SCHED_FIFO thread would starve the kernel's own "
           "work on its core";
  }
  return "";
}

bool core_isolated(int core) {
  if (core < 0) return false;
  std::lock_guard lk(topo_mu());
  hwloc_obj_t c = core_obj(core);
  if (c == nullptr) return false;
  for (const char* path :
       {"/sys/devices/system/cpu/isolated", "/sys/devices/system/cpu/nohz_full"}) {
    FILE* f = std::fopen(path, "r");
    if (f == nullptr) continue;
    char list[4096] = {};
    const bool read = std::fgets(list, sizeof list, f) != nullptr;
    std::fclose(f);
    list[std::strcspn(list, "\n")] = '\0';
    if (!read || list[0] == '\0' || std::strcmp(list, "(null)") == 0) continue;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    const bool in =
        hwloc_bitmap_list_sscanf(set, list) == 0 && hwloc_bitmap_isincluded(c->cpuset, set);
    hwloc_bitmap_free(set);
    if (in) return true;
  }
  return false;
}

Placement place_this_thread(const char* name, int core, int fifo_priority, bool spins) {
  Placement p;
  std::string r = std::string(name) + ":";
  // Named for top -H, perf and gdb (at most 15 characters).
  (void)pthread_setname_np(pthread_self(), std::string(name).substr(0, 15).c_str());
  if (core >= 0) {
    std::lock_guard lk(topo_mu());
    hwloc_obj_t c = core_obj(core);
    if (c == nullptr) {
      r += " core " + std::to_string(core) + " does not exist (unpinned);";
    } else if (hwloc_set_cpubind(topology(), c->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
      r += " pinning to core " + std::to_string(core) + " refused: " + std::strerror(errno) + ";";
    } else {
      p.pinned = true;
      r += " pinned to core " + std::to_string(core) + ";";
      if (hwloc_set_membind(topology(), c->nodeset, HWLOC_MEMBIND_BIND,
                            HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) == 0) {
        p.memory_bound = true;
        r += " memory bound to its NUMA node;";
      } else {
        r += " memory binding not available (" + std::string(std::strerror(errno)) + ");";
      }
    }
  } else {
    r += " unpinned;";
  }
  const std::string refusal =
      fifo_priority > 0 && spins
          ? spinner_fifo_refusal(read_sysctl("/proc/sys/kernel/sched_rt_runtime_us", -1),
                                 read_sysctl("/proc/sys/kernel/sched_rt_period_us", 1000000),
                                 p.pinned && core_isolated(core))
          : std::string();
  if (!refusal.empty()) {
    r += " SCHED_FIFO not used for a busy-polling thread: " + refusal + "; normal scheduling";
  } else if (fifo_priority > 0) {
    sched_param sp{};
    sp.sched_priority = fifo_priority;
    const int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
    if (rc == 0) {
      p.fifo = true;
      r += " SCHED_FIFO priority " + std::to_string(fifo_priority);
    } else {
      r += " SCHED_FIFO refused (" + std::string(std::strerror(rc)) + "), normal scheduling";
    }
  } else {
    r += " normal scheduling";
  }
  p.report = r;
  return p;
}

bool keep_off_cores(const std::vector<int>& hot, std::string& report) {
  std::lock_guard lk(topo_mu());
  hwloc_topology_t topo = topology();
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_THREAD) != 0)
    hwloc_bitmap_copy(set, hwloc_topology_get_allowed_cpuset(topo));
  std::string cores;
  for (int core : hot) {
    if (core < 0) continue;
    hwloc_obj_t c = core_obj(core);
    if (c == nullptr) continue;
    hwloc_bitmap_andnot(set, set, c->cpuset);
    cores += (cores.empty() ? "" : ", ") + std::to_string(core);
  }
  bool ok = false;
  if (cores.empty()) {
    report = "no hot core configured: the other threads may run anywhere";
  } else if (hwloc_bitmap_iszero(set)) {
    report = "no core is left besides the hot threads' (" + cores +
             "): the api workers and the other threads share them";
  } else if (hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD) != 0) {
    report = "keeping the other threads off cores " + cores + " refused: " + std::strerror(errno);
  } else {
    char* list = nullptr;
    hwloc_bitmap_list_asprintf(&list, set);
    report = "api workers and the other threads kept off cores " + cores + " (on CPUs " +
             (list != nullptr ? list : "?") + ")";
    std::free(list);
    ok = true;
  }
  hwloc_bitmap_free(set);
  return ok;
}

bool lock_all_memory(bool on_fault, std::string& report) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // The sanitizers zero their shadow memory with MADV_DONTNEED, which fails on locked pages.
  (void)on_fault;
  report = "mlockall not attempted: a sanitizer build (its shadow memory must stay releasable)";
  return false;
#endif
  // Locked memory counts against RLIMIT_MEMLOCK (root aside): with a finite limit, a locked
  // process's later allocations fail once they pass it. Only all or nothing, then.
  rlimit lim{};
  if (geteuid() != 0 && getrlimit(RLIMIT_MEMLOCK, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
    report = "mlockall not attempted: RLIMIT_MEMLOCK is " + std::to_string(lim.rlim_cur) +
             " bytes, and past it a locked server's allocations would fail; memory may be "
             "paged out (give the service LimitMEMLOCK=infinity)";
    return false;
  }
  if (mlockall(MCL_CURRENT | MCL_FUTURE | (on_fault ? MCL_ONFAULT : 0)) == 0) {
    report = on_fault ? "memory locked as it is touched (mlockall, MCL_ONFAULT)"
                      : "memory locked, all of it resident (mlockall)";
    return true;
  }
  report = std::string("mlockall refused (") + std::strerror(errno) +
           "): memory may be paged out; give the service LimitMEMLOCK=infinity or "
           "CAP_IPC_LOCK";
  return false;
}

}  // namespace tachyon::pipe
