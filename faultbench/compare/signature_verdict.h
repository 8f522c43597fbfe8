// compare's verdict under emulation. Where qemu emulates the CPU (TCG) a
// run's timings mean nothing, but its fault counts and verified mapping
// are exact: so the verdict is taken from the signature alone. PMD works
// when the pmd runs are PMD-mapped and take fewer faults per MiB than the
// pte runs (ranges separate, 10 % floor: stats/change.h); a pmd run that is
// not PMD-mapped is the regression a DAX study looks for.
#pragma once

#include <string>

#include "faultbench/compare/compare.h"

namespace faultbench {

// `pte` and `pmd` may be null; `emulation` names the emulator ("qemu TCG").
Verdict JudgePmdOverPteBySignature(const VariantSummary* pte, const VariantSummary* pmd, const std::string& emulation);

}  // namespace faultbench
