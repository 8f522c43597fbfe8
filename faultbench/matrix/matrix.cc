#include "faultbench/matrix/matrix.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "faultbench/diff/metrics.h"
#include "pmstore/base/status_macros.h"

namespace faultbench::matrix {
namespace {

namespace fs = std::filesystem;
using diff::RunSample;

std::string Trim(absl::string_view line) { return std::string(absl::StripAsciiWhitespace(line)); }

// The names in DIR/NAME, one a line. The message says what the file is for,
// because the usual cause is a DIR that is not the matrix's.
absl::StatusOr<std::vector<std::string>> ReadList(const fs::path& dir, const char* name, const char* what) {
  const fs::path path = dir / name;
  std::ifstream in(path);
  if (!in) {
    return absl::InvalidArgumentError(absl::StrCat(path.string(), ": missing; matrix reads the ", what,
                                                   " from it, one a line (scripts/kernel-matrix writes it): give "
                                                   "the directory scripts/kernel-matrix made"));
  }
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) {
    std::string name_on_line = Trim(line);
    if (!name_on_line.empty() && name_on_line[0] != '#') names.push_back(std::move(name_on_line));
  }
  if (names.empty()) return absl::InvalidArgumentError(absl::StrCat(path.string(), ": lists no ", what));
  return names;
}

// The first non-empty line of the cell's status file; "" without one.
absl::StatusOr<std::string> ReadStatus(const fs::path& cell) {
  const fs::path path = cell / "status";
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::string();
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(path.string(), ": cannot be read"));
  for (std::string line; std::getline(in, line);) {
    if (std::string status = Trim(line); !status.empty()) return status;
  }
  return std::string("failed: the status file is empty");
}

// How a job variant is named in the report: by its variant alone while the
// matrix ran one job (the usual study), else with the job's name too, so
// two jobs of one variant are never summed into one column.
class Labeller {
 public:
  explicit Labeller(const std::vector<std::vector<RunSample>>& cells) {
    for (const auto& runs : cells) {
      for (const RunSample& run : runs) {
        for (const diff::JobSample& job : run.jobs) names_.insert(job.name);
      }
    }
  }
  std::string operator()(const std::string& name, const std::string& variant) const {
    return names_.size() > 1 ? absl::StrCat(name, " ", variant) : variant;
  }

 private:
  std::set<std::string> names_;
};

std::vector<VariantSummary> Summarize(const std::vector<RunSample>& runs, const Labeller& label) {
  std::vector<std::pair<std::string, std::map<std::string, std::vector<double>>>> values;
  for (const RunSample& run : runs) {
    for (const diff::JobSample& job : run.jobs) {
      const std::string l = label(job.name, job.variant);
      auto it = std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.first == l; });
      if (it == values.end()) it = values.insert(values.end(), {l, {}});
      for (const auto& [name, value] : job.figures) {
        const diff::MetricInfo* metric = diff::FindMetric(name);
        if (metric != nullptr && metric->signature) it->second[name].push_back(value);
      }
    }
  }
  std::vector<VariantSummary> out;
  for (auto& [l, figures] : values) {
    VariantSummary v{.label = l};
    for (auto& [name, list] : figures) v.figures[name] = stats::Summarize(std::move(list));
    out.push_back(std::move(v));
  }
  return out;
}

// Marks what diff calls changed between `from` and `to` of one backing.
// A pair diff cannot judge marks nothing and says why.
void JudgeNeighbours(Matrix& m, const std::string& backing, const std::string& from, const std::string& to,
                     const std::vector<RunSample>& base, const std::vector<RunSample>& next, const Labeller& label) {
  const diff::DiffOutcome o = diff::JudgeSides(base, next, UnderTest::kPackage);
  if (o.verdict == diff::DiffVerdict::kCannotJudge) {
    m.unjudged.push_back({backing, from, to, o.verdict_text});
    return;
  }
  for (const diff::JobDiff& job : o.jobs) {
    for (const diff::FigureDiff& f : job.figures) {
      if (!f.metric->signature) continue;  // the matrix shows the signature: VMs' timings say little
      if (f.verdict != diff::FigureVerdict::kRegression && f.verdict != diff::FigureVerdict::kImprovement) continue;
      m.changes.push_back({.backing = backing,
                           .variant = label(job.name, job.variant),
                           .figure = f.metric->name,
                           .from_kernel = from,
                           .to_kernel = to,
                           .base_median = f.base.median,
                           .new_median = f.next.median,
                           .up = f.change.change == stats::Change::kUp,
                           .verdict = f.verdict,
                           .evidence = f.change.Evidence()});
    }
  }
}

}  // namespace

std::string ShortKernel(const std::string& package) {
  absl::string_view s = package;
  absl::ConsumePrefix(&s, "linux-image-");
  absl::ConsumeSuffix(&s, "-amd64");
  return std::string(s);
}

std::string CellStateName(CellState state) {
  switch (state) {
    case CellState::kResults: return "results";
    case CellState::kPartial: return "partial";
    case CellState::kStatus: return "status";
    case CellState::kNotRun: return "not run";
  }
  return "";
}

const VariantSummary* Cell::Find(const std::string& label) const {
  for (const VariantSummary& v : variants) {
    if (v.label == label) return &v;
  }
  return nullptr;
}

const stats::Summary* Cell::Figure(const std::string& label, const std::string& figure) const {
  const VariantSummary* v = Find(label);
  if (v == nullptr) return nullptr;
  const auto it = v->figures.find(figure);
  return it == v->figures.end() ? nullptr : &it->second;
}

const Change* Matrix::ChangeAt(const std::string& backing, const std::string& variant, const std::string& figure,
                               const std::string& kernel) const {
  for (const Change& c : changes) {
    if (c.backing == backing && c.variant == variant && c.figure == figure && c.to_kernel == kernel) return &c;
  }
  return nullptr;
}

absl::StatusOr<Matrix> ReadMatrix(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat(dir, ": no such directory; give the directory scripts/kernel-matrix "
                                            "made (kernels.txt, backings.txt, cells/)"));
  }
  Matrix m;
  m.dir = dir;
  PMSTORE_ASSIGN_OR_RETURN(m.kernels, ReadList(dir, "kernels.txt", "kernel packages"));
  PMSTORE_ASSIGN_OR_RETURN(m.backings, ReadList(dir, "backings.txt", "backings"));
  // Runs stay here, beside the cells: the report needs their summaries only.
  std::vector<std::vector<RunSample>> runs;
  for (const std::string& backing : m.backings) {
    for (const std::string& kernel : m.kernels) {
      const fs::path path = fs::path(dir) / "cells" / kernel / backing;
      Cell cell{.kernel = kernel, .backing = backing};
      PMSTORE_ASSIGN_OR_RETURN(cell.status, ReadStatus(path));
      std::vector<RunSample> cell_runs;
      if (fs::is_directory(path, ec)) {
        PMSTORE_ASSIGN_OR_RETURN(cell_runs, diff::ReadRuns({path.string()}, &cell.skipped));
      }
      cell.runs = static_cast<int>(cell_runs.size());
      cell.state = cell.runs > 0 ? (cell.status.empty() ? CellState::kResults : CellState::kPartial)
                                 : (cell.status.empty() ? CellState::kNotRun : CellState::kStatus);
      m.cells.push_back(std::move(cell));
      runs.push_back(std::move(cell_runs));
    }
  }
  const Labeller label(runs);
  for (size_t i = 0; i < m.cells.size(); ++i) m.cells[i].variants = Summarize(runs[i], label);
  for (size_t b = 0; b < m.backings.size(); ++b) {
    const size_t first = b * m.kernels.size();
    std::optional<size_t> previous;  // the nearest earlier kernel with results
    for (size_t k = 0; k < m.kernels.size(); ++k) {
      if (!m.cells[first + k].has_results()) continue;
      if (previous) {
        JudgeNeighbours(m, m.backings[b], m.kernels[*previous], m.kernels[k], runs[first + *previous],
                        runs[first + k], label);
      }
      previous = k;
    }
  }
  return m;
}

}  // namespace faultbench::matrix
