// One worker of a job: a thread that places itself (NUMA), opens and maps
// its file, waits for every other worker, then issues and times I/Os.
//
// The worker owns its file mapping for the whole run and reads the mapping
// back (VerifyMapping, page placement) before unmapping it, because that
// is the only moment the page tables it measured still exist.
#pragma once

#include <atomic>
#include <cstdint>
#include <latch>
#include <string>
#include <vector>

#include "faultbench/numa/numa_policy.h"
#include "faultbench/result/worker_result.h"
#include "faultbench/run/signature_probe.h"
#include "faultbench/sysfacts/fixed_page_size.h"
#include "faultbench/workload/job_layout.h"
#include "faultbench/workload/job_options.h"

namespace faultbench {

struct WorkerContext {
  const JobOptions* job = nullptr;
  int job_index = 0;
  int worker_index = 0;
  int group_id = 0;  // fio's groupid
  int stage = 0;     // the stonewall stage it runs in
  std::string file;  // the file it maps
  WorkerLayout layout;
  uint64_t file_size = 0;  // what the file's creator makes it: enough for every worker of the stage on it
  uint64_t seed = 0;       // of the random offsets
  std::vector<int> cpus;   // cpus_allowed for this worker; empty: no restriction
  ResolvedNuma numa;
  // What backs the file, where it fixes the page size (device DAX,
  // hugetlbfs): how to make, map and verify it. Read once per job.
  FixedPageSize fixed;
  bool use_tsc = false;
  // The first worker of its stage to name the file creates (or grows) it.
  // When other workers of the stage map the same file, it counts
  // file_ready down afterwards and they wait for it; otherwise null.
  bool creates_file = true;
  std::latch* file_ready = nullptr;
  // Every worker of the stage arrives here once set up (or failed), so the
  // measured intervals of concurrent workers overlap.
  std::latch* start_line = nullptr;
  // Reads the counters of the run's signature at its stage's start and finish
  // lines (signature_probe.h); null: no signature.
  SignatureProbe* probe = nullptr;
  // I/Os done so far, for the progress line (updated every 64 I/Os).
  std::atomic<uint64_t>* progress = nullptr;
  // Records every block offset (bytes from the start of the worker's
  // range) of the measured I/Os; for tests. Null in normal runs.
  std::vector<uint64_t>* offset_log = nullptr;
};

// Runs the worker to completion on the calling thread. Failures are
// returned in WorkerResult::error (one line).
WorkerResult RunWorker(const WorkerContext& context);

}  // namespace faultbench
