// Thread placement: the topology is read, a thread is pinned where asked, SCHED_FIFO is applied
// when permitted and reported either way, and an impossible core degrades with a clear report.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

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

TEST(Placement, a_core_that_does_not_exist_leaves_the_thread_unpinned_with_a_report) {
  std::thread([] {
    const Placement p = place_this_thread("t", 4000, 0);
    EXPECT_FALSE(p.pinned);
    EXPECT_NE(p.report.find("does not exist"), std::string::npos) << p.report;
  }).join();
}

}  // namespace
}  // namespace tachyon::pipe
