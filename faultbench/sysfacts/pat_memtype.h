// The x86 PAT memory type the kernel gave a physical range, from debugfs.
// An uncached PMD mapping of pmem was the 2016 DAX PMD regression
// (commit 9049771f7d54).
#pragma once

#include <cstdint>
#include <string>

namespace faultbench {

struct PatMemtype {
  std::string memtype;         // "write-back", "uncached-minus", ...; "" when unknown
  std::string unknown_reason;  // why `memtype` is empty: "needs root and debugfs", ...
};

// The PAT memtype(s) that debugfs lists over [start, start+size), e.g.
// "write-back". As root, debugfs is mounted at /sys/kernel/debug when it is
// not there yet, as tracefs is for the fs_dax tracepoints: the one fact
// behind the 2016 regression should not depend on knowing where it lives.
PatMemtype ReadPatMemtype(uint64_t start, uint64_t size);

}  // namespace faultbench
