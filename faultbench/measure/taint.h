// Conditions that make a run's numbers untrustworthy or not comparable,
// recorded with every run.
//
// The public threads behind the PMD study lost weeks to such baselines: a
// debug kernel made one machine 30x slower, a VM inverted the PMD result
// (the guest's PAT bits are ignored under EPT), and saturated CPUs hid the
// device. Each entry is one line: "what: detail (why it matters)".
#pragma once

#include <string>
#include <vector>

namespace faultbench {

struct MachineState {
  std::vector<std::string> kernel_debug_options;  // CONFIG_ options set to y
  std::string kernel_config_source;               // "/proc/config.gz", "/boot/config-...", "" when none
  std::string hypervisor;                         // "" on bare metal, else the vendor or "unknown"
  double load_average_1m = 0;
  int online_cpus = 1;
  std::string thp_defrag;
  std::string cpu_governor;                       // "" when cpufreq is not exposed
  bool free_page_reporting = false;               // a virtio balloon hands free guest memory back to the host
};

// Reads the machine's state (before a run).
MachineState ReadMachineState();

// True for a virtio device of `device_id` (sysfs "device", "0x0005" is the
// balloon) whose `features` bit string (sysfs "features", bit 0 first) has
// VIRTIO_BALLOON_F_REPORTING (bit 5): free page reporting is on.
bool BalloonReportsFreePages(const std::string& device_id, const std::string& features);

// Debug options of interest that a kernel config text enables.
std::vector<std::string> DebugOptionsIn(const std::string& config_text);

// The taint lines for `state`, plus CPU saturation when the run's workers
// used `cpu_busy_fraction` (usr+sys time / (wall time x online CPUs)).
std::vector<std::string> TaintLines(const MachineState& state, double cpu_busy_fraction);

}  // namespace faultbench
