#include "report.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "svg_plot.hpp"
#include "tachyon/api/json_writer.hpp"

namespace tachyon::load {

namespace {

constexpr double kQs[] = {0.5, 0.9, 0.99, 0.999, 1.0};
constexpr const char* kQNames[] = {"p50", "p90", "p99", "p99_9", "max"};

double us(uint64_t ns) { return double(ns) / 1000.0; }

void row(std::string& out, const char* name, const tachyon::HistogramSnapshot& h) {
  char line[256];
  if (h.count == 0) {
    std::snprintf(line, sizeof line, "  %-34s %10s\n", name, "(none)");
  } else {
    std::snprintf(line, sizeof line, "  %-34s %10" PRIu64 " %9.1f %9.1f %9.1f %9.1f %9.1f\n", name,
                  h.count, us(h.quantile(0.5)), us(h.quantile(0.9)), us(h.quantile(0.99)),
                  us(h.quantile(0.999)), us(h.max));
  }
  out += line;
}

void hist_json(api::JsonWriter& w, const char* name, const tachyon::HistogramSnapshot& h) {
  w.key(name).obj().kv_i("count", static_cast<int64_t>(h.count));
  for (size_t i = 0; i < std::size(kQs); ++i) {
    const uint64_t v = kQs[i] >= 1.0 ? h.max : h.quantile(kQs[i]);
    w.kv_i((std::string(kQNames[i]) + "_us").c_str(), static_cast<int64_t>(v / 1000));
  }
  w.end_obj();
}

double achieved(const RunResult& r) {
  return r.seconds > 0 ? double(r.acked_ok + r.rejected) / r.seconds : 0;
}

uint64_t answered(const RunResult& r) { return r.acked_ok + r.rejected; }

double per_tx(double v, uint64_t txs) { return txs == 0 ? 0 : v / double(txs); }
__int128 hundredths(double v) { return static_cast<__int128>(std::llround(v * 100)); }

// The server's context switches and CPU per answered tx, in all and thread by thread (busiest
// first).
std::string cost_table(const ServerCost& c, uint64_t txs) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line,
                "\n  server pid %d: %.2f context switches (%.2f preempted) and %.0f us CPU per "
                "answered tx\n  %-34s %10s %10s %9s\n",
                int(c.pid), per_tx(double(c.process.switches), txs),
                per_tx(double(c.process.involuntary), txs), per_tx(c.process.cpu_s * 1e6, txs),
                "thread", "switches", "preempted", "cpu us");
  out += line;
  std::vector<std::pair<std::string, ThreadCost>> rows(c.threads.begin(), c.threads.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.cpu_s > b.second.cpu_s; });
  for (const auto& [name, t] : rows) {
    if (t.switches == 0 && t.cpu_s == 0) continue;
    std::snprintf(line, sizeof line, "  %-34s %10.2f %10.2f %9.1f\n", name.c_str(),
                  per_tx(double(t.switches), txs), per_tx(double(t.involuntary), txs),
                  per_tx(t.cpu_s * 1e6, txs));
    out += line;
  }
  return out;
}

// The floors of this run and the run against them: ack p50 against 2 x (ping + verify +
// fdatasync), and the server's switches and CPU per tx against its cost per ping and the verify.
std::string floors_table(const Floors& f, const RunResult& r, const std::optional<ServerCost>& c) {
  std::string out;
  char line[320];
  out += "\n  floors, measured before the load      count       p50       p99\n";
  auto frow = [&](const char* name, const tachyon::HistogramSnapshot& h) {
    if (h.count == 0) return;
    std::snprintf(line, sizeof line, "  %-34s %9" PRIu64 " %9.1f %9.1f\n", name, h.count,
                  us(h.quantile(0.5)), us(h.quantile(0.99)));
    out += line;
  };
  frow("ws ping -> pong (no tx)", f.ping);
  std::snprintf(line, sizeof line, "  %-34s %9d %9.1f\n", "Ed25519 verify of one tx (libsodium)",
                2000, f.verify_ns / 1000);
  out += line;
  std::snprintf(line, sizeof line, "  %-34s %9d %9.1f\n", "  the server's, key tables built", 2000,
                f.verify_tables_ns / 1000);
  out += line;
  frow("write 200 B + fdatasync", f.fdatasync);
  if (f.fdatasync.count > 0) {
    std::snprintf(line, sizeof line, "  %-34s %9s %9.2f\n", "  its context switches", "",
                  f.fdatasync_switches);
    out += line;
  }
  const double ping = us(f.ping.quantile(0.5)), sync = us(f.fdatasync.quantile(0.5));
  const double verify = f.verify_ns / 1000, ack = us(r.ack.quantile(0.5));
  if (f.ping.count > 0 && r.ack.count > 0) {
    const double floor = ping + verify + sync;
    std::snprintf(line, sizeof line,
                  "  ack p50 %.0f us = %.2f x (ping + verify + fdatasync = %.0f us)\n", ack,
                  ack / floor, floor);
    out += line;
  }
  if (c && f.ping_cost && f.ping.count > 0) {
    const uint64_t txs = answered(r);
    const double pings = double(f.ping.count);
    std::snprintf(line, sizeof line,
                  "  server per tx: %.2f switches, %.0f us CPU (verify + %.0f); per ping: %.2f "
                  "switches, %.0f us CPU\n",
                  per_tx(double(c->process.switches), txs), per_tx(c->process.cpu_s * 1e6, txs),
                  per_tx(c->process.cpu_s * 1e6, txs) - verify,
                  double(f.ping_cost->process.switches) / pings,
                  f.ping_cost->process.cpu_s * 1e6 / pings);
    out += line;
  }
  if (c && c->signature_checks > 0) {
    const uint64_t txs = answered(r);
    const double checks_cpu = per_tx(c->signature_cpu_s * 1e6, txs);
    std::snprintf(line, sizeof line,
                  "  signature checks per tx: %.2f at %.0f us CPU each in the server; its CPU per "
                  "tx = checks %.0f + the rest %.0f us\n",
                  per_tx(c->signature_checks, txs), c->signature_cpu_s * 1e6 / c->signature_checks,
                  checks_cpu, per_tx(c->process.cpu_s * 1e6, txs) - checks_cpu);
    out += line;
  }
  if (c && c->group_commits >= 0 && f.fdatasync.count > 0) {
    const double commits = per_tx(double(c->group_commits), answered(r));
    std::snprintf(line, sizeof line,
                  "  group commits per tx: %.2f; at the floor's %.2f switches per fdatasync, the "
                  "disk's waits are %.2f switches per tx\n",
                  commits, f.fdatasync_switches, commits * f.fdatasync_switches);
    out += line;
  }
  return out;
}

void floors_json(api::JsonWriter& w, const Floors& f) {
  w.key("floors").obj();
  hist_json(w, "ping", f.ping);
  w.kv_i("verify_ns", static_cast<int64_t>(f.verify_ns));
  w.kv_i("verify_tables_ns", static_cast<int64_t>(f.verify_tables_ns));
  hist_json(w, "fdatasync", f.fdatasync);
  w.key("fdatasync_switches").dec_num(hundredths(f.fdatasync_switches), 2);
  if (f.ping_cost && f.ping.count > 0) {
    const double pings = double(f.ping.count);
    w.key("server_switches_per_ping")
        .dec_num(hundredths(double(f.ping_cost->process.switches) / pings), 2);
    w.key("server_cpu_us_per_ping")
        .dec_num(hundredths(f.ping_cost->process.cpu_s * 1e6 / pings), 2);
  }
  w.end_obj();
}

void cost_json(api::JsonWriter& w, const ServerCost& c, uint64_t txs) {
  w.key("server_cost").obj().kv_i("pid", c.pid);
  w.key("switches_per_tx").dec_num(hundredths(per_tx(double(c.process.switches), txs)), 2);
  w.key("preempted_per_tx").dec_num(hundredths(per_tx(double(c.process.involuntary), txs)), 2);
  if (c.group_commits >= 0)
    w.key("group_commits_per_tx").dec_num(hundredths(per_tx(double(c.group_commits), txs)), 2);
  w.key("cpu_us_per_tx").dec_num(hundredths(per_tx(c.process.cpu_s * 1e6, txs)), 2);
  if (c.signature_checks >= 0) {
    w.key("signature_checks_per_tx").dec_num(hundredths(per_tx(c.signature_checks, txs)), 2);
    w.key("signature_cpu_us_per_tx").dec_num(hundredths(per_tx(c.signature_cpu_s * 1e6, txs)), 2);
  }
  w.key("threads").obj();
  for (const auto& [name, t] : c.threads) {
    w.key(name)
        .obj()
        .key("switches_per_tx")
        .dec_num(hundredths(per_tx(double(t.switches), txs)), 2);
    w.key("preempted_per_tx").dec_num(hundredths(per_tx(double(t.involuntary), txs)), 2);
    w.key("cpu_us_per_tx").dec_num(hundredths(per_tx(t.cpu_s * 1e6, txs)), 2).end_obj();
  }
  w.end_obj().end_obj();
}

}  // namespace

std::string report_table(const ReportMeta& m, const RunResult& r) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line,
                "tachyon-load: scenario %s against %s\n"
                "  %u traders on %u sending connections, %u subscriber connections\n"
                "  offered %.0f tx/s for %.1f s (%zu txs planned)\n"
                "  sent %" PRIu64 ", accepted %" PRIu64 ", rejected %" PRIu64
                ", unanswered %" PRIu64 ", sent >1 ms late %" PRIu64
                "\n"
                "  achieved %.0f tx/s (replies per second of the run)\n",
                m.scenario.c_str(), m.server.c_str(), m.traders, m.connections, m.subscribers,
                m.offered_rate, r.seconds, m.planned, r.sent, r.acked_ok, r.rejected, r.unanswered,
                r.late_sends, achieved(r));
  out += line;
  std::snprintf(line, sizeof line, "\n  %-34s %10s %9s %9s %9s %9s %9s\n", "latency (us)", "count",
                "p50", "p90", "p99", "p99.9", "max");
  out += line;
  row(out, "ack (due -> reply)", r.ack);
  row(out, "ack service (sent -> reply)", r.service);
  row(out, "fill (due -> fill push)", r.fill);
  for (int c = 0; c < kFreshCount; ++c) {
    row(out, (std::string("fresh engine->client ") + kFreshNames[c]).c_str(), r.fresh_engine[c]);
    row(out, (std::string("fresh api->client ") + kFreshNames[c]).c_str(), r.fresh_api[c]);
  }
  if (!r.rejects.empty()) {
    out += "\n  rejects by code:";
    for (const auto& [code, n] : r.rejects) {
      std::snprintf(line, sizeof line, " %d x%" PRIu64, code, n);
      out += line;
    }
    out += "\n";
  }
  if (r.protocol_errors > 0) {
    std::snprintf(line, sizeof line, "  protocol errors: %" PRIu64 "\n", r.protocol_errors);
    out += line;
  }
  if (m.cost) out += cost_table(*m.cost, answered(r));
  if (m.floors) out += floors_table(*m.floors, r, m.cost);
  return out;
}

std::string report_json(const ReportMeta& m, const RunResult& r) {
  std::string s;
  api::JsonWriter w(s);
  w.obj().kv_s("scenario", m.scenario).kv_s("server", m.server);
  w.kv_i("traders", m.traders).kv_i("connections", m.connections);
  w.kv_i("subscribers", m.subscribers).kv_i("planned", static_cast<int64_t>(m.planned));
  w.kv_i("offered_tps", static_cast<int64_t>(m.offered_rate));
  w.kv_i("achieved_tps", static_cast<int64_t>(achieved(r)));
  w.kv_i("duration_ms", static_cast<int64_t>(r.seconds * 1000));
  w.kv_i("sent", static_cast<int64_t>(r.sent)).kv_i("accepted", static_cast<int64_t>(r.acked_ok));
  w.kv_i("rejected", static_cast<int64_t>(r.rejected));
  w.kv_i("unanswered", static_cast<int64_t>(r.unanswered));
  w.kv_i("late_sends", static_cast<int64_t>(r.late_sends));
  w.kv_i("protocol_errors", static_cast<int64_t>(r.protocol_errors));
  w.key("rejects_by_code").obj();
  for (const auto& [code, n] : r.rejects) w.kv_i(std::to_string(code).c_str(), int64_t(n));
  w.end_obj();
  hist_json(w, "ack", r.ack);
  hist_json(w, "ack_service", r.service);
  hist_json(w, "fill", r.fill);
  w.key("freshness").obj();
  for (int c = 0; c < kFreshCount; ++c) {
    w.key(kFreshNames[c]).obj();
    hist_json(w, "engine_to_client", r.fresh_engine[c]);
    hist_json(w, "api_to_client", r.fresh_api[c]);
    w.end_obj();
  }
  w.end_obj();
  w.key("per_second").arr();
  for (size_t i = 0; i < r.ack_per_second.size(); ++i) {
    const auto& h = r.ack_per_second[i];
    w.obj().kv_i("second", static_cast<int64_t>(i));
    w.kv_i("replies", static_cast<int64_t>(r.acks_per_second[i]));
    w.kv_i("ack_p50_us", static_cast<int64_t>(h.quantile(0.5) / 1000));
    w.kv_i("ack_p99_us", static_cast<int64_t>(h.quantile(0.99) / 1000));
    w.kv_i("ack_max_us", static_cast<int64_t>(h.max / 1000)).end_obj();
  }
  w.end_arr();
  if (m.cost) cost_json(w, *m.cost, answered(r));
  if (m.floors) floors_json(w, *m.floors);
  w.end_obj();
  s += '\n';
  return s;
}

std::string write_report(const std::string& dir, const ReportMeta& m, const RunResult& r) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return "cannot create " + dir + ": " + ec.message();
  auto put = [&](const std::string& name, const std::string& body) {
    std::ofstream f(dir + "/" + name, std::ios::binary | std::ios::trunc);
    f << body;
    return static_cast<bool>(f);
  };
  Line p50{"ack p50", {}, {}}, p99{"ack p99", {}, {}}, mx{"ack max", {}, {}};
  Line rate{"replies/s", {}, {}};
  for (size_t i = 0; i < r.ack_per_second.size(); ++i) {
    const auto& h = r.ack_per_second[i];
    if (h.count == 0) continue;
    const double x = double(i) + 0.5;
    p50.x.push_back(x);
    p50.y.push_back(us(h.quantile(0.5)));
    p99.x.push_back(x);
    p99.y.push_back(us(h.quantile(0.99)));
    mx.x.push_back(x);
    mx.y.push_back(us(h.max));
  }
  for (size_t i = 0; i < r.acks_per_second.size(); ++i) {
    rate.x.push_back(double(i) + 0.5);
    rate.y.push_back(double(r.acks_per_second[i]));
  }
  PlotOptions over;
  over.title = "ack latency over time (due -> reply), " + m.scenario;
  over.x_label = "seconds into the run";
  over.y_label = "microseconds";
  over.log_y = true;
  PlotOptions thr;
  thr.title = "replies per second, " + m.scenario;
  thr.x_label = "seconds into the run";
  thr.y_label = "replies";
  PlotOptions pct;
  pct.title = "latency percentiles, " + m.scenario;
  pct.y_label = "microseconds";
  PlotOptions fr = pct;
  fr.title = "freshness percentiles (engine -> client), " + m.scenario;
  std::vector<std::pair<std::string, tachyon::HistogramSnapshot>> lat = {
      {"ack (due -> reply)", r.ack},
      {"ack service (sent -> reply)", r.service},
      {"fill (due -> fill push)", r.fill}};
  std::vector<std::pair<std::string, tachyon::HistogramSnapshot>> fresh;
  for (int c = 0; c < kFreshCount; ++c) {
    fresh.emplace_back(std::string("engine -> client ") + kFreshNames[c], r.fresh_engine[c]);
    fresh.emplace_back(std::string("api -> client ") + kFreshNames[c], r.fresh_api[c]);
  }
  const bool ok = put("report.txt", report_table(m, r)) && put("report.json", report_json(m, r)) &&
                  put("ack_over_time.svg", svg_lines({p50, p99, mx}, over)) &&
                  put("throughput.svg", svg_lines({rate}, thr)) &&
                  put("latency_percentiles.svg", svg_percentiles(lat, pct)) &&
                  put("freshness_percentiles.svg", svg_percentiles(fresh, fr));
  return ok ? "" : "cannot write the report into " + dir;
}

}  // namespace tachyon::load
