#pragma once
// tachyon-load's report: a table for people, JSON for machines, and SVG plots (ack latency over
// time, percentile distributions of ack, fill and freshness) so a person can look, not read.
#include <optional>
#include <string>

#include "floors.hpp"
#include "runner.hpp"
#include "server_stats.hpp"

namespace tachyon::load {

struct ReportMeta {
  std::string scenario;
  double offered_rate = 0;  // txs/s asked for (0: the replay's own pace)
  size_t planned = 0;
  unsigned traders = 0, connections = 0, subscribers = 0;
  std::string server;
  std::optional<ServerCost> cost;  // what the run cost a local server (--server-pid)
  std::optional<Floors> floors;    // measured before the load (floors.hpp)
};

std::string report_table(const ReportMeta& m, const RunResult& r);
std::string report_json(const ReportMeta& m, const RunResult& r);
// Writes report.txt, report.json, ack_over_time.svg, latency_percentiles.svg and
// freshness_percentiles.svg into `dir` (created). Returns "" or what failed.
std::string write_report(const std::string& dir, const ReportMeta& m, const RunResult& r);

}  // namespace tachyon::load
