// faultbench on real hugetlbfs mounts with 2 MiB and 1 GiB pages, through
// the binary a user runs: the test reserves the huge pages (root) and gives
// them back afterwards, pass or fail.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nlohmann/json.hpp"
#include "support/hugetlbfs_mount.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace {

constexpr uint64_t kMiB = 1 << 20, k2MiB = 2 * kMiB, k1GiB = 1ull << 30;

// Sanitizer shadow memory faults in the worker thread too (see run_test.cc).
#ifdef PMSTORE_SANITIZE_BUILD
constexpr bool kShadowFaults = true;
#else
constexpr bool kShadowFaults = false;
#endif

using Result = CommandResult;

Result Faultbench(const std::string& args) { return RunCommand(std::string(FAULTBENCH_BINARY) + " " + args); }

nlohmann::json Mapping(const Result& r) {
  return nlohmann::json::parse(r.out).at("jobs").at(0).at("faultbench").at("mapping");
}

void ExpectOneLineError(const Result& r, const std::string& mentions) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "more than one line: " << r.err;
  EXPECT_NE(r.err.find(mentions), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(Hugetlbfs, TwoMiBPagesAreVerifiedByPageSizeWithOneFaultPerPage) {
  HugetlbfsWithPages mount(k2MiB, 8);
  SKIP_UNLESS_OK(mount);
  Result r = Faultbench("run --filename=" + mount.dir() + "/f --size=16M --rw=write --mapping=pmd --output-format=json");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json m = Mapping(r);
  EXPECT_EQ(m.at("verify_method"), "page_size");
  EXPECT_EQ(m.at("pmd_bytes"), 16 * kMiB);
  EXPECT_EQ(m.at("pud_bytes"), 0);
  EXPECT_EQ(m.at("pte_bytes"), 0);
  const nlohmann::json& e = m.at("page_size_evidence");
  EXPECT_EQ(e.at("page_size"), k2MiB);
  EXPECT_EQ(e.at("expected_faults"), 8);
  EXPECT_NE(e.at("backing").get<std::string>().find("hugetlbfs " + mount.dir()), std::string::npos) << e;
  // On hugetlbfs the page tables say which bytes are present (not at which size).
  EXPECT_TRUE(e.at("presence") == "pagemap_scan" || e.at("presence") == "smaps") << e;
  if (!kShadowFaults) {
    EXPECT_EQ(e.at("faults"), 8) << "one fault per 2 MiB page";
    EXPECT_TRUE(e.at("faults_agree").get<bool>());
  }
}

TEST(Hugetlbfs, OneGiBPagesAreVerifiedAsPudByPageSize) {
  HugetlbfsWithPages mount(k1GiB, 1);
  SKIP_UNLESS_OK(mount);
  Result r = Faultbench("run --filename=" + mount.dir() + "/f --size=64M --rw=write --mapping=pud --output-format=json");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json m = Mapping(r);
  EXPECT_EQ(m.at("verify_method"), "page_size");
  EXPECT_EQ(m.at("pud_bytes"), 64 * kMiB) << m;
  EXPECT_EQ(m.at("pmd_bytes"), 0) << "a huge leaf of a 1 GiB mount is a PUD, whatever PAGE_IS_HUGE says";
  EXPECT_EQ(m.at("differs_from_request"), false);
  EXPECT_EQ(m.at("page_size_evidence").at("page_size"), k1GiB);
  EXPECT_EQ(m.at("page_size_evidence").at("expected_faults"), 1);
  if (!kShadowFaults) {
    EXPECT_EQ(m.at("page_size_evidence").at("faults"), 1) << "one fault for the whole GiB";
  }
  // The same in the text report.
  Result text = Faultbench("run --filename=" + mount.dir() + "/f --size=64M --rw=read --mapping=pud");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("verified     : pud=64.0 MiB (100.0%)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("maps only 1.0 GiB pages"), std::string::npos) << text.out;
}

TEST(Hugetlbfs, ARunNeedingMoreThanTheFreePoolIsAOneLineErrorBeforeAnythingIsMapped) {
  HugetlbfsWithPages mount(k2MiB, 2);
  SKIP_UNLESS_OK(mount);
  // One page more than the pool can give, whatever others hold in it now.
  const std::string pool_dir = "/sys/kernel/mm/hugepages/hugepages-2048kB/";
  uint64_t free = 0, reserved = 0;
  std::ifstream(pool_dir + "free_hugepages") >> free;
  std::ifstream(pool_dir + "resv_hugepages") >> reserved;
  const uint64_t pages = free - reserved + 1;
  Result r = Faultbench("run --filename=" + mount.dir() + "/f --size=" + std::to_string(pages * 2) + "M --rw=write");
  ExpectOneLineError(r, "the run needs " + std::to_string(pages) + " huge page(s)");
  EXPECT_NE(r.err.find("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(mount.dir() + "/f")) << "refused before the file was made";
  // Within the pool the same run works.
  Result fits = Faultbench("run --filename=" + mount.dir() + "/f --size=4M --rw=write");
  EXPECT_EQ(fits.status, 0) << fits.err;
}

TEST(Hugetlbfs, AMappingOfAnotherPageSizeIsRefused) {
  HugetlbfsWithPages mount(k2MiB, 2);
  SKIP_UNLESS_OK(mount);
  ExpectOneLineError(Faultbench("run --filename=" + mount.dir() + "/f --size=4M --mapping=pte"),
                     "maps every page at 2.0 MiB: use --mapping=pmd or --mapping=auto");
  ExpectOneLineError(Faultbench("run --filename=" + mount.dir() + "/f --size=4M --mapping=pud"),
                     "--mapping=pud asks for 1.0 GiB entries");
}

TEST(Hugetlbfs, DoctorReportsThePoolAndTheCommandThatReservesPages) {
  HugetlbfsWithPages mount(k2MiB, 3);
  SKIP_UNLESS_OK(mount);
  Result text = Faultbench("doctor " + mount.dir());
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("hugetlbfs pagesize   2.0 MiB"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("huge page pool       nr_hugepages="), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("reserve pages        echo N > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("One page size here: 2.0 MiB"), std::string::npos) << text.out;
  Result json = Faultbench("doctor --json " + mount.dir());
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json h = nlohmann::json::parse(json.out).at("hugetlbfs");
  EXPECT_EQ(h.at("pagesize"), k2MiB);
  EXPECT_GE(h.at("pool").at("nr_hugepages").get<uint64_t>(), 3u);
  EXPECT_GE(h.at("pool").at("free_hugepages").get<uint64_t>(), 3u);
  EXPECT_EQ(h.at("pool").at("sysfs"), "/sys/kernel/mm/hugepages/hugepages-2048kB");
}

// An empty pool: doctor says a run would fail, and how to reserve pages.
TEST(Hugetlbfs, DoctorOnAnEmptyPoolGivesTheReserveCommand) {
  HugetlbfsMount mount(k1GiB);
  SKIP_UNLESS_OK(mount);
  std::ifstream free_pages("/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages");
  int free = -1;
  free_pages >> free;
  if (free != 0) GTEST_SKIP() << "the 1 GiB pool has free pages here (someone reserved them)";
  Result r = Faultbench("doctor " + mount.dir());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("pool has no free page"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("echo N > /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages"), std::string::npos)
      << r.out;
}

// Every repeat makes its file afresh: the pool must count the pages the
// old file gives back, or the second repeat of a file as big as the pool
// would be refused. The variants (two engines here) and the warm-up share
// that one file's worth of pool: files of their own, kept to the end,
// would each hold 4 pages.
TEST(Hugetlbfs, CompareRunsTheMountsPageSizeAndNamesTheModesItCannotRun) {
  HugetlbfsWithPages mount(k2MiB, 4);
  SKIP_UNLESS_OK(mount);
  Result r = Faultbench("compare --directory=" + mount.dir() +
                        " --size=8M --rw=randread --modes=pte,pmd,pud --engines=mmap,pmem2 --repeat=2 --unlink");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\npmd/mmap "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\npmd/pmem2 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not run: pte: --mapping=pte asks for 4.0 KiB entries"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not run: pud: --mapping=pud asks for 1.0 GiB entries"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\npte/mmap "), std::string::npos) << r.out;
}

}  // namespace
