// The diff chart: two sets of runs per row, each row on its own scale.
#include "faultbench/plot/range_chart.h"

#include <gtest/gtest.h>

#include "support/occurrences.h"

namespace faultbench {
namespace {

TEST(RangeChart, EveryValueIsADotAndEveryRowPrintsItsOwnEnds) {
  RangeChart chart;
  chart.title = "diff <kernels>";
  chart.rows.push_back({"faults_per_mib [pmd/mmap]", "REGRESSION +inf%", true, {0.5, 0.5, 0.5}, {256, 256, 257}});
  chart.rows.push_back({"write.iops [pmd/mmap]", "not judged", false, {1000, 1100}, {900}});
  const std::string svg = RenderRangeChartSvg(chart);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(Occurrences(svg, "<circle"), 3u + 3 + 2 + 1 + 2) << "every value, and the two legend dots";
  EXPECT_NE(svg.find("diff &lt;kernels&gt;"), std::string::npos) << "text is escaped";
  EXPECT_NE(svg.find(">257<"), std::string::npos) << "the row's highest value ends its scale";
  EXPECT_NE(svg.find(">0.5<"), std::string::npos);
  EXPECT_NE(svg.find("font-weight=\"bold\">faults_per_mib"), std::string::npos) << "a called change stands out";
}

TEST(RangeChart, ARowWhoseValuesAreAllEqualSitsInTheMiddle) {
  RangeChart chart;
  chart.rows.push_back({"pmd_share", "", false, {1, 1, 1}, {1, 1, 1}});
  const std::string svg = RenderRangeChartSvg(chart);
  EXPECT_EQ(Occurrences(svg, "<circle"), 6u + 2);
}

}  // namespace
}  // namespace faultbench
