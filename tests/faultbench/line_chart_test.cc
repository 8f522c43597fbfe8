// scale's curve: a line per series through its medians, a dot per value.
#include "faultbench/plot/line_chart.h"

#include <gtest/gtest.h>

#include "support/occurrences.h"

namespace faultbench {
namespace {

TEST(LineChart, ALinePerSeriesADotPerValueAndATickPerTaskCount) {
  LineChart chart;
  chart.title = "scale <anon>";
  chart.x_label = "tasks";
  chart.y_label = "faults/s";
  chart.series.push_back({"threads", {{1, 100e3, {90e3, 100e3, 110e3}}, {2, 150e3, {140e3, 150e3, 160e3}}}});
  chart.series.push_back({"processes", {{1, 95e3, {95e3}}, {4, 300e3, {290e3, 310e3}}}});
  const std::string svg = RenderLineChartSvg(chart);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(Occurrences(svg, "<polyline"), 2u);
  EXPECT_EQ(Occurrences(svg, "<circle"), 3u + 3 + 1 + 2);
  EXPECT_NE(svg.find("scale &lt;anon&gt;"), std::string::npos) << "text is escaped";
  for (const char* tick : {">1<", ">2<", ">4<"}) EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  EXPECT_NE(svg.find(">threads<"), std::string::npos);
  EXPECT_NE(svg.find(">processes<"), std::string::npos);
}

TEST(LineChart, NoValuesStillDrawsTheAxes) {
  const std::string svg = RenderLineChartSvg(LineChart{});
  EXPECT_EQ(Occurrences(svg, "<polyline"), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

}  // namespace
}  // namespace faultbench
