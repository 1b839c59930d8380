// `tachyon-cli export`: the journal's order-level history of one market as LOBSTER files.
// Format, rounding and the choice of the starting point: export_lobster.hpp.
#include "export_lobster.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>

#include "tachyon/core/crc32c.hpp"
#include "tachyon/store/disk.hpp"
#include "tachyon/store/journal.hpp"
#include "tachyon/store/snapshot.hpp"

namespace tachyon::app {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kEmptyPrice = 9'999'999'999;  // LOBSTER's price of a missing level
constexpr int64_t kNsPerSecond = 1'000'000'000;
constexpr int64_t kNsPerDay = 86'400 * kNsPerSecond;
constexpr size_t kCheckLevels = 32;  // best levels compared with the engine after every tx
constexpr size_t kAllLevels = static_cast<size_t>(-1);

int64_t pow10(int n) {
  int64_t v = 1;
  while (n-- > 0) v *= 10;
  return v;
}

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

std::string civil_date(int64_t day) {
  const std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{day}}};
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
  return buf;
}

// The symbol as a file-name part: letters, digits, '-' and '.' ('_' separates LOBSTER's fields).
std::string file_symbol(const MarketParams& p, int market) {
  std::string s;
  for (const char c : p.symbol) {
    if (c == '\0') break;
    s += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '-';
  }
  return s.empty() ? "MARKET" + std::to_string(market) : s;
}

void append_int(std::string& out, int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, r.ptr);
}

// ---- the exported book: resting orders of the market, by the export's own bookkeeping ----

struct Resting {
  bool ask;
  Ticks price;
  Lots remaining;
};

class BookModel {
 public:
  bool add(OrderIndex id, bool ask, Ticks price, Lots size) {
    if (size <= 0 || !orders_.emplace(id, Resting{ask, price, size}).second) return false;
    (ask ? asks_[price] : bids_[price]) += size;
    return true;
  }
  const Resting* find(OrderIndex id) const {
    const auto it = orders_.find(id);
    return it == orders_.end() ? nullptr : &it->second;
  }
  // Takes `by` lots off a resting order, forgetting it at zero; false when it has fewer.
  bool take(OrderIndex id, Lots by) {
    const auto it = orders_.find(id);
    if (it == orders_.end() || by <= 0 || by > it->second.remaining) return false;
    Resting& r = it->second;
    if (r.ask)
      sub(asks_, r.price, by);
    else
      sub(bids_, r.price, by);
    r.remaining -= by;
    if (r.remaining == 0) orders_.erase(it);
    return true;
  }
  // One orderbook row: AskPrice1,AskSize1,BidPrice1,BidSize1,... for `levels` levels.
  void row(std::string& out, int levels, int price_decimals) const {
    collect(asks_, true, levels, price_decimals, ask_rows_);
    collect(bids_, false, levels, price_decimals, bid_rows_);
    for (size_t i = 0; i < static_cast<size_t>(levels); ++i) {
      if (i != 0) out += ',';
      const bool a = i < ask_rows_.size(), b = i < bid_rows_.size();
      append_int(out, a ? ask_rows_[i].first : kEmptyPrice);
      out += ',';
      append_int(out, a ? ask_rows_[i].second : 0);
      out += ',';
      append_int(out, b ? bid_rows_[i].first : -kEmptyPrice);
      out += ',';
      append_int(out, b ? bid_rows_[i].second : 0);
    }
    out += '\n';
  }
  // The first difference from the engine's book (level counts, then the best `depth` levels of
  // each side); empty when they agree.
  std::string diff(const OrderBook& book, size_t depth) const {
    std::string d = diff_side(book, true, asks_, depth);
    return d.empty() ? diff_side(book, false, bids_, depth) : d;
  }

 private:
  template <typename M>
  static void sub(M& m, Ticks price, Lots by) {
    const auto it = m.find(price);
    it->second -= by;
    if (it->second == 0) m.erase(it);
  }
  // Best first, in LOBSTER prices: engine levels that round to one price are merged.
  template <typename M>
  static void collect(const M& m, bool ask, int levels, int pd,
                      std::vector<std::pair<int64_t, Lots>>& out) {
    out.clear();
    for (const auto& [ticks, lots] : m) {
      const int64_t p = lobster_price(ticks, pd, ask);
      if (!out.empty() && out.back().first == p)
        out.back().second += lots;
      else if (out.size() == static_cast<size_t>(levels))
        break;
      else
        out.emplace_back(p, lots);
    }
  }
  template <typename M>
  static std::string diff_side(const OrderBook& book, bool ask, const M& m, size_t depth) {
    const char* side = ask ? "ask" : "bid";
    if (book.level_count(ask) != m.size())
      return std::string(side) + " levels: engine " + std::to_string(book.level_count(ask)) +
             ", export " + std::to_string(m.size());
    auto it = m.begin();
    for (size_t i = 0; i < m.size() && i < depth; ++i, ++it) {
      const Level& l = book.level(ask, i);
      if (l.price != it->first || l.total != it->second)
        return std::string(side) + " level " + std::to_string(i + 1) + ": engine " +
               std::to_string(l.total) + " @ " + std::to_string(l.price) + ", export " +
               std::to_string(it->second) + " @ " + std::to_string(it->first);
    }
    return {};
  }

  std::unordered_map<OrderIndex, Resting> orders_;
  std::map<Ticks, Lots> asks_;                  // best (lowest) first
  std::map<Ticks, Lots, std::greater<>> bids_;  // best (highest) first
  mutable std::vector<std::pair<int64_t, Lots>> ask_rows_, bid_rows_;
};

// ---- output: a message and an orderbook file per UTC day ----

class DayWriter {
 public:
  DayWriter(std::string dir, int levels) : dir_(std::move(dir)), levels_(levels) {}
  ~DayWriter() { abandon(); }
  DayWriter(const DayWriter&) = delete;
  DayWriter& operator=(const DayWriter&) = delete;

  // Makes the files of the day of `time_ns` current (finishing the previous day's).
  Status at(int64_t time_ns, const std::string& symbol) {
    const int64_t day = floor_div(time_ns, kNsPerDay);
    if (msg_ != nullptr && day == day_) return Status();
    if (Status s = finish(); !s.ok()) return s;
    day_ = day;
    first_ns_ = time_ns - day * kNsPerDay;
    stem_ = dir_ + "/" + symbol + "_" + civil_date(day);
    msg_part_ = stem_ + "_message_" + std::to_string(levels_) + ".csv.part";
    book_part_ = stem_ + "_orderbook_" + std::to_string(levels_) + ".csv.part";
    msg_ = std::fopen(msg_part_.c_str(), "w");
    book_ = msg_ == nullptr ? nullptr : std::fopen(book_part_.c_str(), "w");
    if (book_ == nullptr) {
      const Status s = Status::error("create " + (msg_ == nullptr ? msg_part_ : book_part_) + ": " +
                                     std::strerror(errno));
      abandon();
      return s;
    }
    std::setvbuf(msg_, nullptr, _IOFBF, 1 << 20);
    std::setvbuf(book_, nullptr, _IOFBF, 1 << 20);
    return Status();
  }
  int64_t day_start_ns() const { return day_ * kNsPerDay; }
  void write(int64_t ns_in_day, const std::string& msg, const std::string& book) {
    std::fwrite(msg.data(), 1, msg.size(), msg_);
    std::fwrite(book.data(), 1, book.size(), book_);
    last_ns_ = ns_in_day;
  }
  // Closes the current day's files and gives them their final names.
  Status finish() {
    if (msg_ == nullptr) return Status();
    bool ok = std::ferror(msg_) == 0 && std::ferror(book_) == 0;
    ok = std::fclose(msg_) == 0 && ok;
    ok = std::fclose(book_) == 0 && ok;
    msg_ = book_ = nullptr;
    const std::string range = "_" + std::to_string(first_ns_ / 1'000'000) + "_" +
                              std::to_string(last_ns_ / 1'000'000 + 1);
    const std::string lv = "_" + std::to_string(levels_) + ".csv";
    const std::string msg_path = stem_ + range + "_message" + lv;
    const std::string book_path = stem_ + range + "_orderbook" + lv;
    if (!ok || std::rename(msg_part_.c_str(), msg_path.c_str()) != 0 ||
        std::rename(book_part_.c_str(), book_path.c_str()) != 0) {
      const Status s = Status::error("write " + stem_ + "*: " + std::strerror(errno));
      abandon();
      return s;
    }
    msg_part_.clear();
    book_part_.clear();
    files_.push_back(msg_path);
    files_.push_back(book_path);
    return Status();
  }
  // Drops unfinished files (an export that failed half way leaves no partial day behind).
  void abandon() {
    if (msg_ != nullptr) std::fclose(msg_);
    if (book_ != nullptr) std::fclose(book_);
    msg_ = book_ = nullptr;
    if (!msg_part_.empty()) ::unlink(msg_part_.c_str());
    if (!book_part_.empty()) ::unlink(book_part_.c_str());
    msg_part_.clear();
    book_part_.clear();
  }
  const std::vector<std::string>& files() const { return files_; }

 private:
  std::string dir_;
  int levels_;
  std::FILE* msg_ = nullptr;
  std::FILE* book_ = nullptr;
  int64_t day_ = 0, first_ns_ = 0, last_ns_ = 0;
  std::string stem_, msg_part_, book_part_;
  std::vector<std::string> files_;
};

// ---- the StateUpdates of one market turned into LOBSTER rows ----

class ExportSink final : public UpdateSink {
 public:
  ExportSink(int market, int levels, DayWriter& out) : m_(market), levels_(levels), out_(out) {}

  // The book at the starting point: its orders rest already (no rows of their own).
  void seed(const Engine& e) {
    const Market* mk = e.market(static_cast<MarketId>(m_));
    if (mk == nullptr) return;
    set_params(mk->params);
    for (const bool ask : {false, true}) {
      for (size_t i = 0; i < mk->book.level_count(ask); ++i) {
        for (uint32_t s = mk->book.level(ask, i).head; s != kNoSlot; s = e.orders()[s].next) {
          const Order& o = e.orders()[s];
          if (!book_.add(o.order_index, o.is_ask != 0, o.price, o.remaining))
            fail("order " + std::to_string(o.order_index) + " rests twice in the snapshot");
        }
      }
    }
  }
  void start_tx(int64_t time_ns) {
    time_ns_ = time_ns;
    touched_ = false;
  }
  bool touched() const { return touched_; }
  bool market_seen() const { return have_params_; }
  const BookModel& book() const { return book_; }
  const Status& error() const { return error_; }
  uint64_t messages() const { return messages_; }
  uint64_t clamped() const { return clamped_; }
  void fail(const std::string& why) {
    if (error_.ok()) error_ = Status::error(why);
  }

  void on_update(const StateUpdate& u) override {
    if (!error_.ok()) return;
    switch (u.type) {
      case UpdateType::kMarket:
        if (u.market.market == m_) set_params(u.market.params);
        break;
      case UpdateType::kOrderAdded: {
        const OrderUpdate& o = u.order;
        if (o.market != m_ || o.pending) return;  // a trigger order waits outside the book
        if (!book_.add(o.order_index, o.is_ask != 0, o.price, o.remaining))
          return fail("order " + std::to_string(o.order_index) + " rests twice");
        emit(1, o.order_index, o.remaining, o.price, o.is_ask != 0);
        break;
      }
      case UpdateType::kOrderReduced: {
        const OrderUpdate& o = u.order;
        if (o.market != m_) return;
        const Resting* r = book_.find(o.order_index);
        if (r == nullptr || o.remaining > r->remaining)
          return fail("order " + std::to_string(o.order_index) + " reduced to " +
                      std::to_string(o.remaining) + " lots: not resting with more");
        const Resting was = *r;
        const Lots by = was.remaining - o.remaining;
        if (by == 0) return;  // the trade just before it took these lots (type 4)
        book_.take(o.order_index, by);
        emit(2, o.order_index, by, was.price, was.ask);
        break;
      }
      case UpdateType::kOrderRemoved: {
        const OrderUpdate& o = u.order;
        if (o.market != m_) return;
        const Resting* r = book_.find(o.order_index);
        if (r == nullptr) return;  // a taker that never rested, or a maker its trade emptied
        if (o.reason == RemoveReason::kFilled)
          return fail("order " + std::to_string(o.order_index) + " removed as filled with " +
                      std::to_string(r->remaining) + " lots no trade took");
        const Resting was = *r;
        book_.take(o.order_index, was.remaining);
        emit(3, o.order_index, was.remaining, was.price, was.ask);
        break;
      }
      case UpdateType::kTrade: {
        const TradeUpdate& t = u.trade;
        if (t.market != m_) return;
        // A takeover or deleverage moves a position outside the book: no book event.
        if (t.kind == TradeKind::kTakeover || t.kind == TradeKind::kDeleverage) return;
        const Resting* r = book_.find(t.maker_order);
        if (r == nullptr || r->price != t.price || r->ask == (t.taker_is_ask != 0) ||
            t.size > r->remaining)
          return fail("trade " + std::to_string(t.trade_id) + " against order " +
                      std::to_string(t.maker_order) + " that does not rest with its size");
        const bool ask = r->ask;
        book_.take(t.maker_order, t.size);
        emit(4, t.maker_order, t.size, t.price, ask);
        break;
      }
      default: break;
    }
  }

 private:
  void set_params(const MarketParams& p) {
    have_params_ = true;
    price_decimals_ = p.price_decimals;
    symbol_ = file_symbol(p, m_);
  }
  void emit(int type, OrderIndex id, Lots size, Ticks price, bool ask) {
    if (!have_params_) return fail("an order event before the market exists");
    int64_t t = time_ns_;
    if (t < last_ns_) {  // times never go backwards in the files
      t = last_ns_;
      ++clamped_;
    }
    last_ns_ = t;
    if (Status s = out_.at(t, symbol_); !s.ok()) return fail(s.message());
    const int64_t in_day = t - out_.day_start_ns();
    char buf[160];
    const int n = std::snprintf(buf, sizeof(buf), "%lld.%09lld,%d,%lld,%lld,%lld,%d\n",
                                static_cast<long long>(in_day / kNsPerSecond),
                                static_cast<long long>(in_day % kNsPerSecond), type,
                                static_cast<long long>(id), static_cast<long long>(size),
                                static_cast<long long>(lobster_price(price, price_decimals_, ask)),
                                ask ? -1 : 1);
    msg_.assign(buf, static_cast<size_t>(n));
    row_.clear();
    book_.row(row_, levels_, price_decimals_);
    out_.write(in_day, msg_, row_);
    ++messages_;
    touched_ = true;
  }

  int m_;
  int levels_;
  DayWriter& out_;
  BookModel book_;
  bool have_params_ = false;
  int price_decimals_ = 0;
  std::string symbol_;
  int64_t time_ns_ = 0, last_ns_ = INT64_MIN;
  bool touched_ = false;
  uint64_t messages_ = 0, clamped_ = 0;
  std::string msg_, row_;
  Status error_;
};

// A later snapshot's seq and state hash, from its header alone (checksummed).
bool snapshot_header(const std::string& path, uint64_t& seq, uint64_t& hash) {
  uint8_t h[store::kSnapshotHeaderSize];
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = ::pread(fd, h, sizeof(h), 0);
  ::close(fd);
  uint32_t crc = 0;
  if (n != static_cast<ssize_t>(sizeof(h)) || std::memcmp(h, "TCHYSNAP", 8) != 0) return false;
  std::memcpy(&crc, h + 44, 4);
  if (crc != crc32c(h, 44)) return false;
  std::memcpy(&seq, h + 16, 8);
  std::memcpy(&hash, h + 24, 8);
  return true;
}

std::string seq_str(uint64_t s) { return std::to_string(s); }

// The options checked, and the output directory made.
Status check_options(const ExportOptions& o) {
  std::error_code ec;
  if (!fs::is_directory(o.data_dir, ec)) return Status::error(o.data_dir + " is not a directory");
  if (o.market < 0 || o.market >= kMaxMarkets)
    return Status::error("--market must be 0.." + std::to_string(kMaxMarkets - 1));
  if (o.levels < 1) return Status::error("--levels must be at least 1");
  {  // the export never writes into the data directory, not even a subdirectory
    const fs::path data = fs::canonical(o.data_dir, ec), out = fs::weakly_canonical(o.out_dir, ec);
    if (std::mismatch(data.begin(), data.end(), out.begin(), out.end()).first == data.end())
      return Status::error("--out must not be the data directory or inside it");
  }
  return store::posix_disk().make_dirs(o.out_dir);
}

// The state the replay starts from.
struct Start {
  std::unique_ptr<Engine> engine;
  uint64_t from_seq = 0;  // the last seq it holds (0: genesis)
};

// Genesis when the journal begins at seq 1, else the oldest valid snapshot (`snaps`: oldest
// first) that the journal continues without a hole.
Status find_start(const ExportOptions& o, const store::JournalScan& scan,
                  const std::vector<store::SnapshotInfo>& snaps, Start& start, std::FILE* log) {
  if (scan.first_seq == 1) {
    std::fprintf(log, "export: starting from genesis (empty state): the journal begins at seq 1\n");
    return Status();
  }
  std::string why;
  for (const store::SnapshotInfo& cand : snaps) {
    if (cand.seq + 1 < scan.first_seq) {
      why += "\n  snapshot " + seq_str(cand.seq) + " predates the journal";
      continue;
    }
    if (cand.seq > scan.last_seq) continue;
    auto e = std::make_unique<Engine>(o.engine);
    store::SnapshotInfo info;
    if (Status s = store::load_snapshot(cand.path, *e, info); !s.ok()) {
      why += "\n  " + s.message();
      std::fprintf(log, "export: skipping an invalid snapshot: %s\n", s.message().c_str());
      continue;
    }
    start.engine = std::move(e);
    start.from_seq = info.seq;
    std::fprintf(log, "export: starting from snapshot seq %llu (%s)\n",
                 static_cast<unsigned long long>(start.from_seq), cand.path.c_str());
    return Status();
  }
  return Status::error("journal gap: the journal begins at seq " + seq_str(scan.first_seq) +
                       " and no valid snapshot at seq " + seq_str(scan.first_seq - 1) + ".." +
                       seq_str(scan.last_seq) + " bridges seqs 1.." + seq_str(scan.first_seq - 1) +
                       (why.empty() ? "" : ":" + why));
}

// Every journal tx after the start through the engine, the market's updates into the files. The
// exported book is compared with the engine's after every tx that touched it (its best levels)
// and at each later snapshot (all levels), where the state hash must match too.
struct Replay {
  const ExportOptions& o;
  Engine& engine;
  ExportSink& sink;
  std::map<uint64_t, uint64_t> checkpoints;  // later snapshots: seq -> state hash
  ExportReport& report;
  uint64_t next;  // the seq the next journal tx must have
  Status stop;    // the first failure; the txs after it are skipped

  void on_tx(const Tx& tx) {
    if (!stop.ok()) return;
    if (tx.h.seq != next) {
      stop = Status::error("journal gap: expected seq " + seq_str(next) + ", found " +
                           seq_str(tx.h.seq));
      return;
    }
    sink.start_tx(tx.h.time_ns);
    engine.execute(tx, sink);
    ++next;
    if (!sink.error().ok()) {
      stop = Status::error("at seq " + seq_str(tx.h.seq) + ": " + sink.error().message());
      return;
    }
    const auto cp = checkpoints.find(tx.h.seq);
    const Market* mk = engine.market(static_cast<MarketId>(o.market));
    if (mk != nullptr && (sink.touched() || cp != checkpoints.end())) {
      const std::string d =
          sink.book().diff(mk->book, cp != checkpoints.end() ? kAllLevels : kCheckLevels);
      if (!d.empty()) {
        stop = Status::error("at seq " + seq_str(tx.h.seq) +
                             ": the exported book differs from the engine's: " + d);
        return;
      }
    }
    if (cp != checkpoints.end()) {
      if (engine.state_hash() != cp->second) {
        stop = Status::error(
            "the replay does not reach the state hash of snapshot " + seq_str(cp->first) +
            ": the engine settings (--max-orders, --fee-account, --insurance-account) must "
            "be the server's");
        return;
      }
      ++report.checked_snapshots;
    }
  }
};

}  // namespace

int64_t lobster_price(Ticks ticks, int price_decimals, bool is_ask) {
  if (price_decimals <= 4) return ticks * pow10(4 - price_decimals);
  const int64_t d = pow10(price_decimals - 4);
  return is_ask ? (ticks + d - 1) / d : ticks / d;  // away from the spread
}

Status export_lobster(const ExportOptions& o, ExportReport& report, std::FILE* log) {
  report = ExportReport{};
  if (Status s = check_options(o); !s.ok()) return s;

  // 1. What the journal holds, read only (a torn tail is reported, never truncated).
  store::JournalScan scan;
  if (Status s = store::replay_journal(
          o.data_dir, UINT64_MAX, [](const Tx&) {}, scan, false);
      !s.ok())
    return Status::error("the journal cannot be exported: " + s.message());
  if (scan.records == 0)
    return Status::error("no journal records in " + o.data_dir + ": nothing to export");

  // 2. The starting point: genesis when the journal begins at seq 1, else the oldest valid
  //    snapshot that the journal continues without a hole.
  Start start{std::make_unique<Engine>(o.engine)};
  std::vector<store::SnapshotInfo> snaps = store::list_snapshots(o.data_dir);
  std::reverse(snaps.begin(), snaps.end());  // oldest first
  report.from_genesis = scan.first_seq == 1;
  if (Status s = find_start(o, scan, snaps, start, log); !s.ok()) return s;
  const uint64_t from_seq = start.from_seq;
  report.start_seq = from_seq + 1;
  if (from_seq < scan.last_seq)
    std::fprintf(log, "export: replaying journal seq %llu..%llu for market %d\n",
                 static_cast<unsigned long long>(from_seq + 1),
                 static_cast<unsigned long long>(scan.last_seq), o.market);
  else
    std::fprintf(log, "export: the journal has nothing after seq %llu: no events to export\n",
                 static_cast<unsigned long long>(from_seq));

  // Later snapshots: the replay must reach each one's state hash.
  std::map<uint64_t, uint64_t> checkpoints;  // seq -> state hash
  for (const store::SnapshotInfo& s : snaps) {
    uint64_t seq = 0, hash = 0;
    if (s.seq > from_seq && snapshot_header(s.path, seq, hash) && seq == s.seq)
      checkpoints[seq] = hash;
  }

  // 3. The replay, every tx through the engine, the market's updates into the files.
  Engine& engine = *start.engine;
  DayWriter out(o.out_dir, o.levels);
  ExportSink sink(o.market, o.levels, out);
  sink.seed(engine);
  if (!sink.error().ok()) return sink.error();
  Replay replay{o, engine, sink, std::move(checkpoints), report, from_seq + 1, Status()};
  store::JournalScan scan2;
  const Status rs = store::replay_journal(
      o.data_dir, from_seq, [&](const Tx& tx) { replay.on_tx(tx); }, scan2, /*repair=*/false);
  if (!rs.ok()) return Status::error("the journal cannot be exported: " + rs.message());
  if (!replay.stop.ok()) return replay.stop;
  report.last_seq = replay.next - 1;
  if (scan2.truncated_tail) {
    report.torn_tail = true;
    std::fprintf(log, "export: stopped at a torn tail after seq %llu (left as it is): %s\n",
                 static_cast<unsigned long long>(report.last_seq), scan2.note.c_str());
  }
  const Market* mk = engine.market(static_cast<MarketId>(o.market));
  if (mk == nullptr || !sink.market_seen())
    return Status::error("market " + std::to_string(o.market) + " does not exist at seq " +
                         seq_str(report.last_seq));
  if (const std::string d = sink.book().diff(mk->book, kAllLevels); !d.empty())
    return Status::error("the exported book differs from the engine's at the end: " + d);
  if (Status s = out.finish(); !s.ok()) return s;
  report.messages = sink.messages();
  report.clamped_times = sink.clamped();
  report.files = out.files();
  if (report.clamped_times != 0)
    std::fprintf(log, "export: %llu rows had a time before the previous row's; clamped to it\n",
                 static_cast<unsigned long long>(report.clamped_times));
  std::fprintf(log,
               "export: %llu messages for market %d, seq %llu..%llu, %zu files in %s; "
               "state hash matched at %llu later snapshots\n",
               static_cast<unsigned long long>(report.messages), o.market,
               static_cast<unsigned long long>(report.start_seq),
               static_cast<unsigned long long>(report.last_seq), report.files.size(),
               o.out_dir.c_str(), static_cast<unsigned long long>(report.checked_snapshots));
  return Status();
}

}  // namespace tachyon::app
