// `faultbench scale`: the entry point main.cc calls with the flag values.
// RunScale (scale/scale.h), then the plot and the report.
//
// Exit status (returned, never exit()ed): 0 done; 1 a task failed, or the
// plot could not be written; 2 bad usage (checked before the first run).
#pragma once

#include <string>

#include "faultbench/report/report.h"
#include "faultbench/scale/scale.h"

namespace faultbench {

struct ScaleCommandConfig {
  ScaleConfig scale;
  OutputFormat format = OutputFormat::kNormal;  // normal or json
  std::string output_path;  // "" = stdout
  std::string plot_path;    // "" = no plot
};

int ScaleCommand(const ScaleCommandConfig& config);

}  // namespace faultbench
