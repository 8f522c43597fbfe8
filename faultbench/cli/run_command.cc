#include "faultbench/cli/run_command.h"

#include <algorithm>
#include <cstdio>

#include "faultbench/cli/command_io.h"
#include "faultbench/run/runner.h"
#include "faultbench/workload/job_file.h"

namespace faultbench {

int RunCommand(const RunCommandConfig& config) {
  std::vector<JobOptions> jobs;
  if (!config.args.empty()) {
    auto parsed = ReadJobFiles(config.args, config.job, config.sections);
    if (!parsed.ok()) return UsageError(parsed.status());
    jobs = std::move(*parsed);
  } else if (!config.sections.empty()) {
    return UsageError(absl::InvalidArgumentError("--section names sections of a job file, and none was given"));
  } else {
    jobs.push_back(config.job);
  }
  auto out = OutputFile::Open(config.output_path);  // before the run: a bad path costs no run
  if (!out.ok()) return UsageError(out.status());
  RunSettings settings;
  settings.progress = config.progress;
  auto run = ExecuteJobs(jobs, settings);
  if (!run.ok()) return UsageError(run.status());
  // Every worker refused at setup (e.g. --map-sync on a file that is not
  // DAX): nothing ran, so this is a usage error like a bad flag.
  bool all_failed_in_setup = true;
  for (const WorkerResult& w : run->workers) all_failed_in_setup = all_failed_in_setup && w.failed_in_setup;
  if (all_failed_in_setup) return UsageError(absl::FailedPreconditionError(run->workers.front().error));
  const std::string text = RenderRun(*run, config.format);
  std::fputs(text.c_str(), out->get());

  int status = 0;
  for (const WorkerResult& w : run->workers) {
    if (!w.error.empty()) {
      std::fprintf(stderr, "faultbench: job '%s' worker %d: %s\n", w.job.name.c_str(), w.worker_index,
                   w.error.c_str());
      // A SIGBUS is the run's environment failing under it, not a result.
      status = w.bus_error ? 2 : std::max(status, 1);
    }
  }
  if (status == 0 && config.strict) {
    for (const WorkerResult& w : run->workers) {
      if (!w.mapping.verified && w.mapping.requested != pmstore::mapping::PageIntent::kAuto) {
        std::fprintf(stderr, "faultbench: --strict: job '%s': the mapping could not be verified: %s\n",
                     w.job.name.c_str(), w.mapping.verify_error.c_str());
        status = 3;
      } else if (w.mapping.DiffersFromRequest()) {
        const std::string asked(pmstore::mapping::PageIntentName(w.mapping.requested));
        if (w.mapping.requested.is_folio()) {
          std::fprintf(stderr, "faultbench: --strict: job '%s' asked for %s folios but %.1f%% of it is in them\n",
                       w.job.name.c_str(), asked.c_str(), w.mapping.FolioShare() * 100);
        } else {
          std::fprintf(stderr, "faultbench: --strict: job '%s' asked for %s but %.1f%% of it is PMD-mapped\n",
                       w.job.name.c_str(), asked.c_str(), w.mapping.PmdShare() * 100);
        }
        status = 3;
      }
    }
  }
  return status;
}

}  // namespace faultbench
