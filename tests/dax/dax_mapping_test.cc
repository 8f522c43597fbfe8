// The mapping layer on a real fsdax file system. Runs inside the VM that
// scripts/dax-vm boots (emulated pmem, ndctl fsdax, mount -o dax), which
// sets $DAX_DIR to the mount; without it every test skips, so running the
// binary elsewhere is harmless.
//
// Fault counts and fs_dax tracepoint tallies are exact under emulation;
// timings are not, and nothing here measures time.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "faultbench/measure/dax_trace.h"
#include "pmstore/base/units.h"
#include "pmstore/mapping/mapping.h"
#include "pmstore/mapping/pool_file.h"
#include "pmstore/mapping/verify.h"
#include "support/temp_dir.h"

namespace pmstore::mapping {
namespace {

using base::kHugePageSize;
using base::kPageSize;
using faultbench::DaxTraceSession;
using faultbench::DaxTraceTally;

constexpr uint64_t kPmdSize = 128ull << 20;  // 64 PMDs
constexpr uint64_t kPteSize = 64ull << 20;   // 16384 pages

std::string DaxDir() {
  const char* d = std::getenv("DAX_DIR");
  return d == nullptr ? "" : d;
}
std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

class OnDax : public ::testing::Test {
 protected:
  void SetUp() override {
    if (DaxDir().empty()) GTEST_SKIP() << "DAX_DIR is not set: run through scripts/dax-vm";
    dir_ = std::make_unique<TempDir>(DaxDir());
    ASSERT_FALSE(dir_->path().empty()) << "mkdtemp in " << DaxDir();
  }
  std::string File(const std::string& name) const { return dir_->File(name); }
  std::unique_ptr<TempDir> dir_;
};

// Minor plus major faults: a DAX fault that allocates or converts blocks
// counts as major (xfs, 4 KiB faults without MAP_SYNC), yet maps no more.
uint64_t Faults(uint64_t* major = nullptr) {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  if (major != nullptr) *major = static_cast<uint64_t>(ru.ru_majflt);
  return static_cast<uint64_t>(ru.ru_minflt + ru.ru_majflt);
}

uint64_t g_last_major = 0;  // major faults of the last TouchEveryPage

// Writes one byte into every 4 KiB page; returns the faults taken.
uint64_t TouchEveryPage(char* p, uint64_t length) {
  uint64_t major_before = 0;
  uint64_t major_after = 0;
  const uint64_t before = Faults(&major_before);
  for (uint64_t off = 0; off < length; off += kPageSize) p[off] = static_cast<char>(off >> 12);
  const uint64_t after = Faults(&major_after);
  g_last_major = major_after - major_before;
  return after - before;
}

// One line per measurement, collected by doc/DAX-VM.md.
void Report(const std::string& what, uint64_t size, uint64_t faults, const DaxTraceTally& t) {
  std::cout << "dax-measure: fs=" << Env("DAX_VM_FS") << " " << what << " size=" << (size >> 20) << "MiB"
            << " faults=" << faults << " (major " << g_last_major << ")" << " pmd_nopage=" << t.pmd_nopage << " pmd_needdsync=" << t.pmd_needdsync
            << " pmd_fallback=" << t.pmd_fallback << " pmd_other=" << t.pmd_other << " pte_faults=" << t.pte_faults
            << " lost_events=" << t.lost_events << std::endl;
}

TEST_F(OnDax, PoolFileReportsDax) {
  auto file = PoolFile::Open(File("pool"), OpenMode::kCreateExclusive, kHugePageSize);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE(file->dax()) << "statx STATX_ATTR_DAX on " << File("pool");
  EXPECT_TRUE(IsDax(file->fd()));
}

TEST_F(OnDax, MmapEngineWithMapSyncHasCacheLineGranularity) {
  auto file = PoolFile::Open(File("pool"), OpenMode::kCreateExclusive, 2 * kHugePageSize);
  ASSERT_TRUE(file.ok()) << file.status();
  auto m = Mapping::Create(*file, {.intent = PageIntent::kPmd, .engine = Engine::kMmap, .map_sync = true});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_TRUE((*m)->map_sync());
  EXPECT_TRUE((*m)->dax());
  EXPECT_EQ((*m)->granularity(), Granularity::kCacheLine);
  (*m)->ops().memcpy((*m)->address() + 100, "durable", 7, 0);
  char buf[7];
  ASSERT_EQ(pread(file->fd(), buf, 7, 100), 7);
  EXPECT_EQ(std::string(buf, 7), "durable");
}

TEST_F(OnDax, Pmem2EngineHasCacheLineGranularityAndMapSyncWithoutForcing) {
  unsetenv("PMEM2_FORCE_GRANULARITY");
  auto file = PoolFile::Open(File("pool"), OpenMode::kCreateExclusive, 2 * kHugePageSize);
  ASSERT_TRUE(file.ok()) << file.status();
  auto m = Mapping::Create(*file, {.intent = PageIntent::kPmd, .engine = Engine::kPmem2, .map_sync = true});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->granularity(), Granularity::kCacheLine) << GranularityName((*m)->granularity());
  EXPECT_TRUE((*m)->map_sync());
  EXPECT_TRUE((*m)->dax());
}

TEST_F(OnDax, PmdIntentWithMapSyncTakesOnePmdFaultPer2MiB) {
  auto file = PoolFile::Open(File("pmd"), OpenMode::kCreateExclusive, kPmdSize);
  ASSERT_TRUE(file.ok()) << file.status();
  auto m = Mapping::Create(*file, {.intent = PageIntent::kPmd, .engine = Engine::kMmap, .map_sync = true});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(reinterpret_cast<uintptr_t>((*m)->address()) % kHugePageSize, 0u);
  auto session = DaxTraceSession::Start();
  ASSERT_TRUE(session.ok()) << session.status();
  const uint64_t faults = TouchEveryPage((*m)->address(), kPmdSize);
  auto tally = session->Stop();
  ASSERT_TRUE(tally.ok()) << tally.status();
  Report("intent=pmd map_sync=1", kPmdSize, faults, *tally);
  const uint64_t pmds = kPmdSize / kHugePageSize;
  EXPECT_EQ(tally->lost_events, 0u);
  EXPECT_EQ(tally->pmd_fallback, 0u);
  EXPECT_EQ(tally->pmd_other, 0u);
  EXPECT_GE(tally->pmd_installed(), pmds);
  EXPECT_LE(tally->pmd_installed(), pmds + pmds / 8);
  EXPECT_LE(tally->pte_faults, pmds / 8);
  EXPECT_GE(faults, pmds);
  EXPECT_LE(faults, pmds + pmds / 4 + 8) << "about one write fault per 2 MiB";
}

TEST_F(OnDax, PmdIntentWithoutMapSyncInstallsPmds) {
  auto file = PoolFile::Open(File("pmd"), OpenMode::kCreateExclusive, kPmdSize);
  ASSERT_TRUE(file.ok()) << file.status();
  auto m = Mapping::Create(*file, {.intent = PageIntent::kPmd, .engine = Engine::kMmap});
  ASSERT_TRUE(m.ok()) << m.status();
  auto session = DaxTraceSession::Start();
  ASSERT_TRUE(session.ok()) << session.status();
  const uint64_t faults = TouchEveryPage((*m)->address(), kPmdSize);
  auto tally = session->Stop();
  ASSERT_TRUE(tally.ok()) << tally.status();
  Report("intent=pmd map_sync=0", kPmdSize, faults, *tally);
  const uint64_t pmds = kPmdSize / kHugePageSize;
  EXPECT_EQ(tally->pmd_fallback, 0u);
  EXPECT_GE(tally->pmd_installed(), pmds);
  EXPECT_LE(tally->pmd_installed(), pmds + pmds / 8);
  EXPECT_LE(faults, pmds + pmds / 4 + 8);
}

TEST_F(OnDax, PteIntentTakesOneFaultPer4KiBAndNoPmd) {
  auto file = PoolFile::Open(File("pte"), OpenMode::kCreateExclusive, kPteSize);
  ASSERT_TRUE(file.ok()) << file.status();
  // Without MAP_SYNC: with it, each 4 KiB write fault into an unwritten
  // extent also syncs the metadata, which costs minutes under emulation.
  auto m = Mapping::Create(*file, {.intent = PageIntent::kPte, .engine = Engine::kMmap});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(reinterpret_cast<uintptr_t>((*m)->address()) % kHugePageSize, kPageSize);
  auto session = DaxTraceSession::Start();
  ASSERT_TRUE(session.ok()) << session.status();
  const uint64_t faults = TouchEveryPage((*m)->address(), kPteSize);
  auto tally = session->Stop();
  ASSERT_TRUE(tally.ok()) << tally.status();
  Report("intent=pte map_sync=0", kPteSize, faults, *tally);
  const uint64_t pages = kPteSize / kPageSize;
  EXPECT_EQ(tally->pmd_installed(), 0u);
  EXPECT_GE(faults, pages * 95 / 100);
  EXPECT_LE(faults, pages + pages / 8);
  if (tally->lost_events == 0) {
    EXPECT_GE(tally->pte_faults, pages * 95 / 100);
  }
}

// PAGEMAP_SCAN came in Linux 6.7; on older guests (Debian 12's 6.1) the
// fs_dax tracepoints above are the way to verify DAX mappings.
TEST_F(OnDax, PagemapScanSeesDaxPmdsWhereTheKernelHasIt) {
  auto file = PoolFile::Open(File("scan"), OpenMode::kCreateExclusive, 16 * kHugePageSize);
  ASSERT_TRUE(file.ok()) << file.status();
  auto m = Mapping::Create(*file, {.intent = PageIntent::kPmd, .engine = Engine::kMmap, .map_sync = true});
  ASSERT_TRUE(m.ok()) << m.status();
  TouchEveryPage((*m)->address(), (*m)->length());
  auto smaps = VerifyWithSmaps((*m)->address(), (*m)->length());
  if (smaps.ok()) {
    std::cout << "dax-measure: fs=" << Env("DAX_VM_FS") << " smaps pmd_bytes=" << smaps->pmd_bytes
              << " pte_bytes=" << smaps->pte_bytes << " (smaps is blind to DAX)" << std::endl;
  }
  if (!PagemapScanAvailable()) GTEST_SKIP() << "PAGEMAP_SCAN unavailable on this kernel (6.7+)";
  auto census = VerifyWithPagemapScan((*m)->address(), (*m)->length());
  ASSERT_TRUE(census.ok()) << census.status();
  std::cout << "dax-measure: fs=" << Env("DAX_VM_FS") << " pagemap_scan pmd_bytes=" << census->pmd_bytes
            << " pte_bytes=" << census->pte_bytes << std::endl;
  EXPECT_EQ(census->pmd_bytes, (*m)->length());
}

#ifdef FAULTBENCH_BIN
// `faultbench doctor --json PATH`; on anything but JSON, prints what it
// said instead and returns a discarded value.
nlohmann::json Doctor(const std::string& path) {
  const std::string cmd = std::string(FAULTBENCH_BIN) + " doctor --json '" + path + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  int status = -1;
  if (p != nullptr) {
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
    status = pclose(p);
  }
  nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  if (j.is_discarded()) std::cout << cmd << ": status " << status << ", output:\n" << out << std::endl;
  return j;
}

// On a directory statx reports no DAX attribute (ext4 and xfs set it on
// regular files only), so the mount and the block device carry the verdict.
TEST_F(OnDax, DoctorReportsTheDaxMountAndThePmemDevice) {
  const nlohmann::json j = Doctor(DaxDir());
  ASSERT_FALSE(j.is_discarded()) << "faultbench doctor --json " << DaxDir() << " did not print JSON";
  std::cout << "dax-measure: doctor " << j.dump() << std::endl;
  EXPECT_EQ(j.value("backed_by", ""), "dax") << j.dump(2);
  ASSERT_TRUE(j.contains("mount"));
  EXPECT_EQ(j["mount"].value("dax_option", ""), "always");
  EXPECT_EQ(j["mount"].value("fs_type", ""), Env("DAX_VM_FS"));
  ASSERT_TRUE(j.contains("block_device"));
  const nlohmann::json& b = j["block_device"];
  EXPECT_EQ(b.value("name", ""), "pmem0");
  EXPECT_EQ(b.value("pmem", false), true);
  ASSERT_TRUE(b["numa_node"].is_number()) << b.dump();
  EXPECT_EQ(b["numa_node"].get<int>(), Env("DAX_VM_NUMA") == "1" ? 1 : 0);
  EXPECT_EQ(j.value("pmd_possible", false), true) << j.dump(2);
}

TEST_F(OnDax, DoctorReportsDaxAnd2MiBAlignedExtentsForAFallocatedFile) {
  auto file = PoolFile::Open(File("extents"), OpenMode::kCreateExclusive, 64ull << 20);
  ASSERT_TRUE(file.ok()) << file.status();
  const nlohmann::json j = Doctor(File("extents"));
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j.value("dax", false), true) << "statx STATX_ATTR_DAX";
  EXPECT_EQ(j.value("pmd_possible", false), true) << j.dump(2);
  const nlohmann::json& e = j["extents"];
  std::cout << "dax-measure: fs=" << Env("DAX_VM_FS") << " extents " << e.dump() << std::endl;
  ASSERT_TRUE(e.value("examined", false)) << e.dump();
  EXPECT_EQ(e.value("aligned_bytes", uint64_t{0}), e.value("file_bytes", uint64_t{1})) << e.dump();
}
#endif

}  // namespace
}  // namespace pmstore::mapping
