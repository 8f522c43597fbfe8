// Two sets of repeated values per row, side by side on the row's own
// scale: a dot for every value and a line from min to max, one colour per
// set. Made for a diff of two kernels (base against new), where every row
// is a different figure in its own unit, so rows share no axis: each is
// scaled from the lowest to the highest value either set has, and the row
// prints those two ends. Standalone SVG, like svg_plot.h; knows charts,
// not results.
#pragma once

#include <string>
#include <vector>

namespace faultbench {

struct RangeRow {
  std::string label;             // left of the row: "faults_per_mib [pmd/mmap]"
  std::string note;              // right of it: "REGRESSION +51100%"
  bool highlight = false;        // drawn in bold: a called change
  std::vector<double> first, second;  // the two sets' values
};

struct RangeChart {
  std::string title;
  std::vector<std::string> subtitles;
  std::string first_name = "base", second_name = "new";  // the legend
  std::vector<RangeRow> rows;
};

std::string RenderRangeChartSvg(const RangeChart& chart);

}  // namespace faultbench
