// Runs a set of jobs as fio runs a job file: the jobs between two
// stonewalls form a stage whose workers all start at once; stages run one
// after another, in order. Gathers the results with the machine's taint.
//
// Each worker gets fio's groupid (a stonewall or new_group starts a new
// group once the previous one has a job), its layout in its file (offset,
// size, filesize), its seed (randseed, randrepeat) and its CPUs
// (cpus_allowed, cpus_allowed_policy). Workers of a stage that name the
// same file (filename= with numjobs, --shared-file, two sections on one
// file) share it: the first creates it, the others wait for that.
//
// ExecuteJobs is its list of steps (runner.cc): preflight, read the
// machine's state, plan the workers, run each stage (tracing DAX faults
// where that verifies the mapping), ask the doctor why a mapping differs
// from its request, unlink (--unlink), judge the taint.
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
