// Renderings of a --numa-matrix comparison: compare's own text and JSON
// with the matrices added, and the matrices as an SVG heatmap.
#pragma once

#include <string>

#include "faultbench/result/compare_result.h"
#include "nlohmann/json.hpp"

namespace faultbench {

// CompareText, then per matrix a table: rows CPU nodes, columns memory
// nodes (or the DAX device), each cell "IOPS p50 faults/MiB placement".
std::string NumaMatrixText(const NumaMatrixOutcome& outcome);

// CompareJson plus "numa_matrix": {"cpu_nodes", "mem_nodes", "dax_device",
// "marks", "matrices": [{"variant", "all_exact", "cells": [...]}]}.
nlohmann::json NumaMatrixJson(const NumaMatrixOutcome& outcome);

// One heatmap panel per matrix, shaded by median IOPS; a cell whose
// placement is not exact has a red border.
std::string NumaMatrixSvg(const NumaMatrixOutcome& outcome);

}  // namespace faultbench
