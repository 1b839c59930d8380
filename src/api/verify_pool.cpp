// A batch's Ed25519 checks shared with helper threads (verify_pool.hpp).
#include "tachyon/api/verify_pool.hpp"

#include <pthread.h>

#include <algorithm>
#include <string>
#include <string_view>

namespace tachyon::api {

bool VerifyPool::check(const Job& j) const {
  return timed_check(metrics_, j.type, [&] {
    return verify_detached(
        std::string_view(reinterpret_cast<const char*>(j.message.data()), j.message.size()), j.sig,
        j.pubkey);
  });
}

VerifyPool::VerifyPool(unsigned helpers, size_t min_batch, Counter& shared_batches,
                       Counter& helper_jobs, ApiMetrics* metrics)
    : min_batch_(std::max<size_t>(min_batch, 2)),
      shared_batches_(shared_batches),
      helper_jobs_(helper_jobs),
      metrics_(metrics) {
  for (unsigned i = 0; i < helpers; ++i) {
    helpers_.emplace_back([this, i] {
      pthread_setname_np(pthread_self(), ("verify-" + std::to_string(i)).c_str());
      helper_loop();
    });
  }
}

VerifyPool::~VerifyPool() {
  stop_.store(true, std::memory_order_relaxed);
  bell_.fetch_add(1, std::memory_order_release);  // (a helper rechecks stop_ after each wake)
  bell_.notify_all();
  for (std::thread& t : helpers_) t.join();
}

void VerifyPool::start(std::span<Job> jobs) {
  TACHYON_OWNER_ONLY(owner_);
  finish();
  if (helpers_.empty() || jobs.size() < min_batch_) {
    for (Job& j : jobs) j.ok = check(j);
    return;
  }
  if (jobs.size() > flags_size_) {  // no helper reads the flags between batches
    flags_size_ = std::max(jobs.size(), 2 * flags_size_);
    done_flags_ = std::make_unique<std::atomic<bool>[]>(flags_size_);
  }
  for (size_t i = 0; i < jobs.size(); ++i) done_flags_[i].store(false, std::memory_order_relaxed);
  ++gen_;
  jobs_.store(jobs.data(), std::memory_order_relaxed);
  count_.store(jobs.size(), std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  claim_.store(uint64_t{gen_} << 32, std::memory_order_release);  // publishes everything above
  bell_.store(gen_, std::memory_order_release);
  bell_.notify_all();
  shared_ = true;
  shared_batches_.add_single();
  const size_t mine = work(gen_);
  helper_jobs_.add_single(jobs.size() - mine);
}

void VerifyPool::wait(size_t i) const {
  TACHYON_OWNER_ONLY(owner_);
  if (!shared_) return;
  // Acquire: the taker's `ok`. A helper preempted mid-check holds the caller here; yielding lets
  // it run when it waits on this core.
  while (!done_flags_[i].load(std::memory_order_acquire)) std::this_thread::yield();
}

void VerifyPool::finish() {
  TACHYON_OWNER_ONLY(owner_);
  if (!shared_) return;
  while (done_.load(std::memory_order_acquire) != count_.load(std::memory_order_relaxed))
    std::this_thread::yield();
  shared_ = false;
}

size_t VerifyPool::work(uint32_t gen) {
  size_t taken = 0;
  uint64_t c = claim_.load(std::memory_order_acquire);
  for (;;) {
    if (uint32_t(c >> 32) != gen) return taken;  // a helper woken late: that batch is over
    const size_t i = size_t(c & 0xffffffffu);
    if (i >= count_.load(std::memory_order_relaxed)) return taken;
    if (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire))
      continue;  // c reloaded
    Job& j = jobs_.load(std::memory_order_relaxed)[i];
    j.ok = check(j);
    ++taken;
    done_flags_[i].store(true, std::memory_order_release);  // publishes j.ok to the caller
    done_.fetch_add(1, std::memory_order_release);          // and that the job is let go
    c = claim_.load(std::memory_order_acquire);
  }
}

void VerifyPool::helper_loop() {
  uint32_t seen = 0;
  for (;;) {
    bell_.wait(seen, std::memory_order_acquire);
    if (stop_.load(std::memory_order_relaxed)) return;
    seen = bell_.load(std::memory_order_acquire);
    work(seen);
  }
}

}  // namespace tachyon::api
