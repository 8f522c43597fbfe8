// compare's verdict under emulation. Where qemu emulates the CPU (TCG) a
// run's timings mean nothing, but its fault counts and verified mapping
// are exact: so the verdict is taken from the signature alone. The larger
// size works when its runs are mapped at that size and take fewer faults
// per MiB than the base's (ranges separate, 10 % floor: stats/change.h);
// runs that are not mapped at their size are the regression a DAX study
// looks for.
#pragma once

#include <string>

#include "faultbench/compare/compare.h"

namespace faultbench {

// `base` (pte) and `variant` (pmd) may be null (kNoPair); `emulation`
// names the emulator ("qemu TCG").
Verdict JudgeOnSignature(const VariantSummary* base, const VariantSummary* variant, const std::string& emulation);

}  // namespace faultbench
