#include "svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string_view>

namespace tachyon::load {
namespace {

// Tableau 10: ten colours that stay apart on white and for the common colour-vision deficiencies.
constexpr std::string_view kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                         "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr size_t kColours = std::size(kPalette);
// Past ten lines the colours repeat; each repeat gets its own dash pattern to stay distinct.
constexpr std::string_view kDashes[] = {"", "7 3", "2 2", "8 3 2 3"};

// Data beyond this magnitude is skipped like NaN: the axis arithmetic (hi - lo, a tick step)
// would overflow to infinity.
constexpr double kHuge = 1e300;

constexpr int kNines = 5;  // the percentile axis ends at 99.999%
constexpr int kPercentileSamples = 200;

constexpr double kFontPx = 12;
constexpr double kCharPx = 0.6 * kFontPx;  // a sans-serif character's average advance, roughly
constexpr double kLegendRowPx = 18;

// All text goes through here: names come from the command line and metric labels.
std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids these control characters outright (even as references); a '?' keeps
        // the document parseable.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') c = '?';
        out += c;
    }
  }
  return out;
}

// Estimated rendered width, for sizing margins and the legend box (no font metrics here).
double text_px(std::string_view s) {
  size_t chars = 0;
  for (char c : s) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // UTF-8 code points
  return double(chars) * kCharPx;
}

// A label: %g's compactness ("0.2", "1e+06"), with enough digits to tell ticks apart.
std::string num(double v, int digits = 6) {
  if (v == 0) v = 0;  // no "-0"
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// A pixel coordinate. A tenth of a pixel is below what renderers show, and keeps the long
// polylines of a long run short.
void px(std::string& out, double v) {
  v = std::isfinite(v) ? std::round(v * 10) / 10 : 0;
  if (v == 0) v = 0;
  char buf[40];
  const int n = std::snprintf(buf, sizeof buf, "%.7g", v);
  out.append(buf, static_cast<size_t>(n));
}

struct Tick {
  double at;  // plotted units
  std::string label;
};

struct Axis {
  double lo = 0, hi = 1;  // plotted units: the value, or its log10 on a log axis
  std::vector<Tick> major;
  std::vector<double> minor;  // grid only, no label
};

// The 1-2-5 step that splits `span` into at most about `target` intervals.
double nice_step(double span, int target) {
  const double raw = span / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

// A linear axis covering [lo, hi], widened to whole steps so it starts and ends on a label.
Axis linear_axis(double lo, double hi) {
  if (!(hi > lo)) {  // one value: centre it
    const double d = lo != 0 ? std::abs(lo) * 0.1 : 1.0;
    lo -= d;
    hi += d;
  }
  Axis ax;
  const double step = nice_step(hi - lo, 6);
  const double a = std::floor(lo / step + 1e-9), b = std::ceil(hi / step - 1e-9);
  if (!(step > 0) || !std::isfinite(a) || !std::isfinite(b) || !(b > a) || b - a > 100) {
    // Only denormal-sized spans get here: plain ends, no steps.
    ax.lo = hi > lo ? lo : -1;
    ax.hi = hi > lo ? hi : 1;
    ax.major = {{ax.lo, num(ax.lo)}, {ax.hi, num(ax.hi)}};
    return ax;
  }
  ax.lo = a * step;
  ax.hi = b * step;
  // Far from zero six digits are not enough: 1000000 and 1000000.5 would both read "1e+06".
  const double far = std::max(std::abs(ax.lo), std::abs(ax.hi));
  const int digits = std::clamp(static_cast<int>(std::ceil(std::log10(far / step))) + 1, 6, 17);
  const int n = static_cast<int>(b - a);
  for (int k = 0; k <= n; ++k) {
    double v = (a + k) * step;
    if (std::abs(v) < step * 1e-6) v = 0;  // not 1.4e-17
    ax.major.push_back({v, num(v, digits)});
  }
  return ax;
}

// A log10 axis over the positive values [lo, hi]: whole decades, labelled with powers of ten.
Axis log_axis(double lo, double hi) {
  double a = std::floor(std::log10(lo) + 1e-9), b = std::ceil(std::log10(hi) - 1e-9);
  if (b <= a) b = a + 1;
  // At most about eight labels; a wider range labels every second (third...) decade.
  const int step = (static_cast<int>(b - a) + 7) / 8;
  a = std::floor(a / step) * step;
  b = std::ceil(b / step) * step;
  Axis ax;
  ax.lo = a;
  ax.hi = b;
  for (double k = a; k <= b; k += step) ax.major.push_back({k, num(std::pow(10.0, k))});
  if (step == 1 && b - a <= 6) {
    for (double k = a; k < b; ++k) {
      for (int m = 2; m <= 9; ++m) ax.minor.push_back(k + std::log10(double(m)));
    }
  }
  return ax;
}

// x = -log10(1 - q): each "nine" gets the same width, so the tail is as visible as the median.
Axis percentile_axis() {
  static constexpr std::string_view kLabels[kNines + 1] = {"0%",    "90%",    "99%",
                                                           "99.9%", "99.99%", "99.999%"};
  Axis ax;
  ax.lo = 0;
  ax.hi = kNines;
  for (int k = 0; k <= kNines; ++k) {
    ax.major.push_back({double(k), std::string(kLabels[k])});
    // 50% and 80%, 95% and 98%, ...: the same places as a log axis' 2 and 5.
    if (k < kNines) {
      ax.minor.push_back(k + std::log10(2.0));
      ax.minor.push_back(k + std::log10(5.0));
    }
  }
  return ax;
}

struct Series {
  std::string name;
  size_t index;                                // input position: fixes the colour and dashes
  std::vector<std::pair<double, double>> pts;  // plotted units
};

void open_svg(std::string& out, int w, int h) {
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(w) + "\" height=\"" +
         std::to_string(h) + "\" viewBox=\"0 0 " + std::to_string(w) + " " + std::to_string(h) +
         "\" font-family=\"sans-serif\" font-size=\"" + num(kFontPx) + "\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
}

void title(std::string& out, const PlotOptions& opt, int w) {
  if (opt.title.empty()) return;
  out += "<text x=\"";
  px(out, w / 2.0);
  out += "\" y=\"24\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">";
  out += escape(opt.title);
  out += "</text>\n";
}

// Silly sizes are clamped rather than refused, so the caller always gets a drawable document.
int clamp_w(int w) { return std::clamp(w, 200, 20000); }
int clamp_h(int h) { return std::clamp(h, 150, 20000); }

std::string no_data(const PlotOptions& opt) {
  const int w = clamp_w(opt.width), h = clamp_h(opt.height);
  std::string out;
  open_svg(out, w, h);
  title(out, opt, w);
  out += "<text x=\"";
  px(out, w / 2.0);
  out += "\" y=\"";
  px(out, h / 2.0);
  out += "\" text-anchor=\"middle\" font-size=\"20\" fill=\"#888888\">no data</text>\n</svg>\n";
  return out;
}

// Where the plot area sits in the picture, and plotted units -> pixels.
struct Layout {
  const Axis& x;
  const Axis& y;
  double left, top;  // the plot area's corner
  double pw, ph;     // and its size
  double X(double v) const { return left + (v - x.lo) / (x.hi - x.lo) * pw; }
  double Y(double v) const { return top + ph - (v - y.lo) / (y.hi - y.lo) * ph; }
};

// Margins sized to what goes in them: the widest y label, and the optional axis titles.
Layout layout(const Axis& x, const Axis& y, const PlotOptions& opt, int w, int h) {
  double ylabel_px = 0;
  for (const Tick& t : y.major) ylabel_px = std::max(ylabel_px, text_px(t.label));
  const double left = (opt.y_label.empty() ? 10 : 30) + ylabel_px + 12;
  const double right = 28;  // half of the last x label overhangs the plot
  const double top = opt.title.empty() ? 16 : 40;
  const double bottom = opt.x_label.empty() ? 32 : 52;
  const double pw = std::max(20.0, w - left - right), ph = std::max(20.0, h - top - bottom);
  return Layout{x, y, left, top, pw, ph};
}

std::vector<double> major_at(const Axis& a) {
  std::vector<double> at;
  for (const Tick& t : a.major) at.push_back(t.at);
  return at;
}

// Grid lines across the plot area at xs and ys; one path keeps the file small.
void grid(std::string& out, const Layout& l, const std::vector<double>& xs,
          const std::vector<double>& ys, std::string_view colour) {
  if (xs.empty() && ys.empty()) return;
  out += "<path fill=\"none\" stroke=\"";
  out += colour;
  out += "\" stroke-width=\"1\" d=\"";
  for (double v : xs) {
    out += 'M';
    px(out, l.X(v));
    out += ' ';
    px(out, l.top);
    out += 'V';
    px(out, l.top + l.ph);
  }
  for (double v : ys) {
    out += 'M';
    px(out, l.left);
    out += ' ';
    px(out, l.Y(v));
    out += 'H';
    px(out, l.left + l.pw);
  }
  out += "\"/>\n";
}

// The frame and the major ticks' marks.
void frame(std::string& out, const Layout& l, const std::vector<double>& xs,
           const std::vector<double>& ys) {
  out += "<rect fill=\"none\" stroke=\"#444444\" x=\"";
  px(out, l.left);
  out += "\" y=\"";
  px(out, l.top);
  out += "\" width=\"";
  px(out, l.pw);
  out += "\" height=\"";
  px(out, l.ph);
  out += "\"/>\n<path fill=\"none\" stroke=\"#444444\" d=\"";
  for (double v : xs) {
    out += 'M';
    px(out, l.X(v));
    out += ' ';
    px(out, l.top + l.ph);
    out += "v5";
  }
  for (double v : ys) {
    out += 'M';
    px(out, l.left);
    out += ' ';
    px(out, l.Y(v));
    out += "h-5";
  }
  out += "\"/>\n";
}

// The major ticks' labels and the axis titles.
void labels(std::string& out, const Layout& l, const PlotOptions& opt) {
  for (const Tick& t : l.x.major) {
    out += "<text class=\"xtick\" text-anchor=\"middle\" x=\"";
    px(out, l.X(t.at));
    out += "\" y=\"";
    px(out, l.top + l.ph + 18);
    out += "\">" + escape(t.label) + "</text>\n";
  }
  for (const Tick& t : l.y.major) {
    out += "<text class=\"ytick\" text-anchor=\"end\" dy=\"0.35em\" x=\"";
    px(out, l.left - 8);
    out += "\" y=\"";
    px(out, l.Y(t.at));
    out += "\">" + escape(t.label) + "</text>\n";
  }
  if (!opt.x_label.empty()) {
    out += "<text text-anchor=\"middle\" x=\"";
    px(out, l.left + l.pw / 2);
    out += "\" y=\"";
    px(out, l.top + l.ph + 40);
    out += "\">" + escape(opt.x_label) + "</text>\n";
  }
  if (!opt.y_label.empty()) {
    std::string at;
    px(at, 16);
    at += ' ';
    px(at, l.top + l.ph / 2);
    out += "<text text-anchor=\"middle\" transform=\"translate(" + at + ") rotate(-90)\">" +
           escape(opt.y_label) + "</text>\n";
  }
}

// Grid (minor lines fainter than major ones), frame, tick marks and labels.
void axes(std::string& out, const Layout& l, const PlotOptions& opt) {
  grid(out, l, l.x.minor, l.y.minor, "#f0f0f0");
  const std::vector<double> xs = major_at(l.x), ys = major_at(l.y);
  grid(out, l, xs, ys, "#d8d8d8");
  frame(out, l, xs, ys);
  labels(out, l, opt);
}

// The colour of line i, and its dash pattern once the colours repeat.
std::string stroke(size_t i) {
  std::string s = "stroke=\"";
  s += kPalette[i % kColours];
  s += '"';
  const std::string_view dash = kDashes[(i / kColours) % std::size(kDashes)];
  if (!dash.empty()) {
    s += " stroke-dasharray=\"";
    s += dash;
    s += '"';
  }
  return s;
}

// The data. A one-point line is drawn as a dot: the point twice, with round caps.
void data(std::string& out, const Layout& l, const std::vector<Series>& series) {
  out +=
      "<g fill=\"none\" stroke-width=\"1.5\" stroke-linejoin=\"round\" stroke-linecap=\"round\">\n";
  for (const Series& s : series) {
    if (s.pts.empty()) continue;
    out += "<polyline " + stroke(s.index) + " points=\"";
    for (size_t i = 0; i < s.pts.size(); ++i) {
      if (i > 0) out += ' ';
      px(out, l.X(s.pts[i].first));
      out += ',';
      px(out, l.Y(s.pts[i].second));
    }
    if (s.pts.size() == 1) {
      out += ' ';
      px(out, l.X(s.pts[0].first));
      out += ',';
      px(out, l.Y(s.pts[0].second));
    }
    out += "\"><title>" + escape(s.name) + "</title></polyline>\n";
  }
  out += "</g>\n";
}

// Legend, top left inside the plot: on a percentile plot that corner is always empty (latency
// rises to the right); on a time plot the translucent box keeps the lines beneath visible.
void legend(std::string& out, const Layout& l, const std::vector<Series>& series) {
  std::vector<std::string> texts;
  double text_w = 0;
  for (const Series& s : series) {
    std::string t = s.name.empty() ? "line " + std::to_string(s.index + 1) : s.name;
    if (s.pts.empty()) t += " (no data)";
    text_w = std::max(text_w, text_px(t));
    texts.push_back(std::move(t));
  }
  const double lx = l.left + 10, ly = l.top + 10;
  out += "<rect fill=\"white\" fill-opacity=\"0.85\" stroke=\"#cccccc\" x=\"";
  px(out, lx);
  out += "\" y=\"";
  px(out, ly);
  out += "\" width=\"";
  px(out, 42 + text_w);
  out += "\" height=\"";
  px(out, 8 + kLegendRowPx * double(series.size()));
  out += "\"/>\n";
  for (size_t i = 0; i < series.size(); ++i) {
    const double ry = ly + 4 + kLegendRowPx * (double(i) + 0.5);
    if (!series[i].pts.empty()) {
      out += "<path fill=\"none\" stroke-width=\"2\" " + stroke(series[i].index) + " d=\"M";
      px(out, lx + 8);
      out += ' ';
      px(out, ry);
      out += "h20\"/>\n";
    }
    out += "<text class=\"legend\" dy=\"0.35em\" x=\"";
    px(out, lx + 34);
    out += "\" y=\"";
    px(out, ry);
    out += '"';
    if (series[i].pts.empty()) out += " fill=\"#888888\"";
    out += '>' + escape(texts[i]) + "</text>\n";
  }
}

std::string render(const std::vector<Series>& series, const Axis& x, const Axis& y,
                   const PlotOptions& opt) {
  const bool any =
      std::any_of(series.begin(), series.end(), [](const Series& s) { return !s.pts.empty(); });
  if (!any) return no_data(opt);
  const int w = clamp_w(opt.width), h = clamp_h(opt.height);
  const Layout l = layout(x, y, opt, w, h);
  std::string out;
  out.reserve(8192);
  open_svg(out, w, h);
  title(out, opt, w);
  axes(out, l, opt);
  data(out, l, series);
  legend(out, l, series);
  out += "</svg>\n";
  return out;
}

bool usable(double v) { return std::isfinite(v) && std::abs(v) < kHuge; }

}  // namespace

std::string svg_lines(const std::vector<Line>& lines, const PlotOptions& opt) {
  std::vector<Series> series;
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  for (size_t i = 0; i < lines.size(); ++i) {
    const Line& l = lines[i];
    Series& s = series.emplace_back(Series{l.name, i, {}});
    const size_t n = std::min(l.x.size(), l.y.size());
    s.pts.reserve(n);
    for (size_t j = 0; j < n; ++j) {
      const double x = l.x[j], y = l.y[j];
      if (!usable(x) || !usable(y) || (opt.log_y && !(y > 0))) continue;
      s.pts.emplace_back(x, opt.log_y ? std::log10(y) : y);
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
      y_lo = std::min(y_lo, y);
      y_hi = std::max(y_hi, y);
    }
  }
  if (!(x_lo <= x_hi)) return no_data(opt);
  return render(series, linear_axis(x_lo, x_hi),
                opt.log_y ? log_axis(y_lo, y_hi) : linear_axis(y_lo, y_hi), opt);
}

std::string svg_percentiles(
    const std::vector<std::pair<std::string, tachyon::HistogramSnapshot>>& h,
    const PlotOptions& opt) {
  std::vector<Series> series;
  double y_lo = INFINITY, y_hi = -INFINITY;
  for (size_t i = 0; i < h.size(); ++i) {
    const auto& [name, snap] = h[i];
    Series& s = series.emplace_back(Series{name, i, {}});
    if (snap.count == 0) continue;
    s.pts.reserve(kPercentileSamples);
    for (int k = 0; k < kPercentileSamples; ++k) {
      // Evenly spaced on the plotted axis, so each nine gets as many samples as the body.
      const double x = kNines * double(k) / (kPercentileSamples - 1);
      const double q = 1 - std::pow(10.0, -x);
      const double us = double(snap.quantile(q)) / 1000.0;
      if (!(us > 0)) continue;  // a 0 ns sample has no place on a log axis
      s.pts.emplace_back(x, std::log10(us));
      y_lo = std::min(y_lo, us);
      y_hi = std::max(y_hi, us);
    }
  }
  if (!(y_lo <= y_hi)) return no_data(opt);
  return render(series, percentile_axis(), log_axis(y_lo, y_hi), opt);
}

}  // namespace tachyon::load
