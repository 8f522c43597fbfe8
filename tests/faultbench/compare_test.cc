#include "faultbench/compare/compare.h"
#include "faultbench/compare/repeat_plan.h"
#include "faultbench/compare/signature_verdict.h"
#include "faultbench/compare/numa_matrix.h"
#include "faultbench/report/compare_report.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace faultbench {
namespace {

// Three repeats: min, median and max; a pmd variant all PMD-mapped.
VariantSummary WithIops(pmstore::mapping::PageIntent mode, double median, double min, double max) {
  VariantSummary v;
  v.mode = mode;
  v.iops = stats::Summarize({min, median, max});
  const double pmd = mode == pmstore::mapping::PageIntent::kPmd ? 1 : 0;
  v.pmd_share = stats::Summarize({pmd, pmd, pmd});
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
  const Verdict v = JudgeOnTimings(&pte, &pmd);
  EXPECT_TRUE(v.available());
  EXPECT_DOUBLE_EQ(v.ratio, 2.0);
  EXPECT_EQ(v.kind, VerdictKind::kFaster);
  EXPECT_EQ(VerdictText(v), "PMD faster x2.00");
}

TEST(CompareVerdict, PmdRunsThatWereNotPmdMappedAreNoPmdResult) {
  const VariantSummary pte = WithIops(PageIntent::kPte, 100, 95, 105);
  VariantSummary pmd = WithIops(PageIntent::kPmd, 200, 190, 210);
  pmd.pmd_share = stats::Summarize({0.4, 0.4, 0.5});
  const Verdict v = JudgeOnTimings(&pte, &pmd);
  EXPECT_DOUBLE_EQ(v.variant_share, 0.4);
  EXPECT_EQ(VerdictText(v), "PMD faster x2.00 (but the pmd runs were 40.0% PMD-mapped: not a PMD result)");
}

TEST(CompareVerdict, OverlappingSpreadsAreNoSignificantDifference) {
  const VariantSummary pte = WithIops(PageIntent::kPte, 100, 80, 120);
  const VariantSummary pmd = WithIops(PageIntent::kPmd, 110, 100, 130);
  EXPECT_EQ(VerdictText(JudgeOnTimings(&pte, &pmd)), "no significant difference");
}

TEST(CompareVerdict, TinyDifferencesAreNoiseEvenWithoutSpread) {
  const VariantSummary pte = WithIops(PageIntent::kPte, 100, 100, 100);
  const VariantSummary pmd = WithIops(PageIntent::kPmd, 101, 101, 101);
  EXPECT_EQ(VerdictText(JudgeOnTimings(&pte, &pmd)), "no significant difference");
}

TEST(CompareVerdict, PmdSlowerIsARegressionWithItsFactor) {
  // The 2016 bare-metal numbers: PTE 590299 KB/s, PMD 17931 KB/s.
  const VariantSummary pte = WithIops(PageIntent::kPte, 590299, 580000, 600000);
  const VariantSummary pmd = WithIops(PageIntent::kPmd, 17931, 17000, 19000);
  const Verdict v = JudgeOnTimings(&pte, &pmd);
  EXPECT_EQ(VerdictText(v).rfind("REGRESSION: PMD slower than PTE x32.9", 0), 0u) << VerdictText(v);
}

TEST(CompareVerdict, MissingModeGivesNoVerdict) {
  const VariantSummary pmd = WithIops(PageIntent::kPmd, 1, 1, 1);
  EXPECT_FALSE(JudgeOnTimings(nullptr, &pmd).available());
}

TEST(CompareVerdict, FewerThanThreeRepeatsCallNothing) {
  VariantSummary pte = WithIops(PageIntent::kPte, 100, 100, 100);
  VariantSummary pmd = WithIops(PageIntent::kPmd, 900, 900, 900);
  pte.iops = stats::Summarize({100, 101});
  pmd.iops = stats::Summarize({900, 901});
  const Verdict v = JudgeOnTimings(&pte, &pmd);
  EXPECT_FALSE(v.called());
  EXPECT_EQ(VerdictText(v).rfind("nothing called: 2 pte and 2 pmd repeats", 0), 0u) << VerdictText(v);
}

TEST(CompareVerdict, PrintsTheRulesEvidence) {
  const VariantSummary pte = WithIops(PageIntent::kPte, 100, 95, 105);
  const VariantSummary pmd = WithIops(PageIntent::kPmd, 200, 190, 210);
  EXPECT_EQ(VerdictEvidence(JudgeOnTimings(&pte, &pmd)), "IOPS pte vs pmd: ranges separate: [95, 105] vs [190, 210]");
}

TEST(CompareSignatureVerdict, UnderEmulationPmdIsJudgedByFaultsNotTimings) {
  const VariantSummary pte = WithSignature(PageIntent::kPte, 256, 0);
  const VariantSummary pmd = WithSignature(PageIntent::kPmd, 0.5, 1);
  const Verdict v = JudgeOnSignature(&pte, &pmd, "qemu TCG");
  EXPECT_TRUE(v.called());
  EXPECT_EQ(JudgedOn(v), "signature (emulation: qemu TCG)");
  EXPECT_EQ(VerdictText(v).rfind("PMD mapped as asked, x512.0 fewer faults per MiB than PTE", 0), 0u) << VerdictText(v);
}

TEST(CompareSignatureVerdict, PmdRunsThatAreNotPmdMappedAreTheRegression) {
  const VariantSummary pte = WithSignature(PageIntent::kPte, 256, 0);
  const VariantSummary pmd = WithSignature(PageIntent::kPmd, 256, 0);
  const Verdict v = JudgeOnSignature(&pte, &pmd, "qemu TCG");
  EXPECT_EQ(VerdictText(v).rfind("REGRESSION: PMD not mapped: the pmd runs were 0.0% PMD-mapped", 0), 0u) << VerdictText(v);
}

TEST(CompareSignatureVerdict, EqualFaultsWithPmdMappedCallNothing) {
  const VariantSummary pte = WithSignature(PageIntent::kPte, 0.5, 1);
  const VariantSummary pmd = WithSignature(PageIntent::kPmd, 0.5, 1);
  const Verdict v = JudgeOnSignature(&pte, &pmd, "qemu TCG");
  EXPECT_FALSE(v.called());
  EXPECT_EQ(VerdictText(v).rfind("no significant difference in faults per MiB", 0), 0u) << VerdictText(v);
}

// A comparison's outcome after `plan`, with these groups.
CompareOutcome Outcome(const RepeatPlan& plan, std::vector<GroupVerdict> groups) {
  CompareOutcome outcome;
  outcome.repeats = plan.Outcome();
  outcome.groups = std::move(groups);
  return outcome;
}

// A group whose verdict is `kind`, its ranges overlapping unless it called a difference.
GroupVerdict Judged(const std::string& group, VerdictKind kind) {
  GroupVerdict g{group, {}};
  g.verdict.kind = kind;
  g.verdict.change = stats::JudgeChange(stats::Summarize({1, 2, 3}), stats::Summarize({2, 3, 4}), {});
  return g;
}

TEST(CompareRepeatPlan, FixedRunsExactlyItsRounds) {
  RepeatPlan plan = RepeatPlan::Fixed(2);
  int rounds = 0;
  while (plan.StartRound()) {
    plan.EndRound(true);
    ++rounds;
  }
  EXPECT_EQ(rounds, 2);
  EXPECT_EQ(RepeatNote(Outcome(plan, {})), "");
}

TEST(CompareRepeatPlan, AutoRunsThreeRoundsThenStopsOnceDecided) {
  RepeatPlan plan = RepeatPlan::Auto(3600);
  int rounds = 0;
  while (plan.StartRound()) {
    ++rounds;
    plan.EndRound(rounds >= 5);  // decided from the fifth round on
  }
  EXPECT_EQ(rounds, 5);
  const std::string note = RepeatNote(Outcome(plan, {Judged("mmap", VerdictKind::kFaster)}));
  EXPECT_EQ(note.rfind("--repeat=auto: decided after 5 rounds", 0), 0u) << note;
}

TEST(CompareRepeatPlan, AutoStopsWhenTheBudgetIsSpentAndSaysWhy) {
  RepeatPlan plan = RepeatPlan::Auto(0);  // no time for more than the three rounds a spread needs
  int rounds = 0;
  while (plan.StartRound()) {
    ++rounds;
    plan.EndRound(false);
  }
  EXPECT_EQ(rounds, 3);
  const std::string note = RepeatNote(Outcome(plan, {Judged("mmap", VerdictKind::kNoDifference)}));
  EXPECT_NE(note.find("not decided within the budget (3 rounds"), std::string::npos) << note;
  EXPECT_NE(note.find("mmap: IOPS pte vs pmd: ranges overlap"), std::string::npos) << note;
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

// A two-node machine's plan, as PlanNumaMatrix reads it.
MatrixPlan TwoNodes() {
  MatrixPlan plan;
  plan.cpu_nodes = {0, 1};
  plan.mem_nodes = {0, 1};
  plan.node_cpus = {{0, {0}}, {1, {1}}};
  return plan;
}

VariantSummary Cell(int cpu, int mem, std::map<int, uint64_t> pages, std::vector<int> cpus) {
  VariantSummary v = WithIops(PageIntent::kPmd, 100, 90, 110);
  v.cpu_node = cpu;
  v.mem_node = mem;
  v.page_nodes = std::move(pages);
  v.cpus = std::move(cpus);
  v.placement_source = "move_pages";
  return v;
}

TEST(NumaMatrix, EveryPairIsACellWithItsPolicy) {
  const std::vector<NumaSet> sets = MatrixSets(TwoNodes());
  ASSERT_EQ(sets.size(), 4u);
  EXPECT_EQ(sets[1].label, "cpu0/mem1");
  EXPECT_EQ(sets[1].options.cpunodebind, "0");
  EXPECT_EQ(sets[1].options.membind, "1");
  EXPECT_EQ(sets[1].cpu_node, 0);
  EXPECT_EQ(sets[1].mem_node, 1);
  // On DAX the memory is the device: CPU node x the device, no --membind.
  MatrixPlan dax = TwoNodes();
  dax.dax_device = "pmem0";
  dax.mem_nodes = {1};
  const std::vector<NumaSet> dax_sets = MatrixSets(dax);
  ASSERT_EQ(dax_sets.size(), 2u);
  EXPECT_EQ(dax_sets[0].label, "cpu0/pmem0");
  EXPECT_TRUE(dax_sets[0].options.membind.empty());
  EXPECT_EQ(dax_sets[0].mem_node, 1);
}

TEST(NumaMatrix, ACellIsExactOnlyWithEveryPageOnItsNodeAndEveryWorkerOnItsCpus) {
  const std::vector<VariantSummary> variants = {
      Cell(0, 0, {{0, 2048}}, {0}),              // exact
      Cell(0, 1, {{0, 1024}, {1, 1024}}, {0}),   // half the pages on the wrong node
      Cell(1, 0, {{0, 2048}}, {0, 1}),           // a worker was allowed off node 1
      Cell(1, 1, {{-1, 2048}}, {1})};            // absent: move_pages on DAX, never exact
  const std::vector<NumaMatrix> matrices = BuildMatrices(TwoNodes(), variants);
  ASSERT_EQ(matrices.size(), 1u);
  EXPECT_EQ(matrices[0].variant, "pmd/mmap");
  const std::vector<MatrixCell>& cells = matrices[0].cells;
  ASSERT_EQ(cells.size(), 4u);
  EXPECT_TRUE(cells[0].exact);
  EXPECT_EQ(cells[0].placement, "exact");
  EXPECT_FALSE(cells[1].exact);
  EXPECT_EQ(cells[1].placement, "pages 0=1024 1=1024");
  EXPECT_FALSE(cells[2].exact);
  EXPECT_EQ(cells[2].placement, "cpus 0,1 are not node 1's");
  EXPECT_FALSE(cells[3].exact);
  EXPECT_EQ(cells[3].placement, "pages absent=2048");
  EXPECT_FALSE(matrices[0].AllExact());
  EXPECT_TRUE(BuildMatrices(TwoNodes(), {variants[0]})[0].AllExact());
}

TEST(NumaMatrix, RefusesAJobThatAlreadyPinsItsNodes) {
  JobOptions job;
  job.directory = "/var/tmp";
  job.numa.membind = "0";
  const auto plan = PlanNumaMatrix(job);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("--numa-matrix sets --cpunodebind and --membind"), std::string::npos);
  job.numa = {};
  const auto here = PlanNumaMatrix(job);
  ASSERT_TRUE(here.ok()) << here.status();
  EXPECT_FALSE(here->cpu_nodes.empty());
  EXPECT_TRUE(here->dax_device.empty()) << "/var/tmp is not DAX";
}

}  // namespace
}  // namespace faultbench
