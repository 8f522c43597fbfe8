#include "faultbench/result/worker_result.h"

namespace faultbench {

double PhaseResult::FaultsPerMib() const {
  if (bytes_accessed == 0) return 0;
  return static_cast<double>(rusage.minor_faults + rusage.major_faults) /
         (static_cast<double>(bytes_accessed) / (1024.0 * 1024.0));
}

double MappingOutcome::PmdShare() const {
  const uint64_t present = census.pmd_bytes + census.pte_bytes;
  return present == 0 ? 0.0 : static_cast<double>(census.pmd_bytes) / static_cast<double>(present);
}

bool MappingOutcome::DiffersFromRequest() const {
  if (!verified) return false;
  if (requested == pmstore::mapping::PageIntent::kPmd) return PmdShare() < 0.95;
  if (requested == pmstore::mapping::PageIntent::kPte) return census.pmd_bytes > 0;
  return false;
}

}  // namespace faultbench
