#pragma once
// `tachyon-cli export`: one market's order-level history, replayed from the data directory
// (snapshot + journal, read only), written as LOBSTER files (tests/data/lobster/SOURCES.md):
//
//   <SYMBOL>_<YYYY-MM-DD>_<start ms>_<end ms>_message_<L>.csv    Time,Type,OrderID,Size,Price,Dir
//   <SYMBOL>_<YYYY-MM-DD>_<start ms>_<end ms>_orderbook_<L>.csv  the book after each message
//
// one pair per UTC day (LOBSTER's file per trading day), start/end being the first event's
// millisecond after midnight and one past the last one's (LOBSTER names carry milliseconds).
//
// Messages, from the engine's StateUpdates of the market:
//   1  an order rests (kOrderAdded; also a modified order coming back to the book)
//   2  a resting order shrinks in place without a trade (modify to a smaller size, self-trade
//      decrement); size = lots removed
//   3  a resting order leaves the book for any reason but a fill (cancel, cancel-all, expiry,
//      self-trade, reduce-only, a modify that loses priority); size = lots it still had
//   4  a trade against a resting order; size = lots traded, price = trade price. A maker that is
//      filled completely has no row of type 3 after it.
// Takers that never rest produce only the type 4 rows of their makers. OrderID = the engine's
// order index; Direction = side of the resting order (1 buy, -1 sell). Time = seconds after UTC
// midnight of the tx's sequencer time, 9 decimals; a time that goes backwards (a clock step
// between restarts) is clamped to the previous row's time and counted.
// Prices are LOBSTER's dollars x 10^4: ticks x 10^(4 - price_decimals), or with more than 4
// decimals ticks / 10^(price_decimals - 4) rounded away from the spread (bids down, asks up: the
// book never looks crossed); engine levels that round to the same price are one level in the
// orderbook file. Every event of the market is written (not only those within the top L levels,
// unlike LOBSTER's level-L files), so the message file alone rebuilds the whole book.
//
// Start: from genesis when the journal still begins at seq 1, else from the oldest valid snapshot
// the journal continues (the files then start from that snapshot's book, whose orders have no
// type 1 row; seed a replay from the first orderbook row, as with LOBSTER's own files). A journal
// with a hole is refused. A torn tail is not repaired: the export stops before it. While
// replaying, the exported book is compared with the engine's after every tx of the market, and
// the state hash with every later snapshot (it catches engine settings that differ from the
// server's).
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tachyon/core/status.hpp"
#include "tachyon/engine/engine.hpp"

namespace tachyon::app {

struct ExportOptions {
  std::string data_dir;
  int market = 0;
  std::string out_dir;
  int levels = 10;
  EngineConfig engine;  // must match the server's [engine] section (the defaults are its defaults)
};

struct ExportReport {
  bool from_genesis = false;
  uint64_t start_seq = 0;  // the first journal seq replayed
  uint64_t last_seq = 0;   // the last one
  uint64_t messages = 0;   // rows written, all days
  uint64_t clamped_times = 0;
  uint64_t checked_snapshots = 0;  // later snapshots whose state hash the replay matched
  bool torn_tail = false;
  std::vector<std::string> files;  // written, message and orderbook file of each day
};

// Writes the files into out_dir (created if missing); progress and notes go to `log`.
Status export_lobster(const ExportOptions& o, ExportReport& report, std::FILE* log);

// LOBSTER price of an engine price on a side (see above).
int64_t lobster_price(Ticks ticks, int price_decimals, bool is_ask);

}  // namespace tachyon::app
