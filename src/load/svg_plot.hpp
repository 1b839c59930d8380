#pragma once
// Standalone SVG plots for tachyon-load's reports: latency over time and HdrHistogram-style
// percentile distributions. No dependencies beyond the standard library, so a run's report is a
// handful of files any browser opens. Bad input never throws: points that cannot be drawn are
// skipped, and a plot with nothing left to draw is a valid SVG that says "no data".
#include <string>
#include <utility>
#include <vector>

#include "tachyon/core/histogram.hpp"

namespace tachyon::load {

struct Line {
  std::string name;       // legend text
  std::vector<double> x;  // same length as y (a longer one is cut to the shorter)
  std::vector<double> y;
};

// The `{}` initializers let callers write designated initializers ({.title = "x"}) without GCC's
// -Wmissing-field-initializers firing for the strings they leave out.
struct PlotOptions {
  std::string title{};
  std::string x_label{};
  std::string y_label{};
  bool log_y = false;  // log10 axis; non-positive y values are skipped
  int width = 960, height = 540;
};

// Lines over a linear x axis (e.g. seconds into the run) with a linear or log y axis: axes, ticks
// with "nice" round labels (1-2-5 steps for linear; powers of ten for log), a grid, a legend, one
// polyline per line in distinct colours. Non-finite points are skipped; a line with no points left
// is listed in the legend as "(no data)". Empty input or all points skipped: a valid SVG that says
// "no data".
std::string svg_lines(const std::vector<Line>& lines, const PlotOptions& opt);

// HdrHistogram-style percentile distribution: x axis is the percentile on the "number of nines"
// scale, x = -log10(1 - q) for q in [0, 0.99999] (tick labels "0%", "90%", "99%", "99.9%",
// "99.99%", "99.999%"), y axis latency in microseconds (log scale; opt.log_y is ignored). One
// curve per histogram, sampled at 200 quantiles from the snapshot (values are ns; divided by
// 1000). Histograms with count == 0 are skipped (legend says "(no data)").
std::string svg_percentiles(
    const std::vector<std::pair<std::string, tachyon::HistogramSnapshot>>& h,
    const PlotOptions& opt);

}  // namespace tachyon::load
