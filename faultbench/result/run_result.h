// A finished run: every worker's result plus what the machine was like.
// Plain data; report/ renders it, compare/ judges several of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "faultbench/result/signature.h"
#include "faultbench/result/worker_result.h"
#include "faultbench/sysfacts/machine.h"
#include "faultbench/sysfacts/mount.h"

namespace faultbench {

// A THP knob the run set for itself (run/thp_knobs.h) and put back after.
struct ThpKnobChange {
  std::string path;   // /sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled
  std::string value;  // during the run
  std::string was;    // before and after it
};

struct RunResult {
  std::vector<WorkerResult> workers;  // job by job, worker by worker
  MachineState machine;
  MountFacts filesystem;   // the mount holding the first job's files
  RunSignature signature;  // what the kernel counted over the workload (signature.h)
  std::vector<std::string> taint;
  std::vector<ThpKnobChange> thp_knobs;  // set for the run, put back after it
  int64_t timestamp_ms = 0;  // wall clock at the start
  uint64_t start_ns = 0;     // CLOCK_MONOTONIC at the start, for the workers' start_ns and end_ns
  double wall_s = 0;
};

}  // namespace faultbench
