#pragma once
// A seeded, edge-biased random stream of engine transactions: orders, cancels, modifies,
// transfers, withdrawals, deposits, leverage and margin mode, isolated margin in and out, key
// changes, sub-accounts, index moves, and a share
// of invalid txs; with StreamConfig::advanced_orders also trigger, grouped and TWAP orders,
// funding ticks and market status changes. Deterministic on every platform (own PRNG, no std
// distributions). The caller reports each result back so nonces and order ids stay realistic.
// tachyon-replay, tachyon-feed and the server's demo load run it; the tests use it as
// testing::RandomStream.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "rng.hpp"
#include "tachyon/engine/engine.hpp"
#include "tx_builder.hpp"

namespace tachyon::app {

struct StreamConfig {
  int accounts = 12;
  int markets = 2;
  int invalid_percent = 4;  // txs built to be refused
  int64_t start_time_ns = 1'700'000'000'000'000'000;
  // Oracle moves: up to ±index_move_bps (1e-4) per move, and with jump_percent chance a jump of
  // up to ±jump_bps instead (volatile markets put accounts under maintenance margin).
  int index_move_bps = 40;
  int jump_percent = 0;
  int jump_bps = 0;
  int64_t insurance_deposit_usdc = 0;  // funds account 1 (the insurance fund) at genesis
  // Orders in waiting and the operator's market txs: stop-loss / take-profit orders, grouped
  // orders, TWAPs, funding ticks (with time jumps of up to 20 s, so payments and TWAP slices come
  // due) and market status changes. Off by default: the stream is then exactly what it was
  // (no extra randomness drawn, same genesis). Rates are per 1000 txs, used only when on.
  bool advanced_orders = false;
  int trigger_per_mille = 40;
  int grouped_per_mille = 15;
  int twap_per_mille = 5;
  int funding_per_mille = 8;
  int status_per_mille = 3;
};

class RandomStream {
 public:
  RandomStream(uint64_t seed, StreamConfig cfg = {}) : rng_(seed), cfg_(cfg) {}

  // Markets and funded accounts; run these first.
  std::vector<Tx> genesis() {
    std::vector<Tx> out;
    b_.sync_op_nonce(op_next_);
    for (int m = 0; m < cfg_.markets; ++m) {
      const bool eth = m % 2 == 0;
      MarketParams p = eth ? demo_market_params("ETH", 4, 2) : demo_market_params("BTC", 5, 1);
      p.maker_fee_ppm = static_cast<Ppm>(rng_.below(3) * 100);
      p.max_orders_per_account = 40;
      if (cfg_.advanced_orders) {  // funding that moves money: premium clamps and an interest
        p.funding_clamp_small = 500;
        p.funding_clamp_big = 5000;
        p.interest_rate = 100;
      }
      mids_.push_back(eth ? 300000 : 600000);
      steps_.push_back(eth ? 50 : 10);
      out.push_back(b_.create_market(static_cast<MarketId>(m), p, mids_.back()));
      ++op_next_;
    }
    if (cfg_.insurance_deposit_usdc > 0) {
      out.push_back(b_.deposit(1, cfg_.insurance_deposit_usdc * kUsdc_));
      ++op_next_;
    }
    for (int i = 0; i < cfg_.accounts; ++i) {
      const AccountIndex a = 1000 + static_cast<AccountIndex>(i);
      const Usdc amount =
          rng_.chance(10) ? rng_.range(50, 500) * kUsdc_ : rng_.range(2'000, 200'000) * kUsdc_;
      out.push_back(b_.deposit(a, amount));
      ++op_next_;
      accounts_.push_back(a);
      keys_[{a, 0}] = KeyState{0, 1};
    }
    return out;
  }

  // Lets the stream aim cancels and modifies at orders that still rest (optional).
  void set_oracle(const Engine* e) { oracle_ = e; }

  Tx next() {
    b_.advance_ms(static_cast<int64_t>(rng_.below(4)));  // 0..3 ms between txs
    b_.sync_op_nonce(op_next_);
    if (cfg_.advanced_orders) {  // draws only when on: the default stream stays as it was
      if (auto t = advanced(rng_.below(1000))) {
        Tx tx = *t;
        if (rng_.chance(cfg_.invalid_percent)) spoil(tx);
        return tx;
      }
    }
    const uint64_t roll = rng_.below(1000);
    Tx tx;
    if (roll < 300)
      tx = place(TimeInForce::kGoodTillTime);
    else if (roll < 340)
      tx = place(TimeInForce::kPostOnly);
    else if (roll < 420)
      tx = place(TimeInForce::kIoc);
    else if (roll < 460)
      tx = market_order();
    else if (roll < 680)
      tx = cancel();
    else if (roll < 780)
      tx = modify();
    else if (roll < 800)
      tx = cancel_all();
    else if (roll < 860)
      tx = move_index();
    else if (roll < 890)
      tx = transfer();
    else if (roll < 915)
      tx = withdraw();
    else if (roll < 935)
      tx = deposit();
    else if (roll < 955)
      tx = leverage();
    else if (roll < 960)
      tx = sub_account();
    else if (roll < 965)
      tx = change_key();
    else
      tx = place(TimeInForce::kGoodTillTime);
    if (rng_.chance(cfg_.invalid_percent)) spoil(tx);
    return tx;
  }

  void on_result(const Tx& tx, const TxResult& r) {
    if (is_internal_tx(tx.h)) return;  // (advanced_orders: funding ticks of the server's clock)
    if (is_operator_tx(tx.h.type)) {
      if (r.ok()) op_next_ = tx.h.nonce + 1;
      if (r.ok() && tx.h.type == TxType::kDeposit && tx.deposit.pubkey[0] != 0) {  // a new account
        accounts_.push_back(tx.deposit.to_account);
        keys_[{tx.deposit.to_account, 0}] = KeyState{0, 1};
      }
      return;
    }
    if (!r.ok()) return;
    KeyState& k = keys_[{tx.h.account, tx.h.api_key_index}];
    k.nonce = tx.h.nonce + 1;
    switch (tx.h.type) {
      case TxType::kCreateOrder:
      case TxType::kCreateGroupedOrders: remember(tx.h.account, r.order_index); break;
      case TxType::kCreateSubAccount: {
        const AccountIndex sub = kFirstSubAccountIndex + subs_++;
        accounts_.push_back(sub);
        keys_[{sub, tx.h.api_key_index}] = KeyState{0, 1};
        break;
      }
      case TxType::kChangePubKey: {
        auto [it, fresh] =
            keys_.try_emplace({tx.h.account, tx.change_key.target_key_index}, KeyState{0, 0});
        ++it->second.version;
        (void)fresh;
        break;
      }
      default: break;
    }
  }

  TxBuilder& builder() { return b_; }

 private:
  struct KeyState {
    int64_t nonce;
    uint32_t version;
  };
  static constexpr Usdc kUsdc_ = 1'000'000;

  AccountIndex pick_account() { return accounts_[rng_.below(accounts_.size())]; }
  MarketId pick_market() { return static_cast<MarketId>(rng_.below(mids_.size())); }
  // A signer of the account: key 0 mostly, another registered key sometimes.
  Tx signed_tx(TxType t, AccountIndex a) {
    uint8_t key = 0;
    for (auto it = keys_.lower_bound({a, 0}); it != keys_.end() && it->first.first == a; ++it) {
      if (rng_.chance(30)) key = it->first.second;
    }
    auto it = keys_.find({a, key});
    if (it == keys_.end()) it = keys_.lower_bound({a, 0});
    return b_.user(t, a, it->second.nonce, it->first.second, it->second.version);
  }
  Ticks price_near(MarketId m) {
    const int64_t off = rng_.chance(5) ? rng_.range(-2500, 2500) : rng_.range(-20, 20);
    return std::max<Ticks>(1, mids_[m] + off * steps_[m]);
  }
  Lots size_for(MarketId m) { return m % 2 == 0 ? rng_.edgy(30'000) : rng_.edgy(100'000); }

  Tx place(TimeInForce tif) {
    const AccountIndex a = pick_account();
    const MarketId m = pick_market();
    Tx tx = signed_tx(TxType::kCreateOrder, a);
    CreateOrderTx& o = tx.order;
    o.market = m;
    o.is_ask = rng_.chance(50);
    o.price = price_near(m);
    if (rng_.chance(75)) {  // mostly passive: bids below the mid, asks above
      const Ticks off = std::abs(o.price - mids_[m]) + steps_[m];
      o.price = o.is_ask ? mids_[m] + off : std::max<Ticks>(1, mids_[m] - off);
    }
    o.base_amount = size_for(m);
    o.type = OrderType::kLimit;
    o.tif = tif;
    o.order_expiry_ms = tif == TimeInForce::kIoc ? 0
                        : rng_.chance(20)        ? b_.now_ms() + rng_.range(1, 200)
                                                 : b_.now_ms() + 3'600'000;
    o.client_order_index = rng_.chance(30) ? static_cast<uint64_t>(rng_.range(1, 40)) : 0;
    o.reduce_only = rng_.chance(6);
    if (o.reduce_only && rng_.chance(30)) o.base_amount = 0;
    o.stp = rng_.chance(85) ? StpMode::kExpireMaker : static_cast<StpMode>(rng_.below(4));
    return tx;
  }
  Tx market_order() {
    Tx tx = place(TimeInForce::kIoc);
    tx.order.type = OrderType::kMarket;
    const Ticks far = mids_[tx.order.market] / 4;
    tx.order.price = tx.order.is_ask ? std::max<Ticks>(1, mids_[tx.order.market] - far)
                                     : mids_[tx.order.market] + far;
    return tx;
  }
  std::deque<OrderIndex>& live_orders(AccountIndex a) {
    auto& q = orders_[a];
    if (oracle_ != nullptr) {  // forget orders that no longer rest
      std::erase_if(q, [&](OrderIndex id) { return oracle_->order(id) == nullptr; });
    }
    return q;
  }
  uint64_t known_order(AccountIndex a) {
    auto& q = live_orders(a);
    if (q.empty() || rng_.chance(5)) return kFirstOrderIndex + rng_.below(1000);
    return q[rng_.below(q.size())];
  }
  Tx cancel() {
    const AccountIndex a = pick_account();
    if (live_orders(a).empty() && rng_.chance(95)) return place(TimeInForce::kGoodTillTime);
    Tx tx = signed_tx(TxType::kCancelOrder, a);
    tx.cancel.market = pick_market();
    tx.cancel.index = rng_.chance(10) ? static_cast<uint64_t>(rng_.range(1, 40)) : known_order(a);
    return tx;
  }
  Tx modify() {
    const AccountIndex a = pick_account();
    if (live_orders(a).empty() && rng_.chance(95)) return place(TimeInForce::kGoodTillTime);
    Tx tx = signed_tx(TxType::kModifyOrder, a);
    const MarketId m = pick_market();
    tx.modify.market = m;
    tx.modify.index = rng_.chance(10) ? static_cast<uint64_t>(rng_.range(1, 40)) : known_order(a);
    tx.modify.base_amount = size_for(m);
    tx.modify.price = price_near(m);
    return tx;
  }
  Tx cancel_all() {
    Tx tx = signed_tx(TxType::kCancelAllOrders, pick_account());
    tx.cancel_all.market = rng_.chance(50) ? kAllMarkets : pick_market();
    return tx;
  }
  Tx move_index() {
    const MarketId m = pick_market();
    const int64_t bps = cfg_.jump_percent > 0 && rng_.chance(cfg_.jump_percent)
                            ? cfg_.jump_bps
                            : cfg_.index_move_bps;
    const int64_t move = mids_[m] * rng_.range(-bps, bps) / 10'000;  // default up to ±0.4%
    mids_[m] = std::max<Ticks>(1000, mids_[m] + move);
    return b_.set_index(m, mids_[m]);
  }
  Tx transfer() {
    const AccountIndex a = pick_account();
    Tx tx = signed_tx(TxType::kTransfer, a);
    tx.transfer.asset = 3;
    tx.transfer.to_account = pick_account();
    tx.transfer.amount = rng_.edgy(5'000 * kUsdc_);
    tx.transfer.fee = rng_.chance(30) ? rng_.range(0, 1000) : 0;
    return tx;
  }
  Tx withdraw() {
    Tx tx = signed_tx(TxType::kWithdraw, pick_account());
    tx.withdraw.asset = 3;
    tx.withdraw.amount = rng_.edgy(5'000 * kUsdc_);
    return tx;
  }
  Tx deposit() {
    const AccountIndex a = rng_.chance(80) ? pick_account() : 1000 + rng_.below(cfg_.accounts + 8);
    const bool known = keys_.count({a, 0}) != 0 || a >= kFirstSubAccountIndex;
    return b_.deposit(a, rng_.edgy(20'000 * kUsdc_), !known);  // a key only for a new account
  }
  Tx leverage() {  // or isolated margin in or out
    if (rng_.chance(40)) {
      Tx tx = signed_tx(TxType::kUpdateMargin, pick_account());
      tx.margin.market = pick_market();
      tx.margin.direction = rng_.chance(50) ? kMarginAdd : kMarginRemove;
      tx.margin.amount = rng_.edgy(2'000 * kUsdc_);
      return tx;
    }
    Tx tx = signed_tx(TxType::kUpdateLeverage, pick_account());
    tx.leverage.market = pick_market();
    tx.leverage.imf = static_cast<Bps4>(rng_.range(150, 2000));
    tx.leverage.margin_mode = rng_.chance(35) ? 1 : 0;  // refused while a position is open
    return tx;
  }
  Tx sub_account() {  // a few sub-accounts, not an ever-growing crowd of empty ones
    if (subs_ >= static_cast<uint64_t>(cfg_.accounts) / 2 + 1)
      return place(TimeInForce::kGoodTillTime);
    return signed_tx(TxType::kCreateSubAccount, pick_account());
  }
  Tx change_key() {
    Tx tx = signed_tx(TxType::kChangePubKey, pick_account());
    tx.change_key.target_key_index = static_cast<uint8_t>(rng_.range(0, 4));
    tx.change_key.pubkey.fill(static_cast<uint8_t>(rng_.range(1, 255)));
    return tx;
  }
  // ---- advanced_orders ----
  std::optional<Tx> advanced(uint64_t roll) {
    int at = 0;
    auto in = [&](int rate) {
      at += rate;
      return static_cast<int64_t>(roll) < at;
    };
    if (in(cfg_.trigger_per_mille)) return trigger_order();
    if (in(cfg_.grouped_per_mille)) return grouped();
    if (in(cfg_.twap_per_mille)) return twap();
    if (in(cfg_.funding_per_mille)) return funding_tick();
    if (in(cfg_.status_per_mille)) return market_status();
    if (in(cfg_.trigger_per_mille / 4)) return modify_trigger();
    return std::nullopt;
  }
  // A trigger price `steps` ticks-steps from the mid on the side where it waits (a few already
  // reached: they fire at once).
  Ticks trigger_near(MarketId m, bool below) {
    int64_t k = rng_.range(0, 60);
    if (rng_.chance(8)) k = -rng_.range(1, 10);
    return std::max<Ticks>(1, below ? mids_[m] - k * steps_[m] : mids_[m] + k * steps_[m]);
  }
  void make_trigger(CreateOrderTx& o, OrderType type) {
    const MarketId m = o.market;
    o.type = type;
    const bool stop = type == OrderType::kStopLoss || type == OrderType::kStopLossLimit;
    o.trigger_price = trigger_near(m, stop == (o.is_ask != 0));
    const bool market_like = type == OrderType::kStopLoss || type == OrderType::kTakeProfit;
    if (market_like) {
      o.tif = TimeInForce::kIoc;
      const Ticks far = o.trigger_price / 20;
      o.price = o.is_ask ? std::max<Ticks>(1, o.trigger_price - far) : o.trigger_price + far;
    } else {
      const uint64_t t = rng_.below(10);
      o.tif = t < 7   ? TimeInForce::kGoodTillTime
              : t < 9 ? TimeInForce::kPostOnly
                      : TimeInForce::kIoc;
      o.price = std::max<Ticks>(1, o.trigger_price + rng_.range(-10, 10) * steps_[m]);
    }
    o.order_expiry_ms =
        rng_.chance(20) ? b_.now_ms() + rng_.range(1, 5'000) : b_.now_ms() + 3'600'000;
  }
  static OrderType trigger_type(uint64_t i) {
    constexpr OrderType kTypes[4] = {OrderType::kStopLoss, OrderType::kStopLossLimit,
                                     OrderType::kTakeProfit, OrderType::kTakeProfitLimit};
    return kTypes[i % 4];
  }
  Tx trigger_order() {
    Tx tx = place(TimeInForce::kGoodTillTime);
    CreateOrderTx& o = tx.order;
    make_trigger(o, trigger_type(rng_.below(4)));
    o.reduce_only = rng_.chance(40);
    if (o.reduce_only && rng_.chance(30)) o.base_amount = 0;
    return tx;
  }
  Tx modify_trigger() {  // new size, price and trigger for an order (a waiting one, mostly)
    Tx tx = modify();
    if (tx.h.type != TxType::kModifyOrder) return tx;
    const MarketId m = tx.modify.market;
    tx.modify.trigger_price = trigger_near(m, rng_.chance(50));
    tx.modify.price = std::max<Ticks>(1, tx.modify.trigger_price + rng_.range(-10, 10) * steps_[m]);
    return tx;
  }
  Tx grouped() {
    const uint64_t g = rng_.below(3);
    Tx primary = place(rng_.chance(70) ? TimeInForce::kGoodTillTime : TimeInForce::kIoc);
    Tx tx = primary;
    tx.h.type = TxType::kCreateGroupedOrders;
    CreateGroupedOrdersTx& gr = tx.grouped;
    const CreateOrderTx first = primary.order;
    gr = CreateGroupedOrdersTx{};
    gr.grouping = g == 0 ? Grouping::kOto : g == 1 ? Grouping::kOco : Grouping::kOtoco;
    gr.count = gr.grouping == Grouping::kOtoco ? 3 : 2;
    const bool with_primary = gr.grouping != Grouping::kOco;
    int i = 0;
    if (with_primary) {
      gr.orders[i] = first;
      gr.orders[i].reduce_only = 0;
      if (gr.orders[i].base_amount == 0) gr.orders[i].base_amount = 1;
      ++i;
    }
    const bool child_ask = with_primary ? first.is_ask == 0 : rng_.chance(50);
    const uint64_t t0 = rng_.below(4);
    for (; i < gr.count; ++i) {
      CreateOrderTx& o = gr.orders[i];
      o = first;
      o.is_ask = child_ask;
      o.client_order_index = rng_.chance(20) ? static_cast<uint64_t>(rng_.range(1, 40)) : 0;
      // the second child is the other kind (stop-loss vs take-profit) of the first
      make_trigger(o, trigger_type(i == (with_primary ? 1 : 0) ? t0 : t0 + 2));
      o.reduce_only = rng_.chance(95);
      o.base_amount = rng_.chance(30) ? 0 : size_for(o.market);
      o.stp = first.stp;
    }
    return tx;
  }
  Tx twap() {
    Tx tx = place(TimeInForce::kGoodTillTime);
    CreateOrderTx& o = tx.order;
    const MarketId m = o.market;
    o.type = OrderType::kTwap;
    o.tif = TimeInForce::kGoodTillTime;
    o.client_order_index = 0;
    if (o.base_amount == 0) o.base_amount = 1;
    const Ticks far = mids_[m] / 20;
    o.price = o.is_ask ? std::max<Ticks>(1, mids_[m] - far) : mids_[m] + far;
    o.order_expiry_ms = b_.now_ms() + rng_.range(1, 300'000);
    return tx;
  }
  Tx funding_tick() {  // time jumps too: funding comes due, TWAP slices and expiries with it
    if (rng_.chance(60)) b_.advance_ms(rng_.range(0, 20'000));
    Tx tx = b_.op(TxType::kFundingTick);
    tx.funding.market = rng_.chance(80) ? kAllMarkets : pick_market();
    if (rng_.chance(50)) {  // the server's clock: internal, no operator nonce
      tx.h.flags = kTxFlagInternal;
      tx.h.nonce = 0;
    }
    return tx;
  }
  Tx market_status() {
    Tx tx = b_.op(TxType::kSetMarketStatus);
    tx.market_status.market = pick_market();
    const uint64_t s = rng_.below(20);
    tx.market_status.status = s < 12   ? MarketStatus::kActive
                              : s < 16 ? MarketStatus::kHalted
                              : s < 18 ? MarketStatus::kPostOnly
                                       : MarketStatus::kReduceOnly;
    return tx;
  }

  void spoil(Tx& tx) {
    switch (rng_.below(6)) {
      case 0: tx.h.nonce += rng_.range(1, 3); break;
      case 1: tx.h.expired_at_ms = b_.now_ms() - 1; break;
      case 2: tx.h.key_version += 1; break;
      case 3: tx.h.api_key_index = static_cast<uint8_t>(rng_.range(5, 255)); break;
      case 4: tx.h.account = 777'777; break;
      default:
        if (tx.h.type == TxType::kCreateOrder) tx.order.price = 0;
        break;
    }
  }
  void remember(AccountIndex a, OrderIndex id) {
    auto& q = orders_[a];
    q.push_back(id);
    if (q.size() > 48) q.pop_front();
  }

  Rng rng_;
  StreamConfig cfg_;
  TxBuilder b_{cfg_.start_time_ns};
  std::vector<Ticks> mids_;
  std::vector<Ticks> steps_;
  std::vector<AccountIndex> accounts_;
  std::map<std::pair<AccountIndex, uint8_t>, KeyState> keys_;
  std::map<AccountIndex, std::deque<OrderIndex>> orders_;
  uint64_t subs_ = 0;
  int64_t op_next_ = 0;
  const Engine* oracle_ = nullptr;
};

}  // namespace tachyon::app
