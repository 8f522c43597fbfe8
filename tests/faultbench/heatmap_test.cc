#include "faultbench/plot/heatmap.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace faultbench {
namespace {

Heatmap TwoByTwo() {
  HeatmapPanel p;
  p.title = "pte/mmap";
  p.row_axis = "CPU node";
  p.column_axis = "memory node";
  p.row_labels = {"node 0", "node 1"};
  p.column_labels = {"node 0", "node 1 (block:pmem0)"};
  p.cells = {{{100, {"100 IOPS", "exact"}, false}, {400, {"400 IOPS", "exact"}, false}},
             {{200, {"200 IOPS", "exact"}, false}, {300, {"300 IOPS", "pages 0=4 1=4"}, true}}};
  return {"numa <matrix>", {"in /run/tmp"}, {p}, "shade: median IOPS"};
}

// The fill colours of the cells, in drawing order.
std::vector<std::string> Fills(const std::string& svg) {
  std::vector<std::string> fills;
  for (size_t at = svg.find("<rect x="); at != std::string::npos; at = svg.find("<rect x=", at + 1)) {
    const size_t fill = svg.find("fill=\"", at) + 6;
    fills.push_back(svg.substr(fill, 7));
  }
  return fills;
}

TEST(Heatmap, OneShadedCellPerPairInProportionToThePanelsHighest) {
  const std::string svg = RenderHeatmapSvg(TwoByTwo());
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  const std::vector<std::string> fills = Fills(svg);
  ASSERT_EQ(fills.size(), 4u);
  // The lowest value is the lightest colour, the highest the darkest (the
  // sum of the channels falls as the value rises).
  const auto lightness = [](const std::string& hex) {
    return std::stoi(hex.substr(1, 2), nullptr, 16) + std::stoi(hex.substr(3, 2), nullptr, 16) +
           std::stoi(hex.substr(5, 2), nullptr, 16);
  };
  EXPECT_GT(lightness(fills[0]), lightness(fills[2]));  // 100 lighter than 200
  EXPECT_GT(lightness(fills[2]), lightness(fills[3]));  // 200 lighter than 300
  EXPECT_GT(lightness(fills[3]), lightness(fills[1]));  // 300 lighter than 400
  EXPECT_EQ(fills[1], "#1f4e8c") << "the highest is the darkest";
  EXPECT_EQ(fills[0], "#bacadf") << "100 of 400: a quarter of the way from white-blue to the darkest";
}

TEST(Heatmap, LabelsEscapedAndFlaggedCellsOutlinedInRed) {
  const std::string svg = RenderHeatmapSvg(TwoByTwo());
  EXPECT_NE(svg.find(">numa &lt;matrix&gt;<"), std::string::npos);
  EXPECT_NE(svg.find(">node 1 (block:pmem0)<"), std::string::npos);
  EXPECT_NE(svg.find(">rows: CPU node, columns: memory node<"), std::string::npos);
  EXPECT_NE(svg.find(">pages 0=4 1=4<"), std::string::npos);
  size_t red = 0;
  for (size_t at = svg.find("stroke=\"#d62728\""); at != std::string::npos; at = svg.find("stroke=\"#d62728\"", at + 1)) ++red;
  EXPECT_EQ(red, 1u) << "only the cell whose placement was off";
}

}  // namespace
}  // namespace faultbench
