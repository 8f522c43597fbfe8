#include "faultbench/run/plan.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "faultbench/run/cpus.h"
#include "faultbench/run/page_size_check.h"
#include "faultbench/run/target.h"
#include "faultbench/sysfacts/fixed_page_size.h"
#include "faultbench/sysfacts/read_file.h"
#include "faultbench/sysfacts/vm_counters.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/tick_clock.h"
#include "pmstore/base/units.h"

namespace faultbench {
namespace {

using pmstore::base::FormatBytes;
using pmstore::base::kHugePageSize;
using pmstore::base::RoundUp;

// The target as the run will find it: nothing, when --fresh-file deletes it
// first (a device stays: only regular files are deleted).
ExistingTarget Existing(const WorkerContext& c) {
  if (c.job->anonymous()) return {};
  return c.job->fresh_file && !c.fixed.devdax ? ExistingTarget{} : StatTarget(c.file);
}

// fio's groupid and the stage of each job. A stonewall (or new_group)
// opens a new group only once the current one has a job (fio's add_job);
// a stonewall also waits for every job before it.
void NumberGroupsAndStages(const std::vector<JobOptions>& jobs, std::vector<int>& group, std::vector<int>& stage) {
  int group_id = 0, stage_id = 0, jobs_in_group = 0;
  for (size_t j = 0; j < jobs.size(); ++j) {
    if ((jobs[j].stonewall || jobs[j].new_group) && jobs_in_group > 0) {
      ++group_id;
      jobs_in_group = 0;
    }
    if (jobs[j].stonewall && j > 0) ++stage_id;
    group.push_back(group_id);
    stage.push_back(stage_id);
    jobs_in_group += jobs[j].numjobs;
  }
}

// Files the jobs will create or grow, by directory: bytes still to allocate.
// Devices and hugetlbfs have checks of their own (page_size_check.h).
absl::Status CheckSpace(const std::vector<WorkerContext>& workers) {
  std::map<std::string, uint64_t> needed;  // directory -> bytes
  std::map<std::string, bool> seen_file;
  for (const WorkerContext& c : workers) {
    if (c.job->anonymous() || c.fixed.fixed() || seen_file[c.file]) continue;
    seen_file[c.file] = true;
    const uint64_t want = RoundUp(c.file_size, kHugePageSize);
    const uint64_t have = Existing(c).allocated;
    if (want > have) needed[DirectoryOf(c.file)] += want - have;
  }
  for (const auto& [dir, bytes] : needed) {
    struct statvfs vfs;
    if (statvfs(dir.c_str(), &vfs) != 0) continue;  // reported by the directory check
    const uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    if (bytes > free_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat("--size: the run needs ", FormatBytes(bytes), " in ", dir,
                                                       " but only ", FormatBytes(free_bytes), " is free"));
    }
  }
  return absl::OkStatus();
}

// Anonymous memory is RAM (and swap, which would measure the disk): the
// run's must fit in what the kernel says is available.
absl::Status CheckMemory(const std::vector<WorkerContext>& workers) {
  uint64_t anon = 0;
  for (const WorkerContext& c : workers) anon += c.job->anonymous() ? c.file_size : 0;
  if (anon == 0) return absl::OkStatus();
  const std::optional<uint64_t> available_kb = MeminfoKb(ReadWholeFile("/proc/meminfo"), "MemAvailable");
  if (!available_kb || anon <= *available_kb << 10) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat("--anon: the run needs ", FormatBytes(anon),
                                                   " of anonymous memory, and MemAvailable is ",
                                                   FormatBytes(*available_kb << 10), ": give a smaller --size"));
}

absl::Status CheckDirectory(const std::string& file) {
  const std::string dir = DirectoryOf(file);
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::NotFoundError(absl::StrCat("directory ", dir, " does not exist"));
  }
  if (access(dir.c_str(), W_OK) != 0) {
    return absl::PermissionDeniedError(absl::StrCat("directory ", dir, " is not writable"));
  }
  return absl::OkStatus();
}

// Workers of one stage that map the same file: the first creates it, big
// enough for all of them (the others wait for it: SharedFileLatches).
void ShareFiles(std::vector<WorkerContext>& workers, const std::vector<size_t>& stage) {
  std::map<std::string, std::vector<size_t>> by_file;
  for (size_t i : stage) {
    if (!workers[i].job->anonymous()) by_file[workers[i].file].push_back(i);  // anonymous memory is each worker's own
  }
  for (const auto& [file, sharing] : by_file) {
    uint64_t size = 0;
    for (size_t i : sharing) size = std::max(size, workers[i].file_size);
    for (size_t k = 0; k < sharing.size(); ++k) {
      workers[sharing[k]].file_size = size;
      workers[sharing[k]].creates_file = k == 0;
    }
  }
}

}  // namespace

std::string DirectoryOf(const std::string& file) {
  const std::filesystem::path parent = std::filesystem::path(file).parent_path();
  return parent.empty() ? "." : parent.string();
}

bool DrawsNewSeed(const JobOptions& job) { return !job.randrepeat && !job.randseed_set; }

uint64_t WorkerSeed(const JobOptions& job, size_t thread) {
  const uint64_t base = DrawsNewSeed(job) ? (static_cast<uint64_t>(std::random_device{}()) << 32 | std::random_device{}())
                                          : job.randseed;
  return base + static_cast<uint64_t>(thread) * 0x9E3779B9ull;
}

absl::StatusOr<RunPlan> PlanRun(const std::vector<JobOptions>& jobs) {
  if (jobs.empty()) return absl::InvalidArgumentError("no job to run");
  RunPlan plan;
  plan.jobs_ = std::make_unique<std::vector<JobOptions>>(jobs);
  std::vector<int> group, stage;
  NumberGroupsAndStages(jobs, group, stage);
  const bool use_tsc = pmstore::base::InvariantTscAvailable();
  for (size_t j = 0; j < jobs.size(); ++j) {
    const JobOptions& job = (*plan.jobs_)[j];
    PMSTORE_RETURN_IF_ERROR(ValidateJob(job));
    PMSTORE_ASSIGN_OR_RETURN(ResolvedNuma numa, ResolveNuma(job.numa));
    // What backs the job, read once: nothing fixes anonymous memory's page size.
    const FixedPageSize fixed = job.anonymous() ? FixedPageSize{} : ReadFixedPageSize(WorkerFilePath(job, 0));
    if (!job.anonymous()) PMSTORE_RETURN_IF_ERROR(CheckFolioFits(job, WorkerFilePath(job, 0)));
    for (int w = 0; w < job.numjobs; ++w) {
      WorkerContext c;
      c.job = &job;
      c.job_index = static_cast<int>(j);
      c.worker_index = w;
      c.group_id = group[j];
      c.stage = stage[j];
      c.file = WorkerFilePath(job, w);
      c.fixed = fixed;
      // A device is not a file in a directory, and anonymous memory is no file at all.
      if (!fixed.devdax && !job.anonymous()) PMSTORE_RETURN_IF_ERROR(CheckDirectory(c.file));
      PMSTORE_ASSIGN_OR_RETURN(c.layout, LayOutWorker(job, w, Existing(c).size));
      c.file_size = c.layout.file_size;
      const size_t thread = plan.workers_.size();
      c.seed = WorkerSeed(job, thread);
      PMSTORE_ASSIGN_OR_RETURN(c.cpus, WorkerCpus(job, static_cast<int>(thread)));
      c.numa = numa;
      c.use_tsc = use_tsc;
      if (static_cast<size_t>(c.stage) >= plan.stages_.size()) plan.stages_.emplace_back();
      plan.stages_[static_cast<size_t>(c.stage)].push_back(thread);
      plan.workers_.push_back(std::move(c));
    }
  }
  for (const std::vector<size_t>& members : plan.stages_) ShareFiles(plan.workers_, members);
  PMSTORE_RETURN_IF_ERROR(CheckFixedPageSizeJobs(plan.workers_));
  PMSTORE_RETURN_IF_ERROR(CheckSpace(plan.workers_));
  PMSTORE_RETURN_IF_ERROR(CheckMemory(plan.workers_));
  PMSTORE_ASSIGN_OR_RETURN(plan.knob_writes_, KnobWritesForRun(jobs));
  return plan;
}

}  // namespace faultbench
