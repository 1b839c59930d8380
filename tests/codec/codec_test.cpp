// Codec round trips for every tx and update type, edge-biased random round trips, and untrusted
// input: truncation, wrong lengths, unknown types and versions are refused, never over-read.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "support/random_stream.hpp"
#include "support/tx_builder.hpp"
#include "tachyon/codec/codec.hpp"

namespace tachyon::codec {
namespace {

using testing::Rng;

std::vector<uint8_t> enc(const Tx& tx) {
  std::vector<uint8_t> b(kMaxRecordSize);
  b.resize(encode(tx, b));
  return b;
}
std::vector<uint8_t> enc(const StateUpdate& u) {
  std::vector<uint8_t> b(kMaxRecordSize);
  b.resize(encode(u, b));
  return b;
}

constexpr TxType kAllTx[] = {
    TxType::kDeposit,        TxType::kCreateMarket,    TxType::kUpdateMarket,
    TxType::kSetIndexPrice,  TxType::kChangePubKey,    TxType::kCreateSubAccount,
    TxType::kTransfer,       TxType::kWithdraw,        TxType::kCreateOrder,
    TxType::kCancelOrder,    TxType::kCancelAllOrders, TxType::kModifyOrder,
    TxType::kUpdateLeverage, TxType::kUpdateMargin};
constexpr UpdateType kAllUpdates[] = {
    UpdateType::kTxResult,     UpdateType::kOrderAdded, UpdateType::kOrderReduced,
    UpdateType::kOrderRemoved, UpdateType::kTrade,      UpdateType::kPosition,
    UpdateType::kBalance,      UpdateType::kMarkPrice,  UpdateType::kMarket,
    UpdateType::kAccount,      UpdateType::kApiKey};

// Fills every byte of the payload union with edge-biased values, then normalises through the
// codec once: what survives a decode is exactly what the layout carries.
template <typename Rec>
Rec random_record(Rng& rng, Rec r) {
  auto* p = reinterpret_cast<uint8_t*>(&r);
  const size_t skip = std::is_same_v<Rec, Tx> ? offsetof(TxHeader, type) : 0;
  for (size_t i = 0; i < sizeof(Rec); ++i) {
    if (std::is_same_v<Rec, Tx> && i >= skip && i < skip + 1) continue;  // keep the type byte
    if (!std::is_same_v<Rec, Tx> && i == 0) continue;
    switch (rng.below(4)) {
      case 0: p[i] = 0; break;
      case 1: p[i] = 0xff; break;
      default: p[i] = static_cast<uint8_t>(rng.next());
    }
  }
  return r;
}

TEST(Codec, every_tx_type_round_trips_field_for_field) {
  testing::TxBuilder b;
  const std::vector<Tx> txs = {b.deposit(42, 1'000'000),
                               b.create_market(3, testing::demo_market_params("SOL", 3, 3), 12345),
                               b.update_market(3, testing::demo_market_params("SOL", 3, 3)),
                               b.set_index(3, 777),
                               b.change_key(5, 9, 4, 0xab),
                               b.sub_account(5, 10),
                               b.transfer(5, 11, 6, 500, 7),
                               b.withdraw(5, 12, 99),
                               b.limit(5, 13, 0, true, 300000, 12, TimeInForce::kPostOnly, 77),
                               b.cancel(5, 14, 0, kFirstOrderIndex + 3),
                               b.cancel_all(5, 15, 2),
                               b.modify(5, 16, 0, 9, 5, 6),
                               b.leverage(5, 17, 0, 250, 1),
                               b.update_margin(5, 18, 0, kMarginAdd, 1'234'567)};
  ASSERT_EQ(txs.size(), std::size(kAllTx));
  for (const Tx& tx : txs) {
    const auto bytes = enc(tx);
    ASSERT_EQ(bytes.size(), encoded_size(tx)) << int(tx.h.type);
    Tx back;
    const Decoded d = decode(bytes, back);
    ASSERT_TRUE(d.ok()) << error_message(d.error);
    EXPECT_EQ(d.consumed, bytes.size());
    EXPECT_EQ(std::memcmp(&back, &tx, sizeof(Tx)), 0) << "tx type " << int(tx.h.type);
  }
}

TEST(Codec, random_records_of_every_type_round_trip_byte_for_byte) {
  Rng rng(20261130);
  for (int round = 0; round < 2000; ++round) {
    for (TxType t : kAllTx) {
      Tx seed;
      seed.h.type = t;
      Tx a;
      ASSERT_TRUE(decode(enc(random_record(rng, seed)), a).ok());  // normalise padding away
      const auto bytes = enc(a);
      Tx b;
      ASSERT_TRUE(decode(bytes, b).ok());
      ASSERT_EQ(std::memcmp(&a, &b, sizeof(Tx)), 0) << "tx type " << int(t) << " round " << round;
      ASSERT_EQ(enc(b), bytes);
    }
    for (UpdateType t : kAllUpdates) {
      StateUpdate seed;
      seed.type = t;
      StateUpdate a;
      ASSERT_TRUE(decode(enc(random_record(rng, seed)), a).ok());
      const auto bytes = enc(a);
      StateUpdate b;
      ASSERT_TRUE(decode(bytes, b).ok());
      ASSERT_EQ(std::memcmp(&a, &b, sizeof(StateUpdate)), 0) << "update " << int(t);
    }
  }
}

TEST(Codec, updates_from_a_real_engine_run_round_trip) {
  class Check final : public UpdateSink {
   public:
    void on_update(const StateUpdate& u) override {
      const auto bytes = enc(u);
      StateUpdate back;
      ASSERT_TRUE(decode(bytes, back).ok());
      ASSERT_EQ(enc(back), bytes);
      ++n;
    }
    size_t n = 0;
  } check;
  Engine e;
  testing::RandomStream stream(5);
  stream.set_oracle(&e);
  for (const Tx& tx : stream.genesis()) stream.on_result(tx, e.execute(tx, check));
  for (int i = 0; i < 20'000; ++i) {
    const Tx tx = stream.next();
    const auto bytes = enc(tx);
    Tx back;
    ASSERT_TRUE(decode(bytes, back).ok());
    ASSERT_EQ(std::memcmp(&back, &tx, sizeof(Tx)), 0);
    stream.on_result(back, e.execute(back, check));
  }
  EXPECT_GT(check.n, 50'000u);
}

TEST(Codec, every_truncation_of_a_record_is_refused_as_truncated) {
  testing::TxBuilder b;
  const auto bytes = enc(b.limit(5, 13, 0, true, 300000, 12));
  for (size_t n = 0; n < bytes.size(); ++n) {
    Tx out;
    const Decoded d = decode(std::span(bytes.data(), n), out);
    EXPECT_EQ(d.error, Error::kTruncated) << "prefix of " << n << " bytes";
  }
}

TEST(Codec, wrong_length_type_or_version_is_refused_with_its_reason) {
  testing::TxBuilder b;
  const auto good = enc(b.cancel(5, 1, 0, 9));
  Tx out;
  auto bad = good;
  bad[0] = static_cast<uint8_t>(good.size() - 8);  // declares a shorter record
  EXPECT_EQ(decode(bad, out).error, Error::kBadLength);
  bad = good;
  bad.push_back(0);
  bad[0] = static_cast<uint8_t>(good.size() + 1);  // longer than the type's layout
  EXPECT_EQ(decode(bad, out).error, Error::kBadLength);
  bad = good;
  bad[0] = 0xff;  // longer than any record
  bad[1] = 0xff;
  EXPECT_EQ(decode(bad, out).error, Error::kBadLength);
  bad = good;
  bad[4] = 99;  // tx type 99
  EXPECT_EQ(decode(bad, out).error, Error::kUnknownType);
  bad = good;
  bad[5] = 0x02;  // an update record where a tx is expected
  EXPECT_EQ(decode(bad, out).error, Error::kUnknownType);
  bad = good;
  bad[6] = kVersion + 1;  // a version this build does not know
  EXPECT_EQ(decode(bad, out).error, Error::kBadVersion);
  StateUpdate u;
  EXPECT_EQ(decode(good, u).error, Error::kUnknownType);
  EXPECT_EQ(encode(b.cancel(5, 1, 0, 9), std::span<uint8_t>()), 0u);  // no room: nothing written
}

}  // namespace
}  // namespace tachyon::codec
