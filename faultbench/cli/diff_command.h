// `faultbench diff`: the entry point main.cc calls with the flag values.
// RunDiff (diff/diff.h), then the plot and the report.
//
// Exit status (returned, never exit()ed), made for `git bisect run`:
//   0    no regression (improvements included); with --any-change
//        (diff::VerdictRule::kAnyChange), no significant change at all;
//   1    a regression; with --any-change, any figure that changed;
//   125  cannot judge: a failed run, sides that are not comparable, too
//        few runs to know the spread, no job in common;
//   2    bad usage (a missing file, a file that is not a result), or a
//        plot that could not be written; with `bisect` every status other
//        than 0 and 1 becomes 125, because `git bisect run` takes 2 as
//        "bad" and would blame the commit for a typo.
#pragma once

#include <string>

#include "faultbench/diff/diff.h"
#include "faultbench/report/report.h"

namespace faultbench {

struct DiffCommandConfig {
  diff::DiffConfig diff;
  OutputFormat format = OutputFormat::kNormal;
  std::string output_path;  // "" = stdout
  std::string plot_path;    // "" = no plot
  bool bisect = false;
};

int DiffCommand(const DiffCommandConfig& config);

// What `git bisect run` should see for a command's exit status: with
// `bisect`, anything but 0 and 1 is 125 ("cannot test this commit").
int BisectStatus(int status, bool bisect);

}  // namespace faultbench
