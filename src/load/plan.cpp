#include "plan.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>
#include <unordered_map>

#include "lobster_data.hpp"
#include "tachyon/api/json_writer.hpp"
#include "tachyon/api/tx_info.hpp"
#include "tachyon/core/clock.hpp"

namespace tachyon::load {

namespace {

Tx header(Trader& t, TxType type) {
  Tx tx;
  tx.h.type = type;
  tx.h.account = t.account;
  tx.h.api_key_index = 0;
  tx.h.nonce = t.nonce++;
  tx.h.flags = kTxFlagSkipNonce;
  return tx;
}

Tx limit(Trader& t, const MarketInfo& m, bool ask, Lots size, Ticks price, TimeInForce tif,
         uint64_t coi, int64_t expiry_ms) {
  Tx tx = header(t, TxType::kCreateOrder);
  tx.order.market = m.id;
  tx.order.client_order_index = coi;
  tx.order.base_amount = size;
  tx.order.price = price;
  tx.order.is_ask = ask ? 1 : 0;
  tx.order.type = OrderType::kLimit;
  tx.order.tif = tif;
  tx.order.order_expiry_ms = tif == TimeInForce::kIoc ? 0 : expiry_ms;
  return tx;
}

// The smallest size the market takes at `price`: min lots and the min quote value.
Lots min_size(const MarketInfo& m, Ticks price) {
  Lots lots = std::max<Lots>(m.min_lots, 1);
  if (m.min_quote > 0 && price > 0) {
    // quote (micro-USDC) = price ticks * lots * 10^(6 - pd - sd)
    int64_t mult = 1;
    for (int i = 0; i < 6 - m.price_decimals - m.size_decimals; ++i) mult *= 10;
    const int64_t per_lot = price * mult;
    if (per_lot > 0) lots = std::max<Lots>(lots, (m.min_quote + per_lot - 1) / per_lot);
  }
  return lots;
}

// A LOBSTER order id as a client order index (1 .. 2^47-1): ids below 2^47-1 map one to one, and
// so do tachyon's own order indices (2^48 + n, from `tachyon-cli export`) for n < 2^47-1.
uint64_t coi_of(int64_t id) {
  constexpr uint64_t kMod = (uint64_t{1} << 47) - 1;
  return static_cast<uint64_t>(id) % kMod + 1;
}

}  // namespace

std::vector<Planned> plan_mixed(std::vector<Trader>& traders, const MarketInfo& m,
                                const MixConfig& c) {
  std::vector<Planned> plan;
  std::vector<uint32_t> makers, takers;
  for (uint32_t i = 0; i < traders.size(); ++i) (traders[i].maker ? makers : takers).push_back(i);
  if (makers.empty() || c.rate <= 0 || c.seconds <= 0) return plan;
  if (takers.empty()) takers = makers;
  std::mt19937_64 rng(c.seed);
  std::exponential_distribution<double> gap(c.rate);  // Poisson arrivals at the offered rate
  std::uniform_real_distribution<double> u(0, 1);
  const int64_t expiry =
      realtime_ns() / 1'000'000 + static_cast<int64_t>(c.seconds * 1000) + 3'600'000;
  const int64_t end_ns = static_cast<int64_t>(c.seconds * 1e9);
  const Ticks lo = m.mid - m.mid / 50, hi = m.mid + m.mid / 50;  // the mid stays within 2%
  Ticks mid = m.mid;
  double t = 0;
  int64_t next_walk = 0;
  const auto walk_ns = std::max<int64_t>(10'000'000, static_cast<int64_t>(10e9 / c.rate));
  plan.reserve(static_cast<size_t>(c.rate * c.seconds * 1.05) + 16);
  for (;;) {
    t += gap(rng) * 1e9;
    const auto at = static_cast<int64_t>(t);
    if (at >= end_ns) break;
    while (next_walk <= at) {  // the mid moves a tick at random every 10 ms or 10 txs, the longer
      mid = std::clamp<Ticks>(mid + (u(rng) < 0.5 ? -1 : 1), lo, hi);
      next_walk += walk_ns;
    }
    Planned p;
    p.at_ns = at;
    p.mid = mid;
    const double r = u(rng);
    const Lots base = min_size(m, mid);
    if (r < c.take_share) {
      p.trader = takers[rng() % takers.size()];
      Trader& tr = traders[p.trader];
      const bool ask = u(rng) < 0.5;
      const Ticks px = ask ? mid - 4 : mid + 4;  // takes the inside quotes
      p.kind = Kind::kTake;
      p.expects_fill = true;
      p.tx =
          limit(tr, m, ask, base * static_cast<Lots>(1 + rng() % 2), px, TimeInForce::kIoc, 0, 0);
    } else {
      p.trader = makers[rng() % makers.size()];
      Trader& tr = traders[p.trader];
      const bool act = !tr.live.empty() && (tr.live.size() >= c.max_live ||
                                            r < c.take_share + c.cancel_share + c.modify_share);
      if (act && r < c.take_share + c.cancel_share) {
        p.kind = Kind::kCancel;
        p.tx = header(tr, TxType::kCancelOrder);
        p.tx.cancel.market = m.id;
        p.tx.cancel.index = tr.live.front().coi;
        tr.live.pop_front();
      } else if (act) {
        p.kind = Kind::kModify;
        const bool ask = tr.live.front().ask;  // re-priced on its own side
        p.tx = header(tr, TxType::kModifyOrder);
        p.tx.modify.market = m.id;
        p.tx.modify.index = tr.live.front().coi;
        p.tx.modify.base_amount = base * static_cast<Lots>(1 + rng() % 4);
        p.tx.modify.price = ask ? mid + 3 + static_cast<Ticks>(rng() % 10)
                                : mid - 3 - static_cast<Ticks>(rng() % 10);
        tr.live.push_back(tr.live.front());  // re-priced: now the newest
        tr.live.pop_front();
      } else {
        p.kind = Kind::kQuote;
        const bool ask = u(rng) < 0.5;
        // Quotes sit 3-12 ticks from the mid: takers reach the inside ones, and the mid's walk
        // over a quote's life (about a tick per 10 ms) rarely makes makers cross each other.
        const Ticks px = ask ? mid + 3 + static_cast<Ticks>(rng() % 10)
                             : mid - 3 - static_cast<Ticks>(rng() % 10);
        const uint64_t coi = tr.next_coi++;
        p.tx = limit(tr, m, ask, base * static_cast<Lots>(1 + rng() % 4), px,
                     TimeInForce::kGoodTillTime, coi, expiry);
        tr.live.push_back(LiveQuote{coi, ask});
      }
    }
    plan.push_back(std::move(p));
  }
  return plan;
}

std::vector<Planned> plan_lobster(std::vector<Trader>& traders, const MarketInfo& m,
                                  const LobsterConfig& c, std::string& error) {
  std::vector<Planned> plan;
  std::vector<uint32_t> makers, takers;
  for (uint32_t i = 0; i < traders.size(); ++i) (traders[i].maker ? makers : takers).push_back(i);
  if (makers.empty()) {
    error = "the LOBSTER replay needs maker accounts";
    return plan;
  }
  if (takers.empty()) takers = makers;
  const std::vector<lobster::Message> msgs = lobster::load_messages(c.messages, &error);
  if (msgs.empty()) {
    if (error.empty()) error = "no messages in " + c.messages;
    return plan;
  }
  // Prices: one LOBSTER cent (100 units of $0.0001) per market tick, around the market's mid.
  Ticks p0 = 0;
  for (const auto& x : msgs) {
    if (x.type == 1) {
      p0 = x.price;
      break;
    }
  }
  auto price = [&](Ticks p) { return m.mid + (p - p0) / 100; };
  const int64_t t0 = msgs.front().time_ns;
  const int64_t expiry = realtime_ns() / 1'000'000 + 24 * 3'600'000;
  struct Live {
    uint32_t trader;
    Lots remaining;
    Ticks price;
  };
  std::unordered_map<int64_t, Live> live;  // LOBSTER order id -> its order here
  const double speed = c.speed > 0 ? c.speed : 1.0;
  const Lots floor_lots = min_size(m, m.mid);
  size_t n = 0;
  for (const auto& x : msgs) {
    if (c.max_events != 0 && n >= c.max_events) break;
    Planned p;
    p.at_ns = static_cast<int64_t>(static_cast<double>(x.time_ns - t0) / speed);
    const Lots size = std::max<Lots>(floor_lots, x.size * c.lots_per_share);
    const bool resting_ask = x.direction == -1;
    switch (x.type) {
      case 1: {  // a new limit order rests
        p.trader = makers[static_cast<uint64_t>(x.id) % makers.size()];
        p.kind = Kind::kQuote;
        const uint64_t coi = coi_of(x.id);
        p.tx = limit(traders[p.trader], m, resting_ask, size, price(x.price),
                     TimeInForce::kGoodTillTime, coi, expiry);
        live[x.id] = Live{p.trader, size, price(x.price)};
        break;
      }
      case 2:    // partial cancel: the order shrinks in place
      case 3: {  // delete
        auto it = live.find(x.id);
        if (it == live.end()) continue;  // it rested before the file starts
        p.trader = it->second.trader;
        Trader& tr = traders[p.trader];
        const uint64_t coi = coi_of(x.id);
        const Lots left = it->second.remaining - std::max<Lots>(x.size * c.lots_per_share, 0);
        if (x.type == 3 || left < floor_lots) {
          p.kind = Kind::kCancel;
          p.tx = header(tr, TxType::kCancelOrder);
          p.tx.cancel.market = m.id;
          p.tx.cancel.index = coi;
          live.erase(it);
        } else {
          p.kind = Kind::kModify;
          p.tx = header(tr, TxType::kModifyOrder);
          p.tx.modify.market = m.id;
          p.tx.modify.index = coi;
          p.tx.modify.base_amount = left;
          p.tx.modify.price = it->second.price;
          it->second.remaining = left;
        }
        break;
      }
      case 4:
      case 5: {  // an execution: a taker on the other side at that price
        p.trader = takers[static_cast<uint64_t>(n) % takers.size()];
        p.kind = Kind::kTake;
        p.expects_fill = true;
        p.tx = limit(traders[p.trader], m, !resting_ask, size, price(x.price), TimeInForce::kIoc, 0,
                     0);
        if (auto it = live.find(x.id); it != live.end()) {
          it->second.remaining -= size;
          if (it->second.remaining <= 0) live.erase(it);
        }
        break;
      }
      default: continue;  // halts and cross trades carry no order of ours
    }
    plan.push_back(std::move(p));
    ++n;
  }
  return plan;
}

void sign_all(std::vector<Planned>& plan, const std::vector<Trader>& traders, uint32_t chain_id,
              unsigned threads) {
  auto work = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      Planned& p = plan[i];
      const api::Signature sig = api::sign_tx(p.tx, chain_id, traders[p.trader].sk);
      const std::string info = api::tx_info_json(p.tx, &sig);
      std::string& f = p.frame;
      f.clear();
      api::JsonWriter w(f);
      w.obj().kv_s("type", "jsonapi/sendtx").key("data").obj();
      w.kv_s("id", std::to_string(i)).kv_i("tx_type", static_cast<int>(p.tx.h.type));
      w.kv_s("tx_info", info).end_obj().end_obj();
    }
  };
  threads = std::max(1u, threads);
  std::vector<std::thread> pool;
  const size_t chunk = (plan.size() + threads - 1) / threads;
  for (unsigned k = 0; k < threads; ++k) {
    const size_t from = k * chunk, to = std::min(plan.size(), from + chunk);
    if (from < to) pool.emplace_back(work, from, to);
  }
  for (auto& th : pool) th.join();
}

}  // namespace tachyon::load
