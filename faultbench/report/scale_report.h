// Renderings of a `faultbench scale` (result/scale_result.h): a table of
// faults per second per point (total and per task, median [min-max] over
// the repeats) with each point's signature, the JSON document, and the SVG
// curve of the total against the number of tasks, threads against
// processes.
#pragma once

#include <string>

#include "faultbench/result/scale_result.h"
#include "nlohmann/json.hpp"

namespace faultbench {

std::string ScaleText(const ScaleOutcome& outcome);

// {"workload": {...}, "location", "emulation", "repeats", "points": [{"mode", "tasks",
//  "total_faults_per_s": {median,min,max}, "faults_per_s_per_task": {...},
//  "runs": [{"repeat", "tasks": [{"faults", "seconds", "faults_per_s", "error"?}],
//            "total_faults_per_s", "signature": {...}}]}], "taint", "failures"}
nlohmann::json ScaleJson(const ScaleOutcome& outcome);

std::string ScaleSvg(const ScaleOutcome& outcome);

}  // namespace faultbench
