// Thread placement: the topology is read, a thread is pinned where asked, SCHED_FIFO is applied
// when permitted and reported either way, and an impossible core degrades with a clear report.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <cstdio>
#include <string>
#include <thread>

#include "tachyon/pipe/placement.hpp"

namespace tachyon::pipe {
namespace {

TEST(Placement, reads_the_machine_topology) {
  const Topology t = read_topology();
  EXPECT_GE(t.cores, 1);
  EXPECT_GE(t.pus, t.cores);
  EXPECT_NE(t.text.find("core(s)"), std::string::npos);
}

TEST(Placement, pins_the_thread_and_reports_what_it_did) {
  std::thread([] {
    const Placement p = place_this_thread("t", 0, 0);
    EXPECT_TRUE(p.pinned) << p.report;
    cpu_set_t set;
    CPU_ZERO(&set);
    ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(set), &set), 0);
    EXPECT_EQ(CPU_COUNT(&set), static_cast<int>(read_topology().pus / read_topology().cores));
    EXPECT_NE(p.report.find("pinned to core 0"), std::string::npos);
  }).join();
}

TEST(Placement, sched_fifo_is_applied_when_permitted_and_reported_when_not) {
  std::thread([] {
    const Placement p = place_this_thread("t", -1, 1);
    int policy = 0;
    sched_param sp{};
    ASSERT_EQ(pthread_getschedparam(pthread_self(), &policy, &sp), 0);
    if (p.fifo) {
      EXPECT_EQ(policy, SCHED_FIFO);
      EXPECT_NE(p.report.find("SCHED_FIFO priority 1"), std::string::npos);
    } else {
      EXPECT_EQ(policy, SCHED_OTHER);
      EXPECT_NE(p.report.find("SCHED_FIFO refused"), std::string::npos) << p.report;
    }
  }).join();
}

TEST(Placement, a_busy_polling_thread_gets_sched_fifo_only_without_throttling_on_an_isolated_core) {
  // The kernel's default: 950 ms of every second for real-time threads.
  const std::string throttled = spinner_fifo_refusal(950'000, 1'000'000, true);
  EXPECT_NE(throttled.find("RT throttling is on"), std::string::npos) << throttled;
  EXPECT_NE(throttled.find("stopped for 50 ms of every 1000 ms"), std::string::npos) << throttled;
  EXPECT_NE(spinner_fifo_refusal(950'000, 1'000'000, false).find("RT throttling is on"),
            std::string::npos);
  // No limit (-1, or a runtime of the whole period): only an isolated core.
  for (const int64_t runtime : {int64_t{-1}, int64_t{1'000'000}}) {
    const std::string shared = spinner_fifo_refusal(runtime, 1'000'000, false);
    EXPECT_NE(shared.find("not pinned to an isolated core"), std::string::npos) << shared;
    EXPECT_EQ(spinner_fifo_refusal(runtime, 1'000'000, true), "");
  }
  EXPECT_FALSE(core_isolated(-1));
  EXPECT_FALSE(core_isolated(4000));
}

int64_t sysctl_value(const char* path, int64_t fallback) {
  FILE* f = std::fopen(path, "r");
  long long v = fallback;
  if (f != nullptr) {
    if (std::fscanf(f, "%lld", &v) != 1) v = fallback;
    std::fclose(f);
  }
  return v;
}

TEST(Placement, this_machines_settings_decide_for_a_busy_polling_thread_and_the_report_says_so) {
  const std::string refusal = spinner_fifo_refusal(
      sysctl_value("/proc/sys/kernel/sched_rt_runtime_us", -1),
      sysctl_value("/proc/sys/kernel/sched_rt_period_us", 1'000'000), core_isolated(0));
  std::thread([&] {
    const Placement p = place_this_thread("t", 0, 1, true);
    int policy = 0;
    sched_param sp{};
    ASSERT_EQ(pthread_getschedparam(pthread_self(), &policy, &sp), 0);
    if (!refusal.empty()) {
      EXPECT_FALSE(p.fifo);
      EXPECT_EQ(policy, SCHED_OTHER);
      EXPECT_NE(p.report.find("SCHED_FIFO not used for a busy-polling thread: " + refusal),
                std::string::npos)
          << p.report;
    } else {
      EXPECT_EQ(p.fifo, policy == SCHED_FIFO) << p.report;
    }
  }).join();
  // The same thread not busy-polling (it parks when idle): SCHED_FIFO when permitted.
  std::thread([] {
    const Placement p = place_this_thread("t", 0, 1, false);
    EXPECT_EQ(p.report.find("busy-polling"), std::string::npos) << p.report;
  }).join();
}

TEST(Placement, a_core_that_does_not_exist_leaves_the_thread_unpinned_with_a_report) {
  std::thread([] {
    const Placement p = place_this_thread("t", 4000, 0);
    EXPECT_FALSE(p.pinned);
    EXPECT_NE(p.report.find("does not exist"), std::string::npos) << p.report;
  }).join();
}

}  // namespace
}  // namespace tachyon::pipe
