// The x86 PAT memory type the kernel gave a physical range, from debugfs.
// An uncached PMD mapping of pmem was the 2016 DAX PMD regression
// (commit 9049771f7d54).
#pragma once

#include <cstdint>
#include <string>

namespace faultbench {

// The PAT memtype(s) that debugfs lists over [start, start+size), e.g.
// "write-back"; "" when debugfs does not show it (not root, not mounted).
std::string ReadPatMemtype(uint64_t start, uint64_t size);

}  // namespace faultbench
