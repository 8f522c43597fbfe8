// The state of the machine a run ran on, read once before the run: what
// taint/ judges and what a later comparison of two runs must find equal.
//
// Room for the facts a comparison across kernels and machines needs next
// (the CPU model, /proc/vmstat and /proc/meminfo counters): readers in
// this folder, fields here or beside this struct.
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

}  // namespace faultbench
