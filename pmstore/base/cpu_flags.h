// The CPU's feature flags as the kernel reports them ("flags" in
// /proc/cpuinfo), read once for every binary of the project: the tick
// clock asks for an invariant TSC, faultbench's machine facts for the
// hypervisor flag. The kernel's view, not raw CPUID: it clears flags it
// does not trust (an unstable TSC) and sets ones CPUID does not have.
#pragma once

#include <set>
#include <string>
#include <string_view>

namespace pmstore::base {

// True when the first processor of /proc/cpuinfo lists `flag` (read once).
bool CpuHasFlag(std::string_view flag);

// The words of the first "flags" line of a /proc/cpuinfo text.
std::set<std::string, std::less<>> ParseCpuFlags(std::string_view cpuinfo);

}  // namespace pmstore::base
