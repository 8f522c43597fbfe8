// `faultbench compare`: the entry point main.cc calls with the flag values.
// RunComparison (compare/compare.h), then the plot, the saved JSON and the
// report.
//
// Exit status (returned, never exit()ed): 0 done; 1 a run failed, or the
// plot or the saved JSON could not be written; 2 bad usage (checked before
// the first run).
#pragma once

#include <string>

#include "faultbench/compare/compare.h"
#include "faultbench/report/report.h"

namespace faultbench {

struct CompareCommandConfig {
  CompareConfig compare;
  OutputFormat format = OutputFormat::kNormal;  // normal or json
  std::string output_path;     // "" = stdout
  std::string plot_path;       // "" = no plot
  std::string save_json_path;  // "" = none; else the JSON document also goes here
};

// Runs the comparison (or its NUMA matrix), prints a line per run on a
// terminal, each failed run on stderr, and the report; writes --plot and
// --save-json. Returns the exit status: 0, 1 when a run failed or a file
// could not be written or deleted, 2 for bad usage.
int CompareCommand(const CompareCommandConfig& config);

}  // namespace faultbench
