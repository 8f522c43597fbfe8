#include "faultbench/plot/svg_plot.h"

#include <gtest/gtest.h>

#include <string>

namespace faultbench {
namespace {

BarChart TwoBars(std::string title) {
  return {std::move(title), {"PMD/PTE (mmap): 10.00 -> PMD faster x10.00"}, "IOPS",
          {{"pte", "PMD 0.0%", 10, 8, 12}, {"pmd", "PMD 100.0%", 100, 90, 110}}};
}

// The number in an attribute such as width="640".
int Attribute(const std::string& svg, const std::string& name) {
  const size_t at = svg.find(" " + name + "=\"");
  return at == std::string::npos ? -1 : std::stoi(svg.substr(at + name.size() + 3));
}

TEST(SvgPlot, OneBarAndWhiskerPerVariantWithItsNoteAndTheVerdict) {
  const std::string svg = RenderBarChartSvg(TwoBars("t"));
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  size_t bars = 0;
  for (size_t at = svg.find("<rect x="); at != std::string::npos; at = svg.find("<rect x=", at + 1)) ++bars;
  EXPECT_EQ(bars, 2u);
  EXPECT_NE(svg.find(">pmd<"), std::string::npos);
  EXPECT_NE(svg.find(">PMD 100.0%<"), std::string::npos);
  EXPECT_NE(svg.find(">PMD/PTE (mmap): 10.00 -&gt; PMD faster x10.00<"), std::string::npos);
}

TEST(SvgPlot, AxisStepsAreRoundAndCoverTheHighestWhisker) {
  // Highest value 110 (plus 5% headroom) in five steps: steps of 25 up to 125.
  const std::string svg = RenderBarChartSvg(TwoBars("t"));
  for (const char* tick : {">0<", ">25<", ">50<", ">75<", ">100<", ">125<"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
  EXPECT_EQ(svg.find(">150<"), std::string::npos);
  EXPECT_EQ(svg.find(">22"), std::string::npos) << "an unround step";

  BarChart big = TwoBars("t");
  big.bars[1] = {"pmd", "", 1638213, 1582000, 1708000};
  const std::string big_svg = RenderBarChartSvg(big);
  for (const char* tick : {">500k<", ">1M<", ">1.5M<", ">2M<"}) EXPECT_NE(big_svg.find(tick), std::string::npos) << tick;
  EXPECT_NE(big_svg.find(">1.64M<"), std::string::npos) << "the median above its bar";
}

TEST(SvgPlot, ChartIsWideEnoughForItsTitle) {
  const std::string long_title(120, 'x');
  const int narrow = Attribute(RenderBarChartSvg(TwoBars("t")), "width");
  const int wide = Attribute(RenderBarChartSvg(TwoBars(long_title)), "width");
  EXPECT_GT(narrow, 0);
  // 120 characters at 15 px cannot fit in less than 120 * 15 / 2 px.
  EXPECT_GE(wide, 120 * 15 / 2);
  EXPECT_GT(wide, narrow);
}

TEST(SvgPlot, EveryRepeatIsADotAndTheAxisCoversTheHighestOne) {
  BarChart chart = TwoBars("t");
  chart.bars[0].points = {8, 10, 12};
  chart.bars[1].points = {90, 100, 110, 400};  // one repeat far above the rest
  const std::string svg = RenderBarChartSvg(chart);
  size_t dots = 0;
  for (size_t at = svg.find("class=\"repeat\""); at != std::string::npos; at = svg.find("class=\"repeat\"", at + 1)) ++dots;
  EXPECT_EQ(dots, 7u);
  EXPECT_NE(svg.find(">400<"), std::string::npos) << "an axis label at or above the highest dot";
  EXPECT_NE(svg.find("dots: each repeat"), std::string::npos);
}

}  // namespace
}  // namespace faultbench
