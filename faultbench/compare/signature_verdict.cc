#include "faultbench/compare/signature_verdict.h"

#include <algorithm>

#include "faultbench/stats/change.h"

namespace faultbench {
namespace {

// Fault counts are exact, but the pmd runs of a fresh DAX file differ by a
// fault or two (64-67 for 128 MiB on plain ext4): 10 % is noise.
constexpr stats::NoiseFloor kFaultsFloor = {.relative = 0.10, .absolute = 0.05};
constexpr double kMappedAsAsked = 0.95;

}  // namespace

Verdict JudgeOnSignature(const VariantSummary* base, const VariantSummary* variant, const std::string& emulation) {
  Verdict v;
  v.emulation = emulation;
  if (base == nullptr || variant == nullptr) return v;
  v.base = base->mode;
  v.variant = variant->mode;
  v.base_runs = static_cast<int>(base->faults_per_mib.n());
  v.variant_runs = static_cast<int>(variant->faults_per_mib.n());
  v.base_faults_per_mib = base->faults_per_mib.median;
  v.variant_faults_per_mib = variant->faults_per_mib.median;
  v.faults_factor = base->faults_per_mib.mean / std::max(variant->faults_per_mib.mean, 1e-9);
  v.variant_share = ShareAtRequestedSize(*variant);
  v.change = stats::JudgeChange(base->faults_per_mib, variant->faults_per_mib, kFaultsFloor);
  if (v.change.change == stats::Change::kTooFewRuns) {
    v.kind = VerdictKind::kTooFewRuns;
  } else if (v.variant_share < kMappedAsAsked) {
    v.kind = VerdictKind::kNotMapped;
  } else if (v.change.change == stats::Change::kDown) {
    v.kind = VerdictKind::kMappedAsAsked;
  } else if (v.change.change == stats::Change::kUp) {
    v.kind = VerdictKind::kMoreFaults;
  } else {
    v.kind = VerdictKind::kSameFaults;
  }
  return v;
}

}  // namespace faultbench
