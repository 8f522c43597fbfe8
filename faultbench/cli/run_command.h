// `faultbench run`: the entry point main.cc calls with the flag values.
//
// Exit status (returned, never exit()ed, so tests can call it):
//   0  the run completed and, with --strict, got the mapping it asked for;
//   1  a worker failed while running (its error is printed);
//   2  bad usage: a bad flag or job file, a missing directory, a size beyond
//      the free space, an unknown NUMA node (one line on stderr, nothing run);
//   3  --strict and a verified mapping differs from the request.
#pragma once

#include <string>
#include <vector>

#include "faultbench/report/report.h"
#include "faultbench/workload/job_options.h"

namespace faultbench {

struct RunCommandConfig {
  JobOptions job;                 // from the command line
  std::vector<std::string> args;  // positional: fio job files, run one after another
  std::vector<std::string> sections;  // fio's --section: only these job sections
  OutputFormat format = OutputFormat::kNormal;
  std::string output_path;        // "" = stdout
  bool strict = false;
  bool progress = true;
};

int RunCommand(const RunCommandConfig& config);

}  // namespace faultbench
