#include "faultbench/cli/diff_command.h"

#include <cstdio>

#include "faultbench/cli/command_io.h"
#include "faultbench/diff/diff_report.h"

namespace faultbench {

int BisectStatus(int status, bool bisect) { return bisect && status != 0 && status != 1 ? 125 : status; }

int DiffCommand(const DiffCommandConfig& config) {
  auto out = OutputFile::Open(config.output_path);
  if (!out.ok()) return UsageError(out.status());
  auto outcome = diff::RunDiff(config.diff);
  if (!outcome.ok()) return UsageError(outcome.status());
  int status = outcome->ExitStatus();
  if (!config.plot_path.empty()) {
    if (absl::Status s = WriteTextFile(config.plot_path, diff::DiffPlotSvg(*outcome)); !s.ok()) {
      std::fprintf(stderr, "faultbench: --plot: %s\n", std::string(s.message()).c_str());
      status = 2;
    }
  }
  const std::string text = config.format == OutputFormat::kJson ? diff::DiffJson(*outcome).dump(2) + "\n"
                                                                 : diff::DiffText(*outcome);
  std::fputs(text.c_str(), out->get());
  return status;
}

}  // namespace faultbench
