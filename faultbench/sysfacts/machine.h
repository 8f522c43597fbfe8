// The state of the machine a run ran on, read once before the run: what
// taint/ judges and what a later comparison of two runs must find equal.
//
// A comparison of runs from two kernels or machines (faultbench diff)
// reads the same facts from each side's JSON: what may differ between the
// sides, and what makes them not comparable. The event counters a run's
// signature is made of are in vm_counters.h.
#pragma once

#include <string>
#include <vector>

namespace faultbench {

struct MachineState {
  std::string kernel_release;                     // uname -r
  std::vector<std::string> kernel_debug_options;  // CONFIG_ options set to y
  std::string kernel_config_source;               // "/proc/config.gz", "/boot/config-...", "" when none
  std::string hypervisor;                         // "" on bare metal, else the vendor or "unknown"
  // "" on a real CPU (bare metal or hardware virtualization); "qemu TCG"
  // when qemu emulates the CPU in software: timings are then meaningless,
  // fault counts and tracepoint tallies still exact.
  std::string emulation;
  std::string cpu_model;                          // "model name" of /proc/cpuinfo
  double load_average_1m = 0;
  int online_cpus = 1;
  std::string thp_enabled;
  std::string thp_defrag;
  std::string thp_shmem_enabled;
  std::string cpu_governor;                       // "" when cpufreq is not exposed
  bool free_page_reporting = false;               // a virtio balloon hands free guest memory back to the host
};

// Reads the machine's state (before a run).
MachineState ReadMachineState();

// The "model name" of the first processor in a /proc/cpuinfo text; "" when none.
std::string CpuModelIn(const std::string& cpuinfo);

// "qemu TCG" when the CPUID hypervisor signature is qemu's software
// emulator's ("TCGTCGTCGTCG") or the CPU model is qemu's emulated one
// ("QEMU TCG CPU ..."), else "".
std::string EmulationOf(const std::string& cpuid_signature, const std::string& cpu_model);

// True for a virtio device of `device_id` (sysfs "device", "0x0005" is the
// balloon) whose `features` bit string (sysfs "features", bit 0 first) has
// VIRTIO_BALLOON_F_REPORTING (bit 5): free page reporting is on.
bool BalloonReportsFreePages(const std::string& device_id, const std::string& features);

}  // namespace faultbench
