// `faultbench compare`: the same workload once per mode (pte, pmd, auto),
// engine and NUMA set, repeated, in alternating order, each on a fresh file;
// then medians with their spread, and a verdict on PMD versus PTE that only
// calls a difference when it exceeds the spread across repeats.
//
// Alternating the order (A B, B A, A B, ...) keeps a slow drift of the
// machine (page cache, THP pool, thermal) from favouring one mode; fresh
// files keep an earlier mode's page tables and 4 KiB entries from carrying
// over, unless --reuse-file asks for exactly that to reproduce it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "faultbench/doctor/doctor.h"
#include "faultbench/result/compare_result.h"
#include "faultbench/workload/job_options.h"

namespace faultbench {

struct NumaSet {
  std::string label;  // as the user wrote it, "default" when none
  NumaOptions options;
  // A cell of --numa-matrix (numa_matrix.h): its CPU node and memory node
  // (on DAX, the device's node); -1 for sets of --numa-sets.
  int cpu_node = -1, mem_node = -1;
};

// What doctor says about where the job's files live: its directory, or its
// file (the file's directory while the file is still to be made).
absl::StatusOr<doctor::DoctorReport> ExamineLocation(const JobOptions& job);

// "cpunodebind=0 membind=1;cpunodebind=0 membind=0": sets separated by ';',
// each a space-separated list of numactl-style options.
absl::StatusOr<std::vector<NumaSet>> ParseNumaSets(const std::string& text);

// Where a comparison is, for a line on the terminal (cli/ prints it): the
// unmeasured warm-up, or a measured run of `variant` in round `round`
// (from 1) of `rounds` (0 for --repeat=auto, which has `elapsed_s` of
// `budget_s` behind it).
struct CompareProgress {
  bool warmup = false;
  std::string variant;
  int round = 0, rounds = 0;
  double elapsed_s = 0, budget_s = 0;
};

struct CompareConfig {
  JobOptions job;  // the workload; its mapping and engine are replaced per variant
  std::vector<pmstore::mapping::PageIntent> modes = {pmstore::mapping::PageIntent::kPte,
                                                     pmstore::mapping::PageIntent::kPmd};
  std::vector<pmstore::mapping::Engine> engines;  // empty: the job's engine
  std::vector<NumaSet> numa_sets;                 // empty: the job's NUMA options
  int repeat = 3;
  // --repeat=auto: rounds in alternating order until every verdict calls a
  // difference (3 rounds at least) or `repeat_budget_s` would be exceeded
  // (at most kMaxAutoRounds); `repeat` is then ignored.
  bool repeat_auto = false;
  double repeat_budget_s = 60;
  // One unmeasured run of the first variant on a file of its own first, so
  // that memory the hypervisor took back while the machine was idle (free
  // page reporting) is not charged to the first measured run.
  bool warmup = true;
  bool reuse_file = false;
  bool progress = true;  // each run's own progress line (RunSettings::progress)
  // Called before the warm-up and before each measured run; may be empty.
  std::function<void(const CompareProgress&)> on_run;
  bool numa_matrix = false;  // every (CPU node, memory node) pair: RunNumaMatrix (numa_matrix.h)
};

// The verdict for one pair of one group, on IOPS: `base` (pte) against
// `variant` (pmd); either may be null (kNoPair). A difference is called by
// stats::JudgeChange (ranges separate, 3 % floor, 3 repeats a side at
// least). Under emulation compare judges the signature instead
// (signature_verdict.h).
Verdict JudgeOnTimings(const VariantSummary* base, const VariantSummary* variant);

// The median share of a variant's bytes mapped at the size it asked for:
// PMD bytes for pmd, PUD bytes for pud (1 for pte and auto, which ask for
// no size above 4 KiB).
double ShareAtRequestedSize(const VariantSummary& variant);

// Runs every variant --repeat times and judges them. Usage errors (checked
// before the first run) are returned; a run that fails is recorded in
// `failures` and the others still count. A mode the backing cannot give is
// skipped and named in `skipped`; when no mode is left, that is the error.
absl::StatusOr<CompareOutcome> RunComparison(const CompareConfig& config);

}  // namespace faultbench
