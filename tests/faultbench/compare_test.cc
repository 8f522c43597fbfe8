#include "faultbench/compare/compare.h"

#include <gtest/gtest.h>

#include "faultbench/plot/svg_plot.h"
#include "faultbench/taint/taint.h"

namespace faultbench {
namespace {

VariantSummary WithIops(pmstore::mapping::PageIntent mode, double median, double min, double max) {
  VariantSummary v;
  v.mode = mode;
  v.iops = {median, min, max};
  return v;
}

using pmstore::mapping::PageIntent;

TEST(CompareVerdict, CallsPmdFasterOnlyWhenTheRangesDoNotOverlap) {
  const VariantSummary pte = WithIops(PageIntent::kPte, 100, 95, 105);
  const VariantSummary pmd = WithIops(PageIntent::kPmd, 200, 190, 210);
  const Verdict v = JudgePmdOverPte(&pte, &pmd);
  EXPECT_TRUE(v.available);
  EXPECT_DOUBLE_EQ(v.pmd_over_pte, 2.0);
  EXPECT_EQ(v.text, "PMD faster x2.00");
}

TEST(CompareVerdict, OverlappingSpreadsAreNoSignificantDifference) {
  const VariantSummary pte = WithIops(PageIntent::kPte, 100, 80, 120);
  const VariantSummary pmd = WithIops(PageIntent::kPmd, 110, 100, 130);
  EXPECT_EQ(JudgePmdOverPte(&pte, &pmd).text, "no significant difference");
}

TEST(CompareVerdict, TinyDifferencesAreNoiseEvenWithoutSpread) {
  const VariantSummary pte = WithIops(PageIntent::kPte, 100, 100, 100);
  const VariantSummary pmd = WithIops(PageIntent::kPmd, 101, 101, 101);
  EXPECT_EQ(JudgePmdOverPte(&pte, &pmd).text, "no significant difference");
}

TEST(CompareVerdict, PmdSlowerIsARegressionWithItsFactor) {
  // The 2016 bare-metal numbers: PTE 590299 KB/s, PMD 17931 KB/s.
  const VariantSummary pte = WithIops(PageIntent::kPte, 590299, 580000, 600000);
  const VariantSummary pmd = WithIops(PageIntent::kPmd, 17931, 17000, 19000);
  const Verdict v = JudgePmdOverPte(&pte, &pmd);
  EXPECT_EQ(v.text.rfind("REGRESSION: PMD slower than PTE x32.9", 0), 0u) << v.text;
}

TEST(CompareVerdict, MissingModeGivesNoVerdict) {
  const VariantSummary pmd = WithIops(PageIntent::kPmd, 1, 1, 1);
  EXPECT_FALSE(JudgePmdOverPte(nullptr, &pmd).available);
}

TEST(CompareTaint, OneLinePerKindSayingHowManyRunsHadIt) {
  const std::vector<std::string> merged = MergeTaint({
      {"hypervisor: KVM", "other load: 1-minute load average 3.10 on 2 CPUs before the run"},
      {"hypervisor: KVM"},
      {"hypervisor: KVM", "other load: 1-minute load average 2.40 on 2 CPUs before the run"},
  });
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0], "hypervisor: KVM");
  EXPECT_EQ(merged[1], "other load: 1-minute load average 3.10 on 2 CPUs before the run (2 of 3 runs)");
  EXPECT_TRUE(MergeTaint({{}, {}}).empty());
}

TEST(CompareSpread, MedianOfEvenAndOddCounts) {
  EXPECT_DOUBLE_EQ(SpreadOf({3, 1, 2}).median, 2);
  EXPECT_DOUBLE_EQ(SpreadOf({4, 1, 2, 3}).median, 2.5);
  EXPECT_DOUBLE_EQ(SpreadOf({4, 1, 2, 3}).min, 1);
  EXPECT_DOUBLE_EQ(SpreadOf({4, 1, 2, 3}).max, 4);
}

TEST(CompareNumaSets, ParsesSetsAndRejectsUnknownOptions) {
  auto sets = ParseNumaSets("cpunodebind=0 membind=0; interleave=all");
  ASSERT_TRUE(sets.ok()) << sets.status();
  ASSERT_EQ(sets->size(), 2u);
  EXPECT_EQ((*sets)[0].options.cpunodebind, "0");
  EXPECT_EQ((*sets)[0].options.membind, "0");
  EXPECT_EQ((*sets)[1].options.interleave, "all");
  EXPECT_FALSE(ParseNumaSets("cpus=0").ok());
  EXPECT_FALSE(ParseNumaSets("membind").ok());
}

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

}  // namespace
}  // namespace faultbench
