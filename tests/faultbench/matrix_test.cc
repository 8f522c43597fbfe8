// faultbench matrix's reading, judging and renderings, on the synthetic
// study of matrix_fixture.h: kernels in kernels.txt's order, a change
// between neighbours marked exactly where diff's rule calls one, statuses
// shown, a DIR without kernels.txt refused.
#include "faultbench/matrix/matrix.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "faultbench/matrix/matrix_report.h"
#include "matrix_fixture.h"
#include "support/temp_dir.h"

namespace faultbench::matrix {
namespace {

using matrix_fixture::kKernels;
using nlohmann::json;

class MatrixTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    matrix_fixture::WriteStudy(dir_.path());
    auto m = ReadMatrix(dir_.path());
    ASSERT_TRUE(m.ok()) << m.status();
    m_ = *std::move(m);
  }

  std::vector<diff::RunSample> CellRuns(size_t kernel, const std::string& backing) const {
    auto runs = diff::ReadRuns({matrix_fixture::CellDir(dir_.path(), kernel, backing).string()}, nullptr);
    EXPECT_TRUE(runs.ok()) << runs.status();
    return runs.ok() ? *runs : std::vector<diff::RunSample>{};
  }

  // The line of the text report that starts with `prefix` after `after`.
  static std::string LineAfter(const std::string& text, const std::string& after, const std::string& prefix) {
    size_t at = text.find(after);
    if (at == std::string::npos) return "";
    at = text.find("\n" + prefix, at);
    if (at == std::string::npos) return "";
    return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
  }

  TempDir dir_;
  Matrix m_;
};

TEST_F(MatrixTest, KernelsKeepTheOrderOfKernelsTxtNotTheirNames) {
  EXPECT_EQ(m_.kernels, kKernels);
  EXPECT_EQ(m_.backings, matrix_fixture::kBackings);
  ASSERT_EQ(m_.cells.size(), 12u);
  EXPECT_EQ(m_.At(0, 2).kernel, kKernels[2]);
  EXPECT_EQ(m_.At(1, 0).backing, "tmpfs-huge");
  // 6.9 sorts after 6.16 by name; the report keeps version order.
  const std::string text = MatrixText(m_);
  const size_t six_nine = text.find("\n  6.9.7+bpo "), six_sixteen = text.find("\n  6.16.12+deb13 ");
  ASSERT_NE(six_nine, std::string::npos) << text;
  ASSERT_NE(six_sixteen, std::string::npos) << text;
  EXPECT_LT(six_nine, six_sixteen) << text;
  EXPECT_EQ(ShortKernel("linux-image-6.12.117+deb13-amd64"), "6.12.117+deb13");
}

TEST_F(MatrixTest, AChangeBetweenNeighboursIsMarkedWithDiffsVerdict) {
  ASSERT_EQ(m_.changes.size(), 2u) << MatrixText(m_);
  const Change* share = m_.ChangeAt("pagecache-ext4", "pte/mmap", "pmd_share", kKernels[2]);
  ASSERT_NE(share, nullptr) << MatrixText(m_);
  EXPECT_EQ(share->from_kernel, kKernels[1]);
  EXPECT_EQ(share->verdict, diff::FigureVerdict::kImprovement);
  EXPECT_TRUE(share->up);
  EXPECT_DOUBLE_EQ(share->base_median, 0);
  EXPECT_DOUBLE_EQ(share->new_median, 0.94);
  // The same verdict diff gives the two cells' runs.
  const diff::DiffOutcome o = diff::JudgeSides(CellRuns(1, "pagecache-ext4"), CellRuns(2, "pagecache-ext4"),
                                               UnderTest::kPackage);
  bool found = false;
  for (const diff::JobDiff& job : o.jobs) {
    for (const diff::FigureDiff& f : job.figures) {
      if (job.variant == "pte/mmap" && f.metric->name == "pmd_share") {
        EXPECT_EQ(f.verdict, share->verdict);
        found = true;
      }
      // faults/MiB moved (median 256 -> 260) but the ranges overlap: diff calls nothing, nor does matrix.
      if (job.variant == "pte/mmap" && f.metric->name == "faults_per_mib") {
        EXPECT_EQ(f.verdict, diff::FigureVerdict::kNoChange);
        EXPECT_NE(f.next.median, f.base.median);
      }
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(m_.ChangeAt("pagecache-ext4", "pte/mmap", "faults_per_mib", kKernels[2]), nullptr);
  EXPECT_EQ(m_.ChangeAt("pagecache-ext4", "pmd/mmap", "pmd_share", kKernels[2]), nullptr);
  EXPECT_EQ(m_.ChangeAt("pagecache-ext4", "pte/mmap", "pmd_share", kKernels[1]), nullptr) << "6.1 and 6.9 agree";
}

TEST_F(MatrixTest, TheNeighbourIsTheNearestEarlierKernelWithResults) {
  // tmpfs-huge was skipped on 6.9, so 6.16 is judged against 6.1.
  const Change* fallback = m_.ChangeAt("tmpfs-huge", "pmd/mmap", "vmstat.thp_fault_fallback", kKernels[2]);
  ASSERT_NE(fallback, nullptr) << MatrixText(m_);
  EXPECT_EQ(fallback->from_kernel, kKernels[0]);
  EXPECT_EQ(fallback->verdict, diff::FigureVerdict::kRegression);
  EXPECT_DOUBLE_EQ(fallback->new_median, 64);
}

TEST_F(MatrixTest, TheTextMarksChangesAndListsThem) {
  const std::string text = MatrixText(m_);
  const std::string row = LineAfter(text, "\n  pte/mmap ", "  6.16.12+deb13 ");
  EXPECT_NE(row.find("0.94 [0.93-0.95] \xe2\x96\xb2 "), std::string::npos) << row;
  EXPECT_NE(row.find("260 [255-265]   "), std::string::npos) << "overlapping ranges carry no marker: " << row;
  const std::string tmpfs = LineAfter(text, "\ntmpfs-huge\n", "  6.16.12+deb13 ");
  EXPECT_NE(tmpfs.find("64 \xe2\x96\xb2!"), std::string::npos) << "a regression: " << tmpfs;
  EXPECT_NE(text.find("  pagecache-ext4 pte/mmap pmd_share: 0 -> 0.94 between 6.9.7+bpo and 6.16.12+deb13 "
                      "(improvement; ranges separate"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  tmpfs-huge pmd/mmap vmstat.thp_fault_fallback: 0 -> 64 between 6.1.0-57 and 6.16.12+deb13 "
                      "(REGRESSION;"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("left out, 0 for every kernel: majf"), std::string::npos) << text;
}

TEST_F(MatrixTest, StatusesAreShownWhereResultsAreNot) {
  EXPECT_EQ(m_.At(0, 3).state, CellState::kStatus);
  EXPECT_EQ(m_.At(0, 3).status, matrix_fixture::kHang);
  EXPECT_EQ(m_.At(1, 3).state, CellState::kNotRun);
  EXPECT_EQ(m_.At(0, 2).state, CellState::kResults);
  const std::string text = MatrixText(m_);
  EXPECT_NE(LineAfter(text, "\npagecache-ext4\n", "  7.3.4+deb13 ").find(matrix_fixture::kHang), std::string::npos)
      << text;
  EXPECT_NE(LineAfter(text, "\ntmpfs-huge\n", "  6.9.7+bpo ").find(matrix_fixture::kSkipped), std::string::npos)
      << text;
  EXPECT_NE(LineAfter(text, "\ntmpfs-huge\n", "  7.3.4+deb13 ").find("not run"), std::string::npos) << text;
  // A backing without any results lists each kernel's state.
  EXPECT_NE(LineAfter(text, "\ndevdax-2M\n", "  6.1.0-57 ").find(matrix_fixture::kFailed), std::string::npos) << text;
  EXPECT_NE(LineAfter(text, "\ndevdax-2M\n", "  6.9.7+bpo ").find("not run"), std::string::npos) << text;
}

TEST(Matrix, APairDiffCannotJudgeMarksNothingAndSaysWhy) {
  TempDir dir;
  matrix_fixture::WriteStudy(dir.path());
  // 6.16's VM had 4 CPUs on pagecache-ext4: under --under-test=package not comparable (a machine fact).
  for (const char* mode : {"pte", "pmd"}) {
    const auto path = matrix_fixture::CellDir(dir.path(), 2, "pagecache-ext4") / (std::string(mode) + ".json");
    json doc = json::parse(std::ifstream(path));
    for (json& run : doc["runs"]) run["result"]["system"]["online_cpus"] = 4;
    std::ofstream(path) << doc.dump();
  }
  const auto m = ReadMatrix(dir.path());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->ChangeAt("pagecache-ext4", "pte/mmap", "pmd_share", kKernels[2]), nullptr);
  ASSERT_EQ(m->unjudged.size(), 1u);
  EXPECT_EQ(m->unjudged[0].backing, "pagecache-ext4");
  EXPECT_EQ(m->unjudged[0].from_kernel, kKernels[1]);
  EXPECT_EQ(m->unjudged[0].to_kernel, kKernels[2]);
  EXPECT_EQ(m->unjudged[0].why.rfind("not comparable because", 0), 0u) << m->unjudged[0].why;
  EXPECT_NE(MatrixText(*m).find("\n  pagecache-ext4 6.9.7+bpo -> 6.16.12+deb13: not comparable because"),
            std::string::npos)
      << MatrixText(*m);
  EXPECT_EQ(MatrixJson(*m)["not_judged"].size(), 1u);
}

TEST(Matrix, ADirectoryWithoutKernelsTxtIsRefusedWithWhatToDo) {
  TempDir dir;
  matrix_fixture::WriteStudy(dir.path());
  std::filesystem::remove(dir.File("kernels.txt"));
  const auto m = ReadMatrix(dir.path());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(m.status().message().find("kernels.txt: missing"), std::string::npos) << m.status();
  EXPECT_NE(m.status().message().find("scripts/kernel-matrix"), std::string::npos) << m.status();
  const auto none = ReadMatrix(dir.File("no-such-dir"));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
}

TEST_F(MatrixTest, JsonCarriesCellsFiguresAndChanges) {
  const json doc = MatrixJson(m_);
  EXPECT_EQ(doc["kernels"], json(kKernels));
  EXPECT_EQ(doc["backings"], json(matrix_fixture::kBackings));
  ASSERT_EQ(doc["cells"].size(), 12u);
  const json& changed = doc["cells"][2];  // pagecache-ext4 on 6.16
  EXPECT_EQ(changed["kernel"], kKernels[2]);
  EXPECT_EQ(changed["backing"], "pagecache-ext4");
  EXPECT_EQ(changed["state"], "results");
  EXPECT_FALSE(changed.contains("status"));
  const json& share = changed["variants"]["pte/mmap"]["pmd_share"];
  EXPECT_DOUBLE_EQ(share["median"].get<double>(), 0.94);
  EXPECT_DOUBLE_EQ(share["min"].get<double>(), 0.93);
  EXPECT_DOUBLE_EQ(share["max"].get<double>(), 0.95);
  EXPECT_EQ(share["runs"], 3);
  EXPECT_EQ(doc["cells"][3]["status"], matrix_fixture::kHang);
  EXPECT_EQ(doc["cells"][3]["state"], "status");
  ASSERT_EQ(doc["changes"].size(), 2u);
  const json& c = doc["changes"][0];
  EXPECT_EQ(c["backing"], "pagecache-ext4");
  EXPECT_EQ(c["variant"], "pte/mmap");
  EXPECT_EQ(c["figure"], "pmd_share");
  EXPECT_EQ(c["from_kernel"], kKernels[1]);
  EXPECT_EQ(c["to_kernel"], kKernels[2]);
  EXPECT_DOUBLE_EQ(c["base_median"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(c["new_median"].get<double>(), 0.94);
  EXPECT_EQ(c["verdict"], "improvement");
  EXPECT_EQ(doc["changes"][1]["verdict"], "regression");
}

TEST_F(MatrixTest, TheHeatmapOutlinesEachChangedCellAndNamesEmptyOnes) {
  const std::string svg = MatrixHeatmapSvg(m_);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  const std::string outline = "stroke=\"#d62728\"";
  size_t red = 0;
  for (size_t at = svg.find(outline); at != std::string::npos; at = svg.find(outline, at + 1)) ++red;
  EXPECT_EQ(red, 2u) << "one panel per changed figure, its changed cell outlined";
  EXPECT_NE(svg.find(">pmd_share (share)<"), std::string::npos);
  EXPECT_NE(svg.find(">vmstat.thp_fault_fallback (events)<"), std::string::npos);
  EXPECT_NE(svg.find(">pagecache-ext4 pte/mmap<"), std::string::npos);
  EXPECT_NE(svg.find(">0.94 [0.93-0.95] \xe2\x96\xb2<"), std::string::npos);
  EXPECT_NE(svg.find(">hang<"), std::string::npos) << "the status of the hung cell, short";
  EXPECT_NE(svg.find(">skipped<"), std::string::npos);
}

}  // namespace
}  // namespace faultbench::matrix
