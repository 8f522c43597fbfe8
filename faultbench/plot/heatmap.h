// A heatmap as a standalone SVG file: panels of labelled rows and columns,
// each cell shaded by its value and carrying a few lines of text. Written
// for compare --numa-matrix (CPU node x memory node), but, like the bar
// chart beside it, it knows charts, not results.
#pragma once

#include <string>
#include <vector>

namespace faultbench {

struct HeatmapCell {
  double value = 0;                // shades the cell: its share of the panel's highest value
  std::vector<std::string> lines;  // text in the cell, first line largest
  bool flagged = false;            // drawn with a red border (e.g. pages not where asked)
};

struct HeatmapPanel {
  std::string title;
  std::string row_axis, column_axis;  // "CPU node", "memory node"
  std::vector<std::string> row_labels, column_labels;
  std::vector<std::vector<HeatmapCell>> cells;  // [row][column]
  // "rows: CPU node, columns: memory node", the line above the columns.
  std::string AxisLine() const { return "rows: " + row_axis + ", columns: " + column_axis; }
};

struct Heatmap {
  std::string title;
  std::vector<std::string> subtitles;  // one line each, under the title
  std::vector<HeatmapPanel> panels;    // stacked top to bottom
  std::string footer;                  // what the shade and the flag mean
};

// Cells are as wide as their longest line needs; a panel's shades run from
// zero (lightest) to its highest value (darkest), in proportion, so cells
// within a few percent of each other look alike.
std::string RenderHeatmapSvg(const Heatmap& heatmap);

}  // namespace faultbench
