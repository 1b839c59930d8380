// load: the SVG plot writer. Every document is checked for balanced tags and valid entities (a
// tiny checker instead of an XML library); then polylines per line, escaping, the log axis'
// skipped values, 1-2-5 tick labels, and a percentile curve read back through its own axis labels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "load/svg_plot.hpp"
#include "tachyon/core/histogram.hpp"

namespace tachyon::load {
namespace {

// Every `<tag` is closed by `</tag>` or `/>`, in order, under one <svg> root; every '&' starts
// an entity; no '<' inside a tag (an unescaped name would put one there).
testing::AssertionResult WellFormed(const std::string& s) {
  if (!s.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\"")) {
    return testing::AssertionFailure() << "does not start with <svg xmlns=...: " << s.substr(0, 60);
  }
  std::vector<std::string> open;
  bool root_done = false;
  size_t i = 0;
  while ((i = s.find('<', i)) != std::string::npos) {
    const size_t end = s.find('>', i);
    if (end == std::string::npos) return testing::AssertionFailure() << "unterminated tag at " << i;
    const std::string_view tag(s.data() + i + 1, end - i - 1);
    if (tag.find('<') != std::string_view::npos) {
      return testing::AssertionFailure() << "'<' inside tag at " << i << ": " << tag;
    }
    if (tag.starts_with('/')) {
      const std::string name(tag.substr(1));
      if (open.empty() || open.back() != name) {
        return testing::AssertionFailure()
               << "</" << name << "> closes " << (open.empty() ? "nothing" : open.back());
      }
      open.pop_back();
      if (open.empty()) root_done = true;
    } else {
      if (root_done) return testing::AssertionFailure() << "element after the root at " << i;
      const std::string name(tag.substr(0, tag.find_first_of(" \t\n/")));
      if (name.empty()) return testing::AssertionFailure() << "empty tag name at " << i;
      if (open.empty() && name != "svg") return testing::AssertionFailure() << "root is " << name;
      if (!tag.ends_with('/')) open.push_back(name);
    }
    i = end + 1;
  }
  if (!open.empty()) return testing::AssertionFailure() << "<" << open.back() << "> never closed";
  if (!root_done) return testing::AssertionFailure() << "no root element";
  for (size_t a = s.find('&'); a != std::string::npos; a = s.find('&', a + 1)) {
    const std::string_view rest(s.data() + a, std::min<size_t>(6, s.size() - a));
    if (!rest.starts_with("&amp;") && !rest.starts_with("&lt;") && !rest.starts_with("&gt;") &&
        !rest.starts_with("&quot;") && !rest.starts_with("&apos;") && !rest.starts_with("&#")) {
      return testing::AssertionFailure() << "bare '&' at " << a;
    }
  }
  return testing::AssertionSuccess();
}

size_t Count(const std::string& s, std::string_view sub) {
  size_t n = 0;
  for (size_t i = s.find(sub); i != std::string::npos; i = s.find(sub, i + 1)) ++n;
  return n;
}

// The value of attribute `name` in the tag starting at `from`.
std::string Attr(const std::string& s, size_t from, std::string_view name) {
  const size_t end = s.find('>', from);
  std::string key = " ";  // built by appends: GCC 12 -O3 warns (-Wrestrict) on " " + string
  key += name;
  key += "=\"";
  const size_t a = s.find(key, from);
  if (a == std::string::npos || a > end) return "";
  const size_t v = a + key.size();
  return s.substr(v, s.find('"', v) - v);
}

using Points = std::vector<std::pair<double, double>>;

// Every polyline's points, in document order, with its stroke colour.
std::vector<std::pair<std::string, Points>> Polylines(const std::string& s) {
  std::vector<std::pair<std::string, Points>> out;
  for (size_t i = s.find("<polyline"); i != std::string::npos; i = s.find("<polyline", i + 1)) {
    Points pts;
    const std::string p = Attr(s, i, "points");
    const char* c = p.c_str();
    while (*c != '\0') {
      char* e;
      const double x = std::strtod(c, &e);
      if (*e != ',') break;
      const double y = std::strtod(e + 1, &e);
      pts.emplace_back(x, y);
      c = e;
      while (*c == ' ') ++c;
    }
    out.emplace_back(Attr(s, i, "stroke"), std::move(pts));
  }
  return out;
}

// Label text -> coordinate (the `coord` attribute) of the <text class="cls"> elements.
std::map<std::string, double> Labels(const std::string& s, std::string_view cls,
                                     std::string_view coord) {
  std::map<std::string, double> out;
  const std::string key = "<text class=\"" + std::string(cls) + "\"";
  for (size_t i = s.find(key); i != std::string::npos; i = s.find(key, i + 1)) {
    const size_t b = s.find('>', i) + 1;
    out[s.substr(b, s.find('<', b) - b)] = std::strtod(Attr(s, i, coord).c_str(), nullptr);
  }
  return out;
}

std::vector<double> Seq(int n, double from, double step) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(from + i * step);
  return v;
}

TEST(SvgLines, OnePolylinePerNonEmptyLineInDistinctColours) {
  std::vector<Line> lines = {
      {"p50", Seq(60, 0, 1), Seq(60, 10, 0.5)},
      {"p99", Seq(60, 0, 1), Seq(60, 40, 2)},
      {"empty", {}, {}},
      {"max", Seq(60, 0, 1), Seq(60, 100, 3)},
  };
  PlotOptions opt{.title = "latency", .x_label = "s", .y_label = "us"};
  const std::string svg = svg_lines(lines, opt);
  ASSERT_TRUE(WellFormed(svg)) << svg;
  EXPECT_NE(svg.find("fill=\"white\""), std::string::npos);
  EXPECT_EQ(Count(svg, "<polyline"), 3u);
  const auto polys = Polylines(svg);
  std::set<std::string> colours;
  for (const auto& [stroke, pts] : polys) {
    EXPECT_EQ(pts.size(), 60u);
    colours.insert(stroke);
  }
  EXPECT_EQ(colours.size(), 3u);
  EXPECT_NE(svg.find(">empty (no data)<"), std::string::npos);
  EXPECT_NE(svg.find(">latency<"), std::string::npos);
  EXPECT_EQ(Count(svg, "no data"), 1u);  // only the legend entry says so
}

TEST(SvgLines, TextIsEscaped) {
  std::vector<Line> lines = {{"a<&>b\"c", {0, 1}, {1, 2}}};
  PlotOptions opt{.title = "p99 < 1ms & \"fast\"", .x_label = "<x>", .y_label = "y&"};
  const std::string svg = svg_lines(lines, opt);
  ASSERT_TRUE(WellFormed(svg)) << svg;
  EXPECT_NE(svg.find("a&lt;&amp;&gt;b&quot;c"), std::string::npos);
  EXPECT_NE(svg.find("p99 &lt; 1ms &amp; &quot;fast&quot;"), std::string::npos);
  EXPECT_NE(svg.find("&lt;x&gt;"), std::string::npos);
  EXPECT_NE(svg.find("y&amp;"), std::string::npos);
  EXPECT_EQ(svg.find("<&>"), std::string::npos);
  EXPECT_EQ(svg.find("a<"), std::string::npos);
  EXPECT_EQ(svg.find("<x>"), std::string::npos);

  // Control characters are not allowed in XML at all; they must not break the document.
  const std::string ctl = svg_lines({{std::string("a\x01\x1f"
                                                  "b"),
                                      {0},
                                      {1}}},
                                    {});
  EXPECT_TRUE(WellFormed(ctl)) << ctl;
  EXPECT_EQ(ctl.find('\x01'), std::string::npos);
}

TEST(SvgLines, LogAxisSkipsNonPositiveValues) {
  std::vector<Line> lines = {{"l", {0, 1, 2, 3, 4, 5}, {0, -5, 10, 100, -0.0, 1000}}};
  const std::string svg = svg_lines(lines, {.log_y = true});
  ASSERT_TRUE(WellFormed(svg)) << svg;
  const auto polys = Polylines(svg);
  ASSERT_EQ(polys.size(), 1u);
  ASSERT_EQ(polys[0].second.size(), 3u);
  // Powers of ten, equally spaced: the three points are one decade apart.
  const auto ticks = Labels(svg, "ytick", "y");
  ASSERT_TRUE(ticks.contains("10") && ticks.contains("100") && ticks.contains("1000")) << svg;
  const Points& p = polys[0].second;
  EXPECT_NEAR(p[0].second, ticks.at("10"), 0.11);
  EXPECT_NEAR(p[1].second, ticks.at("100"), 0.11);
  EXPECT_NEAR(p[2].second, ticks.at("1000"), 0.11);
  EXPECT_NEAR(p[0].second - p[1].second, p[1].second - p[2].second, 0.21);

  // A line with nothing positive is listed, not drawn; with nothing else, the plot says so.
  lines.push_back({"zeros", {0, 1}, {0, 0}});
  const std::string mixed = svg_lines(lines, {.log_y = true});
  EXPECT_TRUE(WellFormed(mixed));
  EXPECT_EQ(Count(mixed, "<polyline"), 1u);
  EXPECT_NE(mixed.find(">zeros (no data)<"), std::string::npos);
  const std::string none = svg_lines({{"zeros", {0, 1}, {0, -1}}}, {.log_y = true});
  EXPECT_TRUE(WellFormed(none));
  EXPECT_EQ(Count(none, "<polyline"), 0u);
  EXPECT_NE(none.find("no data"), std::string::npos);
}

TEST(SvgLines, LinearTicksAreRound125Steps) {
  const std::string svg = svg_lines({{"l", Seq(11, 0, 1), Seq(11, 0, 0.1)}}, {});
  ASSERT_TRUE(WellFormed(svg));
  std::set<std::string> y, x;
  for (const auto& [label, at] : Labels(svg, "ytick", "y")) y.insert(label);
  for (const auto& [label, at] : Labels(svg, "xtick", "x")) x.insert(label);
  EXPECT_EQ(y, (std::set<std::string>{"0", "0.2", "0.4", "0.6", "0.8", "1"}));
  EXPECT_EQ(x, (std::set<std::string>{"0", "2", "4", "6", "8", "10"}));

  // Far from zero the labels keep enough digits to differ.
  const std::string far = svg_lines({{"l", {0, 1}, {1e6, 1e6 + 3}}}, {});
  ASSERT_TRUE(WellFormed(far));
  const auto far_y = Labels(far, "ytick", "y");
  EXPECT_TRUE(far_y.contains("1000000") && far_y.contains("1000003")) << far;

  // One point: the axes are widened around it and the point is still drawn.
  const std::string one = svg_lines({{"l", {5}, {7}}}, {});
  ASSERT_TRUE(WellFormed(one));
  EXPECT_EQ(Count(one, "<polyline"), 1u);
}

TEST(SvgLines, EmptyOrUnusableInputSaysNoData) {
  for (const std::vector<Line>& lines : std::vector<std::vector<Line>>{
           {}, {{"a", {}, {}}}, {{"nan", {NAN, 1}, {1, INFINITY}}}, {{"short", {1, 2}, {}}}}) {
    const std::string svg = svg_lines(lines, {.title = "t"});
    ASSERT_TRUE(WellFormed(svg)) << svg;
    EXPECT_NE(svg.find(">no data<"), std::string::npos);
    EXPECT_EQ(Count(svg, "<polyline"), 0u);
    EXPECT_NE(svg.find("fill=\"white\""), std::string::npos);
  }
}

TEST(SvgLines, BadPointsAndSizesAreSkippedNotFatal) {
  // Mismatched lengths are cut to the shorter; NaN and infinities are dropped.
  std::vector<Line> lines = {{"l", {0, 1, 2, 3, 4}, {1, NAN, 3}}, {"m", {0, INFINITY}, {1, 2}}};
  const std::string svg = svg_lines(lines, {.width = 0, .height = -3});
  ASSERT_TRUE(WellFormed(svg)) << svg;
  const auto polys = Polylines(svg);
  ASSERT_EQ(polys.size(), 2u);
  EXPECT_EQ(polys[0].second.size(), 2u);
  // One point left: drawn as a dot, the point twice.
  ASSERT_EQ(polys[1].second.size(), 2u);
  EXPECT_EQ(polys[1].second[0], polys[1].second[1]);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  EXPECT_EQ(svg.find("width=\"0\""), std::string::npos);
}

tachyon::HistogramSnapshot Snapshot(const std::vector<std::pair<uint64_t, int>>& values_ns) {
  auto h = std::make_unique<tachyon::Histogram>();
  for (auto [v, n] : values_ns) {
    for (int i = 0; i < n; ++i) h->record(v);
  }
  return h->snapshot();
}

TEST(SvgPercentiles, CurveRisesFromTheBodyToTheTail) {
  // 1000 values of 10 us and 10 of 5000 us: flat at 10 us up to 99%, then 5000 us.
  const std::string svg =
      svg_percentiles({{"rtt", Snapshot({{10'000, 1000}, {5'000'000, 10}})}},
                      {.title = "round trip", .x_label = "percentile", .y_label = "us"});
  ASSERT_TRUE(WellFormed(svg)) << svg;
  const auto xt = Labels(svg, "xtick", "x");
  for (const char* l : {"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"}) {
    EXPECT_TRUE(xt.contains(l)) << l;
  }
  const auto yt = Labels(svg, "ytick", "y");
  ASSERT_TRUE(yt.contains("10") && yt.contains("10000")) << svg;

  const auto polys = Polylines(svg);
  ASSERT_EQ(polys.size(), 1u);
  const Points& p = polys[0].second;
  ASSERT_GE(p.size(), 150u);
  for (size_t i = 1; i < p.size(); ++i) {
    ASSERT_GT(p[i].first, p[i - 1].first) << i;    // left to right
    ASSERT_LE(p[i].second, p[i - 1].second) << i;  // latency never falls (SVG y grows down)
  }
  // Read the latency back through the y axis' own labels (10 and 10000 us, three decades).
  auto us = [&](double y) {
    return std::pow(10.0, 1 + 3 * (y - yt.at("10")) / (yt.at("10000") - yt.at("10")));
  };
  double lowest = 0;
  for (const auto& [x, y] : p) lowest = std::max(lowest, y);
  EXPECT_EQ(p.front().second, lowest);            // the early points are the bottom of the curve...
  EXPECT_NEAR(us(p.front().second), 10.24, 0.1);  // ...at 10 us (its bucket's upper edge)
  EXPECT_NEAR(us(p.back().second), 5000, 25);     // and the tail at 5000 us (the max)
  for (const auto& [x, y] : p) {
    if (x < xt.at("99%") - 1) {
      EXPECT_NEAR(us(y), 10.24, 0.1) << x;
    } else if (x > xt.at("99.9%")) {
      EXPECT_NEAR(us(y), 5000, 25) << x;
    }
  }
}

TEST(SvgPercentiles, EmptyHistogramsAreListedNotDrawn) {
  const tachyon::HistogramSnapshot empty;
  const auto full = Snapshot({{1'000, 10}, {2'000, 10}});
  const std::string svg = svg_percentiles({{"idle <&>", empty}, {"busy", full}}, {});
  ASSERT_TRUE(WellFormed(svg)) << svg;
  EXPECT_EQ(Count(svg, "<polyline"), 1u);
  EXPECT_NE(svg.find(">idle &lt;&amp;&gt; (no data)<"), std::string::npos);
  EXPECT_EQ(svg.find("<&>"), std::string::npos);

  for (const auto& input :
       std::vector<std::vector<std::pair<std::string, tachyon::HistogramSnapshot>>>{
           {}, {{"idle", empty}}}) {
    const std::string none = svg_percentiles(input, {});
    ASSERT_TRUE(WellFormed(none)) << none;
    EXPECT_NE(none.find(">no data<"), std::string::npos);
    EXPECT_EQ(Count(none, "<polyline"), 0u);
  }
}

TEST(SvgPercentiles, ZeroLatencySamplesAreSkippedOnTheLogAxis) {
  // Half the values are 0 ns: those quantiles cannot be drawn; the rest still are.
  const std::string svg = svg_percentiles({{"h", Snapshot({{0, 50}, {3'000, 50}})}}, {});
  ASSERT_TRUE(WellFormed(svg)) << svg;
  const auto polys = Polylines(svg);
  ASSERT_EQ(polys.size(), 1u);
  EXPECT_GT(polys[0].second.size(), 100u);
  EXPECT_LT(polys[0].second.size(), 200u);
}

}  // namespace
}  // namespace tachyon::load
