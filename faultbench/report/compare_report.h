// Renderings of a finished comparison (result/compare_result.h): the text
// table with its verdicts, the JSON document, and the SVG plot. Separate
// from the runs, like run's reporters: compare/ judges, this says it.
#pragma once

#include <string>

#include "faultbench/result/compare_result.h"
#include "nlohmann/json.hpp"

namespace faultbench {

// "randrw bs=4096 size=1.0 GiB numjobs=1, 6 repeat(s) (--repeat=auto)": the
// headline of every rendering, the NUMA matrix's too.
std::string WorkloadAndRepeats(const CompareOutcome& outcome);

// The verdict in words: "PMD faster x7.62", "no significant difference",
// "REGRESSION: PMD slower than PTE x32.91", "PMD mapped as asked, x512.0
// fewer faults per MiB than PTE (...)", with "(but the pmd runs were 40.0%
// PMD-mapped: not a PMD result)" where the variant was not mapped at its
// size.
std::string VerdictText(const Verdict& verdict);
// "timings" or "signature (emulation: qemu TCG)".
std::string JudgedOn(const Verdict& verdict);
// "IOPS pte vs pmd: ranges separate: [95, 105] vs [190, 210]" ("" when no pair).
std::string VerdictEvidence(const Verdict& verdict);

// "" for a fixed --repeat. --repeat=auto: "decided after 4 rounds (21.3
// s)", "no pte/pmd pair to judge, ...", or "not decided within the budget
// (...): GROUP: EVIDENCE; ..." with each undecided group's evidence.
std::string RepeatNote(const CompareOutcome& outcome);

// Header lines (workload, location), one row per variant (medians with the IOPS range), then one
// "PMD/PTE (group): R -> verdict" line per group and its causes, then the taint.
std::string CompareText(const CompareOutcome& outcome);

// {"location": "DIR (fs, backing)", "runs": [...], "variants": [...], "groups": [...],
//  "taint": [...], "summary": {"pmd_over_pte": R, "verdict": "..."}} (summary = first group).
nlohmann::json CompareJson(const CompareOutcome& outcome);

// {"median": M, "min": A, "max": B}, as every spread of the JSON document.
nlohmann::json SpreadJson(const Spread& spread);

// The SVG plot: median IOPS per variant with min-max whiskers, each bar
// labelled with its verified PMD share, and the location and verdicts under
// the title.
std::string ComparePlotSvg(const CompareOutcome& outcome);

}  // namespace faultbench
