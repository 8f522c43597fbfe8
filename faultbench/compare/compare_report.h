// Renderings of a finished comparison: the text table with its verdicts,
// the JSON document, and the SVG plot. Separate from the runs, like run's
// reporters.
#pragma once

#include <string>

#include "faultbench/compare/compare.h"
#include "nlohmann/json.hpp"

namespace faultbench {

// "randrw bs=4096 size=1.0 GiB numjobs=1, 6 repeat(s) (--repeat=auto)": the
// headline of every rendering, the NUMA matrix's too.
std::string WorkloadAndRepeats(const CompareConfig& config, const CompareOutcome& outcome);

// Header lines (workload, location), one row per variant (medians with the IOPS range), then one
// "PMD/PTE (group): R -> verdict" line per group and its causes, then the taint.
std::string CompareText(const CompareConfig& config, const CompareOutcome& outcome);

// {"location": "DIR (fs, backing)", "runs": [...], "variants": [...], "groups": [...],
//  "taint": [...], "summary": {"pmd_over_pte": R, "verdict": "..."}} (summary = first group).
nlohmann::json CompareJson(const CompareOutcome& outcome);

// {"median": M, "min": A, "max": B}, as every spread of the JSON document.
nlohmann::json SpreadJson(const Spread& spread);

// The SVG plot: median IOPS per variant with min-max whiskers, each bar
// labelled with its verified PMD share, and the location and verdicts under
// the title.
std::string ComparePlotSvg(const CompareConfig& config, const CompareOutcome& outcome);

}  // namespace faultbench
