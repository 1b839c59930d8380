#pragma once
// Builds engine transactions: the random tx stream's, the demo load's, and the tests' and
// benchmarks' (which name it testing::TxBuilder). Stamps seq and time itself so a stream is
// reproducible: the engine never reads a clock.
#include <algorithm>
#include <cstring>
#include <string_view>

#include "tachyon/engine/tx.hpp"

namespace tachyon::app {

inline MarketParams demo_market_params(std::string_view symbol = "ETH", uint8_t size_dec = 4,
                                       uint8_t price_dec = 2) {
  MarketParams p{};
  std::memcpy(p.symbol.data(), symbol.data(), std::min<size_t>(symbol.size(), 15));
  p.size_decimals = size_dec;
  p.price_decimals = price_dec;
  p.status = MarketStatus::kActive;
  p.taker_fee_ppm = 300;  // 0.03%
  p.maker_fee_ppm = 0;
  p.default_imf = 500;  // 5% (20x)
  p.min_imf = 200;      // 2% (50x)
  p.mmf = 120;
  p.cmf = 80;
  p.price_band = 1000;  // 10% from mark
  p.market_protection = 500;
  p.min_base_lots = 1;
  p.min_quote_usdc = 0;
  p.max_orders_per_account = 1000;
  p.max_orders = 1u << 20;
  return p;
}

class TxBuilder {
 public:
  explicit TxBuilder(int64_t start_time_ns = 1'700'000'000'000'000'000) : time_ns_(start_time_ns) {}

  // Operator nonces come from the engine when a caller mixes in rejected operator txs.
  void sync_op_nonce(int64_t next) { op_nonce_ = next; }
  void advance_ms(int64_t ms) { time_ns_ += ms * 1'000'000; }
  int64_t now_ms() const { return time_ns_ / 1'000'000; }
  int64_t now_ns() const { return time_ns_; }

  Tx op(TxType type) {
    Tx tx = base(type);
    tx.h.nonce = op_nonce_++;
    return tx;
  }
  Tx user(TxType type, AccountIndex account, int64_t nonce, uint8_t key = 0, uint32_t version = 1) {
    Tx tx = base(type);
    tx.h.account = account;
    tx.h.nonce = nonce;
    tx.h.api_key_index = key;
    tx.h.key_version = version;
    return tx;
  }

  Tx create_market(MarketId id, const MarketParams& p, Ticks index) {
    Tx tx = op(TxType::kCreateMarket);
    tx.create_market.market = id;
    tx.create_market.params = p;
    tx.create_market.index_price = index;
    return tx;
  }
  Tx update_market(MarketId id, const MarketParams& p) {
    Tx tx = op(TxType::kUpdateMarket);
    tx.update_market.market = id;
    tx.update_market.params = p;
    return tx;
  }
  Tx set_index(MarketId id, Ticks px) {
    Tx tx = op(TxType::kSetIndexPrice);
    tx.set_index.market = id;
    tx.set_index.index_price = px;
    return tx;
  }
  // Deposit that also registers api key 0 with a pubkey derived from the account index.
  Tx deposit(AccountIndex to, Usdc amount, bool with_key = true) {
    Tx tx = op(TxType::kDeposit);
    tx.deposit.to_account = to;
    tx.deposit.amount = amount;
    if (with_key) {
      tx.deposit.pubkey[0] = 1;
      std::memcpy(tx.deposit.pubkey.data() + 1, &to, sizeof(to));
    }
    return tx;
  }
  Tx limit(AccountIndex a, int64_t nonce, MarketId m, bool is_ask, Ticks price, Lots size,
           TimeInForce tif = TimeInForce::kGoodTillTime, uint64_t coi = 0) {
    Tx tx = user(TxType::kCreateOrder, a, nonce);
    auto& o = tx.order;
    o.market = m;
    o.client_order_index = coi;
    o.base_amount = size;
    o.price = price;
    o.is_ask = is_ask;
    o.type = OrderType::kLimit;
    o.tif = tif;
    o.order_expiry_ms = tif == TimeInForce::kIoc ? 0 : now_ms() + 28LL * 24 * 3600 * 1000;
    return tx;
  }
  Tx market(AccountIndex a, int64_t nonce, MarketId m, bool is_ask, Ticks worst_price, Lots size) {
    Tx tx = limit(a, nonce, m, is_ask, worst_price, size, TimeInForce::kIoc);
    tx.order.type = OrderType::kMarket;
    return tx;
  }
  Tx cancel(AccountIndex a, int64_t nonce, MarketId m, uint64_t index) {
    Tx tx = user(TxType::kCancelOrder, a, nonce);
    tx.cancel.market = m;
    tx.cancel.index = index;
    return tx;
  }
  Tx cancel_all(AccountIndex a, int64_t nonce, MarketId m = kAllMarkets) {
    Tx tx = user(TxType::kCancelAllOrders, a, nonce);
    tx.cancel_all.market = m;
    return tx;
  }
  Tx modify(AccountIndex a, int64_t nonce, MarketId m, uint64_t index, Lots size, Ticks price) {
    Tx tx = user(TxType::kModifyOrder, a, nonce);
    tx.modify.market = m;
    tx.modify.index = index;
    tx.modify.base_amount = size;
    tx.modify.price = price;
    return tx;
  }
  Tx transfer(AccountIndex from, int64_t nonce, AccountIndex to, Usdc amount, Usdc fee = 0) {
    Tx tx = user(TxType::kTransfer, from, nonce);
    tx.transfer.to_account = to;
    tx.transfer.asset = 3;
    tx.transfer.amount = amount;
    tx.transfer.fee = fee;
    return tx;
  }
  Tx withdraw(AccountIndex a, int64_t nonce, Usdc amount) {
    Tx tx = user(TxType::kWithdraw, a, nonce);
    tx.withdraw.asset = 3;
    tx.withdraw.amount = amount;
    return tx;
  }
  Tx sub_account(AccountIndex a, int64_t nonce) {
    return user(TxType::kCreateSubAccount, a, nonce);
  }
  Tx change_key(AccountIndex a, int64_t nonce, uint8_t target, uint8_t fill_byte) {
    Tx tx = user(TxType::kChangePubKey, a, nonce);
    tx.change_key.target_key_index = target;
    tx.change_key.pubkey.fill(fill_byte);
    return tx;
  }
  Tx leverage(AccountIndex a, int64_t nonce, MarketId m, Bps4 imf, uint8_t margin_mode = 0) {
    Tx tx = user(TxType::kUpdateLeverage, a, nonce);
    tx.leverage.market = m;
    tx.leverage.imf = imf;
    tx.leverage.margin_mode = margin_mode;
    return tx;
  }
  // Isolated margin in (kMarginAdd) or out (kMarginRemove) of the position on market m.
  Tx update_margin(AccountIndex a, int64_t nonce, MarketId m, uint8_t direction, Usdc amount) {
    Tx tx = user(TxType::kUpdateMargin, a, nonce);
    tx.margin.market = m;
    tx.margin.direction = direction;
    tx.margin.amount = amount;
    return tx;
  }

 private:
  Tx base(TxType type) {
    Tx tx;
    tx.h.type = type;
    tx.h.seq = ++seq_;
    tx.h.block = seq_;
    tx.h.time_ns = (time_ns_ += 1000);  // 1 µs per tx unless advanced
    return tx;
  }
  int64_t time_ns_;
  uint64_t seq_ = 0;
  int64_t op_nonce_ = 0;
};

}  // namespace tachyon::app
