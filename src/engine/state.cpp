// Engine: margin figures, state_hash() and validate().
#include <algorithm>
#include <array>
#include <string>

#include "context.hpp"
#include "tachyon/core/hash.hpp"
#include "tachyon/engine/engine.hpp"

namespace tachyon {

MarginInfo Engine::margin_with(const Account& a, MarketId mid, Lots extra_buy, Lots extra_sell,
                               __int128* imr_without) const {
  return account_margin(
      a.collateral, a.positions, [this](MarketId m) { return margin_market(markets_[m]); }, mid,
      extra_buy, extra_sell, imr_without);
}

MarginInfo Engine::margin(const Account& a) const { return margin_with(a, 0, 0, 0, nullptr); }

MarginInfo Engine::isolated(const Position& p) const {
  return isolated_margin(margin_market(markets_[p.market]), p);
}

MarginInfo Engine::bucket_margin(const Account& a, MarketId bucket) const {
  if (bucket == kAllMarkets) return margin(a);
  const Position* p = a.position(bucket);
  return p != nullptr && p->isolated ? isolated(*p) : MarginInfo{};
}

bool Engine::below_maintenance(const Account& a) const {
  return health_of(margin(a)) >= Health::kPartialLiquidation || isolated_below_maintenance(a);
}

bool Engine::isolated_below_maintenance(const Account& a) const {
  for (const Position& p : a.positions)
    if (p.isolated && p.size != 0 && health_of(isolated(p)) >= Health::kPartialLiquidation)
      return true;
  return false;
}

// An order is accepted when the account stays at or above initial margin with the order counted,
// or when the order does not raise the requirement (it can only reduce risk).
Reject Engine::check_order_margin(const Account& a, const Market& m, bool is_ask, Lots size) const {
  __int128 imr_before = 0;
  const MarginInfo mi = margin_with(a, m.id, is_ask ? 0 : size, is_ask ? size : 0, &imr_before);
  return order_margin_ok(mi, imr_before) ? Reject::kOk : Reject::kNotEnoughMargin;
}

namespace {
// A market's parameters and figures.
void hash_market(StableHasher& h, const Market& m) {
  const MarketParams& p = m.params;
  h.add(m.id);
  h.add(std::string_view(p.symbol.data()));
  for (int64_t v : {int64_t{p.size_decimals},
                    int64_t{p.price_decimals},
                    int64_t(p.status),
                    int64_t{p.taker_fee_ppm},
                    int64_t{p.maker_fee_ppm},
                    int64_t{p.default_imf},
                    int64_t{p.min_imf},
                    int64_t{p.mmf},
                    int64_t{p.cmf},
                    int64_t{p.price_band},
                    int64_t{p.market_protection},
                    p.min_base_lots,
                    p.min_quote_usdc,
                    int64_t{p.max_orders_per_account},
                    int64_t{p.max_orders},
                    int64_t{p.funding_clamp_small},
                    int64_t{p.funding_clamp_big},
                    int64_t{p.interest_rate},
                    int64_t{p.breaker_band},
                    int64_t{p.breaker_window_s},
                    int64_t{p.breaker_cooldown_s},
                    m.premium_sum,
                    m.premium_samples,
                    m.next_funding_ms,
                    m.last_funding_rate,
                    m.last_funding_ms,
                    int64_t{m.breaker_level},
                    m.breaker_until_ms,
                    m.window_start_ms,
                    m.window_ref,
                    m.index_price,
                    m.mark_price,
                    m.last_trade_price,
                    m.open_interest,
                    int64_t(m.trade_count),
                    m.volume_base,
                    m.volume_quote})
    h.add_i(v);
}

// Both sides of the book, best level first, each level's orders in queue order.
void hash_book(StableHasher& h, const Market& m, const OrderPool& pool) {
  for (int side = 0; side < 2; ++side) {
    for (size_t i = 0; i < m.book.level_count(side); ++i) {
      const Level& l = m.book.level(side, i);
      h.add_i(l.price);
      h.add_i(l.total);
      for (uint32_t s = l.head; s != kNoSlot; s = pool[s].next) {
        const Order& o = pool[s];
        for (int64_t v : {int64_t(o.order_index), int64_t(o.client_order_index), int64_t(o.account),
                          o.remaining, o.initial, o.expiry_ms, int64_t(o.type), int64_t(o.tif),
                          int64_t{o.reduce_only}, int64_t(o.stp)})
          h.add_i(v);
      }
    }
  }
}

// Pending trigger orders, in trigger index order.
void hash_triggers(StableHasher& h, const Market& m, const OrderPool& pool,
                   const OrderIndexMap& order_slot) {
  for (const auto* set : {&m.triggers_below, &m.triggers_above}) {
    for (const auto& [key, id] : *set) {
      const Order& o = pool[order_slot.find(id, pool)];
      for (int64_t v : {int64_t(o.order_index), int64_t(o.client_order_index), int64_t(o.account),
                        o.price, o.trigger_price, o.remaining, o.expiry_ms, int64_t(o.type),
                        int64_t(o.tif), int64_t{o.reduce_only}, int64_t{o.is_ask}})
        h.add_i(v);
    }
  }
}

// Grouped orders (waiting children and links) and TWAPs, from the account lists.
void hash_outside_book(StableHasher& h, const AccountVector& accounts, const OrderPool& pool) {
  for (const Account& a : accounts) {
    for (uint32_t s = a.order_head; s != kNoSlot; s = pool[s].acct_next) {
      const Order& o = pool[s];
      if (o.pending == kWaitingTwap) {
        for (int64_t v : {int64_t(o.order_index), int64_t(o.client_order_index), int64_t(o.account),
                          o.price, o.trigger_price, o.remaining, o.initial, o.expiry_ms,
                          int64_t{o.is_ask}, int64_t{o.reduce_only}, int64_t(o.stp)})
          h.add_i(v);
        continue;
      }
      if (o.pending != kWaitingParent && (o.child | o.parent | o.sibling) == 0) continue;
      for (int64_t v : {int64_t(o.order_index), int64_t{o.pending}, o.trigger_price, o.remaining,
                        o.price, int64_t(o.child), int64_t(o.parent), int64_t(o.sibling)})
        h.add_i(v);
    }
  }
}

void hash_account(StableHasher& h, const Account& a) {
  h.add(a.index);
  h.add(a.master);
  h.add_i(a.collateral);
  h.add_i(a.cancel_all_at_ms);
  h.add_bytes(a.l1_address.data(), a.l1_address.size());
  for (const Position& p : a.positions) {
    for (int64_t v : {int64_t{p.market}, p.size, p.entry_notional, p.realized_pnl, p.buy_open,
                      p.sell_open, int64_t{p.imf}, int64_t{p.open_orders}, p.funding_paid})
      h.add_i(v);
    if (p.isolated) {  // cross positions hash as before isolated margin existed
      h.add(p.isolated);
      h.add_i(p.allocated);
    }
  }
  for (const ApiKey& k : a.keys) {
    h.add(k.index);
    h.add_i(k.next_nonce);
    h.add(k.version);
    h.add_bytes(k.pubkey.data(), k.pubkey.size());
  }
}

std::string market_broken(const Market& m, const char* what) {
  return "market " + std::to_string(m.id) + ": " + what;
}
}  // namespace

uint64_t Engine::state_hash() const {
  StableHasher h;
  h.add(next_order_index_);
  h.add(next_sub_account_);
  h.add(next_trade_id_);  // last_seq_ / last_block_ are bookkeeping, not state: a refused tx
                          // advances them and must leave the hash alone
  h.add_i(operator_nonce_);
  h.add_i(total_deposits_);
  h.add_i(total_withdrawals_);
  for (const Market& m : markets_) {
    if (!m.exists) continue;
    hash_market(h, m);
    hash_book(h, m, pool_);
    hash_triggers(h, m, pool_, order_slot_);
  }
  hash_outside_book(h, accounts_, pool_);
  for (const Account& a : accounts_) hash_account(h, a);  // creation order: deterministic
  return h.digest();
}

std::string Engine::validate() const {
  uint64_t resting = 0, pending = 0;
  if (std::string broken = validate_books(resting); !broken.empty()) return broken;
  if (std::string broken = validate_pending(pending); !broken.empty()) return broken;
  if (std::string broken = validate_outside_book(); !broken.empty()) return broken;
  resting += pending;
  if (resting != pool_.live_count()) return "pool holds orders that no book has";
  if (std::string broken = validate_positions(); !broken.empty()) return broken;
  if (order_slot_.size() != resting) return "order index map size";
  if (!expiries_.valid()) return "expiry heap";
  return validate_account_orders();
}

// Every book: levels in price order, each level's list and totals, open order counts, not
// crossed; and open interest = the longs = the shorts. `resting` receives the orders in books.
std::string Engine::validate_books(uint64_t& resting) const {
  std::array<Lots, kMaxMarkets> longs{}, shorts{};  // one pass over the accounts
  for (const Account& acc : accounts_) {
    for (const Position& p : acc.positions) (p.size > 0 ? longs : shorts)[p.market] += p.size;
  }
  for (const Market& m : markets_) {
    if (!m.exists) continue;
    uint32_t in_book = 0;
    for (int side = 0; side < 2; ++side) {
      for (size_t i = 0; i < m.book.level_count(side); ++i) {
        if (std::string broken = validate_level(m, side, i, in_book); !broken.empty())
          return broken;
      }
    }
    if (in_book != m.open_orders) return market_broken(m, "open order count");
    resting += in_book;
    if (m.book.crossed()) return market_broken(m, "book is crossed");
    if (longs[m.id] != -shorts[m.id] || longs[m.id] != m.open_interest)
      return market_broken(m, "longs != shorts != OI");
  }
  return {};
}

// Level i of one side: after level i - 1 in price order, its orders linked and matching it.
std::string Engine::validate_level(const Market& m, int side, size_t i, uint32_t& in_book) const {
  const Level& l = m.book.level(side, i);
  if (i > 0 && (side ? l.price <= m.book.level(side, i - 1).price
                     : l.price >= m.book.level(side, i - 1).price))
    return market_broken(m, "levels out of order");
  Lots total = 0;
  uint32_t count = 0;
  uint32_t prev = kNoSlot;
  for (uint32_t s = l.head; s != kNoSlot; prev = s, s = pool_[s].next) {
    const Order& o = pool_[s];
    if (!o.live || o.prev != prev) return market_broken(m, "broken level list");
    if (o.remaining <= 0) return market_broken(m, "resting order with no size");
    if (o.price != l.price || o.is_ask != side || o.market != m.id)
      return market_broken(m, "order in the wrong level");
    total += o.remaining;
    ++count;
  }
  if (prev != l.tail || total != l.total || count != l.count || count == 0)
    return market_broken(m, "level totals disagree with its orders");
  in_book += count;
  return {};
}

// The trigger indexes hold pending orders of their market. `pending` receives the orders outside
// the books (pending and waiting).
std::string Engine::validate_pending(uint64_t& pending) const {
  for (const Market& m : markets_) {
    if (!m.exists) continue;
    if (m.triggers_below.size() + m.triggers_above.size() != m.pending_orders)
      return market_broken(m, "trigger index size");
    for (const auto* set : {&m.triggers_below, &m.triggers_above}) {
      for (const auto& [key, id] : *set) {
        const uint32_t s = order_slot_.find(id, pool_);
        if (s == kNoSlot || !pool_[s].pending || pool_[s].market != m.id)
          return "trigger index holds an order that is not pending";
      }
    }
    pending += m.pending_orders + m.waiting_orders;
  }
  return {};
}

// Waiting orders: TWAPs in the slice schedule, grouped children with their primary, OCO links
// mutual, and the markets' waiting counts.
std::string Engine::validate_outside_book() const {
  std::array<uint32_t, kMaxMarkets> waiting{};
  size_t twaps = 0;
  for (const Account& acc : accounts_) {
    for (uint32_t s = acc.order_head; s != kNoSlot; s = pool_[s].acct_next) {
      const Order& o = pool_[s];
      if (o.pending == kWaitingParent || o.pending == kWaitingTwap) ++waiting[o.market];
      if (o.pending == kWaitingTwap) {
        ++twaps;
        if (o.type != OrderType::kTwap || !twaps_.contains({o.trigger_price, o.order_index}))
          return "a TWAP missing from the slice schedule";
      }
      auto linked = [&](OrderIndex id) -> const Order* {
        const uint32_t x = order_slot_.find(id, pool_);
        return x == kNoSlot ? nullptr : &pool_[x];
      };
      if (o.sibling != 0) {
        const Order* x = linked(o.sibling);
        if (x == nullptr || x->sibling != o.order_index) return "OCO link not mutual";
      }
      if (o.pending == kWaitingParent && linked(o.parent) == nullptr)
        return "a waiting child without its primary";
    }
  }
  for (const Market& m : markets_) {
    if (m.exists && waiting[m.id] != m.waiting_orders) return "waiting order count";
  }
  if (twaps != twaps_.size()) return "the TWAP slice schedule holds orders that are gone";
  return {};
}

// The markets' holder lists and the liquidation indexes agree with the positions, and no account
// is left below maintenance margin.
std::string Engine::validate_positions() const {
  for (const Market& m : markets_) {
    if (!m.exists) continue;
    for (size_t i = 0; i < m.holders.size(); ++i) {
      const Position* p = accounts_[m.holders[i]].position(m.id);
      if (p == nullptr || p->size == 0 || p->holder_pos != i) return "market holder list";
    }
  }
  for (size_t slot = 0; slot < accounts_.size(); ++slot) {
    for (const Position& p : accounts_[slot].positions) {
      if ((p.size != 0) != (p.holder_pos != kNoSlot)) return "holder flag of a position";
      if (p.risk_key != kNoRiskKey &&
          !markets_[p.market].risk_index.contains({p.risk_key, static_cast<uint32_t>(slot)}))
        return "liquidation index entry missing";
    }
    if (below_maintenance(accounts_[slot]))
      return "account " + std::to_string(accounts_[slot].index) +
             " below maintenance margin after the risk pass";
  }
  return {};
}

// Each account's order list and the positions' open-order aggregates; and money is conserved:
// what the accounts hold is what was deposited less what was withdrawn.
std::string Engine::validate_account_orders() const {
  __int128 money = 0;
  for (const Account& acc : accounts_) {
    uint32_t n = 0;
    for (uint32_t s = acc.order_head; s != kNoSlot; s = pool_[s].acct_next, ++n) {
      if (pool_[s].account != acc.index) return "account order list holds a foreign order";
    }
    if (n != acc.open_orders) return "account open order count";
    money += acc.collateral;
    for (const Position& p : acc.positions) {
      money += p.allocated - p.entry_notional;
      if (p.size == 0 && p.entry_notional != 0) return "flat position with a cost basis";
      if ((p.size == 0 || !p.isolated) && p.allocated != 0)
        return "isolated margin on a flat or cross position";
      Lots buy = 0, sell = 0;
      uint32_t cnt = 0;
      for (uint32_t s = acc.order_head; s != kNoSlot; s = pool_[s].acct_next) {
        const Order& o = pool_[s];
        if (o.market != p.market) continue;
        if (!o.pending) (o.is_ask ? sell : buy) += o.remaining;  // waiting orders carry no margin
        ++cnt;
      }
      if (buy != p.buy_open || sell != p.sell_open || cnt != p.open_orders)
        return "position open-order aggregates";
    }
  }
  if (money != static_cast<__int128>(total_deposits_) - total_withdrawals_)
    return "money not conserved: sum(collateral + allocated - entry) != deposits - withdrawals";
  return {};
}

}  // namespace tachyon
