#include "faultbench/result/compare_result.h"

#include <algorithm>

namespace faultbench {

bool Verdict::called() const {
  switch (kind) {
    case VerdictKind::kFaster:
    case VerdictKind::kSlower:
    case VerdictKind::kMappedAsAsked:
    case VerdictKind::kNotMapped:
    case VerdictKind::kMoreFaults: return true;
    case VerdictKind::kNoPair:
    case VerdictKind::kTooFewRuns:
    case VerdictKind::kNoDifference:
    case VerdictKind::kSameFaults: return false;
  }
  return false;
}

bool Verdict::regression() const {
  return kind == VerdictKind::kSlower || kind == VerdictKind::kNotMapped || kind == VerdictKind::kMoreFaults;
}

bool NumaMatrix::AllExact() const {
  return !cells.empty() && std::all_of(cells.begin(), cells.end(), [](const MatrixCell& c) { return c.exact; });
}

}  // namespace faultbench
