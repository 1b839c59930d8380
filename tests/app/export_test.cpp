// `tachyon-cli export` (the real binary) against journals written here: a seeded stream through
// an Engine and a store::Journal, as the store tests do. The exported LOBSTER files are read back
// with the loader the replay test and tachyon-load use, and checked against a price-level model
// of our own: replaying the message rows (1 add, 2 partial cancel, 3 delete, 4 execution) must
// give every orderbook row exactly, rows never show a crossed book, the adds are the resting
// orders the engine emitted, and the model ends as the engine's book. Also: the start from the
// oldest usable snapshot, refusal of a journal with a hole, a torn tail left untouched, and the
// rounding of prices with more than 4 decimals.
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "store/store_support.hpp"
#include "support/child_process.hpp"
#include "support/lobster_data.hpp"

namespace tachyon::testing {
namespace {

namespace fs = std::filesystem;
namespace lob = lobster;

constexpr int64_t kMidnight = 1'700'006'400'000'000'000;  // 2023-11-15 00:00:00 UTC

// ---- writing a history: engine + journal in a data directory ----

class AddCounter final : public UpdateSink {
 public:
  void on_update(const StateUpdate& u) override {
    if (u.type == UpdateType::kOrderAdded) ++added[u.order.market];
  }
  std::map<int, uint64_t> added;  // resting orders emitted, by market
};

class History {
 public:
  History(const std::string& dir, uint64_t seed, int64_t start_ns, int markets = 2)
      : dir_(dir), stream_(seed, config(start_ns, markets)) {
    stream_.set_oracle(&engine_);
    genesis_ = stream_.genesis();
    store::JournalConfig jc;
    jc.dir = dir;
    jc.durability = store::Durability::kWrite;
    jc.segment_bytes = 16u << 10;  // many segments
    EXPECT_TRUE(store::Journal::open(jc, 1, journal_).ok());
  }
  void execute(const Tx& tx, TxResult* r = nullptr) {
    const TxResult res = engine_.execute(tx, counter_);
    journal_->append(tx);  // every sequenced tx, as the server does
    // Bounded group commits, so segments roll where the test expects them to.
    if (tx.h.seq % 64 == 0) {
      EXPECT_TRUE(journal_->wait_durable(tx.h.seq));
    }
    if (r != nullptr) *r = res;
  }
  void run_to(uint64_t seq) {
    while (engine_.last_seq() < seq) {
      const Tx tx = gi_ < genesis_.size() ? genesis_[gi_++] : stream_.next();
      TxResult r;
      execute(tx, &r);
      stream_.on_result(tx, r);
    }
  }
  void snapshot() { ASSERT_TRUE(store::write_snapshot(engine_, dir_).ok()); }
  void close() { journal_->close(); }
  store::Journal& journal() { return *journal_; }
  Engine& engine() { return engine_; }
  uint64_t added(int market) { return counter_.added[market]; }

 private:
  static StreamConfig config(int64_t start_ns, int markets) {
    StreamConfig c;
    c.markets = markets;
    c.start_time_ns = start_ns;
    return c;
  }
  std::string dir_;
  Engine engine_;
  AddCounter counter_;
  RandomStream stream_;
  std::vector<Tx> genesis_;
  size_t gi_ = 0;
  std::unique_ptr<store::Journal> journal_;
};

// ---- running the real tool ----

struct ExportRun {
  int status = -1;
  std::string output;  // stdout and stderr
};

ExportRun run_export(const std::string& data, int market, const std::string& out, int levels,
                     const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {
      TACHYON_CLI_BIN,        "export", "--data-dir", data,       "--market",
      std::to_string(market), "--out",  out,          "--levels", std::to_string(levels)};
  args.insert(args.end(), extra.begin(), extra.end());
  Child c = spawn(args, /*with_stderr=*/true);
  ExportRun r;
  std::string line;
  while (read_line(c, line, 300'000)) r.output += line + "\n";  // ends at EOF
  r.output += c.buffered;
  const int ws = finish(c, false);
  r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
  return r;
}

// ---- checking the files ----

struct LobOrder {
  int64_t price;
  int64_t remaining;
  int direction;
};

// Price levels rebuilt from message rows alone.
class PriceLevels {
 public:
  void seed(int64_t id, int64_t price, int64_t size, int direction) {
    orders_[id] = LobOrder{price, size, direction};
    if (direction == -1)
      asks_[price] += size;
    else
      bids_[price] += size;
  }
  // Empty when the message fits the book, else why not.
  std::string apply(const lob::Message& m) {
    if (m.direction != 1 && m.direction != -1) return "direction";
    if (m.size <= 0) return "size";
    if (m.type == 1) {
      if (orders_.count(m.id) != 0) return "order added twice";
      seed(m.id, m.price, m.size, m.direction);
      return {};
    }
    if (m.type < 2 || m.type > 4) return "unexpected type";
    const auto it = orders_.find(m.id);
    if (it == orders_.end()) return "unknown order";
    LobOrder& o = it->second;
    if (o.price != m.price || o.direction != m.direction) return "price or side changed";
    if (m.size > o.remaining) return "more than the order has";
    if (m.type == 3 && m.size != o.remaining) return "delete of less than the order has";
    if (m.type == 2 && m.size == o.remaining) return "partial cancel of everything";
    const bool ok = m.direction == -1 ? sub(asks_, m.price, m.size) : sub(bids_, m.price, m.size);
    if (!ok) return "level smaller than the order";
    o.remaining -= m.size;
    if (o.remaining == 0) orders_.erase(it);
    return {};
  }
  lob::Row row(int levels) const {
    lob::Row r;
    auto a = asks_.begin();
    auto b = bids_.begin();
    for (int i = 0; i < levels; ++i) {
      const bool ha = a != asks_.end(), hb = b != bids_.end();
      r.push_back(ha ? a->first : lob::kEmptyPrice);
      r.push_back(ha ? a->second : 0);
      r.push_back(hb ? b->first : -lob::kEmptyPrice);
      r.push_back(hb ? b->second : 0);
      if (ha) ++a;
      if (hb) ++b;
    }
    return r;
  }
  // Equal to the engine's whole book of the market (prices scaled by `mult`)?
  bool equals(const OrderBook& book, int64_t mult) const {
    auto same = [&](bool ask, const auto& m) {
      if (book.level_count(ask) != m.size()) return false;
      auto it = m.begin();
      for (size_t i = 0; i < m.size(); ++i, ++it) {
        const Level& l = book.level(ask, i);
        if (l.price * mult != it->first || l.total != it->second) return false;
      }
      return true;
    };
    return same(true, asks_) && same(false, bids_);
  }

 private:
  template <typename M>
  static bool sub(M& m, int64_t price, int64_t size) {
    const auto it = m.find(price);
    if (it == m.end() || it->second < size) return false;
    it->second -= size;
    if (it->second == 0) m.erase(it);
    return true;
  }
  std::map<int64_t, int64_t> asks_;                  // best (lowest) first
  std::map<int64_t, int64_t, std::greater<>> bids_;  // best (highest) first
  std::unordered_map<int64_t, LobOrder> orders_;
};

struct Summary {
  std::vector<std::string> message_files;  // one per day, in date order
  std::map<int, uint64_t> by_type;
  uint64_t rows = 0;
};

// Every row of every day: parses, is not crossed, and is what the messages so far build.
void check_export(const std::string& out, int levels, PriceLevels& model, Summary& sum) {
  for (const auto& e : fs::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    ASSERT_EQ(name.find(".part"), std::string::npos) << "unfinished file left: " << name;
    if (name.find("_message_" + std::to_string(levels) + ".csv") != std::string::npos)
      sum.message_files.push_back(e.path().string());
  }
  std::sort(sum.message_files.begin(), sum.message_files.end());
  ASSERT_FALSE(sum.message_files.empty()) << "no message file in " << out;
  for (const std::string& mf : sum.message_files) {
    SCOPED_TRACE(mf);
    std::string book_file = mf;
    book_file.replace(book_file.rfind("_message_"), 9, "_orderbook_");
    std::string err;
    const auto msgs = lob::load_messages(mf, &err);
    ASSERT_TRUE(err.empty()) << err;
    const auto rows = lob::load_rows(book_file, levels, &err);
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_EQ(msgs.size(), rows.size()) << "one orderbook row per message";
    int64_t last_t = 0;
    for (size_t i = 0; i < msgs.size(); ++i) {
      const lob::Message& m = msgs[i];
      SCOPED_TRACE("row " + std::to_string(i + 1));
      ASSERT_GE(m.time_ns, last_t) << "times go backwards";
      ASSERT_LT(m.time_ns, 86'400'000'000'000) << "time after the day's end";
      last_t = m.time_ns;
      // not crossed, levels in order, real levels have size
      const lob::Side asks = lob::row_side(rows[i], true), bids = lob::row_side(rows[i], false);
      for (size_t k = 1; k < asks.levels.size(); ++k) {
        ASSERT_GT(asks.levels[k].first, asks.levels[k - 1].first);
      }
      for (size_t k = 1; k < bids.levels.size(); ++k) {
        ASSERT_LT(bids.levels[k].first, bids.levels[k - 1].first);
      }
      if (!asks.levels.empty() && !bids.levels.empty()) {
        ASSERT_GT(asks.levels.front().first, bids.levels.front().first) << "crossed book";
      }
      // the messages rebuild the row exactly
      const std::string why = model.apply(m);
      ASSERT_TRUE(why.empty()) << why << ": type " << m.type << " id " << m.id;
      ASSERT_EQ(model.row(levels), rows[i]) << "message " << m.type << " id " << m.id;
      ++sum.by_type[m.type];
      ++sum.rows;
    }
  }
}

// The resting orders of a market, fed to the model (an export that starts from a snapshot).
void seed_from(const Engine& e, MarketId market, int64_t mult, PriceLevels& model) {
  const Market* mk = e.market(market);
  ASSERT_NE(mk, nullptr);
  for (const bool ask : {false, true}) {
    for (size_t i = 0; i < mk->book.level_count(ask); ++i) {
      for (uint32_t s = mk->book.level(ask, i).head; s != kNoSlot; s = e.orders()[s].next) {
        const Order& o = e.orders()[s];
        model.seed(static_cast<int64_t>(o.order_index), o.price * mult, o.remaining, ask ? -1 : 1);
      }
    }
  }
}

std::map<std::string, std::string> dir_contents(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    out[e.path().filename().string()] = ss.str();
  }
  return out;
}

std::vector<std::string> segments(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("journal-", 0) == 0) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// ---- the tests ----

TEST(Export, from_genesis_every_book_row_follows_from_the_messages_across_a_day_boundary) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  History h(data, 11, kMidnight - 15'000'000'000);  // ~30 s of flow around midnight
  h.run_to(10'000);
  h.snapshot();  // the journal still begins at seq 1: a check point, not the start
  h.run_to(20'000);
  h.close();
  // ETH (price_decimals 2: x100) with 10 levels, BTC (price_decimals 1: x1000) with 3.
  const std::vector<std::tuple<int, int, int64_t, const char*>> cases = {{0, 10, 100, "ETH_"},
                                                                         {1, 3, 1000, "BTC_"}};
  for (const auto& [market, levels, mult, prefix] : cases) {
    SCOPED_TRACE("market " + std::to_string(market));
    const std::string out = dir.path() + "/out" + std::to_string(market);
    const ExportRun r = run_export(data, market, out, levels);
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("starting from genesis"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("matched at 1 later snapshots"), std::string::npos) << r.output;
    PriceLevels model;
    Summary sum;
    ASSERT_NO_FATAL_FAILURE(check_export(out, levels, model, sum));
    ASSERT_EQ(sum.message_files.size(), 2u) << "one pair of files per UTC day";
    const std::string d1 = fs::path(sum.message_files[0]).filename().string();
    const std::string d2 = fs::path(sum.message_files[1]).filename().string();
    EXPECT_EQ(d1.rfind(std::string(prefix) + "2023-11-14_", 0), 0u) << d1;
    EXPECT_EQ(d2.rfind(std::string(prefix) + "2023-11-15_", 0), 0u) << d2;
    EXPECT_EQ(sum.by_type[1], h.added(market)) << "one type 1 row per order the engine rested";
    for (const int type : {1, 3, 4}) EXPECT_GT(sum.by_type[type], 0u) << "type " << type;
    EXPECT_TRUE(model.equals(h.engine().market(static_cast<MarketId>(market))->book, mult))
        << "the messages end at the engine's book";
  }
  // Engine settings other than the server's: the replay misses the snapshot's state hash.
  const ExportRun wrong = run_export(data, 0, dir.path() + "/wrong", 10,
                                     {"--fee-account", "5", "--insurance-account", "6"});
  EXPECT_EQ(wrong.status, 1);
  EXPECT_NE(wrong.output.find("does not reach the state hash of snapshot 10000"), std::string::npos)
      << wrong.output;
  EXPECT_TRUE(fs::is_empty(dir.path() + "/wrong")) << "no partial files";
  // A market that never existed is refused.
  const ExportRun bad = run_export(data, 7, dir.path() + "/out7", 10);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.output.find("does not exist"), std::string::npos) << bad.output;
}

TEST(Export, starts_from_the_oldest_snapshot_the_journal_continues_and_checks_later_ones) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  History h(data, 12, kMidnight + 3'600'000'000'000);
  h.run_to(300);
  h.snapshot();  // the journal will not reach back to it
  h.run_to(6'000);
  h.snapshot();  // the export starts here
  PriceLevels model;
  ASSERT_NO_FATAL_FAILURE(seed_from(h.engine(), 0, 100, model));
  const uint64_t added_before = h.added(0);
  h.run_to(12'000);
  h.snapshot();  // the replay must reach its state hash
  h.run_to(15'000);
  ASSERT_TRUE(h.journal().drop_segments_through(6'000).ok());
  h.close();
  store::JournalScan scan;
  ASSERT_TRUE(store::replay_journal(
                  data, UINT64_MAX, [](const Tx&) {}, scan, false)
                  .ok());
  ASSERT_GT(scan.first_seq, 301u) << "the test needs the journal to start after snapshot 300";
  ASSERT_LE(scan.first_seq, 6'001u);

  const std::string out = dir.path() + "/out";
  const ExportRun r = run_export(data, 0, out, 5);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("starting from snapshot seq 6000"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("matched at 1 later snapshots"), std::string::npos) << r.output;
  Summary sum;
  ASSERT_NO_FATAL_FAILURE(check_export(out, 5, model, sum));
  EXPECT_EQ(sum.by_type[1], h.added(0) - added_before);
  EXPECT_TRUE(model.equals(h.engine().market(0)->book, 100));
}

TEST(Export, refuses_a_journal_with_a_gap) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  History h(data, 13, kMidnight);
  h.run_to(3'000);
  h.close();
  auto segs = segments(data);
  ASSERT_GE(segs.size(), 4u);
  {  // a hole in the middle
    ASSERT_TRUE(fs::remove(segs[2]));
    const ExportRun r = run_export(data, 0, dir.path() + "/out1", 10);
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("gap"), std::string::npos) << r.output;
    EXPECT_TRUE(fs::is_empty(dir.path() + "/out1"));
  }
  {  // the journal's start is gone and no snapshot bridges it
    ASSERT_TRUE(fs::remove(segs[0]));
    ASSERT_TRUE(fs::remove(segs[1]));
    const ExportRun r = run_export(data, 0, dir.path() + "/out2", 10);
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("journal gap: the journal begins at seq"), std::string::npos)
        << r.output;
    EXPECT_TRUE(fs::is_empty(dir.path() + "/out2"));
  }
}

TEST(Export, stops_at_a_torn_tail_and_leaves_the_data_directory_as_it_was) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  History h(data, 14, kMidnight);
  h.run_to(3'000);
  h.close();
  {  // a write cut inside the next frame's header
    std::ofstream f(segments(data).back(), std::ios::binary | std::ios::app);
    f.write("\x40\x00\x00\x00\x11", 5);
  }
  const auto before = dir_contents(data);
  const std::string out = dir.path() + "/out";
  const ExportRun r = run_export(data, 0, out, 10);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("stopped at a torn tail after seq 3000"), std::string::npos) << r.output;
  EXPECT_TRUE(dir_contents(data) == before) << "the export changed the data directory";
  PriceLevels model;
  Summary sum;
  ASSERT_NO_FATAL_FAILURE(check_export(out, 10, model, sum));
  EXPECT_EQ(sum.by_type[1], h.added(0));
  EXPECT_TRUE(model.equals(h.engine().market(0)->book, 100));
}

TEST(Export, prices_with_more_than_four_decimals_round_away_from_the_spread) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  store::JournalConfig jc;
  jc.dir = data;
  jc.durability = store::Durability::kWrite;
  std::unique_ptr<store::Journal> journal;
  ASSERT_TRUE(store::Journal::open(jc, 1, journal).ok());
  Engine e;
  NullSink sink;
  TxBuilder b(kMidnight + 34'200'000'000'000);  // 09:30 UTC
  std::vector<int64_t> times;                   // of the txs that make rows
  auto run = [&](const Tx& tx, bool row = false) {
    ASSERT_TRUE(e.execute(tx, sink).ok());
    journal->append(tx);
    if (row) times.push_back(tx.h.time_ns);
  };
  // size_decimals 0, price_decimals 6: 1 LOBSTER unit ($0.0001) = 100 ticks
  run(b.create_market(0, demo_market_params("PEPE/USD", 0, 6), 1'000'000));
  for (AccountIndex a : {1000, 1001, 1002}) run(b.deposit(a, 1'000'000'000'000));
  const OrderIndex id = kFirstOrderIndex;
  run(b.limit(1000, 0, 0, false, 1'000'010, 5), true);  // bids floor to 10000
  run(b.limit(1000, 1, 0, false, 1'000'090, 7), true);
  run(b.limit(1001, 0, 0, true, 1'000'101, 4), true);  // asks ceil to 10002: one level
  run(b.limit(1001, 1, 0, true, 1'000'200, 3), true);
  run(b.limit(1002, 0, 0, false, 1'000'150, 6, TimeInForce::kIoc), true);  // fills 4, rest dies
  run(b.modify(1000, 2, 0, id + 1, 2, 1'000'090), true);                   // 7 -> 2 in place
  run(b.cancel(1000, 3, 0, id), true);
  journal->close();

  const std::string out = dir.path() + "/out";
  const ExportRun r = run_export(data, 0, out, 2);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto ms = [](int64_t t) { return std::to_string((t - kMidnight) / 1'000'000); };
  const std::string stem = out + "/PEPE-USD_2023-11-15_" + ms(times.front()) + "_" +
                           std::to_string((times.back() - kMidnight) / 1'000'000 + 1);
  std::string err;
  const auto msgs = lob::load_messages(stem + "_message_2.csv", &err);
  ASSERT_TRUE(err.empty()) << err << "\n" << r.output;
  const auto rows = lob::load_rows(stem + "_orderbook_2.csv", 2, &err);
  ASSERT_TRUE(err.empty()) << err;
  const auto I = [&](uint64_t k) { return static_cast<int64_t>(id + k); };
  const std::vector<std::vector<int64_t>> want_msgs = {
      {1, I(0), 5, 10000, 1},  {1, I(1), 7, 10000, 1},  {1, I(2), 4, 10002, -1},
      {1, I(3), 3, 10002, -1}, {4, I(2), 4, 10002, -1}, {2, I(1), 5, 10000, 1},
      {3, I(0), 5, 10000, 1}};
  constexpr int64_t X = lob::kEmptyPrice;
  const std::vector<lob::Row> want_rows = {
      {X, 0, 10000, 5, X, 0, -X, 0},      {X, 0, 10000, 12, X, 0, -X, 0},
      {10002, 4, 10000, 12, X, 0, -X, 0}, {10002, 7, 10000, 12, X, 0, -X, 0},
      {10002, 3, 10000, 12, X, 0, -X, 0}, {10002, 3, 10000, 7, X, 0, -X, 0},
      {10002, 3, 10000, 2, X, 0, -X, 0}};
  ASSERT_EQ(msgs.size(), want_msgs.size());
  ASSERT_EQ(rows, want_rows);
  // One row per tx here (the IOC taker's row is its maker's execution), at the tx's time.
  for (size_t i = 0; i < msgs.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i + 1));
    EXPECT_EQ(msgs[i].time_ns, times[i] - kMidnight);
    EXPECT_EQ((std::vector<int64_t>{msgs[i].type, msgs[i].id, msgs[i].size, msgs[i].price,
                                    msgs[i].direction}),
              want_msgs[i]);
  }
}

}  // namespace
}  // namespace tachyon::testing
