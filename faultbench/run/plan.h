// A run's jobs resolved once, before anything is made or mapped: for each
// job what backs its files (FixedPageSize: device DAX, hugetlbfs, or
// neither; nothing for anonymous memory) and its NUMA placement; the THP
// knobs the run must set (thp_knobs.h); for each worker its file, its layout in
// it (offset, range, file size), its seed, its CPUs, its stage and fio's
// groupid, and which worker of a stage makes a file the others share.
// Everything that can be checked without touching a file is checked here
// (options, directories, free space, the mapping the backing can give, a
// device's size, a hugetlb pool), so a bad run fails in one line first.
//
// The plan is what run/ executes (ExecutePlan, runner.h) and what compare/
// keeps: a comparison resolves each variant once and executes its plan for
// every repeat, instead of resolving the job again each time.
//
// Plain data once made; move-only, because its workers point at its jobs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "faultbench/run/thp_knobs.h"
#include "faultbench/run/worker.h"
#include "faultbench/workload/job_options.h"

namespace faultbench {

class RunPlan {
 public:
  RunPlan(RunPlan&&) = default;
  RunPlan& operator=(RunPlan&&) = default;
  RunPlan(const RunPlan&) = delete;
  RunPlan& operator=(const RunPlan&) = delete;

  // The jobs, as given; workers()' job pointers point here.
  const std::vector<JobOptions>& jobs() const { return *jobs_; }
  // Every worker of every job, job by job, worker by worker; the fields
  // that belong to one execution (latches, probe, progress) are null.
  const std::vector<WorkerContext>& workers() const { return workers_; }
  // Indices into workers(), stonewall stage by stage.
  const std::vector<std::vector<size_t>>& stages() const { return stages_; }
  // The per-size THP knobs the run sets while it runs (anonymous memory
  // with a folio size or pmd); empty for most runs.
  const std::vector<KnobWrite>& knob_writes() const { return knob_writes_; }

 private:
  friend absl::StatusOr<RunPlan> PlanRun(const std::vector<JobOptions>& jobs);
  RunPlan() = default;

  std::unique_ptr<std::vector<JobOptions>> jobs_;  // held by pointer: stays put when the plan moves
  std::vector<WorkerContext> workers_;
  std::vector<std::vector<size_t>> stages_;
  std::vector<KnobWrite> knob_writes_;
};

// The directory that holds a job's file ("." for a bare name).
std::string DirectoryOf(const std::string& file);

// The seed of worker `thread` (counted over the run): randseed, or with
// randrepeat=0 and no randseed a new one each time it is called, as fio
// seeds from /dev/urandom then (DrawsNewSeed). A plan draws one; each
// execution of it draws again, so every run of such a job gets new offsets.
bool DrawsNewSeed(const JobOptions& job);
uint64_t WorkerSeed(const JobOptions& job, size_t thread);

// Resolves `jobs` (see above). InvalidArgument (a bad option, an unknown
// NUMA node, a mapping the backing cannot give), NotFound (a missing
// directory), PermissionDenied (a device that cannot be opened, THP knobs
// to set without root), ResourceExhausted (the files do not fit in the
// free space or the pool, anonymous memory beyond MemAvailable).
absl::StatusOr<RunPlan> PlanRun(const std::vector<JobOptions>& jobs);

}  // namespace faultbench
