#include "tachyon/obs/metrics.hpp"

#include <cinttypes>
#include <cstdio>
#include <map>

namespace tachyon::obs {

const std::vector<double>& time_bounds_s() {
  static const std::vector<double> b = [] {
    std::vector<double> v;
    for (double decade = 1e-6; decade < 10.5; decade *= 10) {
      for (double m : {1.0, 2.0, 5.0}) {
        if (decade * m <= 10.0 + 1e-9) v.push_back(decade * m);
      }
    }
    return v;
  }();
  return b;
}

Registry::Entry& Registry::add(Kind k, std::string name, std::string help, std::string labels) {
  Entry& e = entries_.emplace_back();
  e.kind = k;
  e.name = std::move(name);
  e.help = std::move(help);
  e.labels = std::move(labels);
  return e;
}

Counter& Registry::counter(std::string name, std::string help, std::string labels) {
  std::lock_guard g(mu_);
  Entry& e = add(Kind::kCounter, std::move(name), std::move(help), std::move(labels));
  e.counter = &counters_.emplace_back();
  return *e.counter;
}

Gauge& Registry::gauge(std::string name, std::string help, std::string labels) {
  std::lock_guard g(mu_);
  Entry& e = add(Kind::kGauge, std::move(name), std::move(help), std::move(labels));
  e.gauge = &gauges_.emplace_back();
  return *e.gauge;
}

void Registry::gauge_fn(std::string name, std::string help, std::string labels,
                        std::function<double()> f) {
  std::lock_guard g(mu_);
  add(Kind::kGaugeFn, std::move(name), std::move(help), std::move(labels)).fn = std::move(f);
}

void Registry::counter_fn(std::string name, std::string help, std::string labels,
                          std::function<double()> f) {
  std::lock_guard g(mu_);
  add(Kind::kCounterFn, std::move(name), std::move(help), std::move(labels)).fn = std::move(f);
}

ShardedHistogram& Registry::histogram(std::string name, std::string help, std::string labels,
                                      size_t shards, Unit unit) {
  std::lock_guard g(mu_);
  Entry& e = add(Kind::kHistogram, std::move(name), std::move(help), std::move(labels));
  e.unit = unit;
  e.hist = hists_.emplace_back(std::make_unique<ShardedHistogram>(shards)).get();
  return *e.hist;
}

namespace {

void append_num(std::string& out, double v) {
  char buf[48];
  const int n = std::snprintf(buf, sizeof buf, "%.9g", v);
  out.append(buf, static_cast<size_t>(n));
}
void append_u(std::string& out, uint64_t v) {
  char buf[24];
  const int n = std::snprintf(buf, sizeof buf, "%" PRIu64, v);
  out.append(buf, static_cast<size_t>(n));
}
void series(std::string& out, const std::string& name, std::string_view suffix,
            const std::string& labels, std::string_view extra = {}) {
  out += name;
  out += suffix;
  if (!labels.empty() || !extra.empty()) {
    out += '{';
    out += labels;
    if (!labels.empty() && !extra.empty()) out += ',';
    out += extra;
    out += '}';
  }
  out += ' ';
}
std::string full_name(const std::string& name, Unit unit, bool is_counter, bool is_hist) {
  std::string n = name;
  if (is_hist && unit == Unit::kSeconds) n += "_seconds";
  if (is_hist && unit == Unit::kBytes) n += "_bytes";
  if (is_counter) n += "_total";
  return n;
}

}  // namespace

std::string Registry::prometheus() const {
  std::lock_guard g(mu_);
  // Families in registration order of their first member.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Entry*>> fam;
  for (const Entry& e : entries_) {
    const bool counter = e.kind == Kind::kCounter || e.kind == Kind::kCounterFn;
    const std::string n = full_name(e.name, e.unit, counter, e.kind == Kind::kHistogram);
    auto [it, fresh] = fam.try_emplace(n);
    if (fresh) order.push_back(n);
    it->second.push_back(&e);
  }
  std::string out;
  out.reserve(64 * 1024);
  for (const std::string& n : order) {
    const auto& members = fam[n];
    const Entry& first = *members.front();
    out += "# HELP " + n + " " + first.help + "\n";
    out += "# TYPE " + n + " ";
    out += first.kind == Kind::kCounter || first.kind == Kind::kCounterFn ? "counter"
           : first.kind == Kind::kHistogram                               ? "histogram"
                                                                          : "gauge";
    out += '\n';
    for (const Entry* e : members) {
      switch (e->kind) {
        case Kind::kCounter:
          series(out, n, "", e->labels);
          append_u(out, e->counter->value());
          out += '\n';
          break;
        case Kind::kGauge:
          series(out, n, "", e->labels);
          append_num(out, double(e->gauge->value()));
          out += '\n';
          break;
        case Kind::kGaugeFn:
        case Kind::kCounterFn:
          series(out, n, "", e->labels);
          append_num(out, e->fn());
          out += '\n';
          break;
        case Kind::kHistogram: {
          const HistogramSnapshot s = e->hist->snapshot();
          uint64_t total = 0;
          for (uint64_t c : s.counts) total += c;
          const double scale = e->unit == Unit::kSeconds ? 1e-9 : 1.0;
          std::vector<double> bounds;
          if (e->unit == Unit::kSeconds) {
            bounds = time_bounds_s();
          } else {
            for (double b = 1; b <= 1e9; b *= 4) bounds.push_back(b);
          }
          for (double b : bounds) {
            std::string le = "le=\"";
            append_num(le, b);
            le += '"';
            series(out, n, "_bucket", e->labels, le);
            append_u(out, s.count_at_most(static_cast<uint64_t>(b / scale + 0.5)));
            out += '\n';
          }
          series(out, n, "_bucket", e->labels, "le=\"+Inf\"");
          append_u(out, total);
          out += '\n';
          series(out, n, "_sum", e->labels);
          append_num(out, double(s.sum) * scale);
          out += '\n';
          series(out, n, "_count", e->labels);
          append_u(out, total);
          out += '\n';
          break;
        }
      }
    }
  }
  return out;
}

std::vector<std::pair<std::string, HistogramSnapshot>> Registry::histograms() const {
  std::lock_guard g(mu_);
  std::vector<std::pair<std::string, HistogramSnapshot>> out;
  for (const Entry& e : entries_) {
    if (e.kind != Kind::kHistogram) continue;
    std::string n = full_name(e.name, e.unit, false, true);
    if (!e.labels.empty()) n += "{" + e.labels + "}";
    out.emplace_back(std::move(n), e.hist->snapshot());
  }
  return out;
}

std::string Registry::table() const {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-72s %10s %9s %9s %9s %9s %9s %9s\n",
                "histogram (us for times)", "count", "p50", "p90", "p99", "p99.9", "p99.99", "max");
  out += line;
  for (const auto& [name, s] : histograms()) {
    if (s.count == 0) continue;
    const bool time = name.find("_seconds") != std::string::npos;
    auto f = [&](uint64_t v) { return time ? double(v) / 1000.0 : double(v); };
    std::snprintf(line, sizeof line, "%-72s %10" PRIu64 " %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n",
                  name.c_str(), s.count, f(s.quantile(0.5)), f(s.quantile(0.9)),
                  f(s.quantile(0.99)), f(s.quantile(0.999)), f(s.quantile(0.9999)), f(s.max));
    out += line;
  }
  return out;
}

}  // namespace tachyon::obs
