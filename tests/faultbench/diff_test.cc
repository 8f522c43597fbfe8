// faultbench diff's reading and judging: real fio JSON made on this
// machine (data/fio, see its README), and faultbench run documents in the
// layout report/ writes.
#include "faultbench/diff/diff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "absl/strings/str_join.h"
#include "faultbench/diff/diff_report.h"
#include "support/temp_dir.h"

namespace faultbench::diff {
namespace {

using nlohmann::json;

std::vector<RunSample> Side(const std::string& set) {
  std::vector<std::string> skipped;
  auto runs = ReadRuns({std::string(FIO_DATA_DIR) + "/" + set}, &skipped);
  EXPECT_TRUE(runs.ok()) << runs.status();
  EXPECT_TRUE(skipped.empty());
  return runs.ok() ? *runs : std::vector<RunSample>{};
}

const FigureDiff* FindFigure(const DiffOutcome& o, const std::string& name) {
  for (const JobDiff& job : o.jobs) {
    for (const FigureDiff& f : job.figures) {
      if (f.metric->name == name) return &f;
    }
  }
  return nullptr;
}

bool HasNote(const DiffOutcome& o, const std::string& text) {
  return std::any_of(o.notes.begin(), o.notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

// One faultbench run of one job, as report/json_report.cc lays it out.
json FaultbenchRun(const std::string& kernel, const std::string& emulation, const std::string& mount_options,
                   double faults, double fallback, double iops) {
  const double range = 128 << 20;
  json job = {{"jobname", "regress"},
              {"error", 0},
              {"job options", {{"name", "regress"}, {"size", "134217728"}, {"bs", "4096"}, {"rw", "write"},
                               {"ioengine", "mmap"}, {"numjobs", "1"}, {"mapping", "pmd"}}},
              {"read", {{"total_ios", 0}, {"iops", 0}, {"bw", 0}}},
              {"write", {{"total_ios", 32768}, {"iops", iops}, {"bw", iops * 4}, {"clat_ns", {{"mean", 900.0},
                                                                                          {"percentile", {{"99.000000", 5000}}}}}}},
              {"usr_cpu", 20.0},
              {"sys_cpu", 79.0},
              {"minf", faults},
              {"majf", 0},
              {"faultbench",
               {{"range_bytes", range},
                {"faults_per_mib", faults / 128},
                {"mapping", {{"requested", "pmd"}, {"engine", "mmap"},
                             {"pmd_bytes", fallback > 0 ? 0.0 : range}, {"pte_bytes", fallback > 0 ? range : 0.0},
                             {"doctor_reasons", fallback > 0 ? json::array({"only 0.0% of the file's 2 MiB chunks sit "
                                                                            "in 2 MiB aligned physical extents"})
                                                            : json::array()}}}}}};
  return {{"fio version", "faultbench-0.1.0"},
          {"jobs", json::array({job})},
          {"signature", {{"vmstat", {{"pgfault", faults + 70}, {"thp_fault_fallback", fallback}, {"numa_miss", 0}}},
                         {"page_tables_delta_kb", fallback > 0 ? 264 : 8},
                         {"dax_trace", {{"nopage", fallback > 0 ? 0 : 64}, {"needdsync", 0}, {"fallback", fallback},
                                        {"other", 0}, {"pte", fallback > 0 ? 32768 : 0}, {"lost", 0}}}}},
          {"system", {{"kernel", kernel}, {"kernel_config", "/boot/config-" + kernel}, {"kernel_debug_options", json::array()},
                      {"hypervisor", "QEMU"}, {"emulation", emulation}, {"cpu_model", "QEMU TCG CPU version 2.5+"},
                      {"online_cpus", 2}, {"cpu_governor", ""},
                      {"thp", {{"enabled", "always"}, {"defrag", "madvise"}, {"shmem_enabled", "never"}}},
                      {"filesystem", {{"type", "xfs"}, {"options", mount_options}}}}},
          {"taint", json::array({"hypervisor: QEMU (...)"})}};
}

std::vector<RunSample> Runs(int n, const std::string& kernel, const std::string& emulation, const std::string& options,
                            double faults, double fallback, double iops) {
  std::vector<RunSample> runs;
  for (int i = 0; i < n; ++i) {
    auto found = RunsOfDocument(FaultbenchRun(kernel, emulation, options, faults, fallback, iops * (1 + 0.1 * i)), "run");
    EXPECT_TRUE(found.ok()) << found.status();
    if (found.ok()) runs.push_back(found->front());
  }
  return runs;
}

TEST(DiffFiles, ReadsFiosJsonAsOneSampleAJob) {
  const std::vector<RunSample> runs = Side("psync-4k-2jobs");
  ASSERT_EQ(runs.size(), 3u);
  ASSERT_EQ(runs[0].jobs.size(), 1u) << "the two clones of job t add up into one sample";
  const JobSample& t = runs[0].jobs[0];
  EXPECT_EQ(t.name, "t");
  EXPECT_EQ(t.variant, "psync");
  EXPECT_EQ(t.options.at("bs"), "4k");
  EXPECT_EQ(t.options.at("numjobs"), "2");
  EXPECT_EQ(t.options.count("directory"), 0u) << "where the files went is not the workload";
  EXPECT_GT(t.figures.at("read.iops"), 800000);  // 825 k - 876 k for both clones together
  EXPECT_GT(t.figures.at("read.clat_p99_ns"), 0);
  EXPECT_FALSE(runs[0].knows_system);
  EXPECT_EQ(runs[0].tool, "fio-3.33");
}

TEST(DiffFiles, AFileThatHoldsNoRunIsAnErrorByNameAndSkippedInADirectory) {
  EXPECT_FALSE(RunsOfDocument(json{{"backed_by", "dax"}}, "doctor.json").ok());
  EXPECT_FALSE(ReadRuns({"/nonexistent/results"}, nullptr).ok());
}

// A group_reporting entry as report/json_report.cc lays it out: the sums at
// the top, each member's range and mapping under "workers".
json GroupRun(int unverified) {
  const double range = 8 << 20;
  json workers = json::array();
  for (int i = 0; i < 2; ++i) {
    workers.push_back({{"job", "grouped"}, {"worker", i}, {"range_bytes", range},
                       {"mapping", {{"requested", "pmd"}, {"engine", "pmem2"}, {"pmd_bytes", i == 0 ? range : 0.0},
                                    {"pte_bytes", i == 0 ? 0.0 : range},
                                    {"doctor_reasons", i == 0 ? json::array() : json::array({"file not aligned"})}}}});
  }
  json group = {{"jobname", "grouped"},
                {"groupid", 0},
                {"error", 0},
                {"job options", {{"name", "grouped"}, {"bs", "4096"}, {"rw", "randwrite"}, {"group_reporting", "1"}}},
                {"write", {{"total_ios", 4096}, {"iops", 50000.0}, {"bw", 200000.0}, {"clat_ns", {{"mean", 900.0}}}}},
                {"minf", 2100},
                {"majf", 0},
                {"faultbench",
                 {{"group_reporting", true},
                  {"members", 2},
                  {"mapping", {{"pmd_bytes", range}, {"pud_bytes", 0}, {"pte_bytes", range}, {"pmd_share", 0.5},
                               {"unverified_workers", unverified}}},
                  {"faults_per_mib", 2100.0 / 16},
                  {"workers", workers}}}};
  return {{"fio version", "faultbench-0.1.0"}, {"jobs", json::array({group})}};
}

TEST(DiffFiles, AGroupReportingEntryIsOneSampleWithItsMembersVariantAndRange) {
  auto runs = RunsOfDocument(GroupRun(0), "group.json");
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->front().jobs.size(), 1u);
  const JobSample& g = runs->front().jobs[0];
  EXPECT_EQ(g.name, "grouped");
  EXPECT_EQ(g.variant, "pmd/pmem2") << "the members' request and engine";
  EXPECT_DOUBLE_EQ(g.figures.at("faults_per_mib"), 2100.0 / 16) << "weighted by the members' ranges";
  EXPECT_DOUBLE_EQ(g.figures.at("pmd_share"), 0.5);
  EXPECT_EQ(g.doctor_reasons, std::vector<std::string>{"file not aligned"});
  EXPECT_DOUBLE_EQ(g.figures.at("write.iops"), 50000.0);

  auto unverified = RunsOfDocument(GroupRun(1), "group.json");
  ASSERT_TRUE(unverified.ok());
  EXPECT_EQ(unverified->front().jobs[0].figures.count("pmd_share"), 0u) << "a member was not read back";
}

TEST(DiffFio, TheSameRateLimitedJobTwiceIsNoRegression) {
  const DiffOutcome o = JudgeSides(Side("psync-4k-rate"), Side("psync-4k-rate-again"), UnderTest::kKernel);
  EXPECT_EQ(o.verdict, DiffVerdict::kNoRegression) << o.verdict_text;
  EXPECT_EQ(o.ExitStatus(), 0);
  const FigureDiff* iops = FindFigure(o, "read.iops");
  ASSERT_NE(iops, nullptr);
  EXPECT_EQ(iops->verdict, FigureVerdict::kNoChange);
  EXPECT_TRUE(HasNote(o, "base: taint unknown (fio-3.33 records no system facts)"));
  EXPECT_FALSE(HasNote(o, "CPU saturated"));
}

TEST(DiffFio, A64KBlockSizeIsNotComparableUnlessTheWorkloadIsUnderTest) {
  const DiffOutcome kernel = JudgeSides(Side("psync-4k"), Side("psync-64k"), UnderTest::kKernel);
  EXPECT_EQ(kernel.ExitStatus(), 125);
  EXPECT_EQ(kernel.verdict_text.rfind("not comparable because job t [psync]: bs: 4k (base) vs 64k (new)", 0), 0u)
      << kernel.verdict_text;
  const DiffOutcome workload = JudgeSides(Side("psync-4k"), Side("psync-64k"), UnderTest::kWorkload);
  EXPECT_EQ(workload.ExitStatus(), 1) << workload.verdict_text;
  EXPECT_EQ(FindFigure(workload, "read.iops")->verdict, FigureVerdict::kRegression);
  EXPECT_EQ(FindFigure(workload, "read.clat_p99_ns")->verdict, FigureVerdict::kRegression);
  EXPECT_NEAR(FindFigure(workload, "read.iops")->change.change_pct, -92.7, 0.1);
}

TEST(DiffFio, DeeperQueuesAreFasterAndSlowerPerIo) {
  const DiffOutcome o = JudgeSides(Side("libaio-qd1"), Side("libaio-qd8"), UnderTest::kWorkload);
  EXPECT_EQ(FindFigure(o, "read.iops")->verdict, FigureVerdict::kImprovement);
  EXPECT_EQ(FindFigure(o, "read.clat_mean_ns")->verdict, FigureVerdict::kRegression);
  EXPECT_EQ(o.ExitStatus(), 1) << "a latency regression is a regression, whatever the IOPS did";
  EXPECT_TRUE(HasNote(o, "better: read.iops"));
}

TEST(DiffFio, ASideWhoseRunsSaturatedTheCpuIsNamed) {
  const DiffOutcome o = JudgeSides(Side("psync-4k"), Side("psync-4k-2jobs"), UnderTest::kWorkload);
  EXPECT_TRUE(HasNote(o, "base: CPU saturated in 1 of 3 runs (usr+sys >= 95%)")) << DiffText(o);
  EXPECT_FALSE(HasNote(o, "new: CPU saturated"));
}

TEST(DiffFio, FewerThanThreeRunsASideCannotBeJudged) {
  std::vector<RunSample> two = Side("psync-4k-rate");
  two.pop_back();
  const DiffOutcome o = JudgeSides(two, Side("psync-4k-rate-again"), UnderTest::kKernel);
  EXPECT_EQ(o.ExitStatus(), 125);
  EXPECT_EQ(o.verdict_text.rfind("cannot judge: fewer than 3 runs a side (base 2, new 3)", 0), 0u) << o.verdict_text;
}

TEST(DiffSignature, MisalignedExtentsAreARegressionWithTheirCauseUnderFs) {
  const std::string aligned = "rw,attr2,dax=always,inode64,sunit=4096,swidth=4096,noquota";
  const std::string plain = "rw,attr2,dax=always,inode64,noquota";
  const DiffOutcome o = JudgeSides(Runs(3, "6.1.0-57-amd64", "qemu TCG", aligned, 64, 0, 10000),
                                   Runs(3, "6.1.0-57-amd64", "qemu TCG", plain, 32768, 64, 9000), UnderTest::kFs);
  EXPECT_EQ(o.ExitStatus(), 1) << o.verdict_text;
  EXPECT_EQ(o.emulation, "qemu TCG");
  for (const char* name : {"faults_per_mib", "vmstat.thp_fault_fallback", "dax.fallback", "pmd_share"}) {
    ASSERT_NE(FindFigure(o, name), nullptr) << name;
    EXPECT_EQ(FindFigure(o, name)->verdict, FigureVerdict::kRegression) << name;
  }
  EXPECT_EQ(FindFigure(o, "write.iops")->verdict, FigureVerdict::kNotJudged) << "timings under TCG";
  const std::string causes = absl::StrJoin(o.causes, "\n");
  EXPECT_NE(causes.find("under test (fs): mount options: sunit=4096,swidth=4096 only in base"), std::string::npos) << causes;
  EXPECT_NE(causes.find("only 0.0% of the file's 2 MiB chunks sit in 2 MiB aligned physical extents"), std::string::npos);
  EXPECT_NE(causes.find("PMD faults fell back to 4 KiB PTEs on the new side"), std::string::npos);
  // The same sides under --under-test=kernel: the file system is not what was meant to change.
  const DiffOutcome kernel = JudgeSides(Runs(3, "6.1", "qemu TCG", aligned, 64, 0, 1), Runs(3, "6.1", "qemu TCG", plain, 64, 0, 1),
                                        UnderTest::kKernel);
  EXPECT_EQ(kernel.ExitStatus(), 125);
  EXPECT_NE(kernel.verdict_text.find("mount options"), std::string::npos) << kernel.verdict_text;
}

TEST(DiffSignature, DevtmpfsSizesOfADeviceDaxRunDoNotMakeKernelsIncomparable) {
  // Device DAX: the file system recorded is the device node's devtmpfs,
  // sized by the RAM each kernel left free.
  const auto on_devtmpfs = [](const std::string& kernel, const std::string& size) {
    json doc = FaultbenchRun(kernel, "qemu TCG", "", 64, 0, 1000);
    doc["system"]["filesystem"] = {{"type", "devtmpfs"}, {"options", "rw,relatime,size=" + size + ",mode=755"}};
    std::vector<RunSample> runs;
    for (int i = 0; i < 3; ++i) runs.push_back(RunsOfDocument(doc, "run").value().front());
    return runs;
  };
  const DiffOutcome o =
      JudgeSides(on_devtmpfs("6.1.0-57-amd64", "1000452k"), on_devtmpfs("6.12.117+deb13-amd64", "1004340k"), UnderTest::kKernel);
  EXPECT_EQ(o.ExitStatus(), 0) << o.verdict_text;
  EXPECT_TRUE(o.comparability.not_comparable.empty());
}

TEST(DiffSignature, TwoKernelsWithTheSameSignatureAreNoRegressionUnderEmulation) {
  // Timings differ wildly under TCG; the signature does not.
  const DiffOutcome o = JudgeSides(Runs(3, "6.1.0-57-amd64", "qemu TCG", "rw", 64, 0, 1000),
                                   Runs(3, "6.12.95+deb12-amd64", "qemu TCG", "rw", 64, 0, 100), UnderTest::kKernel);
  EXPECT_EQ(o.ExitStatus(), 0) << o.verdict_text;
  ASSERT_EQ(o.comparability.under_test.size(), 1u);
  EXPECT_EQ(o.comparability.under_test[0].fact, kFactKernel);
  EXPECT_NE(DiffText(o).find("Under emulation (qemu TCG): timings are shown but not judged"), std::string::npos);
}

TEST(DiffSignature, AFailedRunOrASideMixingKernelsCannotBeJudged) {
  std::vector<RunSample> failed = Runs(3, "6.1", "", "rw", 64, 0, 1);
  failed[1].error = "job 'regress' failed: SIGBUS";
  EXPECT_EQ(JudgeSides(failed, Runs(3, "6.1", "", "rw", 64, 0, 1), UnderTest::kKernel).ExitStatus(), 125);
  std::vector<RunSample> mixed = Runs(3, "6.1", "", "rw", 64, 0, 1);
  mixed[2].facts[kFactKernel] = "6.12";
  const DiffOutcome o = JudgeSides(mixed, Runs(3, "6.12", "", "rw", 64, 0, 1), UnderTest::kKernel);
  EXPECT_EQ(o.ExitStatus(), 125);
  EXPECT_NE(o.verdict_text.find("the base runs differ among themselves in kernel: 6.1 / 6.12"), std::string::npos)
      << o.verdict_text;
}

TEST(DiffReport, JsonCarriesBothSidesEveryFigureAndTheExitStatus) {
  const DiffOutcome o = JudgeSides(Side("psync-4k"), Side("psync-64k"), UnderTest::kWorkload);
  const json doc = DiffJson(o);
  EXPECT_EQ(doc["exit_status"], 1);
  EXPECT_EQ(doc["verdict"], "regression");
  EXPECT_EQ(doc["base"]["taint"], "unknown");
  const json& iops = doc["jobs"][0]["figures"][0];
  EXPECT_EQ(iops["figure"], "read.iops");
  EXPECT_EQ(iops["worse"], "down");
  EXPECT_EQ(iops["base"]["values"].size(), 3u);
  for (const char* key : {"min", "median", "max", "mean", "stddev_percent"}) EXPECT_TRUE(iops["new"].contains(key));
  EXPECT_EQ(iops["verdict"], "REGRESSION");
  const std::string svg = DiffPlotSvg(o);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("read.iops [psync]"), std::string::npos);
}

TEST(DiffReport, TextUsesLkpsLayout) {
  const std::string text = DiffText(JudgeSides(Side("libaio-qd1"), Side("libaio-qd8"), UnderTest::kWorkload));
  EXPECT_NE(text.find("%stddev    %change"), std::string::npos) << text;
  EXPECT_NE(text.find("+181.4%"), std::string::npos) << text;
  EXPECT_NE(text.find("under test: job t [libaio]: iodepth: 1 (base) vs 8 (new)"), std::string::npos) << text;
}

// An improvement and nothing else: the PMD faults that fell back on the
// base side are PMDs on the new side, timings unchanged.
std::vector<RunSample> FellBack() { return Runs(3, "6.1.0-57-amd64", "", "rw", 32768, 64, 1000); }
std::vector<RunSample> GotPmds() { return Runs(3, "6.12.95+deb12-amd64", "", "rw", 64, 0, 1000); }

TEST(DiffAnyChange, AnImprovementOnlyPairExitsOneWithAnyChangeAndZeroWithout) {
  const DiffOutcome regressions = JudgeSides(FellBack(), GotPmds(), UnderTest::kKernel);
  EXPECT_EQ(regressions.ExitStatus(), 0) << regressions.verdict_text;
  EXPECT_EQ(regressions.verdict_text.rfind("no regression: ", 0), 0u) << regressions.verdict_text;
  ASSERT_NE(FindFigure(regressions, "pmd_share"), nullptr);
  EXPECT_EQ(FindFigure(regressions, "pmd_share")->verdict, FigureVerdict::kImprovement);

  const DiffOutcome any = JudgeSides(FellBack(), GotPmds(), UnderTest::kKernel, VerdictRule::kAnyChange);
  EXPECT_EQ(any.verdict, DiffVerdict::kChange);
  EXPECT_EQ(any.ExitStatus(), 1) << any.verdict_text;
  EXPECT_EQ(any.headline.rfind("CHANGE: ", 0), 0u) << any.headline;
  EXPECT_NE(any.headline.find(" figures changed (0 worse, "), std::string::npos) << any.headline;
  EXPECT_NE(any.verdict_text.find("better: faults_per_mib 256 -> 0.5"), std::string::npos) << any.verdict_text;
  const json doc = DiffJson(any);
  EXPECT_EQ(doc["verdict"], "change");
  EXPECT_EQ(doc["counts"], "any change");
  EXPECT_EQ(doc["exit_status"], 1);
}

TEST(DiffAnyChange, NoSignificantChangeIsNoChangeAndARegressionStillCounts) {
  const DiffOutcome same = JudgeSides(GotPmds(), GotPmds(), UnderTest::kKernel, VerdictRule::kAnyChange);
  EXPECT_EQ(same.verdict, DiffVerdict::kNoChange);
  EXPECT_EQ(same.ExitStatus(), 0);
  EXPECT_EQ(same.verdict_text.rfind("no change: no significant difference in ", 0), 0u) << same.verdict_text;
  const DiffOutcome worse = JudgeSides(GotPmds(), FellBack(), UnderTest::kKernel, VerdictRule::kAnyChange);
  EXPECT_EQ(worse.ExitStatus(), 1) << worse.verdict_text;
  EXPECT_NE(worse.headline.find(" worse, 0 better)"), std::string::npos) << worse.headline;
  EXPECT_NE(absl::StrJoin(worse.causes, "\n").find("PMD faults fell back"), std::string::npos) << "a worse fallback";
  // Cannot judge stays 125 under either rule.
  std::vector<RunSample> two = GotPmds();
  two.pop_back();
  EXPECT_EQ(JudgeSides(two, two, UnderTest::kKernel, VerdictRule::kAnyChange).ExitStatus(), 125);
}

TEST(DiffAnyChange, RunDiffPassesTheRuleFromItsConfig) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  for (int i = 0; i < 3; ++i) {
    std::ofstream(dir.File("base-" + std::to_string(i) + ".json"))
        << FaultbenchRun("6.1.0-57-amd64", "", "rw", 32768, 64, 1000 * (1 + 0.1 * i)).dump();
    std::ofstream(dir.File("new-" + std::to_string(i) + ".json"))
        << FaultbenchRun("6.12.95+deb12-amd64", "", "rw", 64, 0, 1000 * (1 + 0.1 * i)).dump();
  }
  DiffConfig config;
  for (int i = 0; i < 3; ++i) {
    config.base_paths.push_back(dir.File("base-" + std::to_string(i) + ".json"));
    config.new_paths.push_back(dir.File("new-" + std::to_string(i) + ".json"));
  }
  auto regressions = RunDiff(config);
  ASSERT_TRUE(regressions.ok()) << regressions.status();
  EXPECT_EQ(regressions->ExitStatus(), 0) << regressions->verdict_text;
  config.rule = VerdictRule::kAnyChange;
  auto any = RunDiff(config);
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_EQ(any->ExitStatus(), 1) << any->verdict_text;
}

}  // namespace
}  // namespace faultbench::diff
