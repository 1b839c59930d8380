#pragma once
// Runs a plan against the server over real WebSocket connections on loopback, open loop: each tx
// goes out when it is due, whatever happened to the ones before (no coordinated omission: its
// latency counts from when it was due, so a stalled server or a late sender shows up in full).
// Measures, on the generator's single thread:
//   ack       due -> the jsonapi/sendtx reply (also send -> reply, the service time alone)
//   fill      due -> the first account_all_trades push naming the taker's order
//   freshness engine_ts_us -> arrival and sent_ts_us -> arrival of every update pushed to the
//             subscriber connections, per channel (order_book, trade, account_all)
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "plan.hpp"
#include "tachyon/core/histogram.hpp"

namespace tachyon::load {

struct RunConfig {
  std::string host = "127.0.0.1";
  int port = 8080;
  // Where the connections go, in turn (e.g. a cluster's replicas); empty: host:port.
  std::vector<std::pair<std::string, int>> targets;
  unsigned connections = 4;   // sending connections (a trader always uses the same one)
  unsigned subscribers = 10;  // connections on order_book/trade/account_all
  MarketId market = 0;
  uint32_t chain_id = 304;  // of the auth tokens private channels take
  double drain_s = 5;       // after the last send, wait this long for the last replies
};

enum FreshChan { kFreshBook, kFreshTrade, kFreshAccount, kFreshCount };
inline const char* const kFreshNames[] = {"order_book", "trade", "account_all"};

struct RunResult {
  double seconds = 0;  // first due -> last reply
  uint64_t sent = 0, acked_ok = 0, rejected = 0, unanswered = 0, late_sends = 0;
  uint64_t frames_received = 0, protocol_errors = 0;
  std::map<int, uint64_t> rejects;  // by code
  tachyon::HistogramSnapshot ack, service, fill;
  tachyon::HistogramSnapshot fresh_engine[kFreshCount], fresh_api[kFreshCount];
  // Per second of the run (by due time): replies and the ack latency of that second.
  std::vector<uint64_t> acks_per_second;
  std::vector<tachyon::HistogramSnapshot> ack_per_second;
  std::string error;  // set when the run could not start (connect failed...)
};

RunResult run_plan(const RunConfig& cfg, const std::vector<Planned>& plan,
                   const std::vector<Trader>& traders);

}  // namespace tachyon::load
