// Lines of points over a shared x axis: one line per series, a dot for
// every value at each point and a whisker from its min to its max, the
// line through the medians. Made for faultbench scale (faults per second
// against the number of tasks, threads against processes). Standalone SVG,
// like svg_plot.h; knows charts, not results.
#pragma once

#include <string>
#include <vector>

namespace faultbench {

struct LinePoint {
  double x = 0;
  double median = 0;
  std::vector<double> values;  // every repeat: the dots and the whisker
};

struct LineSeries {
  std::string name;  // the legend: "threads"
  std::vector<LinePoint> points;  // in x order
};

struct LineChart {
  std::string title;
  std::vector<std::string> subtitles;
  std::string x_label, y_label;  // "tasks", "faults/s"
  std::vector<LineSeries> series;
  std::string footer;  // one line under the chart ("" for none)
};

std::string RenderLineChartSvg(const LineChart& chart);

}  // namespace faultbench
