// Runs a set of jobs: checks them against the machine, starts every worker
// of every job at once (as fio runs job sections in parallel), waits for
// them and gathers their results with the machine's taint.
//
// ExecuteJobs is its list of steps (runner.cc): preflight, read the
// machine's state, plan the workers, run them (tracing DAX faults where
// that verifies the mapping), ask the doctor why a mapping differs from its
// request, unlink (--unlink), judge the taint.
//
// Everything that can be known before a worker starts is checked first and
// returned as an error, so a bad run fails in one line before touching any
// file: InvalidArgument (bad option, unknown NUMA node), NotFound (missing
// directory), ResourceExhausted (the files do not fit in the free space).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "faultbench/result/run_result.h"
#include "faultbench/workload/job_options.h"

namespace faultbench {

struct RunSettings {
  // One updating progress line on stderr for runs longer than 2 s, when
  // stderr is a terminal.
  bool progress = true;
  // Tests: when set, receives the block offsets of every measured I/O,
  // one vector per worker in the order of RunResult::workers.
  std::vector<std::vector<uint64_t>>* offset_logs = nullptr;
};

// Checks `jobs` against the machine without running anything.
absl::Status PreflightJobs(const std::vector<JobOptions>& jobs);

absl::StatusOr<RunResult> ExecuteJobs(const std::vector<JobOptions>& jobs, const RunSettings& settings);

}  // namespace faultbench
