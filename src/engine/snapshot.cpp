// Engine: full-state serialisation for snapshots. The order of books, levels, FIFOs, accounts
// and each account's order list is kept, so a restored engine behaves exactly like the original.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "context.hpp"
#include "tachyon/engine/engine.hpp"

namespace tachyon {

namespace {
constexpr uint32_t kMagic = 0x34474e45;      // "ENG4": isolated margin in positions
constexpr uint32_t kEng3Magic = 0x33474e45;  // "ENG3": TWAP orders; positions without margin mode
constexpr uint32_t kEng2Magic = 0x32474e45;  // "ENG2": funding, breaker, dead man's switch
constexpr uint32_t kOldMagic = 0x31474e45;   // "ENG1"

struct SavedOrder {
  OrderIndex order_index;
  uint64_t client_order_index;
  AccountIndex account;
  Ticks price;
  Lots remaining;
  Lots initial;
  int64_t expiry_ms;
  MarketId market;
  uint8_t is_ask;
  OrderType type;
  TimeInForce tif;
  uint8_t reduce_only;
  StpMode stp;
  uint8_t pad_[2];
};
static_assert(sizeof(SavedOrder) == 64);
static_assert(std::is_trivially_copyable_v<Position> && std::is_trivially_copyable_v<ApiKey>);
static_assert(sizeof(Position) == 80);

// A position as ENG3 stored it (every position cross): loaded into today's layout.
struct PositionEng3 {
  Lots size;
  Usdc entry_notional;
  Usdc realized_pnl;
  Lots buy_open;
  Lots sell_open;
  Bps4 imf;
  uint32_t open_orders;
  Usdc funding_paid;
  uint32_t holder_pos;
  int64_t risk_key;
  MarketId market;
};
static_assert(sizeof(PositionEng3) == 80);

Position from_eng3(const PositionEng3& o) {
  Position p{};
  p.size = o.size;
  p.entry_notional = o.entry_notional;
  p.realized_pnl = o.realized_pnl;
  p.buy_open = o.buy_open;
  p.sell_open = o.sell_open;
  p.imf = o.imf;
  p.open_orders = o.open_orders;
  p.funding_paid = o.funding_paid;
  p.holder_pos = o.holder_pos;
  p.risk_key = o.risk_key;
  p.market = o.market;
  return p;
}

SavedOrder saved(const Order& o) {
  return SavedOrder{o.order_index, o.client_order_index, o.account, o.price,  o.remaining,
                    o.initial,     o.expiry_ms,          o.market,  o.is_ask, o.type,
                    o.tif,         o.reduce_only,        o.stp,     {0, 0}};
}

// An account's record (into an account whose positions and keys are empty): nullptr, or what
// is wrong with it.
const char* read_account(ByteSource& in, bool eng3, Account& a) {
  a.index = in.pod<AccountIndex>();
  a.master = in.pod<AccountIndex>();
  a.collateral = in.pod<Usdc>();
  a.l1_address = in.pod<std::array<uint8_t, 20>>();
  a.cancel_all_at_ms = in.pod<int64_t>();
  const uint32_t np = in.pod<uint32_t>();
  if (np > kMaxMarkets) return "position count";
  for (uint32_t k = 0; k < np; ++k)
    a.positions.push_back(eng3 ? from_eng3(in.pod<PositionEng3>()) : in.pod<Position>());
  const uint32_t nk = in.pod<uint32_t>();
  if (nk > kMaxApiKeys) return "key count";
  for (uint32_t k = 0; k < nk; ++k) a.keys.push_back(in.pod<ApiKey>());
  return nullptr;
}

Order from_saved(const SavedOrder& so, uint32_t account_slot, uint8_t pending, Ticks trigger) {
  Order o{};
  o.order_index = so.order_index;
  o.client_order_index = so.client_order_index;
  o.account = so.account;
  o.price = so.price;
  o.remaining = so.remaining;
  o.initial = so.initial;
  o.expiry_ms = so.expiry_ms;
  o.prev = o.next = o.acct_prev = o.acct_next = o.heap_pos = kNoSlot;
  o.account_slot = account_slot;
  o.market = so.market;
  o.is_ask = so.is_ask;
  o.type = so.type;
  o.tif = so.tif;
  o.reduce_only = so.reduce_only;
  o.stp = so.stp;
  o.live = 1;
  o.pending = pending;
  o.trigger_price = trigger;
  return o;
}

Status bad(const std::string& what) { return Status::error("engine snapshot: " + what); }
}  // namespace

void Engine::save(ByteSink& out) const {
  out.pod(kMagic);
  for (uint64_t v : {next_order_index_, next_sub_account_, next_trade_id_, last_seq_, last_block_})
    out.pod(v);
  for (int64_t v : {operator_nonce_, total_deposits_, total_withdrawals_}) out.pod(v);
  save_accounts(out);
  save_books(out);
  save_pending(out);
  save_outside_book(out);
  save_order_lists(out);
  out.pod(kMagic);
}

void Engine::save_accounts(ByteSink& out) const {
  out.pod(static_cast<uint64_t>(accounts_.size()));
  for (const Account& a : accounts_) {
    out.pod(a.index);
    out.pod(a.master);
    out.pod(a.collateral);
    out.pod(a.l1_address);
    out.pod(a.cancel_all_at_ms);
    out.pod(static_cast<uint32_t>(a.positions.size()));
    for (const Position& p : a.positions) out.pod(p);
    out.pod(static_cast<uint32_t>(a.keys.size()));
    for (const ApiKey& k : a.keys) out.pod(k);
  }
}

void Engine::save_books(ByteSink& out) const {
  uint32_t n_markets = 0;
  for (const Market& m : markets_) n_markets += m.exists;
  out.pod(n_markets);
  for (const Market& m : markets_) {
    if (!m.exists) continue;
    out.pod(m.id);
    out.pod(m.params);
    for (int64_t v :
         {m.index_price, m.mark_price, m.last_trade_price, m.open_interest,
          static_cast<int64_t>(m.trade_count), m.volume_base, m.volume_quote, m.premium_sum,
          m.premium_samples, m.next_funding_ms, m.last_funding_rate, m.last_funding_ms,
          int64_t{m.breaker_level}, m.breaker_until_ms, m.window_start_ms, m.window_ref})
      out.pod(v);
    for (int side = 0; side < 2; ++side) {
      // Worst level first: load() then appends each level at the best end instead of shifting
      // the whole side for every level.
      const size_t levels = m.book.level_count(side);
      out.pod(static_cast<uint32_t>(levels));
      for (size_t i = levels; i-- > 0;) {
        const Level& l = m.book.level(side, i);
        out.pod(l.count);
        for (uint32_t s = l.head; s != kNoSlot; s = pool_[s].next) {
          const Order& o = pool_[s];
          out.pod(saved(o));
        }
      }
    }
  }
}

void Engine::save_pending(ByteSink& out) const {
  for (const Market& m : markets_) {
    if (!m.exists) continue;
    out.pod(m.pending_orders);
    for (const auto* set : {&m.triggers_below, &m.triggers_above}) {
      for (const auto& [key, id] : *set) {
        const Order& o = pool_[order_slot_.find(id, pool_)];
        out.pod(saved(o));
        out.pod(o.trigger_price);
      }
    }
  }
}

// Orders waiting outside the book with their trigger_price: grouped children waiting for their
// primary, then TWAPs between slices (the time of the next one); then every group link (all
// from the account lists). Counted first, then written by one more walk per non-empty kind:
// save() allocates nothing, because a snapshot's fork() child of this multi-threaded process
// must not call malloc (another thread may have held an allocator lock at the fork).
void Engine::save_outside_book(ByteSink& out) const {
  auto is_waiting = [](const Order& o) { return o.pending == kWaitingParent; };
  auto is_twap = [](const Order& o) { return o.pending == kWaitingTwap; };
  auto is_linked = [](const Order& o) { return (o.child | o.parent | o.sibling) != 0; };
  uint64_t n_waiting = 0, n_twaps = 0, n_linked = 0;
  for (const Account& a : accounts_) {
    for (uint32_t s = a.order_head; s != kNoSlot; s = pool_[s].acct_next) {
      n_waiting += is_waiting(pool_[s]);
      n_twaps += is_twap(pool_[s]);
      n_linked += is_linked(pool_[s]);
    }
  }
  auto each = [&](uint64_t n, auto&& pick, auto&& write) {
    out.pod(n);
    for (const Account& a : accounts_) {
      if (n == 0) break;
      for (uint32_t s = a.order_head; s != kNoSlot; s = pool_[s].acct_next) {
        if (!pick(pool_[s])) continue;
        write(pool_[s]);
        --n;
      }
    }
  };
  auto waiting_order = [&](const Order& o) {
    out.pod(saved(o));
    out.pod(o.trigger_price);
  };
  each(n_waiting, is_waiting, waiting_order);
  each(n_twaps, is_twap, waiting_order);
  each(n_linked, is_linked, [&](const Order& o) {
    for (OrderIndex v : {o.order_index, o.child, o.parent, o.sibling}) out.pod(v);
  });
}

void Engine::save_order_lists(ByteSink& out) const {
  for (const Account& a : accounts_) {  // each account's order list, in list order
    out.pod(a.open_orders);
    for (uint32_t s = a.order_head; s != kNoSlot; s = pool_[s].acct_next)
      out.pod(pool_[s].order_index);
  }
}

// load()'s state while it reads one snapshot: the stream, where its body starts (the offsets
// `saved` receives), its format, and the helper that faults fresh pages in ahead of the reads.
struct Engine::Loading {
  Loading(ByteSource& source, const uint8_t* start, bool eng3_format, SavedAccounts* out)
      : in(source), body(start), eng3(eng3_format), saved(out) {}

  uint64_t offset() const { return static_cast<uint64_t>(in.cursor() - body); }

  ByteSource& in;
  const uint8_t* const body;
  const bool eng3;  // ENG3: positions without margin mode
  SavedAccounts* const saved;
  // With `saved`: where each order's SavedOrder lies, by pool slot, | its pending kind << 56
  // (written for every slot handed out; read for the listed ones).
  std::unique_ptr<uint64_t[]> slot_at;
  // How far this thread has filled the account array and the order pool, and how many orders
  // there can be (0 until the accounts are read): the prefault helper stops short of them.
  std::atomic<size_t> accounts_filled{0}, orders_filled{0}, orders_bound{0};
  // Declared last: jthread's destructor stops and joins the helper before the counters it reads
  // go, also on an early return.
  std::jthread prefault;
};

Status Engine::load(ByteSource& in, bool validate_after, SavedAccounts* saved) {
  const uint8_t* const body = in.cursor();
  const uint32_t magic = in.pod<uint32_t>();
  if (magic == kOldMagic)
    return bad(
        "format ENG1 was written by an older tachyon (before funding and liquidation); "
        "start from a fresh data dir or replay its journal with that version");
  if (magic == kEng2Magic)
    return bad(
        "format ENG2 was written by an older tachyon (before TWAP orders); start from a fresh "
        "data dir or replay its journal with this version");
  if (magic != kMagic && magic != kEng3Magic) return bad("bad magic");
  Loading ld(in, body, magic == kEng3Magic, saved);
  if (saved != nullptr) {
    *saved = SavedAccounts();
    saved->body_ = body;
    saved->len_ = in.remaining() + sizeof(magic);
    saved->eng3_ = ld.eng3;
  }
  if (pool_.live_count() != 0 || accounts_.size() > 2) return bad("load needs a fresh engine");
  accounts_.clear();
  account_slot_.clear();
  for (auto& m : markets_) m.exists = false;
  next_order_index_ = in.pod<uint64_t>();
  next_sub_account_ = in.pod<uint64_t>();
  next_trade_id_ = in.pod<uint64_t>();
  last_seq_ = in.pod<uint64_t>();
  last_block_ = in.pod<uint64_t>();
  operator_nonce_ = in.pod<int64_t>();
  total_deposits_ = in.pod<int64_t>();
  total_withdrawals_ = in.pod<int64_t>();
  if (Status st = load_accounts(ld); !st.ok()) return st;
  index_saved(ld);
  if (Status st = load_markets(ld); !st.ok()) return st;
  if (Status st = load_pending(ld); !st.ok()) return st;
  // Orders waiting outside the book: grouped children (their trigger), then TWAPs (the time of
  // their next slice).
  if (Status st = load_waiting(ld, kWaitingParent, "waiting order"); !st.ok()) return st;
  if (Status st = load_waiting(ld, kWaitingTwap, "TWAP order"); !st.ok()) return st;
  if (Status st = load_links(ld); !st.ok()) return st;
  if (Status st = load_order_lists(ld); !st.ok()) return st;
  if (in.pod<uint32_t>() != magic || in.failed() || in.remaining() != 0)
    return bad("truncated or trailing bytes");
  for (const Account& a : accounts_) {
    for (const Position& p : a.positions) {
      if (p.market >= kMaxMarkets || !markets_[p.market].exists) return bad("position market");
      if (p.isolated > 1) return bad("position margin mode");
    }
  }
  rebuild_risk_indexes();
  if (!validate_after) return Status();
  if (std::string broken = validate(); !broken.empty()) return bad("inconsistent state: " + broken);
  return Status();
}

Status Engine::load_accounts(Loading& ld) {
  ByteSource& in = ld.in;
  const uint64_t n_accounts = in.pod<uint64_t>();
  // An account's record is at least 60 bytes (index, master, collateral, address, deadline and
  // two counts): a count the bytes cannot hold is refused before anything is reserved for it.
  constexpr size_t kMinAccountRecord =
      2 * sizeof(AccountIndex) + sizeof(Usdc) + 20 + sizeof(int64_t) + 2 * sizeof(uint32_t);
  static_assert(kMinAccountRecord == 60);
  if (in.failed() || n_accounts > in.remaining() / kMinAccountRecord) return bad("account count");
  accounts_.reserve(n_accounts);
  if (ld.saved != nullptr) {
    ld.saved->index_.reserve(n_accounts);
    ld.saved->record_.reserve(n_accounts);
  }
  // Sized once for what the snapshot holds (the engine reserved only expected_accounts): growing
  // from 64k to 1M entries rehashed it five times, every account moved again each time.
  account_slot_.reserve(n_accounts);
  start_prefault(ld, n_accounts);
  for (uint64_t i = 0; i < n_accounts && !in.failed(); ++i) {
    if ((i & 4095) == 0) ld.accounts_filled.store(i * sizeof(Account), std::memory_order_relaxed);
    Account& a = accounts_.emplace_back();
    if (ld.saved != nullptr) ld.saved->record_.push_back(ld.offset());
    if (const char* why = read_account(in, ld.eng3, a)) return bad(why);
    if (ld.saved != nullptr) ld.saved->index_.push_back(a.index);
  }
  if (Status st = index_accounts(); !st.ok()) return st;
  ld.accounts_filled.store(n_accounts * sizeof(Account), std::memory_order_relaxed);
  ld.orders_bound.store(
      std::max<size_t>(1, std::min<size_t>(pool_.capacity(), in.remaining() / sizeof(SavedOrder))),
      std::memory_order_release);
  ld.orders_bound.notify_one();
  return Status();
}

// Fresh pages of the account array, then of the order pool, are faulted in from the back by a
// helper while this thread fills both from the front (huge_page_allocator.hpp). Loading's
// jthread stops and joins it when load() returns, also on an early return.
void Engine::start_prefault(Loading& ld, uint64_t n_accounts) {
  if (n_accounts * sizeof(Account) < (size_t{16} << 20) || pool_.capacity() == 0) return;
  const Order* pool = &pool_[0];
  ld.prefault = std::jthread([&ld, b = accounts_.data(), n = n_accounts, pool](std::stop_token st) {
    prefault_from_back(b, b + n, ld.accounts_filled);
    // How many orders there can be is known once the accounts are read; a stop (early return)
    // ends the wait too.
    const std::stop_callback wake(st, [&] {
      ld.orders_bound.store(SIZE_MAX, std::memory_order_release);
      ld.orders_bound.notify_one();
    });
    ld.orders_bound.wait(0, std::memory_order_acquire);
    const size_t bound = ld.orders_bound.load(std::memory_order_acquire);
    if (bound != SIZE_MAX) prefault_from_back(pool, pool + bound, ld.orders_filled);
  });
}

// The index map after the accounts, with its buckets prefetched ahead: each insert is a random
// read into a table of tens of MB, and the next account's index is known only once this one's
// record is decoded.
Status Engine::index_accounts() {
  constexpr size_t kSlotAhead = 16;
  for (size_t i = 0; i < accounts_.size(); ++i) {
    if (i + kSlotAhead < accounts_.size()) account_slot_.prefetch(accounts_[i + kSlotAhead].index);
    if (!account_slot_.emplace(accounts_[i].index, static_cast<uint32_t>(i)).second)
      return bad("duplicate account");
  }
  return Status();
}

// With `saved`: its lookup by account index, and room for where each order lies (Loading).
void Engine::index_saved(Loading& ld) {
  SavedAccounts* const saved = ld.saved;
  if (saved == nullptr) return;
  saved->sorted_ = std::is_sorted(saved->index_.begin(), saved->index_.end());
  if (!saved->sorted_) {
    saved->by_index_.reserve(saved->index_.size());
    for (size_t i = 0; i < saved->index_.size(); ++i)
      saved->by_index_.emplace_back(saved->index_[i], static_cast<uint32_t>(i));
    std::sort(saved->by_index_.begin(), saved->by_index_.end());
  }
  ld.slot_at.reset(new uint64_t[pool_.capacity() + 1]);
}

Status Engine::load_markets(Loading& ld) {
  const uint32_t n_markets = ld.in.pod<uint32_t>();
  if (n_markets > kMaxMarkets) return bad("market count");
  for (uint32_t i = 0; i < n_markets && !ld.in.failed(); ++i) {
    if (Status st = load_market(ld); !st.ok()) return st;
  }
  return Status();
}

Status Engine::load_market(Loading& ld) {
  ByteSource& in = ld.in;
  const MarketId id = in.pod<MarketId>();
  if (id >= kMaxMarkets || markets_[id].exists) return bad("market id");
  Market& m = markets_[id];
  m.exists = true;
  m.params = in.pod<MarketParams>();
  if (!market_params_valid(m.params)) return bad("market parameters");
  m.quote_multiplier = pow10_i64(kQuoteDecimals - m.params.size_decimals - m.params.price_decimals);
  m.index_price = in.pod<int64_t>();
  m.mark_price = in.pod<int64_t>();
  m.last_trade_price = in.pod<int64_t>();
  m.open_interest = in.pod<int64_t>();
  m.trade_count = static_cast<uint64_t>(in.pod<int64_t>());
  m.volume_base = in.pod<int64_t>();
  m.volume_quote = in.pod<int64_t>();
  m.premium_sum = in.pod<int64_t>();
  m.premium_samples = in.pod<int64_t>();
  m.next_funding_ms = in.pod<int64_t>();
  m.last_funding_rate = in.pod<int64_t>();
  m.last_funding_ms = in.pod<int64_t>();
  const int64_t level = in.pod<int64_t>();
  if (level < 0 || level > 2) return bad("breaker level");
  m.breaker_level = static_cast<uint8_t>(level);
  m.breaker_until_ms = in.pod<int64_t>();
  m.window_start_ms = in.pod<int64_t>();
  m.window_ref = in.pod<int64_t>();
  m.open_orders = 0;
  m.book.reserve(cfg_.levels_per_side);
  for (int side = 0; side < 2; ++side) {
    const uint32_t levels = in.pod<uint32_t>();
    for (uint32_t l = 0; l < levels && !in.failed(); ++l) {
      if (Status st = load_level(ld, m, side); !st.ok()) return st;
    }
  }
  return Status();
}

Status Engine::load_level(Loading& ld, Market& m, int side) {
  ByteSource& in = ld.in;
  const uint32_t count = in.pod<uint32_t>();
  if (count == 0 || count > in.remaining() / sizeof(SavedOrder)) return bad("level size");
  // In batches, the accounts' hash buckets prefetched first: these lookups are random and each
  // would otherwise miss cache in turn.
  std::array<SavedOrder, 16> batch;
  uint64_t batch_at = 0;  // the first one's offset
  for (uint32_t k = 0; k < count; ++k) {
    const uint32_t at = k % batch.size();
    if (at == 0) {
      const uint32_t n = std::min<uint32_t>(count - k, batch.size());
      batch_at = ld.offset();
      for (uint32_t j = 0; j < n; ++j) {
        batch[j] = in.pod<SavedOrder>();
        account_slot_.prefetch(batch[j].account);
      }
    }
    const SavedOrder& so = batch[at];
    auto acct = account_slot_.find(so.account);
    if (in.failed() || acct == account_slot_.end() || so.market != m.id || so.is_ask != side ||
        so.remaining <= 0 || pool_.full() || order_slot_.find(so.order_index, pool_) != kNoSlot)
      return bad("order");
    const uint32_t s = pool_.alloc();
    if ((s & 4095) == 0)
      ld.orders_filled.store(size_t{s} * sizeof(Order), std::memory_order_relaxed);
    if (ld.slot_at) ld.slot_at[s] = batch_at + at * sizeof(SavedOrder);
    Order& o = pool_[s];
    o = from_saved(so, acct->second, 0, 0);
    m.book.add(pool_, s);
    ++m.open_orders;
    if (o.expiry_ms != 0) expiries_.push(s);
    order_slot_.insert(o.order_index, s);
    if (o.client_order_index != 0) coi_slot_.emplace(CoiKey{o.account, o.client_order_index}, s);
  }
  return Status();
}

Status Engine::load_pending(Loading& ld) {
  ByteSource& in = ld.in;
  for (Market& m : markets_) {
    if (!m.exists) continue;
    const uint32_t n = in.pod<uint32_t>();
    if (n > in.remaining() / sizeof(SavedOrder)) return bad("pending order count");
    for (uint32_t k = 0; k < n && !in.failed(); ++k) {
      const uint64_t at = ld.offset();
      const SavedOrder so = in.pod<SavedOrder>();
      const Ticks trigger = in.pod<Ticks>();
      auto acct = account_slot_.find(so.account);
      if (in.failed() || acct == account_slot_.end() || so.market != m.id ||
          !is_trigger_type(so.type) || trigger <= 0 || pool_.full() ||
          order_slot_.find(so.order_index, pool_) != kNoSlot)
        return bad("pending order");
      const uint32_t s = pool_.alloc();
      if (ld.slot_at) ld.slot_at[s] = at | uint64_t{kWaitingTrigger} << 56;
      Order& o = pool_[s];
      o = from_saved(so, acct->second, kWaitingTrigger, trigger);
      (fires_below(o.type, o.is_ask) ? m.triggers_below : m.triggers_above)
          .insert(fires_below(o.type, o.is_ask) ? std::make_pair(-trigger, o.order_index)
                                                : std::make_pair(trigger, o.order_index));
      ++m.pending_orders;
      if (o.expiry_ms != 0) expiries_.push(s);
      order_slot_.insert(o.order_index, s);
      if (o.client_order_index != 0) coi_slot_.emplace(CoiKey{o.account, o.client_order_index}, s);
    }
  }
  return Status();
}

// Orders of one kind waiting outside the book (kWaitingParent or kWaitingTwap), each with its
// trigger_price.
Status Engine::load_waiting(Loading& ld, uint8_t kind, const std::string& what) {
  ByteSource& in = ld.in;
  const uint64_t n = in.pod<uint64_t>();
  if (n > in.remaining() / sizeof(SavedOrder)) return bad(what + " count");
  for (uint64_t k = 0; k < n && !in.failed(); ++k) {
    const uint64_t at = ld.offset();
    const SavedOrder so = in.pod<SavedOrder>();
    const Ticks trigger = in.pod<Ticks>();
    auto acct = account_slot_.find(so.account);
    const bool type_ok = kind == kWaitingTwap ? so.type == OrderType::kTwap && so.remaining > 0
                                              : is_trigger_type(so.type);
    if (in.failed() || acct == account_slot_.end() || so.market >= kMaxMarkets ||
        !markets_[so.market].exists || !type_ok || trigger <= 0 || pool_.full() ||
        order_slot_.find(so.order_index, pool_) != kNoSlot)
      return bad(what);
    const uint32_t s = pool_.alloc();
    if (ld.slot_at) ld.slot_at[s] = at | uint64_t{kind} << 56;
    pool_[s] = from_saved(so, acct->second, kind, trigger);
    ++markets_[so.market].waiting_orders;
    if (so.expiry_ms != 0) expiries_.push(s);
    order_slot_.insert(so.order_index, s);
    if (so.client_order_index != 0) coi_slot_.emplace(CoiKey{so.account, so.client_order_index}, s);
    if (kind == kWaitingTwap) twaps_.insert({trigger, so.order_index});
  }
  return Status();
}

Status Engine::load_links(Loading& ld) {
  ByteSource& in = ld.in;
  const uint64_t n_links = in.pod<uint64_t>();
  if (n_links > in.remaining() / 32) return bad("group link count");
  for (uint64_t k = 0; k < n_links && !in.failed(); ++k) {
    const OrderIndex id = in.pod<OrderIndex>();
    const uint32_t s = order_slot_.find(id, pool_);
    if (s == kNoSlot) return bad("group link of an unknown order");
    pool_[s].child = in.pod<OrderIndex>();
    pool_[s].parent = in.pod<OrderIndex>();
    pool_[s].sibling = in.pod<OrderIndex>();
  }
  return Status();
}

// Each account's list, relinked in its saved order. The ids are read first, then looked up with
// prefetches ahead (link_order_lists).
Status Engine::load_order_lists(Loading& ld) {
  ByteSource& in = ld.in;
  std::vector<OrderIndex> ids;
  ids.reserve(pool_.live_count());
  for (Account& a : accounts_) {
    a.open_orders = in.pod<uint32_t>();
    if (a.open_orders > pool_.live_count() - ids.size()) return bad("account order count");
    for (uint32_t k = 0; k < a.open_orders && !in.failed(); ++k)
      ids.push_back(in.pod<OrderIndex>());
  }
  if (in.failed()) return bad("account orders truncated");
  return link_order_lists(ld, ids);
}

// Each lookup is two random reads (the index's cell, then the pool entry), and at 1M orders they
// dominated this loop: both are prefetched ahead.
Status Engine::link_order_lists(Loading& ld, const std::vector<OrderIndex>& ids) {
  SavedAccounts* const saved = ld.saved;
  constexpr size_t kCellAhead = 16, kOrderAhead = 8;
  for (size_t j = 0; j < std::min(ids.size(), kCellAhead); ++j) order_slot_.prefetch_cell(ids[j]);
  for (size_t j = 0; j < std::min(ids.size(), kOrderAhead); ++j)
    order_slot_.prefetch_order(ids[j], pool_);
  size_t next = 0;
  if (saved != nullptr) {
    saved->list_begin_.reserve(accounts_.size() + 1);
    saved->entry_.reserve(ids.size());
  }
  for (Account& a : accounts_) {
    if (saved != nullptr) saved->list_begin_.push_back(static_cast<uint32_t>(next));
    uint32_t tail = kNoSlot;
    for (uint32_t k = 0; k < a.open_orders; ++k, ++next) {
      if (next + kCellAhead < ids.size()) order_slot_.prefetch_cell(ids[next + kCellAhead]);
      if (next + kOrderAhead < ids.size()) {
        order_slot_.prefetch_order(ids[next + kOrderAhead], pool_);
        if (ld.slot_at) {
          const uint32_t h = order_slot_.slot_hint(ids[next + kOrderAhead]);
          if (h < pool_.capacity()) __builtin_prefetch(&ld.slot_at[h]);
        }
      }
      const uint32_t s = order_slot_.find(ids[next], pool_);
      if (s == kNoSlot || pool_[s].account != a.index) return bad("account order");
      Order& o = pool_[s];
      if (saved != nullptr) {
        saved->entry_.push_back(ld.slot_at[s]);
        if (o.parent != 0) saved->parents_.emplace_back(o.order_index, o.parent);
      }
      o.acct_prev = tail;
      if (tail == kNoSlot) {
        a.order_head = s;
      } else {
        pool_[tail].acct_next = s;
      }
      tail = s;
    }
  }
  if (saved != nullptr) {
    saved->list_begin_.push_back(static_cast<uint32_t>(next));
    std::sort(saved->parents_.begin(), saved->parents_.end());
  }
  return Status();
}

size_t SavedAccounts::position(AccountIndex a) const {
  if (sorted_) {
    auto it = std::lower_bound(index_.begin(), index_.end(), a);
    return it != index_.end() && *it == a ? static_cast<size_t>(it - index_.begin()) : SIZE_MAX;
  }
  auto it = std::lower_bound(by_index_.begin(), by_index_.end(), std::make_pair(a, uint32_t{0}));
  return it != by_index_.end() && it->first == a ? it->second : SIZE_MAX;
}

// The bytes were checked (checksum, then every count and index) when load() decoded them.
void SavedAccounts::decode(size_t pos, Account& a, std::vector<Order>& orders) const {
  ByteSource in(body_ + record_[pos], len_ - record_[pos]);
  a.positions.clear();
  a.keys.clear();
  a.order_head = kNoSlot;
  (void)read_account(in, eng3_, a);
  orders.clear();
  for (uint32_t j = list_begin_[pos]; j < list_begin_[pos + 1]; ++j) {
    const uint64_t e = entry_[j];
    const uint64_t at = e & ((uint64_t{1} << 56) - 1);
    const auto pending = static_cast<uint8_t>(e >> 56);
    SavedOrder so;
    std::memcpy(&so, body_ + at, sizeof(so));
    Ticks trigger = 0;
    if (pending != 0) std::memcpy(&trigger, body_ + at + sizeof(so), sizeof(trigger));
    Order& o = orders.emplace_back(from_saved(so, kNoSlot, pending, trigger));
    auto p = std::lower_bound(parents_.begin(), parents_.end(),
                              std::make_pair(o.order_index, OrderIndex{0}));
    if (p != parents_.end() && p->first == o.order_index) o.parent = p->second;
  }
  a.open_orders = static_cast<uint32_t>(orders.size());
}

std::array<uint8_t, 20> SavedAccounts::l1_address(size_t pos) const {
  std::array<uint8_t, 20> l1;
  std::memcpy(l1.data(), body_ + record_[pos] + 2 * sizeof(AccountIndex) + sizeof(Usdc), l1.size());
  return l1;
}

}  // namespace tachyon
