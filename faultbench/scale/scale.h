// `faultbench scale`: how page faults scale with the number of tasks, as
// will-it-scale asks it (page_fault1/2/3 by tasks, as threads and as
// processes), for any job.
//
// Each point is the job run by N tasks at once, each task with memory (or
// a file) of its own:
//   threads:   N workers of one run (numjobs=N): one process, one address
//              space, so their faults meet on its mmap_lock (per-VMA locks
//              since 6.4);
//   processes: N processes, each running the job once, held at the same
//              two lines as a run's workers (every task set up before any
//              starts; the counters read when every task is done, before
//              any unmaps), so the machine-wide signature of the point is
//              taken over exactly the tasks' work.
// A task's rate is the faults of its fault phase (the first touch of every
// block) over that phase's time; a point's total is the sum of its tasks'
// rates. Points run --repeat times, in alternating order (threads and
// processes, few tasks and many), so a drift of the machine does not favour
// one. The THP knobs an anonymous folio size needs are set once per run
// (for processes by the parent, before it forks).
//
// Under emulation (qemu TCG) the counts hold and the timings do not: the
// outcome names the emulator and the reports say so.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "faultbench/result/scale_result.h"
#include "faultbench/workload/job_options.h"

namespace faultbench {

struct ScaleConfig {
  JobOptions job;  // one task's job; numjobs must be 1 (the tasks are the points')
  std::vector<int> tasks = {1, 2};
  std::vector<ScaleMode> modes = {ScaleMode::kThreads, ScaleMode::kProcesses};
  int repeat = 3;
  bool progress = true;  // each run's own progress line
  // Called before each run (mode, tasks, repeat from 1); may be empty.
  std::function<void(ScaleMode, int tasks, int repeat)> on_run;
};

// "1,2,4" -> {1, 2, 4}: positive counts, at most 256 each. InvalidArgument otherwise.
absl::StatusOr<std::vector<int>> ParseTasks(const std::string& text);
// "threads", "processes" or both, comma-separated. InvalidArgument otherwise.
absl::StatusOr<std::vector<ScaleMode>> ParseScaleModes(const std::string& text);

// Runs every point --repeat times. Usage errors (a bad job, a point that
// cannot be planned) come back before the first run; a task that fails is
// recorded in `failures` and its run still counts the other tasks.
absl::StatusOr<ScaleOutcome> RunScale(const ScaleConfig& config);

}  // namespace faultbench
