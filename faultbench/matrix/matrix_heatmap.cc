// MatrixHeatmapSvg (matrix_report.h): the matrix as plot/'s heatmap, one
// panel per figure, so a change shows as a step in a column's shade.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "faultbench/diff/metrics.h"
#include "faultbench/matrix/matrix_format.h"
#include "faultbench/matrix/matrix_report.h"
#include "faultbench/plot/heatmap.h"

namespace faultbench::matrix {
namespace {

// The figures worth a panel: those that changed somewhere; when none did,
// the two that tell first whether huge mappings were had.
std::vector<std::string> PanelFigures(const Matrix& m) {
  std::vector<std::string> figures;
  for (const Change& c : m.changes) {
    if (std::find(figures.begin(), figures.end(), c.figure) == figures.end()) figures.push_back(c.figure);
  }
  if (figures.empty()) figures = {"pmd_share", "faults_per_mib"};
  std::sort(figures.begin(), figures.end(),
            [](const std::string& x, const std::string& y) { return diff::MetricOrder(x) < diff::MetricOrder(y); });
  return figures;
}

struct Column {
  size_t backing;
  std::string label;
};

// Every (backing, variant) some kernel recorded `figure` for.
std::vector<Column> ColumnsOf(const Matrix& m, const std::string& figure) {
  std::vector<Column> columns;
  for (size_t b = 0; b < m.backings.size(); ++b) {
    for (const std::string& label : VariantsOf(m, b)) {
      const std::vector<std::string> figures = FiguresOf(m, b, label);
      if (std::find(figures.begin(), figures.end(), figure) != figures.end()) columns.push_back({b, label});
    }
  }
  return columns;
}

HeatmapCell CellOf(const Matrix& m, const Column& column, size_t k, const std::string& figure) {
  const Cell& cell = m.At(column.backing, k);
  const stats::Summary* s = cell.Figure(column.label, figure);
  if (s == nullptr) return {0, {ShortEmptyCellText(cell)}, false};
  const Change* change = m.ChangeAt(cell.backing, column.label, figure, cell.kernel);
  HeatmapCell out{s->median, {ValueText(*s, change)}, change != nullptr};
  if (change != nullptr) out.lines.push_back(diff::FigureVerdictName(change->verdict));
  return out;
}

HeatmapPanel PanelOf(const Matrix& m, const std::string& figure) {
  HeatmapPanel p;
  const diff::MetricInfo* metric = diff::FindMetric(figure);
  p.title = metric == nullptr ? figure : absl::StrCat(figure, " (", metric->unit, ")");
  p.row_axis = "kernel";
  p.column_axis = "backing, job variant";
  const std::vector<Column> columns = ColumnsOf(m, figure);
  for (const Column& c : columns) p.column_labels.push_back(absl::StrCat(m.backings[c.backing], " ", c.label));
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    p.row_labels.push_back(ShortKernel(m.kernels[k]));
    std::vector<HeatmapCell> row;
    for (const Column& c : columns) row.push_back(CellOf(m, c, k, figure));
    p.cells.push_back(std::move(row));
  }
  return p;
}

}  // namespace

std::string MatrixHeatmapSvg(const Matrix& m) {
  Heatmap h;
  h.title = absl::StrCat("faultbench matrix: ", m.dir);
  h.subtitles.push_back(absl::StrFormat("%d kernel(s) x %d backing(s), %d change(s) between neighbouring kernels",
                                        m.kernels.size(), m.backings.size(), m.changes.size()));
  h.subtitles.push_back(absl::StrCat("rule: faultbench diff --under-test=package against the nearest earlier kernel "
                                     "with results"));
  for (const std::string& figure : PanelFigures(m)) h.panels.push_back(PanelOf(m, figure));
  h.footer = absl::StrCat("shade: the median's share of the panel's highest; red border, ", kMarkerLegend);
  return RenderHeatmapSvg(h);
}

}  // namespace faultbench::matrix
