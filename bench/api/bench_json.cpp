// The api's JSON paths against a general-purpose library in the same run:
//   - the order-book response (orderBookOrders / the WS snapshot): the hand-written JsonWriter
//     into a reused string vs Boost.JSON (build a json::value, serialize);
//   - the sendTx body: form decoding + tx_info parse (simdjson on-demand) vs Boost.JSON parse
//     of the same tx_info into a value and field extraction.
// Run: build/release/bench/bench_json (ratios in docs/PERFORMANCE.md).
#include <benchmark/benchmark.h>

#include <boost/json/src.hpp>

#include "tachyon/api/crypto.hpp"
#include "tachyon/api/form.hpp"
#include "tachyon/api/json_writer.hpp"
#include "tachyon/api/tx_info.hpp"
#include "tachyon/pipe/book_snapshot.hpp"

using namespace tachyon;

namespace {

pipe::BookSnapshot make_book(int levels) {
  pipe::BookSnapshot b;
  for (int i = 0; i < levels; ++i) {
    b.bids.push_worse(pipe::PriceLevel{300000 - i * 7, 10000 + i * 1234, 1});
    b.asks.push_worse(pipe::PriceLevel{300010 + i * 7, 20000 + i * 4321, 1});
  }
  b.nonce = 123456;
  return b;
}

void encode_ours(std::string& out, const pipe::BookSnapshot& b) {
  out.clear();
  api::JsonWriter w(out);
  w.obj().kv_i("code", 200);
  auto side = [&](const char* total, const char* name, const pipe::LevelArray& lv) {
    w.key(total).i64(static_cast<int64_t>(lv.size()));
    w.key(name).arr();
    for (const auto& l : lv) {
      w.obj().key("price").dec(l.price, 2).key("remaining_base_amount").dec(l.size, 4);
      w.key("initial_base_amount").dec(l.size, 4).kv_i("orders", l.orders).end_obj();
    }
    w.end_arr();
  };
  side("total_asks", "asks", b.asks);
  side("total_bids", "bids", b.bids);
  w.kv_i("nonce", b.nonce).end_obj();
}

// What a general-purpose encoder needs: the decimal strings formatted, a DOM built, serialized.
std::string fixed(int64_t v, int d) {
  std::string s;
  api::JsonWriter(s).dec_num(v, d);
  return s;
}
std::string encode_boost(const pipe::BookSnapshot& b) {
  boost::json::object o;
  o["code"] = 200;
  auto side = [&](const char* total, const char* name, const pipe::LevelArray& lv) {
    o[total] = lv.size();
    boost::json::array a;
    for (const auto& l : lv) {
      boost::json::object x;
      x["price"] = fixed(l.price, 2);
      x["remaining_base_amount"] = fixed(l.size, 4);
      x["initial_base_amount"] = fixed(l.size, 4);
      x["orders"] = l.orders;
      a.push_back(std::move(x));
    }
    o[name] = std::move(a);
  };
  side("total_asks", "asks", b.asks);
  side("total_bids", "bids", b.bids);
  o["nonce"] = b.nonce;
  return boost::json::serialize(o);
}

void BM_BookEncode_JsonWriter(benchmark::State& st) {
  const auto b = make_book(static_cast<int>(st.range(0)));
  std::string out;
  out.reserve(1 << 16);
  for (auto _ : st) {
    encode_ours(out, b);
    benchmark::DoNotOptimize(out.data());
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * out.size()));
}
BENCHMARK(BM_BookEncode_JsonWriter)->Arg(25)->Arg(100);

void BM_BookEncode_BoostJson(benchmark::State& st) {
  const auto b = make_book(static_cast<int>(st.range(0)));
  size_t n = 0;
  for (auto _ : st) {
    std::string s = encode_boost(b);
    n = s.size();
    benchmark::DoNotOptimize(s.data());
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * n));
}
BENCHMARK(BM_BookEncode_BoostJson)->Arg(25)->Arg(100);

std::string send_tx_body() {
  api::crypto_init();
  Tx tx;
  tx.h.type = TxType::kCreateOrder;
  tx.h.account = 1077;
  tx.h.nonce = 722;
  tx.h.expired_at_ms = 1766434822000;
  tx.order = CreateOrderTx{0,
                           100,
                           1000,
                           300000,
                           0,
                           OrderType::kLimit,
                           TimeInForce::kGoodTillTime,
                           0,
                           StpMode::kExpireMaker,
                           0,
                           1893456000000};
  api::Signature sig{};
  return "tx_type=14&tx_info=" + api::tx_info_json(tx, &sig);
}

void BM_SendTxParse_Ours(benchmark::State& st) {
  const std::string body = send_tx_body();
  for (auto _ : st) {
    api::FormFields f;
    std::string err;
    api::parse_form("application/x-www-form-urlencoded", body, f, err);
    api::SignedTx out;
    const auto info = api::field(f, "tx_info");
    benchmark::DoNotOptimize(api::parse_tx_info(14, *info, out, err));
    benchmark::DoNotOptimize(out.tx.order.price);
  }
}
BENCHMARK(BM_SendTxParse_Ours);

void BM_SendTxParse_BoostJson(benchmark::State& st) {
  const std::string body = send_tx_body();
  for (auto _ : st) {
    api::FormFields f;
    std::string err;
    api::parse_form("application/x-www-form-urlencoded", body, f, err);
    const auto info = api::field(f, "tx_info");
    boost::json::value v = boost::json::parse(*info);
    const auto& o = v.as_object();
    Tx tx;
    tx.h.account = o.at("AccountIndex").to_number<uint64_t>();
    tx.h.nonce = o.at("Nonce").to_number<int64_t>();
    tx.h.expired_at_ms = o.at("ExpiredAt").to_number<int64_t>();
    tx.order.market = o.at("MarketIndex").to_number<uint8_t>();
    tx.order.base_amount = o.at("BaseAmount").to_number<int64_t>();
    tx.order.price = o.at("Price").to_number<int64_t>();
    tx.order.is_ask = o.at("IsAsk").to_number<uint8_t>();
    tx.order.order_expiry_ms = o.at("OrderExpiry").to_number<int64_t>();
    api::Signature sig;
    benchmark::DoNotOptimize(api::from_base64(o.at("Sig").as_string(), sig.data(), sig.size()));
    benchmark::DoNotOptimize(tx.order.price);
  }
}
BENCHMARK(BM_SendTxParse_BoostJson);

}  // namespace

BENCHMARK_MAIN();
