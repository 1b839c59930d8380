#pragma once
// tachyon-cli watch: many Lighter-compatible nodes at once (tachyon nodes, or any server speaking
// the same REST API). Each round reads every node's best bid and ask, last trade and applied seq,
// concurrently, one kept-alive connection per node, parsed with simdjson; prints per node the
// best bid/ask, spread, last trade, REST round trip, WebSocket freshness (the age of its
// order_book updates on arrival) and applied seq (with the lag behind the most advanced node), and
// the consolidated best bid and ask across nodes with the node holding each. `--bench` measures
// instead what the three levers give: sequential against concurrent fetches, a new connection per
// request against a kept one, simdjson against Boost.JSON.
#include <string>
#include <vector>

namespace tachyon::app {

struct WatchOptions {
  std::vector<std::string> nodes;  // host:port of each node's public listener
  int market = 0;
  int interval_ms = 1000;
  int rounds = 0;        // rounds to print; 0: until interrupted
  int bench_rounds = 0;  // > 0: measure the levers over this many rounds of every node's book
  int book_rows = 100;   // orders a side each book read asks for (the bench's JSON size)
};

int watch_cmd(const WatchOptions& o);

}  // namespace tachyon::app
