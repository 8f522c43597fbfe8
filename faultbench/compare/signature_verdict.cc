#include "faultbench/compare/signature_verdict.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "faultbench/stats/change.h"

namespace faultbench {
namespace {

// Fault counts are exact, but the pmd runs of a fresh DAX file differ by a
// fault or two (64-67 for 128 MiB on plain ext4): 10 % is noise.
constexpr stats::NoiseFloor kFaultsFloor = {.relative = 0.10, .absolute = 0.05};
constexpr double kPmdMapped = 0.95;

}  // namespace

Verdict JudgePmdOverPteBySignature(const VariantSummary* pte, const VariantSummary* pmd, const std::string& emulation) {
  Verdict v;
  v.judged_on = absl::StrCat("signature (emulation: ", emulation, ")");
  if (pte == nullptr || pmd == nullptr) {
    v.text = "no verdict: needs both pte and pmd runs";
    return v;
  }
  v.available = true;
  const stats::ChangeJudgement faults = stats::JudgeChange(pte->faults_per_mib, pmd->faults_per_mib, kFaultsFloor);
  v.evidence = "faults/MiB pte vs pmd: " + faults.Evidence();
  const std::string figures = absl::StrFormat("pmd %.2f faults/MiB, %.1f%% PMD; pte %.2f faults/MiB",
                                              pmd->faults_per_mib.median, pmd->pmd_share.median * 100,
                                              pte->faults_per_mib.median);
  if (faults.change == stats::Change::kTooFewRuns) {
    v.text = absl::StrFormat("nothing called: %d pte and %d pmd repeats, 3 a mode are needed to know the spread (%s)",
                             pte->faults_per_mib.n(), pmd->faults_per_mib.n(), figures);
    return v;
  }
  v.called = true;
  if (pmd->pmd_share.median < kPmdMapped) {
    v.text = absl::StrFormat("REGRESSION: PMD not mapped: the pmd runs were %.1f%% PMD-mapped (%s)",
                             pmd->pmd_share.median * 100, figures);
  } else if (faults.change == stats::Change::kDown) {
    v.text = absl::StrFormat("PMD mapped as asked, x%.1f fewer faults per MiB than PTE (%s)",
                             pte->faults_per_mib.mean / std::max(pmd->faults_per_mib.mean, 1e-9), figures);
  } else if (faults.change == stats::Change::kUp) {
    v.text = absl::StrCat("REGRESSION: the pmd runs took more faults per MiB than the pte runs (", figures, ")");
  } else {
    v.called = false;
    v.text = absl::StrCat("no significant difference in faults per MiB (", figures, ")");
  }
  return v;
}

}  // namespace faultbench
