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
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "faultbench/doctor/doctor.h"
#include "faultbench/measure/dax_trace.h"
#include "faultbench/run/cpus.h"
#include "faultbench/run/page_size_check.h"
#include "faultbench/run/progress_line.h"
#include "faultbench/run/signature_probe.h"
#include "faultbench/run/target.h"
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

std::string DirectoryOf(const std::string& file) {
  const std::filesystem::path parent = std::filesystem::path(file).parent_path();
  return parent.empty() ? "." : parent.string();
}

// The target as the run will find it: nothing, when --fresh-file deletes it
// first (a device stays: only regular files are deleted).
ExistingTarget Existing(const WorkerContext& c) {
  return c.job->fresh_file && !c.fixed.devdax ? ExistingTarget{} : StatTarget(c.file);
}

// The mount holding a file, recorded with the run: a comparison of runs
// must know whether they ran on the same kind of file system.
MountFacts FileSystemOf(const std::string& file) {
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::canonical(DirectoryOf(file), ec);
  if (ec) return {};
  return ReadMountFacts(dir.string()).value_or(MountFacts{});
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
  std::vector<WorkerContext> contexts;        // job by job, worker by worker
  std::vector<std::vector<size_t>> stages;    // indices into contexts, stage by stage
  std::vector<std::unique_ptr<std::latch>> latches;              // start lines, shared-file latches
  std::vector<std::unique_ptr<std::atomic<uint64_t>>> progress;  // I/Os done, one per worker
  std::vector<std::unique_ptr<SignatureProbe>> probes;          // the signature's readings, one per stage
};

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

// The seed of worker `thread` (counted over the run): randseed, or with
// randrepeat=0 and no randseed a new one every run, as fio seeds from
// /dev/urandom then.
uint64_t WorkerSeed(const JobOptions& job, int thread) {
  const uint64_t base = (!job.randrepeat && !job.randseed_set) ? (static_cast<uint64_t>(std::random_device{}()) << 32 |
                                                                  std::random_device{}())
                                                               : job.randseed;
  return base + static_cast<uint64_t>(thread) * 0x9E3779B9ull;
}

// Files the jobs will create or grow, by directory: bytes still to allocate.
// Devices and hugetlbfs have checks of their own (page_size_check.h).
absl::Status CheckSpace(const WorkerPlan& plan) {
  std::map<std::string, uint64_t> needed;  // directory -> bytes
  std::map<std::string, bool> seen_file;
  for (const WorkerContext& c : plan.contexts) {
    if (c.fixed.fixed() || seen_file[c.file]) continue;
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
// enough for all of them, and the others wait for it.
void ShareFiles(WorkerPlan& plan, const std::vector<size_t>& stage) {
  std::map<std::string, std::vector<size_t>> by_file;
  for (size_t i : stage) by_file[plan.contexts[i].file].push_back(i);
  for (const auto& [file, workers] : by_file) {
    uint64_t size = 0;
    for (size_t i : workers) size = std::max(size, plan.contexts[i].file_size);
    std::latch* ready = nullptr;
    if (workers.size() > 1) {
      plan.latches.push_back(std::make_unique<std::latch>(1));
      ready = plan.latches.back().get();
    }
    for (size_t k = 0; k < workers.size(); ++k) {
      WorkerContext& c = plan.contexts[workers[k]];
      c.file_size = size;
      c.creates_file = k == 0;
      c.file_ready = ready;
    }
  }
}

// One context per worker of every job, with its group, stage, file
// layout, seed, CPUs and NUMA placement resolved; everything checked that
// can be checked before a file is touched.
absl::StatusOr<WorkerPlan> PlanWorkers(const std::vector<JobOptions>& jobs, const RunSettings& settings) {
  if (jobs.empty()) return absl::InvalidArgumentError("no job to run");
  std::vector<int> group, stage;
  NumberGroupsAndStages(jobs, group, stage);
  WorkerPlan plan;
  for (size_t j = 0; j < jobs.size(); ++j) {
    const JobOptions& job = jobs[j];
    PMSTORE_RETURN_IF_ERROR(ValidateJob(job));
    PMSTORE_ASSIGN_OR_RETURN(ResolvedNuma numa, ResolveNuma(job.numa));
    const FixedPageSize fixed = ReadFixedPageSize(WorkerFilePath(job, 0));
    for (int w = 0; w < job.numjobs; ++w) {
      WorkerContext c;
      c.job = &job;
      c.job_index = static_cast<int>(j);
      c.worker_index = w;
      c.group_id = group[j];
      c.stage = stage[j];
      c.file = WorkerFilePath(job, w);
      c.fixed = fixed;
      if (!fixed.devdax) PMSTORE_RETURN_IF_ERROR(CheckDirectory(c.file));  // a device is not a file in a directory
      PMSTORE_ASSIGN_OR_RETURN(c.layout, LayOutWorker(job, w, Existing(c).size));
      c.file_size = c.layout.file_size;
      const int thread = static_cast<int>(plan.contexts.size());
      c.seed = WorkerSeed(job, thread);
      PMSTORE_ASSIGN_OR_RETURN(c.cpus, WorkerCpus(job, thread));
      c.numa = numa;
      c.use_tsc = InvariantTscAvailable();
      if (static_cast<size_t>(c.stage) >= plan.stages.size()) plan.stages.emplace_back();
      plan.stages[static_cast<size_t>(c.stage)].push_back(plan.contexts.size());
      plan.contexts.push_back(std::move(c));
    }
  }
  for (const std::vector<size_t>& members : plan.stages) {
    ShareFiles(plan, members);
    plan.latches.push_back(std::make_unique<std::latch>(static_cast<std::ptrdiff_t>(members.size())));
    plan.probes.push_back(std::make_unique<SignatureProbe>(static_cast<std::ptrdiff_t>(members.size())));
    for (size_t i : members) {
      plan.contexts[i].start_line = plan.latches.back().get();
      plan.contexts[i].probe = plan.probes.back().get();
    }
  }
  PMSTORE_RETURN_IF_ERROR(CheckFixedPageSizeJobs(plan.contexts));
  PMSTORE_RETURN_IF_ERROR(CheckSpace(plan));
  if (settings.offset_logs != nullptr) settings.offset_logs->assign(plan.contexts.size(), {});
  for (size_t i = 0; i < plan.contexts.size(); ++i) {
    plan.progress.push_back(std::make_unique<std::atomic<uint64_t>>(0));
    plan.contexts[i].progress = plan.progress.back().get();
    if (settings.offset_logs != nullptr) plan.contexts[i].offset_log = &(*settings.offset_logs)[i];
  }
  return plan;
}

// Kernels without PAGEMAP_SCAN (before 6.7) cannot read DAX page-table
// entries back (smaps is blind to DAX), but the fs_dax tracepoints see every
// DAX fault. The tally is per process, so it can stand for one worker only:
// traced when a stage has exactly one worker (a one-job run, or a job file
// whose stonewalls run one job at a time) and its directory is mounted with
// dax (root only; tracepoints available). Started before the worker maps
// its file, stopped after it has finished.
std::optional<DaxTraceSession> MaybeStartDaxTrace(const WorkerPlan& plan, const std::vector<size_t>& stage) {
  if (stage.size() != 1 || geteuid() != 0) return std::nullopt;
  if (pmstore::mapping::PagemapScanAvailable()) return std::nullopt;
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::canonical(DirectoryOf(plan.contexts[stage[0]].file), ec);
  if (ec) return std::nullopt;
  auto mount = ReadMountFacts(dir.string());
  if (!mount.ok() || mount->dax_option.empty() || mount->dax_option == "never") return std::nullopt;
  if (!FindDaxTracepoints().ok()) return std::nullopt;
  auto session = DaxTraceSession::Start();
  if (!session.ok()) return std::nullopt;
  return std::move(*session);
}

// Starts the workers of one stage at once and waits for all of them,
// tracing DAX faults around them where that is how the mapping is verified.
// The stage's probe adds what the kernel counted between its start and
// finish lines to the run's signature.
void RunWorkers(const WorkerPlan& plan, const std::vector<size_t>& stage, RunResult& run) {
  std::optional<DaxTraceSession> dax_trace = MaybeStartDaxTrace(plan, stage);
  std::vector<std::thread> threads;
  for (size_t i : stage) {
    threads.emplace_back([&, i] { run.workers[i] = RunWorker(plan.contexts[i]); });
  }
  for (auto& t : threads) t.join();
  const SignatureProbe& probe = *plan.contexts[stage.front()].probe;
  if (probe.complete()) AddCounterDeltas(probe.at_start(), probe.at_finish(), run.signature);
  if (!dax_trace) return;
  auto tally = dax_trace->Stop();
  if (tally.ok()) ApplyDaxTrace(*tally, run.workers[stage[0]]);
}

// Runs the stages in order; the workers of a stage start at once, as fio
// starts the jobs between two stonewalls, and the next stage starts when
// all of them are done.
void RunStages(const RunSettings& settings, const WorkerPlan& plan, RunResult& run) {
  run.workers.resize(plan.contexts.size());
  const uint64_t start_ns = run.start_ns = MonotonicNs();
  {
    ProgressLine progress(settings.progress, plan.progress);
    for (const std::vector<size_t>& stage : plan.stages) RunWorkers(plan, stage, run);
  }
  run.wall_s = static_cast<double>(MonotonicNs() - start_ns) / 1e9;
  SetWorkerParts(run.workers, run.signature);
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
// CPUs), in the busiest stage: near 1, the CPUs and not the memory were
// the limit.
double CpuBusyFraction(const RunResult& run) {
  std::map<int, std::pair<double, double>> stages;  // stage -> busy seconds, longest runtime
  for (const WorkerResult& w : run.workers) {
    auto& [busy_s, longest] = stages[w.stage];
    busy_s += w.total.rusage.user_s + w.total.rusage.system_s;
    longest = std::max(longest, w.total.runtime_s);
  }
  double busiest = 0;
  for (const auto& [stage, figures] : stages) {
    if (figures.second > 0) busiest = std::max(busiest, figures.first / (figures.second * run.machine.online_cpus));
  }
  return busiest;
}

}  // namespace

absl::Status PreflightJobs(const std::vector<JobOptions>& jobs) {
  return PlanWorkers(jobs, RunSettings{.progress = false}).status();
}

absl::StatusOr<RunResult> ExecuteJobs(const std::vector<JobOptions>& jobs, const RunSettings& settings) {
  PMSTORE_ASSIGN_OR_RETURN(WorkerPlan plan, PlanWorkers(jobs, settings));
  RunResult run;
  run.machine = ReadMachineState();
  run.timestamp_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
  run.filesystem = FileSystemOf(plan.contexts.front().file);
  RunStages(settings, plan, run);
  AskTheDoctorWhy(run);
  UnlinkJobFiles(run);  // only now, once the doctor has looked at the files it needed
  run.taint = TaintLines(run.machine, CpuBusyFraction(run));
  return run;
}

}  // namespace faultbench
