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

// Debug options of interest that a kernel config text enables and that are
// active under the kernel command line `cmdline`: CONFIG_PAGE_POISONING,
// CONFIG_DEBUG_PAGEALLOC and CONFIG_PAGE_OWNER only make a feature
// available, which page_poison=1, debug_pagealloc=on (or
// CONFIG_DEBUG_PAGEALLOC_ENABLE_DEFAULT) and page_owner=on turn on; Debian's
// stock 6.1 and 6.12 kernels set CONFIG_PAGE_POISONING=y and are no debug
// kernels.
std::vector<std::string> DebugOptionsIn(const std::string& config_text, const std::string& cmdline);

}  // namespace faultbench
