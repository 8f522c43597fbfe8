// Renderings of a read matrix (matrix.h), separate from the reading and
// judging: the text report (a table per backing and job variant, rows =
// kernels, changed values marked, then the list of changes), the JSON
// document, and the SVG heatmap (plot/heatmap.h). They format what Matrix
// holds and decide nothing.
#pragma once

#include <string>

#include "faultbench/matrix/matrix.h"
#include "nlohmann/json.hpp"

namespace faultbench::matrix {

// Per backing: a table per job variant whose columns are the signature
// figures that are not 0 or absent for every kernel (those are named under
// it), each value "median [min-max]" with a marker where diff's rule called
// a change against the kernel above ("▲", "▼"; "!" a regression); a cell
// without results prints its status or "not run". Then the changes, one a
// line ("pagecache-ext4 pte/mmap pmd_share: 0 -> 0.94 between A and B
// (improvement; EVIDENCE)"), the pairs diff could not judge, and the files
// that held no run.
std::string MatrixText(const Matrix& matrix);

// {"dir", "rule", "kernels": [...], "backings": [...],
//  "cells": [{"kernel", "backing", "state", "status"?, "runs", "skipped",
//             "variants": {"pmd/mmap": {FIGURE: {median, min, max, runs}}}}],
//  "changes": [{backing, variant, figure, from_kernel, to_kernel, base_median,
//               new_median, direction: "up"|"down", verdict: "regression"|"improvement", evidence}],
//  "not_judged": [{backing, from_kernel, to_kernel, why}]}
nlohmann::json MatrixJson(const Matrix& matrix);

// One panel per figure that changed anywhere (pmd_share and faults_per_mib
// when none did): rows = kernels, columns = backing and variant, each cell
// shaded by its median and outlined (flagged) where it changed against
// the kernel above; a cell without the figure shows its short status.
std::string MatrixHeatmapSvg(const Matrix& matrix);

}  // namespace faultbench::matrix
