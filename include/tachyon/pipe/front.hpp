#pragma once
// What an api worker may touch of the pipeline (docs/ARCHITECTURE.md "Module map": the api uses
// pipe's read side only): its own ingress ring (submit) and result ring (poll_results), the read
// side (market and account views, histories, the update log), the published book snapshots and
// their delta history. Nothing of the engine, the journal or the committer: the Pipeline behind it
// (pipeline.hpp, seen only by the app) owns those.
#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include <absl/functional/function_ref.h>

#include "tachyon/engine/tx.hpp"
#include "tachyon/pipe/book_snapshot.hpp"
#include "tachyon/pipe/published.hpp"
#include "tachyon/pipe/read_side.hpp"
#include "tachyon/pipe/wait.hpp"

namespace tachyon::pipe {

struct Ingress {
  Tx tx;
  uint64_t cookie;  // the worker's handle for the reply
  int64_t t_recv_ns;
};

struct Result {
  uint64_t cookie;
  uint64_t seq;
  uint64_t block;
  OrderIndex order_index;
  Reject reject;
  // The tx's life (realtime ns): the api worker received it, the sequencer took it from the
  // ingress ring (= the tx's time), the engine finished it, the apply thread had applied its
  // updates and published, and the apply thread saw it durable and routed this result.
  int64_t t_recv_ns;
  int64_t t_seq_ns;
  int64_t t_exec_ns;
  int64_t t_applied_ns;
  int64_t t_durable_ns;
};

class Front {
 public:
  virtual ~Front() = default;
  // Api worker `w` (one thread per worker). False when the ring is full: answer "busy".
  virtual bool submit(uint32_t w, const Tx& tx, uint64_t cookie, int64_t t_recv_ns) = 0;
  // Worker `w`: hands its routed results to f, at most `limit`; returns how many.
  virtual size_t poll_results(uint32_t w, absl::FunctionRef<void(const Result&)> f,
                              size_t limit = 256) = 0;
  // Called by the apply thread with the workers to wake, a bit per worker (worker_wakes.hpp says
  // which and when: results at once, publishes paced); api workers wake their io_context with it.
  // Set before the pipeline starts.
  virtual void set_notify(std::function<void(uint64_t workers)> f) = 0;
  // Worker `w`, for itself: whether it pushes anything from a publish (subscribers, forwarded txs
  // waiting for their seq). A worker that does not is woken only for its results. Default: yes.
  virtual void want_publishes(uint32_t w, bool yes) = 0;
  // The read side: market and account views, history, the update log (any thread).
  virtual ReadSide& read_side() = 0;
  // Readers (any thread): the current snapshot of a market's book.
  virtual Published<BookSnapshot>& book(MarketId m) = 0;
  virtual uint64_t applied_seq() const = 0;
  // Readers: the book changes after `since_nonce` up to `until_nonce`, one BookDelta per publish,
  // oldest first. False when `since_nonce` is older than the history kept (send a snapshot).
  virtual bool book_deltas(MarketId m, uint64_t since_nonce, uint64_t until_nonce,
                           std::vector<BookDelta>& out) const = 0;

  // A pipeline without a thread of its own (hosted) runs on the thread of api worker 0, its
  // host, which calls these in its event loop: a round (host_step) whenever the last one or a
  // socket handler did something; otherwise host_may_sleep, then a sleep (at most timeout_us)
  // only if it said so, in an event loop that also wakes when host_bell_fd() becomes readable,
  // then host_woke. host_leave when it stops for good (stop() finishes what it leaves).
  virtual bool hosted() const { return false; }
  virtual int host_bell_fd() const { return -1; }
  virtual size_t host_step() { return 0; }  // the work done: txs, updates, results
  // After host_step: how long the host sleeps, its sockets unread, before its next pass (the
  // commit linger holds that round's group commit for the txs that come meanwhile). 0: none.
  virtual long host_linger_us() const { return 0; }
  virtual bool host_may_sleep(long& timeout_us) {
    timeout_us = 0;
    return false;
  }
  virtual void host_woke() {}
  virtual void host_leave() {}
};

}  // namespace tachyon::pipe
