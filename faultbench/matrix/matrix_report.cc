#include "faultbench/matrix/matrix_report.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "faultbench/diff/metrics.h"
#include "faultbench/matrix/matrix_format.h"

namespace faultbench::matrix {
namespace {

using nlohmann::json;

// Columns are padded by what a terminal shows, not by bytes: the markers are
// three bytes of UTF-8 each.
size_t DisplayWidth(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string Pad(const std::string& s, size_t width) {
  const size_t w = DisplayWidth(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

// The column names of one variant's table: vmstat counters without their
// prefix (the legend says so), so the table stays narrow.
std::string ColumnName(const std::string& figure) {
  return absl::StartsWith(figure, "vmstat.") ? figure.substr(7) : figure;
}

// A figure that stayed 0 in every run of every kernel (a fallback that
// never happened): named under the table, not a column.
bool ZeroForEveryKernel(const Matrix& m, size_t b, const std::string& label, const std::string& figure) {
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    const stats::Summary* s = m.At(b, k).Figure(label, figure);
    if (s != nullptr && std::any_of(s->sorted.begin(), s->sorted.end(), [](double x) { return x != 0; })) return false;
  }
  return true;
}

// One variant of one backing as a table: rows = kernels.
void AppendVariantTable(std::string& out, const Matrix& m, size_t b, const std::string& label) {
  std::vector<std::string> shown, zero;
  for (const std::string& figure : FiguresOf(m, b, label)) {
    (ZeroForEveryKernel(m, b, label, figure) ? zero : shown).push_back(figure);
  }
  // Rows as cells of text first, so each column is as wide as its widest.
  std::vector<std::vector<std::string>> rows = {{label}};
  for (const std::string& figure : shown) rows[0].push_back(ColumnName(figure));
  std::vector<std::string> tails = {""};
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    const Cell& cell = m.At(b, k);
    const VariantSummary* v = cell.Find(label);
    std::vector<std::string> row = {ShortKernel(m.kernels[k])};
    if (v == nullptr) {
      tails.push_back(EmptyCellText(cell, label));
    } else {
      for (const std::string& figure : shown) {
        const stats::Summary* s = cell.Figure(label, figure);
        row.push_back(s == nullptr ? "-" : ValueText(*s, m.ChangeAt(cell.backing, label, figure, cell.kernel)));
      }
      tails.push_back(cell.status);
    }
    rows.push_back(std::move(row));
  }
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      if (c >= widths.size()) widths.push_back(0);
      widths[c] = std::max(widths[c], DisplayWidth(row[c]));
    }
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    std::string line = "  ";
    for (size_t c = 0; c < rows[r].size(); ++c) absl::StrAppend(&line, Pad(rows[r][c], widths[c] + 3));
    if (!tails[r].empty()) absl::StrAppend(&line, rows[r].size() > 1 ? "(" + tails[r] + ")" : tails[r]);
    line.erase(line.find_last_not_of(' ') + 1);
    absl::StrAppend(&out, line, "\n");
  }
  std::vector<std::string> zero_names;
  for (const std::string& figure : zero) zero_names.push_back(ColumnName(figure));
  if (!zero_names.empty()) {
    absl::StrAppend(&out, "  left out, 0 for every kernel: ", absl::StrJoin(zero_names, ", "), "\n");
  }
}

void AppendBacking(std::string& out, const Matrix& m, size_t b) {
  absl::StrAppend(&out, "\n", m.backings[b], "\n");
  const std::vector<std::string> labels = VariantsOf(m, b);
  if (labels.empty()) {  // no kernel has results here: the statuses are the report
    size_t width = 0;
    for (const std::string& kernel : m.kernels) width = std::max(width, DisplayWidth(ShortKernel(kernel)));
    for (size_t k = 0; k < m.kernels.size(); ++k) {
      absl::StrAppend(&out, "  ", Pad(ShortKernel(m.kernels[k]), width + 3), EmptyCellText(m.At(b, k), ""), "\n");
    }
    return;
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) absl::StrAppend(&out, "\n");
    AppendVariantTable(out, m, b, labels[i]);
  }
}

std::string ChangeLine(const Change& c) {
  return absl::StrCat(c.backing, " ", c.variant, " ", c.figure, ": ", FormatValue(c.base_median), " -> ",
                      FormatValue(c.new_median), " between ", ShortKernel(c.from_kernel), " and ",
                      ShortKernel(c.to_kernel), " (", diff::FigureVerdictName(c.verdict), "; ", c.evidence, ")");
}

json SummaryJson(const stats::Summary& s) {
  return {{"median", s.median}, {"min", s.min}, {"max", s.max}, {"runs", s.n()}};
}

json CellJson(const Cell& cell) {
  json variants = json::object();
  for (const VariantSummary& v : cell.variants) {
    json figures = json::object();
    for (const auto& [name, summary] : v.figures) figures[name] = SummaryJson(summary);
    variants[v.label] = figures;
  }
  json out = {{"kernel", cell.kernel}, {"backing", cell.backing}, {"state", CellStateName(cell.state)},
              {"runs", cell.runs},     {"variants", variants},     {"skipped", cell.skipped}};
  if (!cell.status.empty()) out["status"] = cell.status;
  return out;
}

}  // namespace

std::string MatrixText(const Matrix& m) {
  std::string out = absl::StrFormat("faultbench matrix %s: %d kernel(s) x %d backing(s), %d change(s)\n", m.dir,
                                    m.kernels.size(), m.backings.size(), m.changes.size());
  absl::StrAppend(&out, "rule: ", kRule, "\n");
  absl::StrAppend(&out, "legend: median [min-max] of the cell's runs; ", kMarkerLegend,
                  "; counters without their 'vmstat.'\n");
  for (size_t b = 0; b < m.backings.size(); ++b) AppendBacking(out, m, b);
  absl::StrAppend(&out, "\n", m.changes.empty() ? "no changes between neighbouring kernels\n" : "changes:\n");
  for (const Change& c : m.changes) absl::StrAppend(&out, "  ", ChangeLine(c), "\n");
  if (!m.unjudged.empty()) absl::StrAppend(&out, "\nnot judged (nothing of these pairs is marked):\n");
  for (const Unjudged& u : m.unjudged) {
    absl::StrAppend(&out, "  ", u.backing, " ", ShortKernel(u.from_kernel), " -> ", ShortKernel(u.to_kernel), ": ",
                    u.why, "\n");
  }
  for (const Cell& cell : m.cells) {
    for (const std::string& s : cell.skipped) absl::StrAppend(&out, "note: left out (holds no run): ", s, "\n");
  }
  return out;
}

json MatrixJson(const Matrix& m) {
  json cells = json::array();
  for (const Cell& cell : m.cells) cells.push_back(CellJson(cell));
  json changes = json::array();
  for (const Change& c : m.changes) {
    changes.push_back({{"backing", c.backing},
                       {"variant", c.variant},
                       {"figure", c.figure},
                       {"from_kernel", c.from_kernel},
                       {"to_kernel", c.to_kernel},
                       {"base_median", c.base_median},
                       {"new_median", c.new_median},
                       {"direction", c.up ? "up" : "down"},
                       {"verdict", c.verdict == diff::FigureVerdict::kRegression ? "regression" : "improvement"},
                       {"evidence", c.evidence}});
  }
  json not_judged = json::array();
  for (const Unjudged& u : m.unjudged) {
    not_judged.push_back(
        {{"backing", u.backing}, {"from_kernel", u.from_kernel}, {"to_kernel", u.to_kernel}, {"why", u.why}});
  }
  return {{"dir", m.dir},   {"rule", kRule},         {"kernels", m.kernels},      {"backings", m.backings},
          {"cells", cells}, {"changes", changes},    {"not_judged", not_judged}};
}

}  // namespace faultbench::matrix
