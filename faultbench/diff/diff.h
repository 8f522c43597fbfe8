// `faultbench diff`: did anything change between two sets of runs, the
// base and the new side (two kernels, builds, file systems, machines or
// workloads), and is that change a regression?
//
// For every job both sides ran (matched by name and variant) and every
// figure both have, each side's runs are summarized (min, median, max,
// mean, %stddev) and stats::JudgeChange calls a change only when the
// ranges separate and the difference clears the figure's noise floor; with
// fewer than 3 runs a side nothing is called. The figure's worse direction
// (metrics.h) makes a change a regression or an improvement.
//
// What the verdict counts is the caller's choice (VerdictRule): by default
// only regressions, so improvements exit 0; kernel engineers hunting any
// behaviour change (--any-change) count improvements too.
//
// Before any of that, the sides must be comparable: only the facts
// `under_test` names may differ (taint/comparability.h), the runs must not
// have failed, and under emulation (qemu TCG, on either side) only the
// timing-free signature is judged: timings are shown, never called.
//
// Reads files only (run_files.h); runs nothing.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "faultbench/diff/metrics.h"
#include "faultbench/diff/run_files.h"
#include "faultbench/stats/change.h"
#include "faultbench/taint/comparability.h"

namespace faultbench::diff {

// What the verdict and the exit status count as "changed".
enum class VerdictRule {
  kRegressions,  // a figure judged kRegression; improvements are notes (exit 0)
  kAnyChange,    // a figure judged kRegression or kImprovement (--any-change)
};

struct DiffConfig {
  std::vector<std::string> base_paths;
  std::vector<std::string> new_paths;
  UnderTest under_test = UnderTest::kKernel;
  VerdictRule rule = VerdictRule::kRegressions;
};

// What one side is, over all its runs.
struct SideSummary {
  int runs = 0;
  std::vector<std::string> tools;    // "faultbench-0.1.0", "fio-3.33"
  bool taint_known = false;          // every run recorded its taint (fio's JSON does not)
  std::vector<std::string> taint;    // merged over the runs (taint/taint.h MergeTaint)
  SideFacts facts;                   // the system facts the runs agree on
  std::vector<std::string> inconsistent;  // facts the side's own runs disagree on: "kernel: A, B"
  std::string emulation;             // "qemu TCG" when its runs ran under emulation
  int cpu_saturated_runs = 0;        // runs whose CPU was the limit (usr+sys >= 95%)
  std::vector<std::string> failed;   // failed runs: "SOURCE: job 't' failed: ..."
  std::vector<std::string> skipped;  // files in its directories that hold no run
};

enum class FigureVerdict {
  kRegression,   // changed, in the worse direction
  kImprovement,  // changed, in the better direction
  kNoChange,     // ranges overlap, or below the noise floor
  kNoSpread,     // fewer than 3 runs a side
  kNotJudged,    // a timing under emulation: shown, not called
};
std::string FigureVerdictName(FigureVerdict verdict);  // "REGRESSION", "improvement", ...

struct FigureDiff {
  const MetricInfo* metric = nullptr;
  stats::Summary base, next;
  stats::ChangeJudgement change;
  FigureVerdict verdict = FigureVerdict::kNoSpread;
};

struct JobDiff {
  std::string name, variant;
  int base_runs = 0, next_runs = 0;
  std::vector<FigureDiff> figures;            // in MetricOrder
  // Figures only one side recorded (the fs_dax tallies exist only where
  // the runs were traced: kernels before 6.7 verify DAX mappings so).
  std::vector<std::string> only_base, only_next;
  std::vector<std::string> next_doctor_reasons;  // the new side's doctor, where its mapping differed
};

// kNoChange and kChange only under VerdictRule::kAnyChange.
enum class DiffVerdict { kNoRegression, kRegression, kNoChange, kChange, kCannotJudge };

struct DiffOutcome {
  UnderTest under_test = UnderTest::kKernel;
  VerdictRule rule = VerdictRule::kRegressions;
  SideSummary base, next;
  Comparability comparability;  // system facts and job options that differ
  std::string emulation;        // non-empty: only the signature was judged
  std::vector<JobDiff> jobs;
  std::vector<std::string> unmatched;  // "job 't' [psync] only in base"
  DiffVerdict verdict = DiffVerdict::kCannotJudge;
  // "REGRESSION: ...", "no regression: ...", "cannot judge: ..."; under
  // kAnyChange "CHANGE: 2 of 31 figures changed (1 worse, 1 better): ...", "no change: ...".
  std::string verdict_text;
  std::string headline;      // its first clause: "REGRESSION: 3 of 31 figures worse"
  std::vector<std::string> causes;  // for a regression or change: what differs under test, the doctor, the signature
  std::vector<std::string> notes;   // side remarks: CPU saturation, taint unknown, improvements

  // For `git bisect run`: 0 no regression (no change), 1 regression (a
  // change), 125 cannot judge.
  int ExitStatus() const;
};

// "kernel: 6.1.0-57-amd64 (base) vs 6.12.95+deb12-amd64 (new)"; for mount
// options only what differs: "sunit=4096,swidth=4096 only in base".
std::string DescribeDifference(const FactDifference& difference);

// Judges two sides' runs (the pure part, for tests and for matrix/, which
// judges neighbouring kernels by it).
DiffOutcome JudgeSides(const std::vector<RunSample>& base, const std::vector<RunSample>& next, UnderTest under_test,
                       VerdictRule rule = VerdictRule::kRegressions);

// Reads both sides' files and judges them. Errors (a missing path, a file
// that is not a result) are usage errors; everything else is in the outcome.
absl::StatusOr<DiffOutcome> RunDiff(const DiffConfig& config);

}  // namespace faultbench::diff
