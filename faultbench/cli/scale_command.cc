#include "faultbench/cli/scale_command.h"

#include <unistd.h>

#include <cstdio>

#include "faultbench/cli/command_io.h"
#include "faultbench/report/scale_report.h"

namespace faultbench {

int ScaleCommand(const ScaleCommandConfig& config) {
  auto out = OutputFile::Open(config.output_path);  // before the runs: a bad path costs none
  if (!out.ok()) return UsageError(out.status());
  ScaleConfig scale = config.scale;
  if (scale.progress && isatty(STDERR_FILENO)) {
    scale.on_run = [](ScaleMode mode, int tasks, int repeat) {
      std::fprintf(stderr, "faultbench: repeat %d: %s x%d\n", repeat, std::string(ScaleModeName(mode)).c_str(), tasks);
    };
  }
  auto outcome = RunScale(scale);
  if (!outcome.ok()) return UsageError(outcome.status());
  int exit_code = 0;
  for (const CompareFailure& f : outcome->failures) {
    std::fprintf(stderr, "faultbench: %s: %s\n", f.what.c_str(), f.error.c_str());
    exit_code = 1;
  }
  if (!config.plot_path.empty()) {
    if (absl::Status s = WriteTextFile(config.plot_path, ScaleSvg(*outcome)); !s.ok()) {
      std::fprintf(stderr, "faultbench: --plot: %s\n", std::string(s.message()).c_str());
      exit_code = 1;
    }
  }
  const std::string text =
      config.format == OutputFormat::kJson ? ScaleJson(*outcome).dump(2) + "\n" : ScaleText(*outcome);
  std::fputs(text.c_str(), out->get());
  return exit_code;
}

}  // namespace faultbench
