#include "faultbench/matrix/matrix_format.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "faultbench/diff/metrics.h"

namespace faultbench::matrix {

std::vector<std::string> VariantsOf(const Matrix& m, size_t b) {
  std::vector<std::string> labels;
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    for (const VariantSummary& v : m.At(b, k).variants) {
      if (std::find(labels.begin(), labels.end(), v.label) == labels.end()) labels.push_back(v.label);
    }
  }
  return labels;
}

std::vector<std::string> FiguresOf(const Matrix& m, size_t b, const std::string& label) {
  std::vector<std::string> figures;
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    const VariantSummary* v = m.At(b, k).Find(label);
    if (v == nullptr) continue;
    for (const auto& [name, summary] : v->figures) {
      if (std::find(figures.begin(), figures.end(), name) == figures.end()) figures.push_back(name);
    }
  }
  std::sort(figures.begin(), figures.end(),
            [](const std::string& x, const std::string& y) { return diff::MetricOrder(x) < diff::MetricOrder(y); });
  return figures;
}

std::string FormatValue(double v) {
  if (v != 0 && (std::fabs(v) >= 1e7 || std::fabs(v) < 1e-3)) return absl::StrFormat("%.3g", v);
  if (std::fabs(v) >= 1000 || v == std::floor(v)) return absl::StrFormat("%.0f", v);
  return absl::StrFormat("%.3g", v);
}

std::string ValueText(const stats::Summary& s, const Change* change) {
  std::string out = FormatValue(s.median);
  if (s.min != s.max) absl::StrAppend(&out, " [", FormatValue(s.min), "-", FormatValue(s.max), "]");
  if (change != nullptr) {
    absl::StrAppend(&out, change->up ? " \xe2\x96\xb2" : " \xe2\x96\xbc",
                    change->verdict == diff::FigureVerdict::kRegression ? "!" : "");
  }
  return out;
}

std::string EmptyCellText(const Cell& cell, const std::string& label) {
  if (!cell.status.empty()) return cell.status;
  if (cell.has_results()) return absl::StrCat("no ", label, " runs");
  return "not run";
}

std::string ShortEmptyCellText(const Cell& cell) {
  if (!cell.status.empty()) return cell.status.substr(0, cell.status.find(':'));
  return cell.has_results() ? "-" : "not run";
}

}  // namespace faultbench::matrix
