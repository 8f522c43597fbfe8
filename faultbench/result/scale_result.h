// What `faultbench scale` measured, as plain data: the workload at each
// number of tasks, as threads of one process or as processes, repeated;
// per task its page faults per second, per run the sum over the tasks and
// the run's signature. scale/ fills it in, report/ renders it.
#pragma once

#include <string>
#include <vector>

#include "faultbench/result/compare_result.h"
#include "faultbench/result/signature.h"
#include "faultbench/workload/job_options.h"

namespace faultbench {

// How the tasks of a point run: threads of one process share one address
// space (one mmap_lock, per-VMA locks since 6.4), processes each have their
// own: will-it-scale's two ways of running a test.
enum class ScaleMode { kThreads, kProcesses };
std::string_view ScaleModeName(ScaleMode mode);  // "threads", "processes"

// One task of one run: the faults of its fault phase (the first touch of
// every block: the populate call with --prefault, else the first pass) and
// that phase's time.
struct ScaleTask {
  uint64_t faults = 0;  // minor + major (getrusage of the task's thread)
  double seconds = 0;
  double FaultsPerSecond() const { return seconds > 0 ? static_cast<double>(faults) / seconds : 0; }
  std::string error;  // non-empty: the task failed
};

// One run of a point: every task, and what the kernel counted for all of
// them between the moment every task had mapped its memory and the moment
// every task was done (machine-wide: the point's signature).
struct ScaleRun {
  int repeat = 0;
  std::vector<ScaleTask> tasks;
  RunSignature signature;
  double TotalFaultsPerSecond() const;    // the sum of the tasks' rates (will-it-scale's total)
  double FaultsPerSecondPerTask() const;  // their mean
};

struct ScalePoint {
  ScaleMode mode = ScaleMode::kThreads;
  int tasks = 1;
  std::vector<ScaleRun> runs;  // one per repeat
  Spread total, per_task;      // faults per second over the runs
};

struct ScaleOutcome {
  JobOptions workload;    // each task's job
  std::string location;   // "anonymous private memory", "/mnt/t (tmpfs)"
  std::string emulation;  // "qemu TCG": the counts hold, the timings do not
  int repeats = 0;
  std::vector<ScalePoint> points;  // mode by mode, tasks ascending
  std::vector<std::string> taint;
  std::vector<CompareFailure> failures;  // tasks that failed: "threads x2: ..."
};

}  // namespace faultbench
