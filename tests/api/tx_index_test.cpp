// The api's tx index (GET /api/v1/tx) and the reusable JSON scratch the request parsers share.
#include <gtest/gtest.h>

#include <string>

#include "api/json_scratch.hpp"
#include "tachyon/api/worker.hpp"

namespace tachyon::testing {
namespace {

std::string hash_of(char c) { return std::string(80, c); }  // 40 bytes in hex

api::ApiShared::TxRecord record(uint64_t seq) {
  api::ApiShared::TxRecord r{};
  r.seq = seq;
  r.block = seq / 10;
  return r;
}

TEST(TxIndex, keeps_the_newest_capacity_txs_in_order_and_finds_them_by_hash) {
  api::ApiConfig ac;
  ac.tx_index_capacity = 2;
  api::ApiShared shared(ac);
  shared.remember_tx(hash_of('a'), record(1));
  shared.remember_tx(hash_of('b'), record(2));
  shared.remember_tx(hash_of('a'), record(7));  // known: updated, not a second entry
  shared.remember_tx(hash_of('c'), record(3));  // the oldest (a) goes
  EXPECT_FALSE(shared.find_tx(hash_of('a')));
  ASSERT_TRUE(shared.find_tx(hash_of('b')));
  EXPECT_EQ(shared.find_tx(hash_of('b'))->seq, 2u);
  // Hex is hex: upper case and a 0x prefix name the same tx.
  ASSERT_TRUE(shared.find_tx("0x" + hash_of('C')));
  EXPECT_EQ(shared.find_tx("0x" + hash_of('C'))->seq, 3u);
  // Not a tx hash: not found, and nothing remembered under it.
  EXPECT_FALSE(shared.find_tx("zz"));
  EXPECT_FALSE(shared.find_tx(hash_of('b') + "00"));
  shared.remember_tx("not hex", record(9));
  const auto all = shared.tx_records();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].first, hash_of('b'));
  EXPECT_EQ(all[0].second.seq, 2u);
  EXPECT_EQ(all[1].first, hash_of('c'));
  EXPECT_EQ(all[1].second.block, 0u);
}

TEST(JsonScratch, parses_message_after_message_and_drops_a_large_buffer_after_use) {
  api::JsonScratch js, other;
  simdjson::ondemand::document doc, kept;
  // A document of another scratch stays readable while this one parses again and again.
  ASSERT_FALSE(other.iterate(R"({"keep":"me"})").get(kept));
  for (int i = 0; i < 3; ++i) {
    const std::string text = R"({"n":)" + std::to_string(i) + "}";
    ASSERT_FALSE(js.iterate(text).get(doc));
    int64_t n = -1;
    ASSERT_FALSE(doc["n"].get_int64().get(n));
    EXPECT_EQ(n, i);
  }
  // A number that ends the text: nothing after it is read as part of it.
  ASSERT_FALSE(js.iterate("12").get(doc));
  int64_t last = 0;
  ASSERT_FALSE(doc.get_int64().get(last));
  EXPECT_EQ(last, 12);
  const std::string big = R"({"s":")" + std::string(api::JsonScratch::kKeepBytes, 'x') + "\"}";
  ASSERT_FALSE(js.iterate(big).get(doc));
  std::string_view s;
  ASSERT_FALSE(doc["s"].get_string().get(s));
  EXPECT_EQ(s.size(), api::JsonScratch::kKeepBytes);
  EXPECT_GT(js.buf.capacity(), api::JsonScratch::kKeepBytes);
  ASSERT_FALSE(js.iterate(R"({"n":5})").get(doc));
  EXPECT_LE(js.buf.capacity(), api::JsonScratch::kKeepBytes);
  int64_t n = 0;
  ASSERT_FALSE(doc["n"].get_int64().get(n));
  EXPECT_EQ(n, 5);
  std::string_view k;
  ASSERT_FALSE(kept["keep"].get_string().get(k));
  EXPECT_EQ(k, "me");
  // Not JSON: an error, not a crash.
  EXPECT_TRUE(js.iterate("{\"n\":").get(doc) || doc["n"].get_int64().error());
}

}  // namespace
}  // namespace tachyon::testing
