// The readers of sysfacts/, on texts in the kernel's formats.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "faultbench/sysfacts/device_dax.h"
#include "faultbench/sysfacts/fixed_page_size.h"
#include "faultbench/sysfacts/hugetlb.h"
#include "faultbench/sysfacts/kernel.h"
#include "faultbench/sysfacts/machine.h"
#include "faultbench/sysfacts/mount.h"
#include "faultbench/sysfacts/read_file.h"
#include "faultbench/sysfacts/vm_counters.h"

namespace faultbench {
namespace {

TEST(MountInfoTest, ParsesOptionalFieldsEscapesAndDaxOption) {
  auto m = ParseMountInfoLine("36 35 98:0 / /mnt/my\\040disk rw,noatime master:1 shared:2 - ext4 /dev/pmem0 rw,dax");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->mount_point, "/mnt/my disk");
  EXPECT_EQ(m->fs_type, "ext4");
  EXPECT_EQ(m->source, "/dev/pmem0");
  EXPECT_EQ(m->dax_option, "always");
  EXPECT_EQ(m->options, "rw,noatime,dax");
  EXPECT_FALSE(ParseMountInfoLine("garbage").has_value());
}

TEST(SysfsChoiceTest, ReturnsTheBracketedWord) {
  EXPECT_EQ(SelectedChoice("always [madvise] never"), "madvise");
  EXPECT_EQ(SelectedChoice("always within_size advise [never] deny force"), "never");
}

TEST(SysfsNumberTest, ReadsDecimalAndHexAndSaysWhenThereIsNone) {
  char dir[] = "/tmp/fb-sysfs-number-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = std::string(dir) + "/" + name;
    FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
    return path;
  };
  EXPECT_EQ(ReadNumber(write("size", "1071644672\n")), 1071644672u);
  EXPECT_EQ(ReadNumber(write("resource", "0x40000000\n"), /*hex=*/true), 0x40000000u);
  EXPECT_EQ(ReadNumber(write("bare", "1f\n"), /*hex=*/true), 0x1fu);
  EXPECT_EQ(ReadNumber(write("word", "unknown\n")), std::nullopt);
  EXPECT_EQ(ReadNumber(std::string(dir) + "/absent"), std::nullopt);
  for (const char* name : {"size", "resource", "bare", "word"}) std::remove((std::string(dir) + "/" + name).c_str());
  rmdir(dir);
}

TEST(Taint, DebugOptionsAreReadFromAConfigText) {
  const std::string config =
      "CONFIG_LOCKDEP=y\n# CONFIG_KASAN is not set\nCONFIG_DEBUG_VM=y\nCONFIG_DEBUG_VM_PGTABLE=n\nCONFIG_HZ=250\n";
  const std::vector<std::string> options = DebugOptionsIn(config, "");
  EXPECT_NE(std::find(options.begin(), options.end(), "CONFIG_LOCKDEP"), options.end());
  EXPECT_NE(std::find(options.begin(), options.end(), "CONFIG_DEBUG_VM"), options.end());
  EXPECT_EQ(options.size(), 2u) << "CONFIG_DEBUG_VM_PGTABLE=n and an unset CONFIG_KASAN are off";
}

TEST(Taint, BootGatedDebugOptionsCountOnlyWhenTheCommandLineTurnsThemOn) {
  // Debian's stock 6.1 and 6.12 set CONFIG_PAGE_POISONING=y; it poisons nothing without page_poison=1.
  const std::string config = "CONFIG_PAGE_POISONING=y\nCONFIG_DEBUG_PAGEALLOC=y\nCONFIG_PAGE_OWNER=y\n";
  EXPECT_TRUE(DebugOptionsIn(config, "console=ttyS0 quiet").empty());
  EXPECT_EQ(DebugOptionsIn(config, "quiet page_poison=1"), std::vector<std::string>{"CONFIG_PAGE_POISONING"});
  EXPECT_EQ(DebugOptionsIn(config + "CONFIG_DEBUG_PAGEALLOC_ENABLE_DEFAULT=y\n", ""),
            std::vector<std::string>{"CONFIG_DEBUG_PAGEALLOC"});
  EXPECT_EQ(DebugOptionsIn(config, "page_owner=on").size(), 1u);
}

TEST(Taint, FreePageReportingIsTheBalloonsFeatureBitFive) {
  EXPECT_TRUE(BalloonReportsFreePages("0x0005", "0110010100000000000000000000000010000000"));  // this VM's
  EXPECT_FALSE(BalloonReportsFreePages("0x0005", "0110000100000000000000000000000010000000"));
  EXPECT_FALSE(BalloonReportsFreePages("0x0002", "0110010100000000000000000000000010000000")) << "a block device";
  EXPECT_FALSE(BalloonReportsFreePages("0x0005", "0110"));
}

TEST(VmCountersTest, VmstatIsNameValueLinesAndMeminfoIsKilobytes) {
  // As the 6.12 DAX VM printed them.
  const auto vmstat = ParseVmstat("numa_hit 20692\npgfault 7839\nthp_fault_fallback 0\nbroken\nnovalue x\n");
  EXPECT_EQ(vmstat.size(), 3u);
  EXPECT_EQ(vmstat.at("pgfault"), 7839u);
  EXPECT_EQ(vmstat.at("thp_fault_fallback"), 0u);
  const std::string meminfo = "MemTotal:        3000000 kB\nPageTables:          132 kB\nSecPageTables:         0 kB\n";
  EXPECT_EQ(MeminfoKb(meminfo, "PageTables"), 132u);
  EXPECT_EQ(MeminfoKb(meminfo, "SecPageTables"), 0u);
  EXPECT_FALSE(MeminfoKb(meminfo, "Tables").has_value()) << "a field name is matched whole";
  EXPECT_FALSE(MeminfoKb(meminfo, "Hugetlb").has_value());
}

TEST(VmCountersTest, ThisMachinesCountersAreReadable) {
  const VmCounters counters = ReadVmCounters();
  EXPECT_GT(counters.vmstat.count("pgfault"), 0u);
  EXPECT_TRUE(counters.page_tables_kb.has_value());
}

TEST(MachineTest, CpuModelIsTheFirstModelNameLine) {
  EXPECT_EQ(CpuModelIn("processor\t: 0\nmodel name\t: QEMU TCG CPU version 2.5+\nmodel name\t: other\n"),
            "QEMU TCG CPU version 2.5+");
  EXPECT_EQ(CpuModelIn("processor : 0\n"), "");
}

TEST(MachineTest, EmulationIsQemusTcgBySignatureOrCpuModel) {
  EXPECT_EQ(EmulationOf("TCGTCGTCGTCG", ""), "qemu TCG");
  EXPECT_EQ(EmulationOf("", "QEMU TCG CPU version 2.5+"), "qemu TCG");  // the DAX VM's -cpu max
  EXPECT_EQ(EmulationOf("KVMKVMKVM", "AMD EPYC"), "") << "hardware virtualization runs the real CPU";
  EXPECT_EQ(EmulationOf("", "QEMU Virtual CPU version 2.5+"), "") << "qemu's CPU model under KVM";
}

// What a new file can get: free pages nobody was promised, plus the
// surplus overcommit still allows.
TEST(HugetlbPoolTest, AvailableLeavesOutReservedPagesAndAddsTheOvercommitLeft) {
  HugetlbPool pool{.page_size = 2 << 20, .sysfs_dir = "/sys/kernel/mm/hugepages/hugepages-2048kB", .nr = 10,
                   .free = 6, .reserved = 4, .surplus = 1, .overcommit = 3};
  EXPECT_EQ(pool.Available(), 2u + 2u);
  pool.reserved = 9;  // more promised than free: none left, not a wrapped-around count
  pool.overcommit = 0;
  EXPECT_EQ(pool.Available(), 0u);
  EXPECT_EQ(pool.ReserveCommand(12), "echo 12 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages");
}

// This machine's own sysfs: x86-64 offers 2 MiB and 1 GiB pools.
TEST(HugetlbPoolTest, ThePoolsOfThisKernelAreReadSmallestFirst) {
  const std::vector<HugetlbPool> pools = ReadHugetlbPools();
  if (pools.empty()) GTEST_SKIP() << "no /sys/kernel/mm/hugepages here";
  EXPECT_TRUE(std::is_sorted(pools.begin(), pools.end(),
                             [](const auto& a, const auto& b) { return a.page_size < b.page_size; }));
  const auto two_mib = ReadHugetlbPool(2 << 20);
  ASSERT_TRUE(two_mib.has_value());
  EXPECT_EQ(two_mib->sysfs_dir, "/sys/kernel/mm/hugepages/hugepages-2048kB");
  EXPECT_FALSE(ReadHugetlbPool(3 << 20).has_value());
}

TEST(FixedPageSizeTest, OrdinaryFilesAndDevicesThatAreNotDaxHaveNone) {
  EXPECT_FALSE(ReadFixedPageSize("/var/tmp").fixed());
  EXPECT_FALSE(ReadFixedPageSize("/var/tmp/not-made-yet").fixed());
  EXPECT_FALSE(ReadHugetlbfsFacts("/var/tmp").has_value());
  EXPECT_FALSE(ReadDevDaxFactsOfPath("/dev/null").has_value()) << "a character device, but not a dax one";
  EXPECT_FALSE(ReadDevDaxFactsOfPath("/var/tmp").has_value());
  FixedPageSize dax{.page_size = 1 << 30, .devdax = DevDaxFacts{.name = "dax0.0", .align = 1 << 30}};
  EXPECT_EQ(dax.What("/dev/dax0.0"), "device DAX /dev/dax0.0 (align 1.0 GiB)");
  FixedPageSize huge{.page_size = 2 << 20, .hugetlbfs = HugetlbfsFacts{.mount_point = "/mnt/h", .page_size = 2 << 20}};
  EXPECT_EQ(huge.What("/mnt/h/f"), "hugetlbfs /mnt/h (pagesize 2.0 MiB)");
}

}  // namespace
}  // namespace faultbench
