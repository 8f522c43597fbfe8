// The readers of sysfacts/, on texts in the kernel's formats.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

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

}  // namespace
}  // namespace faultbench
