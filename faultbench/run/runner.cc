#include "faultbench/run/runner.h"

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
#include "absl/strings/str_join.h"
#include "faultbench/doctor/doctor.h"
#include "faultbench/measure/dax_trace.h"
#include "faultbench/run/plan.h"
#include "faultbench/run/progress_line.h"
#include "faultbench/run/signature_probe.h"
#include "faultbench/run/thp_knobs.h"
#include "faultbench/run/worker.h"
#include "faultbench/sysfacts/mount.h"
#include "faultbench/taint/taint.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/tick_clock.h"
#include "pmstore/base/units.h"
#include "pmstore/mapping/verify.h"

namespace faultbench {
namespace {

using pmstore::base::MonotonicNs;
using pmstore::base::kHugePageSize;

// The mount holding a file, recorded with the run: a comparison of runs
// must know whether they ran on the same kind of file system.
MountFacts FileSystemOf(const std::string& file) {
  if (file.empty()) return {};  // anonymous memory: no file system
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

// One execution of a plan: its workers' contexts with what they share
// while they run, made fresh each time (a latch is used once). Latches and
// counters are held by pointer: every context points at them.
struct Execution {
  std::vector<WorkerContext> contexts;        // the plan's, job by job, worker by worker
  const std::vector<std::vector<size_t>>* stages = nullptr;  // the plan's, indices into contexts
  std::vector<std::unique_ptr<std::latch>> latches;              // start lines, shared-file latches
  std::vector<std::unique_ptr<std::atomic<uint64_t>>> progress;  // I/Os done, one per worker
  std::vector<std::unique_ptr<SignatureProbe>> probes;          // the signature's readings, one per stage
};

// The plan's workers armed for one execution: a start line and a probe per
// stage, a latch where workers of a stage share a file (its creator counts
// it down), a progress counter each, a new seed where the job draws one.
Execution Arm(const RunPlan& plan, const RunSettings& settings) {
  Execution e;
  e.contexts = plan.workers();
  e.stages = &plan.stages();
  for (const std::vector<size_t>& members : plan.stages()) {
    std::map<std::string, std::vector<size_t>> by_file;
    for (size_t i : members) by_file[e.contexts[i].file].push_back(i);
    for (const auto& [file, sharing] : by_file) {
      if (sharing.size() < 2) continue;
      e.latches.push_back(std::make_unique<std::latch>(1));
      for (size_t i : sharing) e.contexts[i].file_ready = e.latches.back().get();
    }
    e.latches.push_back(std::make_unique<std::latch>(static_cast<std::ptrdiff_t>(members.size())));
    e.probes.push_back(
        std::make_unique<SignatureProbe>(static_cast<std::ptrdiff_t>(members.size()), settings.line_hook));
    for (size_t i : members) {
      e.contexts[i].start_line = e.latches.back().get();
      e.contexts[i].probe = e.probes.back().get();
    }
  }
  if (settings.offset_logs != nullptr) settings.offset_logs->assign(e.contexts.size(), {});
  for (size_t i = 0; i < e.contexts.size(); ++i) {
    WorkerContext& c = e.contexts[i];
    if (DrawsNewSeed(*c.job)) c.seed = WorkerSeed(*c.job, i);
    e.progress.push_back(std::make_unique<std::atomic<uint64_t>>(0));
    c.progress = e.progress.back().get();
    if (settings.offset_logs != nullptr) c.offset_log = &(*settings.offset_logs)[i];
  }
  return e;
}

// Kernels without PAGEMAP_SCAN (before 6.7) cannot read DAX page-table
// entries back (smaps is blind to DAX), but the fs_dax tracepoints see every
// DAX fault. The tally is per process, so it can stand for one worker only:
// traced when a stage has exactly one worker (a one-job run, or a job file
// whose stonewalls run one job at a time) and its directory is mounted with
// dax (root only; tracepoints available). Started before the worker maps
// its file, stopped after it has finished.
std::optional<DaxTraceSession> MaybeStartDaxTrace(const Execution& plan, const std::vector<size_t>& stage) {
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
void RunWorkers(const Execution& plan, const std::vector<size_t>& stage, RunResult& run) {
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
void RunStages(const RunSettings& settings, const Execution& plan, RunResult& run) {
  run.workers.resize(plan.contexts.size());
  const uint64_t start_ns = run.start_ns = MonotonicNs();
  {
    ProgressLine progress(settings.progress, plan.progress);
    for (const std::vector<size_t>& stage : *plan.stages) RunWorkers(plan, stage, run);
  }
  run.wall_s = static_cast<double>(MonotonicNs() - start_ns) / 1e9;
  SetWorkerParts(run.workers, run.signature);
}

// Why anonymous memory did not get the folio size it asked for: the
// kernel's per-size fallback counters, and reads of memory never written
// (the shared zero page is no folio).
std::vector<std::string> AnonymousReasons(const WorkerResult& w, const RunSignature& signature) {
  std::vector<std::string> reasons;
  const std::string size = pmstore::mapping::SizeName(pmstore::mapping::IntentPageSize(w.mapping.requested));
  const char* counter = w.job.anon == AnonMemory::kShared ? ".shmem_fallback" : ".anon_fault_fallback";
  if (const auto it = signature.mthp_deltas.find(size + counter); it != signature.mthp_deltas.end() && it->second > 0) {
    reasons.push_back(absl::StrCat("the kernel fell back from ", size, " folios ", it->second,
                                   " times (", size, counter, "): no free block of that size (fragmented memory) or "
                                   "the memory cgroup's limit"));
  }
  if (w.mapping.folios && w.mapping.folios->zero_page_bytes > 0) {
    reasons.push_back(absl::StrCat(pmstore::base::FormatBytes(w.mapping.folios->zero_page_bytes),
                                   " were read before anything wrote them and map the shared zero page, no folio: "
                                   "write first (--rw=write or randwrite, or --prefault of a job that writes)"));
  }
  if (reasons.empty()) reasons.push_back("no fallback was counted: see the run's folio sizes and its THP knobs");
  return reasons;
}

// "4K and 64K": the sizes of a census, smallest first.
std::string FolioSizesOf(const pmstore::mapping::FolioCensus& census) {
  std::vector<std::string> sizes;
  for (const auto& [size, count] : census.folios) sizes.push_back(pmstore::mapping::SizeName(size));
  if (sizes.empty()) return "no";
  const std::string last = sizes.back();
  sizes.pop_back();
  return sizes.empty() ? last : absl::StrCat(absl::StrJoin(sizes, ", "), " and ", last);
}

// A worker whose mapping differs from its request carries what the doctor
// finds for its file (for anonymous memory, what the kernel counted).
void AskTheDoctorWhy(RunResult& run) {
  for (WorkerResult& w : run.workers) {
    if (!w.error.empty() || !w.mapping.DiffersFromRequest()) continue;
    if (w.job.anonymous()) {
      w.doctor_reasons = AnonymousReasons(w, run.signature);
      continue;
    }
    if (w.mapping.requested.is_folio() && w.mapping.folios) {
      w.doctor_reasons.push_back(absl::StrCat(
          "the page cache holds this range in ", FolioSizesOf(*w.mapping.folios),
          " folios: a file's folio sizes are its file system's (its read-ahead and writes choose them: ext4 from "
          "Linux 6.16, xfs from 5.18; tmpfs by its huge= option), not the mapping's"));
      continue;
    }
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

absl::StatusOr<RunResult> ExecutePlan(const RunPlan& plan, const RunSettings& settings) {
  const Execution execution = Arm(plan, settings);
  RunResult run;
  run.machine = ReadMachineState();
  run.timestamp_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
  run.filesystem = FileSystemOf(execution.contexts.front().file);
  {
    // The THP knobs the run needs, for the run alone: put back when this
    // scope ends (or by their watchdog, should the process die first).
    const std::vector<KnobWrite> none;
    const std::vector<KnobWrite>& writes = settings.set_thp_knobs ? plan.knob_writes() : none;
    PMSTORE_ASSIGN_OR_RETURN(const std::unique_ptr<KnobSetting> knobs, KnobSetting::Apply(writes));
    for (size_t i = 0; i < writes.size(); ++i) {
      run.thp_knobs.push_back({writes[i].path, writes[i].value, knobs->old_values()[i].value});
    }
    RunStages(settings, execution, run);
  }
  AskTheDoctorWhy(run);
  UnlinkJobFiles(run);  // only now, once the doctor has looked at the files it needed
  run.taint = TaintLines(run.machine, CpuBusyFraction(run));
  return run;
}

absl::StatusOr<RunResult> ExecuteJobs(const std::vector<JobOptions>& jobs, const RunSettings& settings) {
  PMSTORE_ASSIGN_OR_RETURN(const RunPlan plan, PlanRun(jobs));
  return ExecutePlan(plan, settings);
}

}  // namespace faultbench
