// Renderings of a finished diff, separate from the judging (diff.h): the
// text table in LKP's `%stddev %change %stddev` layout with each side's
// min/median/max and the verdict of every figure, the JSON document, and
// the SVG chart of every run as a dot.
#pragma once

#include <string>

#include "faultbench/diff/diff.h"
#include "nlohmann/json.hpp"

namespace faultbench::diff {

// The sides, what differs, one table per job, the verdict with its causes,
// the notes, and each side's taint.
std::string DiffText(const DiffOutcome& outcome);

// {"under_test", "counts": "regressions"|"any change", "emulation", "judged": "signature"|"all", "base": {...}, "new": {...},
//  "differences": {"under_test": [...], "not_comparable": [...]}, "jobs": [{"job", "variant",
//  "figures": [{"figure", "unit", "worse", "base": {min, median, max, mean, stddev_percent, values},
//  "new": {...}, "change_percent", "verdict", "evidence"}]}], "unmatched", "verdict",
//  "verdict_text", "causes", "notes", "exit_status"}
nlohmann::json DiffJson(const DiffOutcome& outcome);

// One row per figure of every job: both sides' runs as dots on the row's scale.
std::string DiffPlotSvg(const DiffOutcome& outcome);

}  // namespace faultbench::diff
