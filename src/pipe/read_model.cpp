#include "tachyon/pipe/read_model.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

#include "tachyon/core/alloc.hpp"
#include "tachyon/core/clock.hpp"
#include "tachyon/engine/engine.hpp"

namespace tachyon::pipe {

namespace {
// The account table holds at most 70% of its slots: sized for the recovered accounts and room
// to grow (a quarter as many again, at least 64k; the power of two above gives 25-150%), never
// below the configured size. At 1M accounts: 2M slots (32 MB, room for 468k more), where half as
// many again took 4M (64 MB, zeroed before the first view goes in).
ReadSideConfig sized_for(ReadSideConfig c, size_t accounts) {
  const size_t want = (accounts + std::max<size_t>(accounts / 4, 65536)) * 10 / 7 + 1;
  size_t slots = 1;
  while (slots < want) slots <<= 1;
  c.account_capacity = std::max(c.account_capacity, slots);
  return c;
}

// The snapshot `base` holds the engine's first accounts in the same order (accounts are only ever
// appended), or it is not the snapshot this engine was loaded from: then every view at start.
const SavedAccounts* matching_base(const Engine& e, const AccountBase& base) {
  const SavedAccounts* saved = base.saved.get();
  const size_t n = e.accounts().size();
  if (saved != nullptr &&
      (saved->size() > n || (saved->size() > 0 && saved->index_at(saved->size() - 1) !=
                                                      e.accounts()[saved->size() - 1].index)))
    return nullptr;
  return saved;
}
}  // namespace

ReadModel::ReadModel(const ReadModelConfig& cfg, const Engine& e, AccountBase base, unsigned arena)
    : read_(sized_for(cfg.read, e.accounts().size())),
      // room for the restored books and a quarter more before a new chunk of nodes is needed
      books_(cfg.max_readers, cfg.book_history,
             std::max<size_t>(16384, e.orders().live_count() * 5 / 4)) {
  seed(cfg, e, std::move(base), arena);
  // Built on this thread; the apply thread claims both when it first applies.
  owner_.release();
  books_.owner().release();
}

// The views are built on two threads: the two touch nothing in common (the engine is only read),
// and a start at 1M accounts and 1M orders waits for both. This thread builds the books, a market
// at a time, each book's orders in consecutive nodes; the seeder makes them findable by order
// index (index_nodes) as soon as each book is built (`built`: how many are; `ends`: where each
// book's nodes end), then builds account views. The accounts go in chunks to whichever thread is
// free. Every node comes from the chunks reserved up front: the threads never share a write.
void ReadModel::seed(const ReadModelConfig& cfg, const Engine& e, AccountBase base,
                     unsigned arena) {
  const int64_t restored_ns = realtime_ns();
  const size_t n_accounts = e.accounts().size();
  const SavedAccounts* saved = matching_base(e, base);
  if (saved != nullptr)
    read_.accounts().set_base(base.saved, restored_ns, cfg.read.orders_in_view, arena);
  std::atomic<size_t> next_account{saved != nullptr ? saved->size() : 0};
  auto seed_accounts = [&] {
    constexpr size_t kChunk = 4096;
    for (;;) {
      const size_t b = next_account.fetch_add(kChunk, std::memory_order_relaxed);
      if (b >= n_accounts) return;
      read_.seed_accounts(e, restored_ns, b, std::min(n_accounts, b + kChunk));
    }
  };
  std::vector<MarketId> markets;
  for (int m = 0; m < kMaxMarkets; ++m)
    if (e.market(static_cast<MarketId>(m)) != nullptr) markets.push_back(static_cast<MarketId>(m));
  std::vector<uint32_t> ends(markets.size(), 0);
  // Release by this thread once ends[i] is written, acquire by the seeder before it reads it.
  std::atomic<size_t> built{0};
  std::atomic<bool> abandoned{false};  // this thread left the loop below by an exception
  std::jthread seeder([&] {
    const tachyon::ArenaScope scope(arena);
    read_.seed_markets(e, restored_ns);
    uint32_t begin = 0;
    for (size_t i = 0; i < markets.size(); begin = ends[i++]) {
      while (built.load(std::memory_order_acquire) <= i) {
        if (abandoned.load(std::memory_order_acquire)) return;
        std::this_thread::yield();
      }
      books_.index_nodes(begin, ends[i]);
    }
    seed_accounts();
  });
  struct Abandon {  // lets the seeder go (and the constructor fail) if a book throws
    std::atomic<bool>& flag;
    ~Abandon() { flag.store(true, std::memory_order_release); }
  } abandon{abandoned};
  // Book nonces never go backwards across a restart: each publish adds one and needs at least one
  // tx, so starting from the last seq stays above every nonce published before.
  for (size_t i = 0; i < markets.size(); ++i) {
    ends[i] = books_.seed_book(e, markets[i], restored_ns, e.last_seq());
    built.fetch_add(1, std::memory_order_release);
  }
  books_.publish_changed(e.last_seq());
  seed_accounts();
  seeder.join();
  if (saved != nullptr) {  // those made since the snapshot already have theirs (the range above)
    std::erase_if(base.replayed,
                  [saved](AccountIndex a) { return saved->position(a) == SIZE_MAX; });
    read_.seed_listed(e, restored_ns, base.replayed);
  }
  read_.seed_done(restored_ns);
}

void ReadModel::publish(int64_t now_ns, uint64_t seq, int64_t* t_books) {
  TACHYON_OWNER_ONLY(owner_);
  books_.publish_changed(seq);
  if (t_books != nullptr) *t_books = realtime_ns();
  read_.publish(now_ns, /*force_history=*/false);
}

void ReadModel::publish_idle(int64_t now_ns) {
  TACHYON_OWNER_ONLY(owner_);
  read_.publish(now_ns, /*force_history=*/true);
}

void ReadModel::publish_final(int64_t now_ns) {
  TACHYON_OWNER_ONLY(owner_);
  read_.publish(now_ns, /*force_history=*/true, /*force_orders=*/true);
}

void ReadModel::keep_warm(absl::FunctionRef<bool()> work_waiting) {
  TACHYON_OWNER_ONLY(owner_);
  books_.keep_warm(work_waiting);
  read_.keep_warm(work_waiting);
}

}  // namespace tachyon::pipe
