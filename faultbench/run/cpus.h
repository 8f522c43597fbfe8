// fio's cpus_allowed and cpus_allowed_policy, for one worker:
//   shared  every worker of the job may run on every CPU of the list;
//   split   worker t of the run (fio's thread_number - 1, counted over every
//           job of the run) gets the (t mod n)-th CPU of the job's list, as
//           fio's fio_cpus_split picks it.
// Applied after the NUMA placement (numa_cpu_nodes, --cpunodebind) and
// within it: the worker runs on the CPUs both allow. (fio applies the CPU
// mask first and lets numa_cpu_nodes replace it.)
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "faultbench/workload/job_options.h"

namespace faultbench {

// The CPUs worker `thread_index` may use; empty: no restriction.
// InvalidArgument naming a CPU the machine does not have.
absl::StatusOr<std::vector<int>> WorkerCpus(const JobOptions& job, int thread_index);

// Restricts the calling thread to `cpus` within its current affinity.
// FailedPrecondition when none of them is allowed there.
absl::Status RestrictThreadCpus(const std::vector<int>& cpus);

}  // namespace faultbench
