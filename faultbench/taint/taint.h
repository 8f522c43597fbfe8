// Conditions that make a run's numbers untrustworthy or not comparable,
// recorded with every run.
//
// The public threads behind the PMD study lost weeks to such baselines: a
// debug kernel made one machine 30x slower, a VM inverted the PMD result
// (the guest's PAT bits are ignored under EPT), and saturated CPUs hid the
// device. Each entry is one line: "what: detail (why it matters)".
//
// The rules live here; the facts they judge are read by sysfacts/. Room
// for rules that judge two sides at once (can a run on one kernel or
// machine be compared with one on another) beside these.
#pragma once

#include <string>
#include <vector>

#include "faultbench/sysfacts/machine.h"

namespace faultbench {

// The taint lines for `state`, plus CPU saturation when the run's workers
// used `cpu_busy_fraction` (usr+sys time / (wall time x online CPUs)).
std::vector<std::string> TaintLines(const MachineState& state, double cpu_busy_fraction);

// The taint of several runs (one list per run), one line per kind (the
// text before ':') as the first run that had it said it, followed by
// "(N of M runs)" when not every run had it.
std::vector<std::string> MergeTaint(const std::vector<std::vector<std::string>>& runs_taint);

}  // namespace faultbench
