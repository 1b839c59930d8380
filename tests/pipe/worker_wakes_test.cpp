// Which api workers the apply thread wakes: results at once, publishes paced per worker, and
// none for a worker with nothing to push. The plan alone (timestamps given), then through a real
// pipeline's notify callback.
#include "tachyon/pipe/worker_wakes.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "support/tx_builder.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/pipe/pipeline.hpp"

namespace tachyon::testing {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST(WorkerWakes, results_wake_at_once_and_publishes_at_most_once_per_interval) {
  pipe::WorkerWakes w(3, 2 * kMs);
  w.published();  // t = 10 ms: nobody was woken yet
  EXPECT_EQ(w.take(10 * kMs), 0b111u);
  EXPECT_FALSE(w.waiting());
  w.published();  // 11 ms: within the interval of every worker's last wake
  EXPECT_EQ(w.take(11 * kMs), 0u);
  EXPECT_TRUE(w.waiting());
  EXPECT_EQ(w.due_in_ns(11 * kMs), 1 * kMs);
  w.routed(1);  // results for worker 1: at once, and its wake pushes the pending publish too
  EXPECT_EQ(w.due_in_ns(11 * kMs), 0);
  EXPECT_EQ(w.take(11 * kMs), 0b010u);
  EXPECT_EQ(w.due_in_ns(11 * kMs + kMs / 2), kMs / 2);  // workers 0 and 2, at 12 ms
  EXPECT_EQ(w.take(12 * kMs - 1), 0u);
  EXPECT_EQ(w.take(12 * kMs), 0b101u);
  EXPECT_FALSE(w.waiting());
  EXPECT_EQ(w.due_in_ns(12 * kMs), -1);
  w.published();  // 12.5 ms: worker 1's last wake was at 11, worker 0's and 2's at 12
  EXPECT_EQ(w.take(12 * kMs + kMs / 2), 0u);
  EXPECT_EQ(w.take(13 * kMs), 0b010u);
  EXPECT_EQ(w.take(14 * kMs), 0b101u);
}

TEST(WorkerWakes, a_worker_with_nothing_to_push_is_woken_for_its_results_only) {
  pipe::WorkerWakes w(2, 0);
  w.want_publishes(1, false);
  w.published();
  EXPECT_EQ(w.take(kMs), 0b01u);
  w.routed(1);
  EXPECT_EQ(w.take(kMs), 0b10u);
  w.want_publishes(1, true);
  w.published();
  EXPECT_EQ(w.take(kMs), 0b11u);  // interval 0: every publish, at once
  EXPECT_EQ(w.take(kMs), 0u);
}

TEST(WorkerWakes, workers_past_the_mask_are_never_woken) {
  pipe::WorkerWakes w(70, 0);
  w.routed(69);
  w.want_publishes(69, false);
  EXPECT_FALSE(w.waiting());
  w.published();
  EXPECT_EQ(w.take(kMs), ~uint64_t{0});
}

// Through a pipeline: worker 1 has nothing to push, worker 0 has subscribers. Worker 1's own txs
// wake it, the others never do. The last tx is worker 1's, published soon after worker 0's last
// wake (its own tx's result): worker 0's paced wake for it still comes once the load stops,
// without a stop() to flush it.
TEST(WorkerWakes, a_pipeline_wakes_workers_by_the_plan) {
  pipe::PipelineConfig pc;
  pc.workers = 2;
  pc.push_interval_us = 2000;
  pipe::Pipeline p(pc, std::make_unique<Engine>(), nullptr, nullptr);
  std::mutex mu;
  std::condition_variable woken;
  std::vector<std::pair<uint64_t, uint64_t>> wakes;  // (applied seq then, workers)
  p.set_notify([&](uint64_t workers) {
    std::lock_guard lk(mu);
    wakes.emplace_back(p.applied_seq(), workers);
    woken.notify_all();
  });
  p.want_publishes(1, false);
  p.start();
  TxBuilder b;
  std::vector<Tx> txs;
  for (int i = 0; i < 61; ++i) txs.push_back(b.deposit(100 + i % 5, 1000 * kUsdcScale));
  uint64_t cookie = 0;
  for (size_t i = 0; i < txs.size(); ++i) {  // one at a time: each answered before the next
    const uint32_t w = i % 3 == 0 ? 1 : 0;   // every third from worker 1, the last one too
    ASSERT_TRUE(p.submit(w, txs[i], ++cookie, realtime_ns()));
    while (p.poll_results(w, [](const pipe::Result&) {}) == 0) std::this_thread::yield();
  }
  EXPECT_EQ(p.applied_seq(), txs.size()) << "every tx published";
  std::unique_lock lk(mu);
  const bool last_pushed = woken.wait_for(lk, std::chrono::seconds(10), [&] {
    for (const auto& [applied, workers] : wakes)
      if (applied == txs.size() && (workers & 1)) return true;
    return false;
  });
  const auto seen = wakes;  // before stop(), whose last round wakes everyone waiting
  lk.unlock();
  p.stop();
  EXPECT_TRUE(last_pushed) << "worker 0 is woken after the last publish";
  size_t worker1 = 0;
  for (const auto& [applied, workers] : seen) worker1 += (workers >> 1) & 1;
  EXPECT_LE(worker1, 21u);  // its own results only (several may share a wake)
  EXPECT_GE(worker1, 1u);
}

}  // namespace
}  // namespace tachyon::testing
