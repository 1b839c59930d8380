#pragma once
// Ed25519 checks of a batch of txs shared between the api worker that read them and helper
// threads (docs/ARCHITECTURE.md "Threads on a small machine"). The worker that hosts the pipeline
// loop puts off the WebSocket txs of one pass over its sockets, then checks their signatures
// here: it takes jobs itself while the helpers, woken once per batch, take the others. A batch
// smaller than min_batch is checked by the caller alone (a helper's wake-up costs a context
// switch and, on this VM, tens of µs before it runs).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "tachyon/api/api_metrics.hpp"
#include "tachyon/api/crypto.hpp"
#include "tachyon/core/metrics.hpp"
#include "tachyon/core/thread_owner.hpp"

namespace tachyon::api {

class VerifyPool {
 public:
  struct Job {
    std::vector<uint8_t> message;  // the tx's canonical bytes (what its signature signs)
    Signature sig{};
    PublicKey pubkey{};
    int type = 0;     // the tx's type (the checks are counted by type)
    bool ok = false;  // set by verify()
  };

  // Starts `helpers` threads ("verify-0", ...). What the pool does is counted in `shared_batches`
  // (batches shared with the helpers) and `helper_jobs` (jobs the helpers checked): counters that
  // outlive it (/metrics); `metrics` (may be null) counts each check (timed_check).
  VerifyPool(unsigned helpers, size_t min_batch, Counter& shared_batches, Counter& helper_jobs,
             ApiMetrics* metrics = nullptr);
  ~VerifyPool();  // stops and joins the helpers
  VerifyPool(const VerifyPool&) = delete;
  VerifyPool& operator=(const VerifyPool&) = delete;

  // Owner: the api worker that hosts the pipeline loop. Offers `jobs` to the helpers (a batch of
  // min_batch or more; a smaller one it checks alone) and checks jobs itself until none is left
  // to take. A job's `ok` may be read once wait() for it returned; `jobs` stays put until wait
  // returned for each of them, or finish did.
  void start(std::span<Job> jobs);
  // Owner, after start: returns once job i of the batch is checked (a helper's last job may
  // still run: at most one check, ~20 µs, from done).
  void wait(size_t i) const;
  // Owner: returns once every job of the last batch is checked (the helpers are done with it).
  void finish();
  // start, then finish: sets every job's `ok`.
  void verify(std::span<Job> jobs) {
    start(jobs);
    finish();
  }
  size_t min_batch() const { return min_batch_; }
  uint64_t shared_batches() const { return shared_batches_.value(); }
  uint64_t helper_jobs() const { return helper_jobs_.value(); }

 private:
  void helper_loop();
  // Takes and checks jobs of batch `gen` until none is left; the number taken.
  size_t work(uint32_t gen);
  bool check(const Job& j) const;

  // The batch: `claim_` holds its generation (high 32 bits) and the next unclaimed job (low).
  // The caller writes jobs_ and count_, then stores claim_ with release; a taker's acquire CAS
  // on claim_ with the same generation sees them. The caller starts a new batch only after
  // done_ reached count_, so a job claimed under a generation is never rewritten meanwhile.
  // Job i's taker sets its `ok`, then done_flags_[i] (release: the caller's wait acquires it).
  std::atomic<Job*> jobs_{nullptr};
  std::unique_ptr<std::atomic<bool>[]> done_flags_;  // written by the caller between batches
  size_t flags_size_ = 0;
  bool shared_ = false;  // the caller's: the last batch was offered to the helpers
  std::atomic<size_t> count_{0};
  std::atomic<uint64_t> claim_{0};
  std::atomic<size_t> done_{0};
  std::atomic<uint32_t> bell_{0};  // the generation helpers wait on (futex wait / notify)
  std::atomic<bool> stop_{false};
  uint32_t gen_ = 0;  // the caller's
  size_t min_batch_;
  Counter& shared_batches_;
  Counter& helper_jobs_;
  ApiMetrics* metrics_;
  std::vector<std::thread> helpers_;
  ThreadOwner owner_{"api worker hosting the pipeline"};
};

}  // namespace tachyon::api
