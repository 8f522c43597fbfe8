#include "faultbench/compare/compare.h"
#include "faultbench/compare/repeat_plan.h"
#include "faultbench/compare/signature_verdict.h"

#include <gtest/gtest.h>

namespace faultbench {
namespace {

// Three repeats: min, median and max.
VariantSummary WithIops(pmstore::mapping::PageIntent mode, double median, double min, double max) {
  VariantSummary v;
  v.mode = mode;
  v.iops = stats::Summarize({min, median, max});
  return v;
}

// Three repeats of exact counts, as under emulation.
VariantSummary WithSignature(pmstore::mapping::PageIntent mode, double faults_per_mib, double pmd_share) {
  VariantSummary v;
  v.mode = mode;
  v.iops = stats::Summarize({1, 1000, 1e6});  // timings under TCG: anything
  v.faults_per_mib = stats::Summarize({faults_per_mib, faults_per_mib, faults_per_mib});
  v.pmd_share = stats::Summarize({pmd_share, pmd_share, pmd_share});
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

TEST(CompareVerdict, FewerThanThreeRepeatsCallNothing) {
  VariantSummary pte = WithIops(PageIntent::kPte, 100, 100, 100);
  VariantSummary pmd = WithIops(PageIntent::kPmd, 900, 900, 900);
  pte.iops = stats::Summarize({100, 101});
  pmd.iops = stats::Summarize({900, 901});
  const Verdict v = JudgePmdOverPte(&pte, &pmd);
  EXPECT_FALSE(v.called);
  EXPECT_EQ(v.text.rfind("nothing called: 2 pte and 2 pmd repeats", 0), 0u) << v.text;
}

TEST(CompareVerdict, PrintsTheRulesEvidence) {
  const VariantSummary pte = WithIops(PageIntent::kPte, 100, 95, 105);
  const VariantSummary pmd = WithIops(PageIntent::kPmd, 200, 190, 210);
  EXPECT_EQ(JudgePmdOverPte(&pte, &pmd).evidence, "IOPS pte vs pmd: ranges separate: [95, 105] vs [190, 210]");
}

TEST(CompareSignatureVerdict, UnderEmulationPmdIsJudgedByFaultsNotTimings) {
  const VariantSummary pte = WithSignature(PageIntent::kPte, 256, 0);
  const VariantSummary pmd = WithSignature(PageIntent::kPmd, 0.5, 1);
  const Verdict v = JudgePmdOverPteBySignature(&pte, &pmd, "qemu TCG");
  EXPECT_TRUE(v.called);
  EXPECT_EQ(v.judged_on, "signature (emulation: qemu TCG)");
  EXPECT_EQ(v.text.rfind("PMD mapped as asked, x512.0 fewer faults per MiB than PTE", 0), 0u) << v.text;
}

TEST(CompareSignatureVerdict, PmdRunsThatAreNotPmdMappedAreTheRegression) {
  const VariantSummary pte = WithSignature(PageIntent::kPte, 256, 0);
  const VariantSummary pmd = WithSignature(PageIntent::kPmd, 256, 0);
  const Verdict v = JudgePmdOverPteBySignature(&pte, &pmd, "qemu TCG");
  EXPECT_EQ(v.text.rfind("REGRESSION: PMD not mapped: the pmd runs were 0.0% PMD-mapped", 0), 0u) << v.text;
}

TEST(CompareSignatureVerdict, EqualFaultsWithPmdMappedCallNothing) {
  const VariantSummary pte = WithSignature(PageIntent::kPte, 0.5, 1);
  const VariantSummary pmd = WithSignature(PageIntent::kPmd, 0.5, 1);
  const Verdict v = JudgePmdOverPteBySignature(&pte, &pmd, "qemu TCG");
  EXPECT_FALSE(v.called);
  EXPECT_EQ(v.text.rfind("no significant difference in faults per MiB", 0), 0u) << v.text;
}

TEST(CompareRepeatPlan, FixedRunsExactlyItsRounds) {
  RepeatPlan plan = RepeatPlan::Fixed(2);
  int rounds = 0;
  while (plan.StartRound()) {
    plan.EndRound(true);
    ++rounds;
  }
  EXPECT_EQ(rounds, 2);
  EXPECT_EQ(plan.Note(""), "");
}

TEST(CompareRepeatPlan, AutoRunsThreeRoundsThenStopsOnceDecided) {
  RepeatPlan plan = RepeatPlan::Auto(3600);
  int rounds = 0;
  while (plan.StartRound()) {
    ++rounds;
    plan.EndRound(rounds >= 5);  // decided from the fifth round on
  }
  EXPECT_EQ(rounds, 5);
  EXPECT_EQ(plan.Note("").rfind("--repeat=auto: decided after 5 rounds", 0), 0u) << plan.Note("");
}

TEST(CompareRepeatPlan, AutoStopsWhenTheBudgetIsSpentAndSaysWhy) {
  RepeatPlan plan = RepeatPlan::Auto(0);  // no time for more than the three rounds a spread needs
  int rounds = 0;
  while (plan.StartRound()) {
    ++rounds;
    plan.EndRound(false);
  }
  EXPECT_EQ(rounds, 3);
  const std::string note = plan.Note("mmap: ranges overlap");
  EXPECT_NE(note.find("not decided within the budget (3 rounds"), std::string::npos) << note;
  EXPECT_NE(note.find("mmap: ranges overlap"), std::string::npos) << note;
}

TEST(CompareRepeatPlan, AutoNeverRunsMoreThanItsMostRounds) {
  RepeatPlan plan = RepeatPlan::Auto(3600);
  int rounds = 0;
  while (plan.StartRound()) {
    ++rounds;
    plan.EndRound(false);
  }
  EXPECT_EQ(rounds, kMaxAutoRounds);
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
