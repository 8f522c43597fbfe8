#include "faultbench/taint/taint.h"

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
  state.emulation = "qemu TCG";
  const std::vector<std::string> lines = TaintLines(state, 0.97);
  for (const char* what : {"kernel debug option: CONFIG_LOCKDEP=y", "hypervisor: KVM", "emulation: qemu TCG",
                           "free page reporting:", "other load:", "cpu saturation:", "thp defrag: always",
                           "cpu governor: powersave"}) {
    EXPECT_TRUE(HasLineStartingWith(lines, what)) << what;
  }
  EXPECT_EQ(lines.size(), 8u);
}

TEST(Taint, UnknownsAreSaidNotHidden) {
  MachineState state = CleanBareMetal();
  state.kernel_config_source.clear();
  state.cpu_governor.clear();
  const std::vector<std::string> lines = TaintLines(state, 0);
  EXPECT_TRUE(HasLineStartingWith(lines, "kernel config: not readable"));
  EXPECT_TRUE(HasLineStartingWith(lines, "cpu governor: not exposed"));
}

TEST(CompareTaint, OneLinePerKindSayingHowManyRunsHadIt) {
  const std::vector<std::string> merged = MergeTaint({
      {"hypervisor: KVM", "other load: 1-minute load average 3.10 on 2 CPUs before the run"},
      {"hypervisor: KVM"},
      {"hypervisor: KVM", "other load: 1-minute load average 2.40 on 2 CPUs before the run"},
  });
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0], "hypervisor: KVM");
  EXPECT_EQ(merged[1], "other load: 1-minute load average 3.10 on 2 CPUs before the run (2 of 3 runs)");
  EXPECT_TRUE(MergeTaint({{}, {}}).empty());
}

}  // namespace
}  // namespace faultbench
