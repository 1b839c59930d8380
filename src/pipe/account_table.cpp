// AccountTable (read_side.hpp): the published account views, by account index, for readers
// without locks; views retired with an epoch tag and recycled once no reader can hold them.
#include "tachyon/core/alloc.hpp"
#include "tachyon/engine/engine.hpp"
#include "tachyon/pipe/read_side.hpp"

#include <algorithm>

namespace tachyon::pipe {

AccountTable::AccountTable(size_t capacity_pow2, size_t max_readers)
    : entries_(capacity_pow2), mask_(capacity_pow2 - 1), domain_(max_readers) {
  TACHYON_ASSERT((capacity_pow2 & mask_) == 0, "AccountTable capacity must be a power of 2");
  retired_.reserve(1024);
  spare_.reserve(1024);
  // Spares with room from the start: the views made at start are not recycled (they lack the
  // room), so until the first publishes retire views of their own the pool lives on these.
  for (size_t i = 0; i < kStartSpares; ++i) {
    spare_.push_back(new AccountView);
    spare_.back()->make_room();
  }
}

AccountTable::~AccountTable() {
  for (auto& e : entries_) delete e.view.load();
  for (auto& r : retired_) delete r.v;
  for (AccountView* v : spare_) delete v;
}

size_t AccountTable::slot_of(AccountIndex a) const {
  return static_cast<size_t>((a * 0x9E3779B97F4A7C15ull) >> 20) & mask_;
}

const AccountView* AccountTable::find(AccountIndex a) const {
  for (size_t i = slot_of(a), n = 0; n <= mask_; i = (i + 1) & mask_, ++n) {
    // Acquire on both: pairs with the claim's and the store's release, so the view's contents
    // written before its pointer was stored are visible here.
    const uint64_t k = entries_[i].key.load(std::memory_order_acquire);
    if (k == 0) break;
    if (k == a + 1) {
      if (const AccountView* v = entries_[i].view.load(std::memory_order_acquire)) return v;
      break;  // claimed, its view not stored yet
    }
  }
  return base_ != nullptr ? from_base(a) : nullptr;
}

void AccountTable::set_base(std::shared_ptr<const SavedAccounts> base, int64_t now_ns,
                            size_t orders_in_view, unsigned arena) {
  base_ = std::move(base);
  base_ns_ = now_ns;
  base_orders_in_view_ = orders_in_view;
  base_arena_ = arena;
}

// The account's view made from the base and inserted, or the one another thread inserted first;
// nullptr when the base does not have the account (or the table is full).
const AccountView* AccountTable::from_base(AccountIndex a) const {
  const size_t pos = base_->position(a);
  if (pos == SIZE_MAX) return nullptr;
  Account acct;
  std::vector<Order> orders;
  base_->decode(pos, acct, orders);
  std::unique_ptr<AccountView> v;
  {
    const tachyon::ArenaScope arena(base_arena_);
    std::vector<OrderView> views;
    views.reserve(orders.size());
    for (const Order& o : orders) views.push_back(order_view(o, base_ns_));
    v = first_view(acct, views, base_ns_, base_orders_in_view_);
  }
  // Inserting changes no account's view (this is its view), only what the table holds.
  auto* self = const_cast<AccountTable*>(this);
  bool fresh = false;
  Entry* e = self->claim(a, fresh);
  if (e == nullptr) return nullptr;
  AccountView* expected = nullptr;
  // acq_rel: releases the view made here to later readers; on failure acquires the view that
  // won (the apply thread's or another reader's). The counters are statistics: relaxed.
  if (e->view.compare_exchange_strong(expected, v.get(), std::memory_order_acq_rel)) {
    made_.fetch_add(1, std::memory_order_relaxed);
    return v.release();
  }
  dropped_.fetch_add(1, std::memory_order_relaxed);
  return expected;
}

void AccountTable::for_each_with_l1(const std::array<uint8_t, 20>& l1,
                                    absl::FunctionRef<void(const AccountView&)> f) const {
  if (base_ != nullptr) {
    for (size_t pos = 0; pos < base_->size(); ++pos)
      if (base_->l1_address(pos) == l1) (void)find(base_->index_at(pos));
  }
  for_each([&](const AccountView& v) {
    if (v.l1_address == l1) f(v);
  });
}

// The entry of account `a`, claimed for it (`fresh`) if it has none; nullptr when the table is
// full. The key is claimed with a CAS, so seeding threads may claim at once; a reader that finds
// the key before its view is stored sees no view yet, as it would a moment earlier.
AccountTable::Entry* AccountTable::claim(AccountIndex a, bool& fresh, bool reserved) {
  fresh = false;
  for (size_t i = slot_of(a), n = 0; n <= mask_; i = (i + 1) & mask_, ++n) {
    Entry& e = entries_[i];
    uint64_t k = e.key.load(std::memory_order_acquire);
    if (k == 0) {
      // size_ only bounds the load factor (a few over is harmless): relaxed.
      if (!reserved && (size_.load(std::memory_order_relaxed) + 1) * 10 > entries_.size() * 7)
        break;
      if (!e.key.compare_exchange_strong(k, a + 1, std::memory_order_acq_rel)) {
        if (k == a + 1) return &e;  // another thread claimed it for the same account
        continue;                   // another account took the slot: probe on
      }
      if (!reserved) size_.fetch_add(1, std::memory_order_relaxed);
      fresh = true;
      return &e;
    }
    if (k == a + 1) return &e;
  }
  refused_.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

bool AccountTable::publish(std::unique_ptr<AccountView> v, uint64_t* tag) {
  if (tag != nullptr) *tag = 0;
  bool fresh = false;
  Entry* e = claim(v->index, fresh);
  if (e == nullptr) return false;
  // seq_cst, not only release: the exchange must be ordered before the retire tag is read
  // (domain_.retire_tag()), so no reader that started after the tag can still hold `old`.
  AccountView* old = e->view.exchange(v.release(), std::memory_order_seq_cst);
  if (old != nullptr) {
    retired_.push_back({old, domain_.retire_tag()});
    if (tag != nullptr) *tag = retired_.back().tag;
  }
  return true;
}

size_t AccountTable::insert_concurrent(std::vector<std::unique_ptr<AccountView>>& views) {
  const size_t n = views.size();
  // The shared count once per batch, not once per view (its line bounces between the threads).
  const size_t before = size_.fetch_add(n, std::memory_order_relaxed);
  const bool reserved = (before + n) * 10 <= entries_.size() * 7;
  if (!reserved) size_.fetch_sub(n, std::memory_order_relaxed);  // one at a time, then
  size_t in = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i + 8 < n) __builtin_prefetch(&entries_[slot_of(views[i + 8]->index)], 1);
    bool fresh = false;
    Entry* e = claim(views[i]->index, fresh, reserved);
    if (e == nullptr || !fresh) {  // full, or a second view of one account
      if (reserved) size_.fetch_sub(1, std::memory_order_relaxed);
      continue;
    }
    e->view.store(views[i].release(), std::memory_order_release);  // pairs with find()'s acquire
    ++in;
  }
  views.clear();
  return in;
}

std::unique_ptr<AccountView> AccountTable::take_spare() {
  if (spare_.empty()) return nullptr;
  AccountView* v = spare_.back();
  spare_.pop_back();
  return std::unique_ptr<AccountView>(v);
}

void AccountTable::collect() {
  if (retired_.empty()) return;
  // The epoch loaded before the scan: what was unlinked before it (tagged below it) no reader
  // that starts later can reach.
  const uint64_t now = domain_.current();
  const uint64_t safe = domain_.safe_below();
  safe_seen_ = std::min(now, safe);
  size_t kept = 0;
  for (auto& r : retired_) {
    if (r.tag < safe) {
      // What the view shares with others is let go now: a buffer no view holds is reusable.
      for (auto& c : r.v->trade_chunks) c.reset();
      r.v->orders.reset();
      r.v->small_chunks.clear();
      if (r.v->has_room()) {
        spare_.push_back(r.v);
      } else {
        delete r.v;  // a view made at the start: recycling it would allocate its room
      }
    } else {
      retired_[kept++] = r;
    }
  }
  retired_.resize(kept);
}

}  // namespace tachyon::pipe
