// Codec: encode/decode ns per record against general-purpose JSON in the same run
// (Boost.JSON serialize + parse, and simdjson on-demand parse) of the same CreateOrder tx,
// written as Lighter's tx_info object.
#include <benchmark/benchmark.h>

#include <simdjson.h>
#include <boost/json/src.hpp>

#include <string>

#include "support/tx_builder.hpp"
#include "tachyon/codec/codec.hpp"

namespace {

using namespace tachyon;

Tx sample_order() {
  testing::TxBuilder b;
  Tx tx = b.limit(1077, 42, 0, false, 301234, 12345, TimeInForce::kGoodTillTime, 100);
  tx.h.expired_at_ms = 1766434822000;
  return tx;
}

StateUpdate sample_trade() {
  StateUpdate u;
  u.type = UpdateType::kTrade;
  u.time_ns = 1766434822000123456;
  u.trade = TradeUpdate{991,
                        kFirstOrderIndex + 5,
                        kFirstOrderIndex + 9,
                        1077,
                        2001,
                        301234,
                        12345,
                        0,
                        1111,
                        0,
                        1,
                        TradeKind::kTrade,
                        0,
                        0,
                        0};
  return u;
}

boost::json::object to_json(const Tx& tx) {
  const CreateOrderTx& o = tx.order;
  return boost::json::object{{"AccountIndex", tx.h.account},
                             {"ApiKeyIndex", tx.h.api_key_index},
                             {"MarketIndex", o.market},
                             {"ClientOrderIndex", o.client_order_index},
                             {"BaseAmount", o.base_amount},
                             {"Price", o.price},
                             {"IsAsk", o.is_ask},
                             {"Type", static_cast<int>(o.type)},
                             {"TimeInForce", static_cast<int>(o.tif)},
                             {"ReduceOnly", o.reduce_only},
                             {"TriggerPrice", o.trigger_price},
                             {"OrderExpiry", o.order_expiry_ms},
                             {"ExpiredAt", tx.h.expired_at_ms},
                             {"Nonce", tx.h.nonce},
                             {"Seq", tx.h.seq},
                             {"Block", tx.h.block},
                             {"Time", tx.h.time_ns}};
}

void BM_codec_encode_order(benchmark::State& st) {
  const Tx tx = sample_order();
  uint8_t buf[codec::kMaxRecordSize];
  for (auto _ : st) {
    benchmark::DoNotOptimize(codec::encode(tx, buf));
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_codec_encode_order);

void BM_codec_decode_order(benchmark::State& st) {
  uint8_t buf[codec::kMaxRecordSize];
  const size_t n = codec::encode(sample_order(), buf);
  Tx out;
  for (auto _ : st) {
    benchmark::DoNotOptimize(codec::decode(std::span<const uint8_t>(buf, n), out));
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_codec_decode_order);

void BM_codec_encode_trade_update(benchmark::State& st) {
  const StateUpdate u = sample_trade();
  uint8_t buf[codec::kMaxRecordSize];
  for (auto _ : st) {
    benchmark::DoNotOptimize(codec::encode(u, buf));
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_codec_encode_trade_update);

void BM_codec_decode_trade_update(benchmark::State& st) {
  uint8_t buf[codec::kMaxRecordSize];
  const size_t n = codec::encode(sample_trade(), buf);
  StateUpdate out;
  for (auto _ : st) {
    benchmark::DoNotOptimize(codec::decode(std::span<const uint8_t>(buf, n), out));
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_codec_decode_trade_update);

void BM_json_boost_serialize_order(benchmark::State& st) {
  const Tx tx = sample_order();
  for (auto _ : st) {
    std::string s = boost::json::serialize(to_json(tx));
    benchmark::DoNotOptimize(s.data());
  }
}
BENCHMARK(BM_json_boost_serialize_order);

void BM_json_boost_parse_order(benchmark::State& st) {
  const std::string s = boost::json::serialize(to_json(sample_order()));
  for (auto _ : st) {
    boost::json::value v = boost::json::parse(s);
    Tx out;
    const auto& o = v.as_object();
    out.h.account = o.at("AccountIndex").to_number<uint64_t>();
    out.order.price = o.at("Price").to_number<int64_t>();
    out.order.base_amount = o.at("BaseAmount").to_number<int64_t>();
    out.h.nonce = o.at("Nonce").to_number<int64_t>();
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_json_boost_parse_order);

void BM_json_simdjson_parse_order(benchmark::State& st) {
  const std::string s = boost::json::serialize(to_json(sample_order()));
  simdjson::padded_string padded(s);
  simdjson::ondemand::parser parser;
  for (auto _ : st) {
    auto doc = parser.iterate(padded);
    Tx out;
    for (auto field : doc.get_object()) {
      const std::string_view key = field.unescaped_key();
      if (key == "AccountIndex")
        out.h.account = field.value().get_uint64();
      else if (key == "Price")
        out.order.price = field.value().get_int64();
      else if (key == "BaseAmount")
        out.order.base_amount = field.value().get_int64();
      else if (key == "Nonce")
        out.h.nonce = field.value().get_int64();
      else if (key == "Seq")
        out.h.seq = field.value().get_uint64();
      else if (key == "Time")
        out.h.time_ns = field.value().get_int64();
      else if (key == "OrderExpiry")
        out.order.order_expiry_ms = field.value().get_int64();
      else if (key == "ClientOrderIndex")
        out.order.client_order_index = field.value().get_uint64();
      else if (key == "ExpiredAt")
        out.h.expired_at_ms = field.value().get_int64();
      else if (key == "Block")
        out.h.block = field.value().get_uint64();
      else
        (void)field.value().get_int64();  // the small enum fields
    }
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_json_simdjson_parse_order);

}  // namespace

BENCHMARK_MAIN();
