#include "faultbench/run/runner.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <latch>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "faultbench/doctor/doctor.h"
#include "faultbench/measure/dax_trace.h"
#include "faultbench/run/page_size_check.h"
#include "faultbench/run/progress_line.h"
#include "faultbench/run/worker.h"
#include "faultbench/sysfacts/fixed_page_size.h"
#include "faultbench/sysfacts/mount.h"
#include "faultbench/taint/taint.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/tick_clock.h"
#include "pmstore/base/units.h"
#include "pmstore/mapping/verify.h"

namespace faultbench {
namespace {

using pmstore::base::FormatBytes;
using pmstore::base::InvariantTscAvailable;
using pmstore::base::MonotonicNs;
using pmstore::base::kHugePageSize;
using pmstore::base::RoundUp;

std::string DirectoryOf(const JobOptions& job) {
  if (!job.directory.empty()) return job.directory;
  const std::filesystem::path parent = std::filesystem::path(job.filename).parent_path();
  return parent.empty() ? "." : parent.string();
}

// Files the jobs will create or grow, by directory: bytes still to allocate.
// Devices and hugetlbfs have checks of their own (page_size_check.h).
absl::Status CheckSpace(const std::vector<JobOptions>& jobs) {
  std::map<std::string, uint64_t> needed;  // directory -> bytes
  std::map<std::string, bool> seen_file;
  for (const JobOptions& job : jobs) {
    if (ReadFixedPageSize(WorkerFilePath(job, 0)).fixed()) continue;
    const int files = job.shared_file ? 1 : job.numjobs;
    for (int i = 0; i < files; ++i) {
      const std::string path = WorkerFilePath(job, i);
      if (seen_file[path]) continue;
      seen_file[path] = true;
      const uint64_t want = RoundUp(job.size, kHugePageSize);
      struct stat st;
      const uint64_t have = (!job.fresh_file && stat(path.c_str(), &st) == 0) ? static_cast<uint64_t>(st.st_blocks) * 512 : 0;
      if (want > have) needed[DirectoryOf(job)] += want - have;
    }
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

// Kernels without PAGEMAP_SCAN (before 6.7) cannot read DAX page-table
// entries back (smaps is blind to DAX), but the fs_dax tracepoints see every
// DAX fault. The tally is per process, so it can stand for one worker only:
// traced when the run has exactly one worker and its directory is mounted
// with dax (root only; tracepoints available). Started before any worker
// maps its file, stopped after all have finished.
std::optional<DaxTraceSession> MaybeStartDaxTrace(const std::vector<JobOptions>& jobs) {
  if (jobs.size() != 1 || jobs[0].numjobs != 1 || geteuid() != 0) return std::nullopt;
  if (pmstore::mapping::PagemapScanAvailable()) return std::nullopt;
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::canonical(DirectoryOf(jobs[0]), ec);
  if (ec) return std::nullopt;
  auto mount = ReadMountFacts(dir.string());
  if (!mount.ok() || mount->dax_option.empty() || mount->dax_option == "never") return std::nullopt;
  if (!FindDaxTracepoints().ok()) return std::nullopt;
  auto session = DaxTraceSession::Start();
  if (!session.ok()) return std::nullopt;
  return std::move(*session);
}

// Replaces the worker's census with the tracepoints' account: 2 MiB per
// PMD fault that installed an entry (NOPAGE, NEEDDSYNC), 4 KiB per PTE
// fault, clamped to the worker's range. DAX files only (statx).
void ApplyDaxTrace(const DaxTraceTally& tally, WorkerResult& w) {
  if (!w.error.empty() || !w.mapping.dax) return;
  const uint64_t pmd = std::min(w.range_bytes, tally.pmd_installed() * kHugePageSize);
  const uint64_t pte = std::min(w.range_bytes - pmd, tally.pte_faults * pmstore::base::kPageSize);
  w.mapping.verified = true;
  w.mapping.verify_error.clear();
  w.mapping.census = {.pmd_bytes = pmd, .pte_bytes = pte, .method = pmstore::mapping::VerifyMethod::kDaxTrace};
  w.mapping.dax_trace = tally;
}

// What the workers of a run share, built before the first one starts.
// Latches and counters are held by pointer: every context points at them.
struct WorkerPlan {
  std::vector<WorkerContext> contexts;  // job by job, worker by worker
  std::unique_ptr<std::latch> start_line;
  std::vector<std::unique_ptr<std::latch>> file_latches;         // one per --shared-file job
  std::vector<std::unique_ptr<std::atomic<uint64_t>>> progress;  // I/Os done, one per worker
};

// One context per worker of every job, with the job's NUMA placement resolved.
absl::StatusOr<WorkerPlan> PlanWorkers(const std::vector<JobOptions>& jobs, const RunSettings& settings) {
  WorkerPlan plan;
  int workers = 0;
  for (const JobOptions& job : jobs) workers += job.numjobs;
  plan.start_line = std::make_unique<std::latch>(workers);
  if (settings.offset_logs != nullptr) settings.offset_logs->assign(static_cast<size_t>(workers), {});
  for (size_t j = 0; j < jobs.size(); ++j) {
    PMSTORE_ASSIGN_OR_RETURN(ResolvedNuma numa, ResolveNuma(jobs[j].numa));
    std::latch* file_ready = nullptr;
    if (jobs[j].shared_file) {
      plan.file_latches.push_back(std::make_unique<std::latch>(1));
      file_ready = plan.file_latches.back().get();
    }
    const FixedPageSize fixed = ReadFixedPageSize(WorkerFilePath(jobs[j], 0));
    for (int w = 0; w < jobs[j].numjobs; ++w) {
      plan.progress.push_back(std::make_unique<std::atomic<uint64_t>>(0));
      WorkerContext c;
      c.job = &jobs[j];
      c.job_index = static_cast<int>(j);
      c.worker_index = w;
      c.numa = numa;
      c.fixed = fixed;
      c.use_tsc = InvariantTscAvailable();
      c.file_ready = file_ready;
      c.start_line = plan.start_line.get();
      c.progress = plan.progress.back().get();
      if (settings.offset_logs != nullptr) c.offset_log = &(*settings.offset_logs)[plan.contexts.size()];
      plan.contexts.push_back(c);
    }
  }
  return plan;
}

// Starts every worker at once, as fio starts job sections, and waits for
// all of them; traces DAX faults around them where that is how the mapping
// is verified (MaybeStartDaxTrace).
void RunWorkers(const std::vector<JobOptions>& jobs, const RunSettings& settings, const WorkerPlan& plan,
                RunResult& run) {
  run.workers.resize(plan.contexts.size());
  std::optional<DaxTraceSession> dax_trace = MaybeStartDaxTrace(jobs);
  const uint64_t start_ns = MonotonicNs();
  {
    ProgressLine progress(settings.progress, plan.progress);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < plan.contexts.size(); ++i) {
      threads.emplace_back([&, i] { run.workers[i] = RunWorker(plan.contexts[i]); });
    }
    for (auto& t : threads) t.join();
  }
  run.wall_s = static_cast<double>(MonotonicNs() - start_ns) / 1e9;
  if (dax_trace) {
    auto tally = dax_trace->Stop();
    if (tally.ok()) {
      for (WorkerResult& w : run.workers) ApplyDaxTrace(*tally, w);
    }
  }
}

// A worker whose mapping differs from its request carries what the doctor
// finds for its file.
void AskTheDoctorWhy(RunResult& run) {
  for (WorkerResult& w : run.workers) {
    if (!w.error.empty() || !w.mapping.DiffersFromRequest()) continue;
    auto report = doctor::Examine(w.file);
    if (report.ok()) {
      for (const auto& blocker : report->blockers) w.doctor_reasons.push_back(blocker.reason);
      for (const auto& warning : report->warnings) w.doctor_reasons.push_back(warning);
    }
    if (w.doctor_reasons.empty()) {
      w.doctor_reasons.push_back("the doctor finds no blocker for this path: see 'faultbench doctor " + w.file + "'");
    }
  }
}

// --unlink: the job's files go once the run has been verified.
void UnlinkJobFiles(RunResult& run) {
  for (WorkerResult& w : run.workers) {
    if (!w.job.unlink || w.file.empty()) continue;
    absl::Status s = UnlinkJobFile(w.file, "--unlink");
    if (!s.ok() && w.error.empty()) w.error = std::string(s.message());
  }
}

// The workers' usr+sys time over (the longest worker's runtime x online
// CPUs): near 1, the CPUs and not the memory were the limit.
double CpuBusyFraction(const RunResult& run) {
  double busy_s = 0, longest = 0;
  for (const WorkerResult& w : run.workers) {
    busy_s += w.total.rusage.user_s + w.total.rusage.system_s;
    longest = std::max(longest, w.total.runtime_s);
  }
  return longest > 0 ? busy_s / (longest * run.machine.online_cpus) : 0;
}

}  // namespace

absl::Status PreflightJobs(const std::vector<JobOptions>& jobs) {
  if (jobs.empty()) return absl::InvalidArgumentError("no job to run");
  for (const JobOptions& job : jobs) {
    PMSTORE_RETURN_IF_ERROR(ValidateJob(job));
    PMSTORE_RETURN_IF_ERROR(ResolveNuma(job.numa).status());
    if (ReadDevDaxFactsOfPath(job.filename)) continue;  // a device, not a file in a directory
    const std::string dir = DirectoryOf(job);
    struct stat st;
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return absl::NotFoundError(absl::StrCat("directory ", dir, " does not exist"));
    }
    if (access(dir.c_str(), W_OK) != 0) {
      return absl::PermissionDeniedError(absl::StrCat("directory ", dir, " is not writable"));
    }
  }
  PMSTORE_RETURN_IF_ERROR(CheckFixedPageSizeJobs(jobs));
  return CheckSpace(jobs);
}

absl::StatusOr<RunResult> ExecuteJobs(const std::vector<JobOptions>& jobs, const RunSettings& settings) {
  PMSTORE_RETURN_IF_ERROR(PreflightJobs(jobs));
  RunResult run;
  run.machine = ReadMachineState();
  run.timestamp_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
  PMSTORE_ASSIGN_OR_RETURN(WorkerPlan plan, PlanWorkers(jobs, settings));
  RunWorkers(jobs, settings, plan, run);
  AskTheDoctorWhy(run);
  UnlinkJobFiles(run);  // only now, once the doctor has looked at the files it needed
  run.taint = TaintLines(run.machine, CpuBusyFraction(run));
  return run;
}

}  // namespace faultbench
