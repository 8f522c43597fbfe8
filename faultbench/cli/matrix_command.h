// `faultbench matrix DIR`: the entry point main.cc calls with the flag
// values. ReadMatrix (matrix/matrix.h), then the heatmap and the report.
//
// Exit status (returned, never exit()ed): 0 the report was made, whether
// or not anything changed (the changes are the report, not a failure);
// 2 bad usage: DIR missing, no kernels.txt or backings.txt in it, an
// --output or --plot that cannot be written.
#pragma once

#include <string>

#include "faultbench/report/report.h"

namespace faultbench {

struct MatrixCommandConfig {
  std::string dir;
  OutputFormat format = OutputFormat::kNormal;
  std::string output_path;  // "" = stdout
  std::string plot_path;    // "" = no heatmap
};

int MatrixCommand(const MatrixCommandConfig& config);

}  // namespace faultbench
