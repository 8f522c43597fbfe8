// `faultbench compare`: the entry point main.cc calls with the flag values.
// RunComparison (compare/compare.h), then the plot, the saved JSON and the
// report.
//
// Exit status (returned, never exit()ed): 0 done; 1 a run failed, or the
// plot or the saved JSON could not be written; 2 bad usage (checked before
// the first run).
#pragma once

#include "faultbench/compare/compare.h"

namespace faultbench {

int CompareCommand(const CompareConfig& config);

}  // namespace faultbench
