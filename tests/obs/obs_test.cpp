// obs: histogram buckets and quantiles against exact sorted values, Prometheus exposition, the
// flight recorder's Chrome trace JSON, automatic dumps and their rate limit, concurrent readers.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "support/temp_dir.hpp"
#include "tachyon/core/alloc.hpp"
#include "tachyon/obs/metrics.hpp"
#include "tachyon/obs/trace.hpp"

namespace tachyon::obs {
namespace {

TEST(Histogram, EveryValueLandsInABucketThatHoldsIt) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const uint64_t v = rng() >> (rng() % 64);
    const size_t b = bucket_of(v);
    ASSERT_LT(b, kBuckets);
    if (v < (uint64_t{1} << 48)) {
      ASSERT_LE(bucket_low(b), v) << v;
      ASSERT_GE(bucket_high(b), v) << v;
      // Relative width at most 1/32 of the value (the last bucket is open-ended).
      if (b + 1 < kBuckets) {
        ASSERT_LE(bucket_high(b) - bucket_low(b), v / 32) << v;
      }
    } else {
      ASSERT_EQ(b, kBuckets - 1);
    }
  }
  for (size_t b = 1; b < kBuckets; ++b) ASSERT_EQ(bucket_low(b), bucket_high(b - 1) + 1) << b;
}

TEST(Histogram, QuantilesWithinABucketOfTheExactValue) {
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> d(9.0, 1.5);  // ~8 us median, long tail
  Histogram h;
  std::vector<uint64_t> vals;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t v = static_cast<uint64_t>(d(rng));
    vals.push_back(v);
    h.record(v);
  }
  std::sort(vals.begin(), vals.end());
  const HistogramSnapshot s = h.snapshot();
  EXPECT_EQ(s.count, vals.size());
  EXPECT_EQ(s.max, vals.back());
  for (double q : {0.5, 0.9, 0.99, 0.999, 0.9999, 1.0}) {
    const uint64_t exact = vals[static_cast<size_t>(std::ceil(q * double(vals.size()))) - 1];
    const uint64_t got = s.quantile(q);
    EXPECT_GE(got, exact) << q;
    EXPECT_LE(double(got), double(exact) * (1.0 + 1.0 / 32) + 1) << q;
  }
  EXPECT_EQ(HistogramSnapshot{}.quantile(0.99), 0u);
}

TEST(Histogram, ShardsMergeToTheSameAsOne) {
  ShardedHistogram sh(3);
  Histogram one;
  for (uint64_t v = 0; v < 30000; v += 7) {
    sh.record(v % 3, v * 13);
    one.record(v * 13);
  }
  const HistogramSnapshot a = sh.snapshot(), b = one.snapshot();
  EXPECT_EQ(a.counts, b.counts);
  EXPECT_EQ(a.sum, b.sum);
  EXPECT_EQ(a.max, b.max);
}

TEST(Histogram, ConcurrentWriterAndReadersNeverSeeMoreThanWritten) {
  Histogram h;
  std::atomic<bool> done{false};
  std::thread w([&] {
    for (uint64_t i = 0; i < 200000; ++i) h.record(i % 5000);
    done.store(true);
  });
  uint64_t last = 0;
  while (!done.load()) {
    const HistogramSnapshot s = h.snapshot();
    uint64_t total = 0;
    for (uint64_t c : s.counts) total += c;
    ASSERT_LE(total, 200000u);
    ASSERT_GE(s.count, last);
    last = s.count;
  }
  w.join();
  EXPECT_EQ(h.snapshot().count, 200000u);
}

// Parses exposition text into series -> value, checking the line grammar on the way.
std::map<std::string, double> parse_exposition(const std::string& text,
                                               std::map<std::string, std::string>& types) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    EXPECT_FALSE(line.empty());
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream l(line.substr(7));
      std::string name, type;
      l >> name >> type;
      EXPECT_TRUE(types.emplace(name, type).second) << "family twice: " << name;
      continue;
    }
    if (line.rfind("# HELP ", 0) == 0) continue;
    const size_t sp = line.rfind(' ');
    EXPECT_NE(sp, std::string::npos) << line;
    out[line.substr(0, sp)] = std::stod(line.substr(sp + 1));
  }
  return out;
}

TEST(Registry, PrometheusTextHasCumulativeBucketsAndConventionalNames) {
  Registry r;
  Counter& c1 = r.counter("tachyon_txs", "Txs by type and result", "type=\"order\",result=\"ok\"");
  Counter& c2 =
      r.counter("tachyon_txs", "Txs by type and result", "type=\"order\",result=\"21104\"");
  Gauge& g = r.gauge("tachyon_applied_seq", "Last applied seq");
  r.gauge_fn("tachyon_answer", "A computed gauge", "", [] { return 42.5; });
  ShardedHistogram& h = r.histogram("tachyon_dry_run", "Dry-run latency", "type=\"order\"", 2);
  c1.add(5);
  c2.add_single(2);
  g.set(-3);
  for (uint64_t ns : {500u, 1500u, 2500u, 40'000u, 3'000'000u}) h.record(0, ns);
  h.record(1, 20'000'000'000ull);  // 20 s: above every finite bound
  std::map<std::string, std::string> types;
  const auto m = parse_exposition(r.prometheus(), types);
  EXPECT_EQ(types["tachyon_txs_total"], "counter");
  EXPECT_EQ(types["tachyon_applied_seq"], "gauge");
  EXPECT_EQ(types["tachyon_dry_run_seconds"], "histogram");
  EXPECT_EQ(m.at("tachyon_txs_total{type=\"order\",result=\"ok\"}"), 5);
  EXPECT_EQ(m.at("tachyon_txs_total{type=\"order\",result=\"21104\"}"), 2);
  EXPECT_EQ(m.at("tachyon_applied_seq"), -3);
  EXPECT_EQ(m.at("tachyon_answer"), 42.5);
  EXPECT_EQ(m.at("tachyon_dry_run_seconds_count{type=\"order\"}"), 6);
  EXPECT_EQ(m.at("tachyon_dry_run_seconds_bucket{type=\"order\",le=\"+Inf\"}"), 6);
  EXPECT_EQ(m.at("tachyon_dry_run_seconds_bucket{type=\"order\",le=\"1e-06\"}"), 1);
  EXPECT_EQ(m.at("tachyon_dry_run_seconds_bucket{type=\"order\",le=\"5e-05\"}"), 4);
  EXPECT_EQ(m.at("tachyon_dry_run_seconds_bucket{type=\"order\",le=\"10\"}"), 5);
  EXPECT_NEAR(m.at("tachyon_dry_run_seconds_sum{type=\"order\"}"), 20.003044500, 1e-9);
  double prev = 0;
  for (double b : time_bounds_s()) {
    char le[64];
    std::snprintf(le, sizeof le, "%.9g", b);
    const double v =
        m.at(std::string("tachyon_dry_run_seconds_bucket{type=\"order\",le=\"") + le + "\"}");
    EXPECT_GE(v, prev) << le;
    prev = v;
  }
  const std::string t = r.table();
  EXPECT_NE(t.find("tachyon_dry_run_seconds{type=\"order\"}"), std::string::npos) << t;
}

TEST(FlightRecorder, ChromeJsonHoldsTheWindowsEventsPerThread) {
  RecorderConfig cfg;
  cfg.events_per_track = 64;
  cfg.window_ns = 1'000'000'000;
  FlightRecorder rec(cfg);
  Track& a = rec.track("sequencer");
  Track& b = rec.track("apply \"thread\"");
  const uint16_t exec = rec.name_id("execute"), batch = rec.name_id("apply_batch");
  EXPECT_EQ(rec.name_id("execute"), exec);
  const int64_t now = realtime_ns();
  a.span(exec, now - 2'000'000'000, now - 1'999'000'000, 1);  // outside the window
  for (int i = 0; i < 100; ++i) a.span(exec, now - 1000 + i, now - 900 + i, uint64_t(i));
  b.counter(batch, now - 10, 17);
  b.instant(batch, now - 5, 3);
  const std::string js = rec.chrome_json(now);
  // Times in µs with ns precision, printed exactly: the newest span starts at now - 901 ns.
  const int64_t newest = now - 1000 + 99;
  char frac[8];
  std::snprintf(frac, sizeof frac, ".%03d", static_cast<int>(newest % 1000));
  EXPECT_NE(js.find("\"ts\":" + std::to_string(newest / 1000) + frac + ",\"dur\":0.100,"),
            std::string::npos)
      << js.substr(0, 400);
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  ASSERT_EQ(p.parse(js).get(doc), simdjson::SUCCESS) << js.substr(0, 400);
  simdjson::dom::array evs;
  ASSERT_EQ(doc["traceEvents"].get(evs), simdjson::SUCCESS);
  int spans = 0, meta = 0, counters = 0, instants = 0;
  int64_t last_v = -1;
  for (simdjson::dom::element e : evs) {
    std::string_view ph;
    ASSERT_EQ(e["ph"].get(ph), simdjson::SUCCESS);
    if (ph == "M") ++meta;
    if (ph == "C") ++counters;
    if (ph == "i") ++instants;
    if (ph == "X") {
      ++spans;
      int64_t v = 0;
      ASSERT_EQ(e["args"]["v"].get(v), simdjson::SUCCESS);
      EXPECT_GT(v, last_v);  // oldest first, the overwritten ones gone
      last_v = v;
      double dur = 0;
      ASSERT_EQ(e["dur"].get(dur), simdjson::SUCCESS);
      EXPECT_DOUBLE_EQ(dur, 0.1);
    }
  }
  EXPECT_EQ(meta, 2);
  EXPECT_EQ(spans, 64);  // the ring keeps the newest 64 of a's events: the window's last 64
  EXPECT_EQ(last_v, 99);
  EXPECT_EQ(counters, 1);
  EXPECT_EQ(instants, 1);
}

TEST(FlightRecorder, ASlowSpanDumpsOnceAndTheRateLimitHoldsTheRest) {
  testing::TempDir dir;
  RecorderConfig cfg;
  cfg.events_per_track = 1024;
  cfg.window_ns = 10'000'000'000;
  cfg.min_interval_ns = 3'600'000'000'000;
  cfg.dir = dir.path() + "/traces";
  FlightRecorder rec(cfg);
  rec.start_dumper();
  Track& t = rec.track("apply");
  const uint16_t name = rec.name_id("apply_batch");
  { Span fast(&t, name, 1, 1'000'000'000); }
  EXPECT_FALSE(rec.wait_dumps(1, std::chrono::milliseconds(200)));  // under the threshold
  {
    Span slow(&t, name, 2, 1);  // 1 ns threshold: any real span exceeds it
    const int64_t until = realtime_ns() + 1000;
    while (realtime_ns() < until) {
    }
  }
  ASSERT_TRUE(rec.wait_dumps(1, std::chrono::seconds(10)));
  const auto files = rec.dumps();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(files[0].find("apply_batch"), std::string::npos) << files[0];
  ASSERT_TRUE(std::filesystem::exists(files[0]));
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  ASSERT_EQ(p.load(files[0]).get(doc), simdjson::SUCCESS);
  simdjson::dom::array evs;
  ASSERT_EQ(doc["traceEvents"].get(evs), simdjson::SUCCESS);
  EXPECT_EQ(evs.size(), 3u);  // thread name + both spans
  // Within min_interval: the next request is counted, not written.
  t.recorder().request_dump(name, 5);
  const uint64_t before = rec.dumps_suppressed();
  for (int i = 0; i < 400 && rec.dumps_suppressed() == before; ++i) {
    rec.wait_dumps(2, std::chrono::milliseconds(25));
  }
  EXPECT_EQ(rec.dumps_suppressed(), before + 1);
  EXPECT_EQ(rec.dumps_written(), 1u);
  rec.stop_dumper();
}

TEST(FlightRecorder, ReadersDumpWhileWritersAppend) {
  RecorderConfig cfg;
  cfg.events_per_track = 256;
  cfg.window_ns = 60'000'000'000;
  FlightRecorder rec(cfg);
  Track& t1 = rec.track("w1");
  Track& t2 = rec.track("w2");
  const uint16_t n = rec.name_id("step");
  std::atomic<bool> done{false};
  auto writer = [&](Track& t) {
    for (uint64_t i = 0; i < 50000; ++i) {
      const int64_t now = realtime_ns();
      t.span(n, now, now + 10, i);
    }
  };
  std::thread a(writer, std::ref(t1)), b(writer, std::ref(t2));
  std::thread r([&] {
    simdjson::dom::parser p;
    while (!done.load()) {
      simdjson::dom::element doc;
      ASSERT_EQ(p.parse(rec.chrome_json()).get(doc), simdjson::SUCCESS);
    }
  });
  a.join();
  b.join();
  done.store(true);
  r.join();
}

TEST(AllocStats, ReportJemallocWhenLinked) {
  const AllocStats s = alloc_stats();
#ifdef TACHYON_EXPECT_JEMALLOC
  ASSERT_TRUE(s.available);
  EXPECT_GT(s.allocated, 0u);
  EXPECT_GE(s.resident, s.active);
  const uint64_t* mine = thread_allocated_counter();
  ASSERT_NE(mine, nullptr);
  const uint64_t before = *mine;
  auto* p = new std::vector<char>(1 << 20);
  EXPECT_GE(*mine - before, uint64_t{1} << 20);
  delete p;
#else
  EXPECT_FALSE(s.available);
  EXPECT_EQ(thread_allocated_counter(), nullptr);
#endif
}

}  // namespace
}  // namespace tachyon::obs
