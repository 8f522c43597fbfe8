#include "faultbench/result/worker_result.h"

namespace faultbench {

double PhaseResult::FaultsPerMib() const {
  if (bytes_accessed == 0) return 0;
  return static_cast<double>(rusage.minor_faults + rusage.major_faults) /
         (static_cast<double>(bytes_accessed) / (1024.0 * 1024.0));
}

uint64_t MappingOutcome::PresentBytes() const { return census.pud_bytes + census.pmd_bytes + census.pte_bytes; }

double MappingOutcome::PmdShare() const {
  const uint64_t present = PresentBytes();
  return present == 0 ? 0.0 : static_cast<double>(census.pmd_bytes) / static_cast<double>(present);
}

double MappingOutcome::PudShare() const {
  const uint64_t present = PresentBytes();
  return present == 0 ? 0.0 : static_cast<double>(census.pud_bytes) / static_cast<double>(present);
}

bool MappingOutcome::DiffersFromRequest() const {
  using pmstore::mapping::PageIntent;
  if (!verified) return false;
  switch (requested) {
    case PageIntent::kPmd: return PmdShare() < 0.95;
    case PageIntent::kPud: return PudShare() < 0.95;
    case PageIntent::kPte: return census.pmd_bytes + census.pud_bytes > 0;
    case PageIntent::kAuto: return false;
  }
  return false;
}

}  // namespace faultbench
