// `faultbench doctor` on this machine's real mounts, through the binary a
// user runs.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "faultbench/doctor/doctor.h"
#include "faultbench/sysfacts/kernel.h"
#include "support/temp_dir.h"
#include "support/tmpfs_mount.h"

namespace faultbench::doctor {
namespace {

struct Result {
  int status = -1;
  std::string out;
};

// Runs the faultbench binary; stderr goes to stdout so tests see both.
Result RunFaultbench(const std::string& args) {
  Result r;
  FILE* p = popen((std::string(FAULTBENCH_BIN) + " " + args + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int raw = pclose(p);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

TEST(DoctorCommandTest, SaysYesOnHugeAlwaysTmpfs) {
  TmpfsMount mount("size=16m,huge=always");
  SKIP_UNLESS_MOUNTED(mount);
  Result r = RunFaultbench("doctor " + mount.dir());
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("PMD mappings possible here: yes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("huge=always"), std::string::npos);
}

TEST(DoctorCommandTest, SaysNoOnHugeNeverTmpfsWithTheReasonAndFix) {
  TmpfsMount mount("size=16m,huge=never");
  SKIP_UNLESS_MOUNTED(mount);
  Result r = RunFaultbench("doctor " + mount.dir());
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("PMD mappings possible here: no"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("blocker: tmpfs mounted with huge=never"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fix: mount -o remount,huge=always " + mount.dir()), std::string::npos) << r.out;
}

TEST(DoctorCommandTest, JsonOnAnExt4FileCarriesExtentsAndVerdict) {
  TempDir dir;
  const std::string file = dir.File("data");
  {
    std::ofstream out(file);
    out << std::string(4 << 20, 'x');
  }
  Result r = RunFaultbench("doctor --json " + file);
  ASSERT_EQ(r.status, 0) << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["mount"]["fs_type"], "ext4");
  EXPECT_EQ(j["kind"], "file");
  EXPECT_EQ(j["backed_by"], "page cache");
  EXPECT_TRUE(j["extents"]["examined"].get<bool>());
  EXPECT_GE(j["extents"]["count"].get<int>(), 1);
  EXPECT_EQ(j["extents"]["file_bytes"], 4 << 20);
  // ext4 on this kernel (6.18) caches files in large folios: PMD possible.
  EXPECT_EQ(j["pmd_possible"].get<bool>(), KernelAtLeast(KernelRelease(), 6, 16));
}

TEST(DoctorCommandTest, MissingPathIsOneLineOnStderrAndExit2) {
  Result r = RunFaultbench("doctor /no/such/path");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "faultbench: /no/such/path: No such file or directory\n");
}

TEST(DoctorCommandTest, BadUsageExits2) {
  EXPECT_EQ(RunFaultbench("doctor").status, 2);
  EXPECT_EQ(RunFaultbench("doctor --frobnicate /tmp").status, 2);
  EXPECT_EQ(RunFaultbench("frobnicate").status, 2);
  Result help = RunFaultbench("help doctor");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("--json"), std::string::npos);
}

TEST(ExtentFactsTest, AlignedShareIsBoundedByTheFile) {
  TempDir dir;
  const std::string file = dir.File("data");
  {
    std::ofstream out(file);
    out << std::string(8 << 20, 'y');
  }
  auto report = Examine(file);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->extents.examined);
  EXPECT_EQ(report->extents.file_bytes, 8u << 20);
  EXPECT_LE(report->extents.aligned_bytes, report->extents.file_bytes);
  EXPECT_EQ(report->extents.aligned_bytes % (2u << 20), 0u);
}

}  // namespace
}  // namespace faultbench::doctor
