// A bar chart as a standalone SVG file: one bar per variant (its median),
// with a min-max whisker for the spread across repeats. Written by the tool
// itself so a result directory needs no plotting package to be read.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace faultbench {

struct PlotBar {
  std::string label;
  double median = 0, min = 0, max = 0;
};

std::string RenderBarChartSvg(const std::string& title, const std::string& unit, const std::vector<PlotBar>& bars);

absl::Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace faultbench
