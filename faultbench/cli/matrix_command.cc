#include "faultbench/cli/matrix_command.h"

#include <cstdio>

#include "faultbench/cli/command_io.h"
#include "faultbench/matrix/matrix_report.h"

namespace faultbench {

int MatrixCommand(const MatrixCommandConfig& config) {
  auto out = OutputFile::Open(config.output_path);
  if (!out.ok()) return UsageError(out.status());
  auto matrix = matrix::ReadMatrix(config.dir);
  if (!matrix.ok()) return UsageError(matrix.status());
  int status = 0;
  if (!config.plot_path.empty()) {
    if (absl::Status s = WriteTextFile(config.plot_path, matrix::MatrixHeatmapSvg(*matrix)); !s.ok()) {
      std::fprintf(stderr, "faultbench: --plot: %s\n", std::string(s.message()).c_str());
      status = 2;
    }
  }
  const std::string text = config.format == OutputFormat::kJson ? matrix::MatrixJson(*matrix).dump(2) + "\n"
                                                                 : matrix::MatrixText(*matrix);
  std::fputs(text.c_str(), out->get());
  return status;
}

}  // namespace faultbench
