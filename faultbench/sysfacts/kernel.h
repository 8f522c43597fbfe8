// The running kernel: its release (uname) and its build config
// (/proc/config.gz, else /boot/config-RELEASE), with the debug options
// that make faults slow.
#pragma once

#include <string>
#include <vector>

namespace faultbench {

std::string KernelRelease();  // uname -r
bool KernelAtLeast(const std::string& release, int major, int minor);

struct KernelConfig {
  std::string text;    // "" when no config is readable
  std::string source;  // "/proc/config.gz", "/boot/config-...", "" when none
};
KernelConfig ReadKernelConfig();

// Debug options of interest that a kernel config text enables.
std::vector<std::string> DebugOptionsIn(const std::string& config_text);

}  // namespace faultbench
