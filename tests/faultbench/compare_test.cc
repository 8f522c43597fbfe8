#include "faultbench/compare/compare.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace faultbench
