// What the text report and the heatmap of a matrix write the same way
// (matrix_report.h's two renderings): which variants and figures a
// backing has, a value with its change marker, and what an empty cell says.
// Internal to matrix/.
#pragma once

#include <string>
#include <vector>

#include "faultbench/matrix/matrix.h"

namespace faultbench::matrix {

inline constexpr char kRule[] =
    "each kernel's cell against the nearest earlier kernel whose cell has results, by faultbench diff's rule "
    "(--under-test=package): ranges separate and the difference clears the figure's noise floor, with 3 runs a side "
    "at least; only the timing-free signature is shown";
inline constexpr char kMarkerLegend[] =
    "\xe2\x96\xb2/\xe2\x96\xbc changed against the nearest kernel above with results (up/down), ! a regression, "
    "else an improvement";

// The job variants any kernel of backing `b` ran, in order of first appearance.
std::vector<std::string> VariantsOf(const Matrix& m, size_t b);

// The figures any kernel recorded for `label` on backing `b`, in diff's
// table order (diff/metrics.h MetricOrder).
std::vector<std::string> FiguresOf(const Matrix& m, size_t b, const std::string& label);

// 0.94, 256, 3.3e+04: about four significant digits.
std::string FormatValue(double v);

// "256 [250-260] ▲!": the median, the range where the runs differ, and the
// marker of `change` (nullptr: none).
std::string ValueText(const stats::Summary& s, const Change* change);

// What a cell without `label` says: its status, "not run", or, with other
// variants' results, "no LABEL runs".
std::string EmptyCellText(const Cell& cell, const std::string& label);

// The status's first word: "hang", "skipped", "failed"; "not run"; "-".
std::string ShortEmptyCellText(const Cell& cell);

}  // namespace faultbench::matrix
