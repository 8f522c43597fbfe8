// Runs a set of jobs as fio runs a job file: the jobs between two
// stonewalls form a stage whose workers all start at once; stages run one
// after another, in order. Gathers the results with the machine's taint.
//
// The jobs are resolved first, once (plan.h: groupids, layouts, seeds,
// CPUs, NUMA, what backs the files, every check that needs no file); a
// plan can be executed any number of times (compare's repeats).
//
// ExecutePlan is its list of steps (runner.cc): arm the plan's workers for
// this execution, read the machine's state, run each stage (tracing DAX
// faults where that verifies the mapping), ask the doctor why a mapping
// differs from its request, unlink (--unlink), judge the taint.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "faultbench/result/run_result.h"
#include "faultbench/run/plan.h"
#include "faultbench/run/signature_probe.h"
#include "faultbench/workload/job_options.h"

namespace faultbench {

struct RunSettings {
  // One updating progress line on stderr for runs longer than 2 s, when
  // stderr is a terminal.
  bool progress = true;
  // Tests: when set, receives the block offsets of every measured I/O,
  // one vector per worker in the order of RunResult::workers.
  std::vector<std::vector<uint64_t>>* offset_logs = nullptr;
  // Called at every stage's start and finish lines (signature_probe.h);
  // null: none. Must outlive the run.
  LineHook* line_hook = nullptr;
  // Set the THP knobs the plan needs (plan.h knob_writes) for the run; false
  // where a caller has set them already for several runs at once (scale's
  // processes).
  bool set_thp_knobs = true;
};

// Executes `plan` once. The errors a plan could not foresee are the
// workers' (WorkerResult::error); the status is not OK only when the run
// could not start.
absl::StatusOr<RunResult> ExecutePlan(const RunPlan& plan, const RunSettings& settings);

// PlanRun(jobs), then ExecutePlan: PlanRun's errors (plan.h) before any
// file is touched.
absl::StatusOr<RunResult> ExecuteJobs(const std::vector<JobOptions>& jobs, const RunSettings& settings);

}  // namespace faultbench
