#include "faultbench/cli/compare_command.h"

#include <cstdio>
#include <string>

#include "faultbench/cli/command_io.h"
#include "faultbench/compare/compare_report.h"
#include "faultbench/compare/numa_matrix_report.h"

namespace faultbench {

namespace {

// compare --numa-matrix: the same edges, the matrix's renderings.
int NumaMatrixCommand(const CompareConfig& config, std::FILE* out) {
  int exit_code = 0;
  auto outcome = RunNumaMatrix(config, exit_code);
  if (!outcome.ok()) return UsageError(outcome.status());
  const auto write = [&](const std::string& flag, const std::string& path, const std::string& text) {
    if (path.empty()) return;
    if (absl::Status s = WriteTextFile(path, text); !s.ok()) {
      std::fprintf(stderr, "faultbench: %s: %s\n", flag.c_str(), std::string(s.message()).c_str());
      if (exit_code == 0) exit_code = 1;
    }
  };
  write("--plot", config.plot_path, NumaMatrixSvg(config, *outcome));
  write("--save-json", config.save_json_path, NumaMatrixJson(*outcome).dump(2) + "\n");
  const std::string text = config.format == OutputFormat::kJson ? NumaMatrixJson(*outcome).dump(2) + "\n"
                                                                 : NumaMatrixText(config, *outcome);
  std::fputs(text.c_str(), out);
  return exit_code;
}

}  // namespace

int CompareCommand(const CompareConfig& config) {
  auto out = OutputFile::Open(config.output_path);  // before the runs: a bad path costs none
  if (!out.ok()) return UsageError(out.status());
  if (config.numa_matrix) return NumaMatrixCommand(config, out->get());
  int exit_code = 0;
  auto outcome = RunComparison(config, exit_code);
  if (!outcome.ok()) return UsageError(outcome.status());
  if (!config.plot_path.empty()) {
    if (absl::Status s = WriteTextFile(config.plot_path, ComparePlotSvg(config, *outcome)); !s.ok()) {
      std::fprintf(stderr, "faultbench: --plot: %s\n", std::string(s.message()).c_str());
      if (exit_code == 0) exit_code = 1;
    }
  }
  if (!config.save_json_path.empty()) {
    if (absl::Status s = WriteTextFile(config.save_json_path, CompareJson(*outcome).dump(2) + "\n"); !s.ok()) {
      std::fprintf(stderr, "faultbench: --save-json: %s\n", std::string(s.message()).c_str());
      if (exit_code == 0) exit_code = 1;
    }
  }
  const std::string text = config.format == OutputFormat::kJson ? CompareJson(*outcome).dump(2) + "\n"
                                                                 : CompareText(config, *outcome);
  std::fputs(text.c_str(), out->get());
  return exit_code;
}

}  // namespace faultbench
