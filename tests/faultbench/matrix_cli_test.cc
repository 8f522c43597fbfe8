// `faultbench matrix` and `faultbench diff --any-change` through the
// binary: the flags reach the libraries, the exit statuses and one-line
// usage errors are what the help promises.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "matrix_fixture.h"
#include "nlohmann/json.hpp"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace {

using Result = CommandResult;

Result Faultbench(const std::string& args, const TempDir&) {
  return RunCommand(std::string(FAULTBENCH_BINARY) + " " + args);
}

class MatrixCli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    matrix_fixture::WriteStudy(dir_.File("study"));
  }
  std::string Cell(size_t kernel) const {
    return matrix_fixture::CellDir(dir_.File("study"), kernel, "pagecache-ext4").string();
  }
  TempDir dir_;
};

TEST_F(MatrixCli, ReportsTheStudyAndExitsZeroWithChanges) {
  const Result r = Faultbench("matrix " + dir_.File("study") + " --plot=" + dir_.File("m.svg"), dir_);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("pagecache-ext4 pte/mmap pmd_share: 0 -> 0.94 between 6.9.7+bpo and 6.16.12+deb13"),
            std::string::npos)
      << r.out;
  std::stringstream svg;
  svg << std::ifstream(dir_.File("m.svg")).rdbuf();
  EXPECT_EQ(svg.str().rfind("<svg", 0), 0u);

  const Result json = Faultbench("matrix --output-format=json " + dir_.File("study"), dir_);
  EXPECT_EQ(json.status, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << json.out;
  EXPECT_EQ(doc["changes"].size(), 2u);
}

TEST_F(MatrixCli, ADirectoryWithoutKernelsTxtIsAOneLineUsageError) {
  std::filesystem::remove(dir_.File("study/kernels.txt"));
  const Result r = Faultbench("matrix " + dir_.File("study"), dir_);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("kernels.txt: missing"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(Faultbench("matrix", dir_).status, 2);
  EXPECT_EQ(Faultbench("matrix " + dir_.File("nowhere"), dir_).status, 2);
}

TEST_F(MatrixCli, HelpTeachesTheLayout) {
  const Result r = Faultbench("help matrix", dir_);
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("DIR/cells/PACKAGE/BACKING/status"), std::string::npos) << r.out;
}

// 6.9 -> 6.16 on pagecache-ext4: pte runs got PMDs, nothing got worse.
TEST_F(MatrixCli, DiffAnyChangeCountsAnImprovement) {
  const std::string sides = "diff --base=" + Cell(1) + " --new=" + Cell(2);
  const Result plain = Faultbench(sides, dir_);
  EXPECT_EQ(plain.status, 0) << plain.out << plain.err;
  const Result any = Faultbench(sides + " --any-change", dir_);
  EXPECT_EQ(any.status, 1) << any.out << any.err;
  EXPECT_NE(any.out.find("\nCHANGE: 1 of "), std::string::npos) << any.out;
  EXPECT_EQ(Faultbench(sides + " --any-change --bisect", dir_).status, 1);
  const Result same = Faultbench("diff --base=" + Cell(0) + " --new=" + Cell(1) + " --any-change", dir_);
  EXPECT_EQ(same.status, 0) << same.out;
  EXPECT_NE(same.out.find("\nno change: "), std::string::npos) << same.out;
}

}  // namespace
