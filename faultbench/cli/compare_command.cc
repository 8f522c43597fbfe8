#include "faultbench/cli/compare_command.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "absl/strings/str_format.h"
#include "faultbench/cli/command_io.h"
#include "faultbench/compare/numa_matrix.h"
#include "faultbench/report/compare_report.h"
#include "faultbench/report/numa_matrix_report.h"

namespace faultbench {

namespace {

// "faultbench: repeat 2/3: pmd/mmap", "faultbench: repeat 4 (auto, 21 s of
// 60 s): pte/mmap", "faultbench: warm-up (not measured): pte/mmap".
void PrintProgress(const CompareProgress& p) {
  if (p.warmup) {
    std::fprintf(stderr, "faultbench: warm-up (not measured): %s\n", p.variant.c_str());
  } else if (p.rounds > 0) {
    std::fprintf(stderr, "faultbench: repeat %d/%d: %s\n", p.round, p.rounds, p.variant.c_str());
  } else {
    std::fprintf(stderr, "faultbench: repeat %d (auto, %.0f s of %.0f s): %s\n", p.round, p.elapsed_s, p.budget_s,
                 p.variant.c_str());
  }
}

// Each failed run (and file --unlink could not delete) on stderr: 1, else 0.
int ReportFailures(const CompareOutcome& outcome) {
  for (const CompareFailure& f : outcome.failures) {
    std::fprintf(stderr, "faultbench: %s: %s\n", f.what.c_str(), f.error.c_str());
  }
  return outcome.failures.empty() ? 0 : 1;
}

// Writes one output file (--plot, --save-json); a failure is named on
// stderr and makes the exit status 1.
void WriteOutput(const std::string& flag, const std::string& path, const std::string& text, int& exit_code) {
  if (path.empty()) return;
  if (absl::Status s = WriteTextFile(path, text); !s.ok()) {
    std::fprintf(stderr, "faultbench: %s: %s\n", flag.c_str(), std::string(s.message()).c_str());
    if (exit_code == 0) exit_code = 1;
  }
}

// compare --numa-matrix: the same edges, the matrix's renderings.
int NumaMatrixCommand(const CompareCommandConfig& config, const CompareConfig& compare, std::FILE* out) {
  auto outcome = RunNumaMatrix(compare);
  if (!outcome.ok()) return UsageError(outcome.status());
  int exit_code = ReportFailures(outcome->comparison);
  WriteOutput("--plot", config.plot_path, NumaMatrixSvg(*outcome), exit_code);
  WriteOutput("--save-json", config.save_json_path, NumaMatrixJson(*outcome).dump(2) + "\n", exit_code);
  const std::string text =
      config.format == OutputFormat::kJson ? NumaMatrixJson(*outcome).dump(2) + "\n" : NumaMatrixText(*outcome);
  std::fputs(text.c_str(), out);
  return exit_code;
}

}  // namespace

int CompareCommand(const CompareCommandConfig& config) {
  auto out = OutputFile::Open(config.output_path);  // before the runs: a bad path costs none
  if (!out.ok()) return UsageError(out.status());
  CompareConfig compare = config.compare;
  if (compare.progress && isatty(STDERR_FILENO)) compare.on_run = PrintProgress;
  if (compare.numa_matrix) return NumaMatrixCommand(config, compare, out->get());
  auto outcome = RunComparison(compare);
  if (!outcome.ok()) return UsageError(outcome.status());
  int exit_code = ReportFailures(*outcome);
  if (!config.plot_path.empty()) WriteOutput("--plot", config.plot_path, ComparePlotSvg(*outcome), exit_code);
  if (!config.save_json_path.empty()) {
    WriteOutput("--save-json", config.save_json_path, CompareJson(*outcome).dump(2) + "\n", exit_code);
  }
  const std::string text =
      config.format == OutputFormat::kJson ? CompareJson(*outcome).dump(2) + "\n" : CompareText(*outcome);
  std::fputs(text.c_str(), out->get());
  return exit_code;
}

}  // namespace faultbench
