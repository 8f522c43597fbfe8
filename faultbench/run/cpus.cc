#include "faultbench/run/cpus.h"

#include <sched.h>
#include <sys/sysinfo.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "faultbench/workload/fio_options.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"

namespace faultbench {

absl::StatusOr<std::vector<int>> WorkerCpus(const JobOptions& job, int thread_index) {
  if (job.cpus_allowed.empty()) return std::vector<int>();
  PMSTORE_ASSIGN_OR_RETURN(std::vector<int> cpus, ParseCpuList(job.cpus_allowed));
  const int configured = get_nprocs_conf();
  for (int cpu : cpus) {
    if (cpu >= configured || cpu >= CPU_SETSIZE) {
      return absl::InvalidArgumentError(absl::StrCat("job '", job.name, "': cpus_allowed=", job.cpus_allowed,
                                                     ": CPU ", cpu, " does not exist here (CPUs 0-",
                                                     configured - 1, ")"));
    }
  }
  if (job.cpus_allowed_policy == CpusAllowedPolicy::kSplit) {
    return std::vector<int>{cpus[static_cast<size_t>(thread_index) % cpus.size()]};
  }
  return cpus;
}

absl::Status RestrictThreadCpus(const std::vector<int>& cpus) {
  if (cpus.empty()) return absl::OkStatus();
  cpu_set_t now;
  CPU_ZERO(&now);
  if (sched_getaffinity(0, sizeof(now), &now) != 0) return pmstore::base::ErrnoStatus(errno, "sched_getaffinity", "");
  cpu_set_t wanted;
  CPU_ZERO(&wanted);
  for (int cpu : cpus) {
    if (CPU_ISSET(cpu, &now)) CPU_SET(cpu, &wanted);
  }
  if (CPU_COUNT(&wanted) == 0) {
    return absl::FailedPreconditionError(absl::StrCat("cpus_allowed: none of CPUs ", absl::StrJoin(cpus, ","),
                                                      " is allowed by the job's NUMA placement"));
  }
  if (sched_setaffinity(0, sizeof(wanted), &wanted) != 0) {
    return pmstore::base::ErrnoStatus(errno, "sched_setaffinity", absl::StrJoin(cpus, ","));
  }
  return absl::OkStatus();
}

}  // namespace faultbench
