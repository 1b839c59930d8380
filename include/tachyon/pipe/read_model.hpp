#pragma once
// The read model, one owner (docs/ARCHITECTURE.md "The path of one signed tx"): everything the
// api serves, kept from the engine's update stream. The market and account views, histories and
// update log (ReadSide) and the books (BookCaches), updated and published together so a reader
// never sees books and accounts from different txs for long: the books are published first, the
// views right after, both between two txs.
//
// Owner: the apply thread (apply, publish*, collect, keep_warm). Built, seeded from the engine,
// on the thread that makes the Pipeline, before the apply thread starts. Readers (any thread):
// read_side()'s views and books().book() / book_deltas().
#include <cstdint>
#include <memory>
#include <vector>

#include <absl/functional/function_ref.h>

#include "tachyon/core/thread_owner.hpp"
#include "tachyon/engine/update.hpp"
#include "tachyon/pipe/book_caches.hpp"
#include "tachyon/pipe/read_side.hpp"

namespace tachyon {
class Engine;
}

namespace tachyon::pipe {

struct ReadModelConfig {
  ReadSideConfig read;
  uint32_t max_readers = 16;   // reader threads per book snapshot
  size_t book_history = 1024;  // delta records kept per market (resume, orderBookUpdates)
};

// Where the read side's account views come from at a start from a snapshot (AccountTable): the
// snapshot the engine was loaded from, and the accounts the journal replay after it changed.
struct AccountBase {
  std::shared_ptr<const SavedAccounts> saved;
  std::vector<AccountIndex> replayed;  // any order, repeats allowed
};

class ReadModel {
 public:
  // The views of engine `e` as it is now (restored snapshot plus replay), stamped with the time
  // of the call, built in jemalloc arena `arena` (0: the default ones). With a `base`, only the
  // accounts it does not hold as they are now get a view at once (those made or changed since
  // the snapshot); the others get theirs on first use (AccountTable::set_base).
  ReadModel(const ReadModelConfig& cfg, const Engine& e, AccountBase base, unsigned arena);
  ReadModel(const ReadModel&) = delete;
  ReadModel& operator=(const ReadModel&) = delete;

  // Apply thread.
  void apply(const StateUpdate& u) {
    TACHYON_OWNER_ONLY(owner_);
    read_.apply(u);
    books_.apply(u);
  }
  // A whole batch: the changed books (each snapshot stamped with `seq`, the last tx applied),
  // then the views. `t_books`, if not null, gets the time the books were done (a probe's phase).
  void publish(int64_t now_ns, uint64_t seq, int64_t* t_books = nullptr);
  // Between batches: a history left dirty now, held-back order lists when their interval is due.
  bool idle_publish_due() const { return read_.history_dirty() || read_.orders_pending(); }
  void publish_idle(int64_t now_ns);
  // At shutdown: everything, the held-back order lists included.
  void publish_final(int64_t now_ns);
  bool history_dirty() const { return read_.history_dirty(); }
  void collect() { books_.collect(); }
  bool collecting() const { return books_.collecting(); }  // retired snapshots still held
  void keep_warm(absl::FunctionRef<bool()> work_waiting);

  // The owning thread is gone (the pipeline stopped): the next caller owns it.
  void release_owner() {
    owner_.release();
    books_.owner().release();
  }

  // Any thread.
  ReadSide& read_side() { return read_; }
  BookCaches& books() { return books_; }
  const BookCaches& books() const { return books_; }

 private:
  void seed(const ReadModelConfig& cfg, const Engine& e, AccountBase base, unsigned arena);

  ThreadOwner owner_{"apply"};
  ReadSide read_;
  BookCaches books_;
};

}  // namespace tachyon::pipe
