// The one rule that calls a change between two sets of runs (LKP's):
// ranges separate, a noise floor, 3 runs a side, the outer quarters left out from 6.
#include <gtest/gtest.h>

#include <cmath>

#include "faultbench/stats/change.h"
#include "faultbench/stats/summary.h"

namespace faultbench::stats {
namespace {

TEST(StatsSummary, MinMedianMaxMeanAndStddev) {
  const Summary s = Summarize({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_NEAR(s.stddev, 1.2910, 1e-4);  // sample stddev, n - 1
  EXPECT_NEAR(s.StddevPercent(), 51.64, 0.01);
  EXPECT_EQ(s.sorted, (std::vector<double>{1, 2, 3, 4}));
  EXPECT_DOUBLE_EQ(Summarize({3, 1, 2}).median, 2);
  EXPECT_DOUBLE_EQ(Summarize({7}).stddev, 0);
  EXPECT_DOUBLE_EQ(Summarize({}).StddevPercent(), 0);
}

TEST(StatsChange, SeparateRangesAboveTheFloorAreAChange) {
  const ChangeJudgement up = JudgeChange(Summarize({100, 101, 102}), Summarize({110, 111, 112}), {.relative = 0.03});
  EXPECT_EQ(up.change, Change::kUp);
  EXPECT_NEAR(up.change_pct, 9.90, 0.01);
  const ChangeJudgement down = JudgeChange(Summarize({110, 111, 112}), Summarize({100, 101, 102}), {.relative = 0.03});
  EXPECT_EQ(down.change, Change::kDown);
  EXPECT_EQ(down.Evidence(), "ranges separate: [110, 112] vs [100, 102]");
}

TEST(StatsChange, OverlappingRangesAreNoChangeWhateverTheMeans) {
  // The threads behind the issue: "(1017+978+982)/3 = 992k", called higher while the ranges overlapped.
  const ChangeJudgement j = JudgeChange(Summarize({960, 970, 1010}), Summarize({978, 982, 1017}), {.relative = 0.01});
  EXPECT_EQ(j.change, Change::kNone);
  EXPECT_FALSE(j.ranges_separate);
  EXPECT_EQ(j.Evidence(), "ranges overlap in [978, 1010]: [960, 1010] vs [978, 1017]");
}

TEST(StatsChange, SeparateButBelowTheNoiseFloorIsNoChange) {
  const ChangeJudgement relative = JudgeChange(Summarize({64, 64, 64}), Summarize({66, 66, 67}), {.relative = 0.10});
  EXPECT_EQ(relative.change, Change::kNone);
  EXPECT_TRUE(relative.ranges_separate);
  const ChangeJudgement absolute = JudgeChange(Summarize({0, 0, 0}), Summarize({4, 4, 4}), {.relative = 0.1, .absolute = 8});
  EXPECT_EQ(absolute.change, Change::kNone);
  const ChangeJudgement enough = JudgeChange(Summarize({0, 0, 0}), Summarize({64, 64, 64}), {.relative = 0.1, .absolute = 8});
  EXPECT_EQ(enough.change, Change::kUp);
  EXPECT_TRUE(std::isinf(enough.change_pct));
}

TEST(StatsChange, FewerThanThreeRunsASideCallNothing) {
  const ChangeJudgement j = JudgeChange(Summarize({1, 1}), Summarize({100, 100, 100}), {});
  EXPECT_EQ(j.change, Change::kTooFewRuns);
  EXPECT_DOUBLE_EQ(j.change_pct, 9900);  // the %change is still known, the spread is not
}

TEST(StatsChange, FromSixRunsOneDisturbedRunNoLongerHidesAChange) {
  // A run after idle on a host with free page reporting: one slow outlier.
  const Summary pte = Summarize({82, 82, 83});
  const Summary pmd_three = Summarize({40, 120, 125});
  EXPECT_EQ(JudgeChange(pte, pmd_three, {.relative = 0.03}).change, Change::kNone);
  const Summary pmd_six = Summarize({40, 120, 125, 121, 124, 122});
  const Summary pte_six = Summarize({82, 82, 83, 81, 84, 83});
  const ChangeJudgement j = JudgeChange(pte_six, pmd_six, {.relative = 0.03});
  EXPECT_EQ(j.change, Change::kUp);
  EXPECT_EQ(j.left_out_per_end_next, 1u);
  EXPECT_DOUBLE_EQ(j.next_low, 120);
  EXPECT_EQ(LeftOutPerEnd(5), 0u);
  EXPECT_EQ(LeftOutPerEnd(12), 3u);
}

TEST(StatsChange, FromEightRunsTheMiddleHalvesDecide) {
  // ./data, ext4, 1 GiB, load average 10: 4 of 16 pmd runs slowed by host faults.
  const Summary pmd = Summarize({28, 61, 65, 71, 138, 244, 260, 274, 285, 292, 296, 300, 301, 305, 316, 363});
  const Summary pte = Summarize({75, 78, 79, 79, 79, 80, 80, 80, 81, 81, 82, 82, 83, 83, 83, 84});
  const ChangeJudgement j = JudgeChange(pte, pmd, {.relative = 0.03});
  EXPECT_EQ(j.change, Change::kUp);
  EXPECT_EQ(j.left_out_per_end_next, 4u);
  EXPECT_DOUBLE_EQ(j.next_low, 138);
  EXPECT_EQ(j.Evidence(), "ranges separate: [79, 82] vs [138, 300] (outer 4 and 4 runs a side left out)");
}

}  // namespace
}  // namespace faultbench::stats
