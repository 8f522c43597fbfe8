#include "faultbench/scale/scale.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <map>
#include <new>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "faultbench/run/runner.h"
#include "faultbench/run/thp_knobs.h"
#include "faultbench/sysfacts/machine.h"
#include "faultbench/taint/taint.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"

namespace faultbench {
namespace {

constexpr int kMaxTasks = 256;  // a task's index travels as one byte

ScaleTask TaskOf(const WorkerResult& w) {
  // The fault phase: the populate call with --prefault, else the first pass
  // (the whole run when nothing came after it).
  const PhaseResult& fault = w.phases.empty() ? w.total : w.phases.front();
  return {.faults = fault.rusage.minor_faults + fault.rusage.major_faults, .seconds = fault.runtime_s,
          .error = w.error};
}

// Every run of a point starts from nothing: fresh files (deleted after it)
// or fresh anonymous memory, so one run's pages are not the next one's.
JobOptions Fresh(JobOptions job) {
  job.fresh_file = true;
  job.unlink = true;
  return job;
}

// Task `task` of a processes point: one worker, and a file of its own.
JobOptions ProcessJob(const JobOptions& job, int task) {
  JobOptions one = Fresh(job);
  one.numjobs = 1;
  if (!one.anonymous() && one.filename.empty()) one.file_stem = absl::StrCat(job.name, "-task", task);
  return one;
}

JobOptions ThreadsJob(const JobOptions& job, int tasks) {
  JobOptions all = Fresh(job);
  all.numjobs = tasks;
  return all;
}

// A task's result as it crosses from the child process to the parent, in
// memory they share: plain numbers and one line of error.
struct SharedTask {
  uint64_t minor_faults = 0, major_faults = 0, fault_phase_faults = 0, bytes_accessed = 0;
  double fault_phase_seconds = 0;
  uint64_t pmd_bytes = 0, pte_bytes = 0, pud_bytes = 0;
  bool verified = false, folios_read = false;
  uint64_t folios[32] = {};  // by log2 of the folio size in pages
  char error[480] = {};
};

void Fill(const RunResult& run, SharedTask& out) {
  const WorkerResult& w = run.workers.front();
  const ScaleTask task = TaskOf(w);
  out.minor_faults = w.total.rusage.minor_faults;
  out.major_faults = w.total.rusage.major_faults;
  out.fault_phase_faults = task.faults;
  out.fault_phase_seconds = task.seconds;
  out.bytes_accessed = w.total.bytes_accessed;
  out.verified = w.mapping.verified;
  out.pmd_bytes = w.mapping.census.pmd_bytes;
  out.pte_bytes = w.mapping.census.pte_bytes;
  out.pud_bytes = w.mapping.census.pud_bytes;
  if (w.mapping.folios) {
    out.folios_read = true;
    for (const auto& [size, count] : w.mapping.folios->folios) {
      const int order = std::countr_zero(size / 4096);
      if (order >= 0 && order < 32) out.folios[order] += count;
    }
  }
  std::strncpy(out.error, w.error.c_str(), sizeof(out.error) - 1);
}

// What SetWorkerParts needs of a task that ran in another process.
WorkerResult WorkerOf(const SharedTask& t, const JobOptions& job) {
  WorkerResult w;
  w.job = job;
  w.error = t.error;
  w.total.rusage.minor_faults = t.minor_faults;
  w.total.rusage.major_faults = t.major_faults;
  w.total.bytes_accessed = t.bytes_accessed;
  w.mapping.verified = t.verified;
  w.mapping.census = {.pmd_bytes = t.pmd_bytes, .pte_bytes = t.pte_bytes, .pud_bytes = t.pud_bytes};
  if (t.folios_read) {
    w.mapping.folios.emplace();
    for (int order = 0; order < 32; ++order) {
      if (t.folios[order] > 0) w.mapping.folios->folios[4096ull << order] = t.folios[order];
    }
  }
  return w;
}

// A child's side of the two lines: it says it is there (its index, one
// byte, on the pipe every child shares) and waits for its own go-ahead.
class ChildLines : public LineHook {
 public:
  ChildLines(int up, int down, uint8_t index) : up_(up), down_(down), index_(index) {}
  void AtLine(int) override {
    Say();
    char go = 0;
    while (read(down_, &go, 1) < 0 && errno == EINTR) {
    }
  }
  // After the run: the lines it never came to (it failed first) said at once.
  void Finish() {
    while (said_ < 2) Say();
  }

 private:
  void Say() {
    ++said_;
    while (write(up_, &index_, 1) < 0 && errno == EINTR) {
    }
  }
  int up_, down_;
  uint8_t index_;
  int said_ = 0;
};

struct Child {
  pid_t pid = -1;
  int down = -1;  // the parent's end of its go-ahead pipe
  int lines = 0;  // lines it has come to
  bool exited = false;
};

// Waits until every child that still lives has come to line `line` (a
// child that exits counts as having come to every line).
void AwaitLine(int up, std::vector<Child>& children, int line) {
  auto all_there = [&] {
    return std::all_of(children.begin(), children.end(), [&](const Child& c) { return c.exited || c.lines > line; });
  };
  while (!all_there()) {
    pollfd p{.fd = up, .events = POLLIN, .revents = 0};
    if (poll(&p, 1, 100) > 0) {
      uint8_t index = 0;
      if (read(up, &index, 1) == 1 && index < children.size()) ++children[index].lines;
      continue;
    }
    for (Child& c : children) {
      if (!c.exited && waitpid(c.pid, nullptr, WNOHANG) == c.pid) c.exited = true;
    }
  }
}

void Release(std::vector<Child>& children) {
  for (Child& c : children) {
    const char go = 'g';
    if (!c.exited) (void)!write(c.down, &go, 1);
  }
}

// One run of a processes point: `plans` (one per task) in as many child
// processes, held at the lines together; the signature from the parent's
// own readings there.
absl::StatusOr<ScaleRun> RunProcesses(const std::vector<RunPlan>& plans, const JobOptions& job) {
  const size_t n = plans.size();
  void* memory = mmap(nullptr, n * sizeof(SharedTask), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return pmstore::base::ErrnoStatus(errno, "mmap", "the tasks' results");
  auto* shared = static_cast<SharedTask*>(memory);
  for (size_t i = 0; i < n; ++i) new (&shared[i]) SharedTask();
  int up[2];
  if (pipe2(up, O_CLOEXEC) != 0) return pmstore::base::ErrnoStatus(errno, "pipe2", "the tasks' lines");
  // The THP knobs are set once, here, for every task: children setting
  // them at once would each read the others' values as the old ones.
  auto knobs = KnobSetting::Apply(plans.front().knob_writes());
  if (!knobs.ok()) return knobs.status();
  std::vector<Child> children(n);
  for (size_t i = 0; i < n; ++i) {
    int down[2];
    if (pipe2(down, O_CLOEXEC) != 0) return pmstore::base::ErrnoStatus(errno, "pipe2", "a task's go-ahead");
    const pid_t pid = fork();
    if (pid < 0) return pmstore::base::ErrnoStatus(errno, "fork", "a task");
    if (pid == 0) {
      close(up[0]);
      close(down[1]);
      ChildLines lines(up[1], down[0], static_cast<uint8_t>(i));
      RunSettings settings{.progress = false, .line_hook = &lines, .set_thp_knobs = false};
      auto run = ExecutePlan(plans[i], settings);
      if (run.ok()) {
        Fill(*run, shared[i]);
      } else {
        std::strncpy(shared[i].error, std::string(run.status().message()).c_str(), sizeof(shared[i].error) - 1);
      }
      lines.Finish();
      _exit(0);
    }
    close(down[0]);
    children[i] = {.pid = pid, .down = down[1]};
  }
  close(up[1]);
  ScaleRun result;
  AwaitLine(up[0], children, 0);
  const VmCounters at_start = ReadVmCounters();
  Release(children);
  AwaitLine(up[0], children, 1);
  const VmCounters at_finish = ReadVmCounters();
  Release(children);
  for (Child& c : children) {
    int status = 0;
    if (!c.exited && waitpid(c.pid, &status, 0) == c.pid && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      std::strncpy(shared[&c - children.data()].error, "the task's process died", sizeof(SharedTask::error) - 1);
    }
    close(c.down);
  }
  close(up[0]);
  std::vector<WorkerResult> workers;
  for (size_t i = 0; i < n; ++i) {
    result.tasks.push_back({.faults = shared[i].fault_phase_faults, .seconds = shared[i].fault_phase_seconds,
                            .error = shared[i].error});
    workers.push_back(WorkerOf(shared[i], job));
  }
  AddCounterDeltas(at_start, at_finish, result.signature);
  SetWorkerParts(workers, result.signature);
  munmap(memory, n * sizeof(SharedTask));
  return result;
}

// A point with what it runs: one plan for threads, one per task for processes.
struct PlannedPoint {
  ScalePoint point;
  std::vector<RunPlan> plans;
};

std::string PointName(const ScalePoint& p) {
  return absl::StrCat(std::string(ScaleModeName(p.mode)), " x", p.tasks);
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseTasks(const std::string& text) {
  std::vector<int> tasks;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    int n = 0;
    if (!absl::SimpleAtoi(item, &n) || n < 1 || n > kMaxTasks) {
      return absl::InvalidArgumentError(absl::StrCat("--tasks: '", std::string(item), "' is not a number of tasks from 1 to ",
                                                     kMaxTasks, " (e.g. --tasks=1,2,4)"));
    }
    if (std::find(tasks.begin(), tasks.end(), n) == tasks.end()) tasks.push_back(n);
  }
  if (tasks.empty()) return absl::InvalidArgumentError("--tasks names no number of tasks (e.g. --tasks=1,2,4)");
  std::sort(tasks.begin(), tasks.end());
  return tasks;
}

absl::StatusOr<std::vector<ScaleMode>> ParseScaleModes(const std::string& text) {
  std::vector<ScaleMode> modes;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    if (item == "threads") {
      modes.push_back(ScaleMode::kThreads);
    } else if (item == "processes") {
      modes.push_back(ScaleMode::kProcesses);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--mode: '", std::string(item), "': use threads, processes or threads,processes"));
    }
  }
  if (modes.empty()) return absl::InvalidArgumentError("--mode names no mode: use threads, processes or both");
  return modes;
}

absl::StatusOr<ScaleOutcome> RunScale(const ScaleConfig& config) {
  if (config.job.numjobs != 1) {
    return absl::InvalidArgumentError("scale: --tasks sets how many workers run; drop --numjobs");
  }
  if (config.tasks.empty() || config.modes.empty()) return absl::InvalidArgumentError("scale: no point to run");
  if (config.repeat < 1) return absl::InvalidArgumentError("--repeat must be >= 1");
  ScaleOutcome outcome;
  outcome.workload = config.job;
  outcome.repeats = config.repeat;
  outcome.location = config.job.Location();
  // Every point is resolved once, before the first run: a bad flag costs no run.
  std::vector<PlannedPoint> points;
  for (ScaleMode mode : config.modes) {
    for (int tasks : config.tasks) {
      PlannedPoint p;
      p.point.mode = mode;
      p.point.tasks = tasks;
      for (int i = 0; i < (mode == ScaleMode::kThreads ? 1 : tasks); ++i) {
        auto plan = PlanRun({mode == ScaleMode::kThreads ? ThreadsJob(config.job, tasks) : ProcessJob(config.job, i)});
        if (!plan.ok()) {
          return absl::Status(plan.status().code(), absl::StrCat(PointName(p.point), ": ", plan.status().message()));
        }
        p.plans.push_back(*std::move(plan));
      }
      points.push_back(std::move(p));
    }
  }
  const MachineState machine = ReadMachineState();
  outcome.emulation = machine.emulation;
  outcome.taint = TaintLines(machine, 0);
  for (int r = 0; r < config.repeat; ++r) {
    for (size_t k = 0; k < points.size(); ++k) {
      PlannedPoint& p = points[r % 2 == 0 ? k : points.size() - 1 - k];  // alternate the order every repeat
      if (config.on_run) config.on_run(p.point.mode, p.point.tasks, r + 1);
      ScaleRun run;
      if (p.point.mode == ScaleMode::kThreads) {
        auto threads = ExecutePlan(p.plans.front(), RunSettings{.progress = config.progress});
        if (!threads.ok()) return absl::Status(threads.status().code(), absl::StrCat(PointName(p.point), ": ", threads.status().message()));
        for (const WorkerResult& w : threads->workers) run.tasks.push_back(TaskOf(w));
        run.signature = threads->signature;
      } else {
        PMSTORE_ASSIGN_OR_RETURN(run, RunProcesses(p.plans, p.plans.front().jobs().front()));
      }
      run.repeat = r;
      for (const ScaleTask& t : run.tasks) {
        if (!t.error.empty()) outcome.failures.push_back({PointName(p.point), t.error});
      }
      p.point.runs.push_back(std::move(run));
    }
  }
  for (PlannedPoint& p : points) {
    std::vector<double> total, per_task;
    for (const ScaleRun& run : p.point.runs) {
      total.push_back(run.TotalFaultsPerSecond());
      per_task.push_back(run.FaultsPerSecondPerTask());
    }
    p.point.total = stats::Summarize(total);
    p.point.per_task = stats::Summarize(per_task);
    outcome.points.push_back(std::move(p.point));
  }
  return outcome;
}

}  // namespace faultbench
