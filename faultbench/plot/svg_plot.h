// A bar chart as a standalone SVG file: one bar per variant (its median),
// with a min-max whisker for the spread across repeats and a dot for each
// repeat, so one disturbed run is seen as one dot, not as a long whisker. Written by the tool
// itself so a result directory needs no plotting package to be read.
//
// plot/ knows charts, not faultbench's results: callers (compare/) turn
// their outcome into a chart. Other kinds of chart belong beside this one,
// as the NUMA matrix's heatmap does (heatmap.h); what they all write the
// same way is in svg_text.h.
#pragma once

#include <string>
#include <vector>

namespace faultbench {

struct PlotBar {
  std::string label;  // under the bar
  std::string note;   // a second line under it (e.g. "PMD 99.2%"); may be empty
  double median = 0, min = 0, max = 0;
  std::vector<double> points;  // each repeat, drawn as a dot over the bar
};

struct BarChart {
  std::string title;
  std::vector<std::string> subtitles;  // one line each, under the title (e.g. the verdicts)
  std::string unit;                    // the value axis
  std::vector<PlotBar> bars;
};

// The chart is as wide as its longest line of text needs, and the value
// axis steps by 1, 2, 2.5 or 5 times a power of ten, so its labels are round.
std::string RenderBarChartSvg(const BarChart& chart);

}  // namespace faultbench
