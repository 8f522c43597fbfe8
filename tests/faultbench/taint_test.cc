#include "faultbench/taint/taint.h"
#include "faultbench/sysfacts/kernel.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace faultbench {
namespace {

bool HasLineStartingWith(const std::vector<std::string>& lines, const std::string& prefix) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
}

MachineState CleanBareMetal() {
  MachineState state;
  state.kernel_config_source = "/boot/config-6.18";
  state.online_cpus = 8;
  state.load_average_1m = 0.1;
  state.thp_defrag = "madvise";
  state.cpu_governor = "performance";
  return state;
}

TEST(Taint, ACleanBareMetalMachineHasNoTaint) {
  EXPECT_TRUE(TaintLines(CleanBareMetal(), 0.2).empty());
}

TEST(Taint, EachConditionGetsItsLine) {
  MachineState state = CleanBareMetal();
  state.kernel_debug_options = {"CONFIG_LOCKDEP"};
  state.hypervisor = "KVM";
  state.free_page_reporting = true;
  state.load_average_1m = 6;
  state.thp_defrag = "always";
  state.cpu_governor = "powersave";
  const std::vector<std::string> lines = TaintLines(state, 0.97);
  for (const char* what : {"kernel debug option: CONFIG_LOCKDEP=y", "hypervisor: KVM", "free page reporting:",
                           "other load:", "cpu saturation:", "thp defrag: always", "cpu governor: powersave"}) {
    EXPECT_TRUE(HasLineStartingWith(lines, what)) << what;
  }
  EXPECT_EQ(lines.size(), 7u);
}

TEST(Taint, UnknownsAreSaidNotHidden) {
  MachineState state = CleanBareMetal();
  state.kernel_config_source.clear();
  state.cpu_governor.clear();
  const std::vector<std::string> lines = TaintLines(state, 0);
  EXPECT_TRUE(HasLineStartingWith(lines, "kernel config: not readable"));
  EXPECT_TRUE(HasLineStartingWith(lines, "cpu governor: not exposed"));
}

TEST(Taint, DebugOptionsAreReadFromAConfigText) {
  const std::string config =
      "CONFIG_LOCKDEP=y\n# CONFIG_KASAN is not set\nCONFIG_DEBUG_VM=y\nCONFIG_DEBUG_VM_PGTABLE=n\nCONFIG_HZ=250\n";
  const std::vector<std::string> options = DebugOptionsIn(config);
  EXPECT_NE(std::find(options.begin(), options.end(), "CONFIG_LOCKDEP"), options.end());
  EXPECT_NE(std::find(options.begin(), options.end(), "CONFIG_DEBUG_VM"), options.end());
  EXPECT_EQ(options.size(), 2u) << "CONFIG_DEBUG_VM_PGTABLE=n and an unset CONFIG_KASAN are off";
}

TEST(Taint, FreePageReportingIsTheBalloonsFeatureBitFive) {
  EXPECT_TRUE(BalloonReportsFreePages("0x0005", "0110010100000000000000000000000010000000"));  // this VM's
  EXPECT_FALSE(BalloonReportsFreePages("0x0005", "0110000100000000000000000000000010000000"));
  EXPECT_FALSE(BalloonReportsFreePages("0x0002", "0110010100000000000000000000000010000000")) << "a block device";
  EXPECT_FALSE(BalloonReportsFreePages("0x0005", "0110"));
}

}  // namespace
}  // namespace faultbench
