// matrix/: the kernel matrix's results as plain data. scripts/kernel-matrix
// boots each kernel in a VM and runs a study on each backing (a file system
// and its mode, device DAX, tmpfs, hugetlbfs); this folder reads what it
// left and says, per backing, where the timing-free signature changed from
// one kernel to the next. Rendering is matrix_report.h.
//
// It may use diff/ (reading result files, the figures it knows, and its
// judgement, which is the only rule of change here: a figure is marked
// exactly when `faultbench diff --under-test=package` would call it:
// the kernels are Debian packages, each with its own config),
// stats/ (summaries) and plot/ (matrix_report's heatmap); it runs nothing.
//
// The directory:
//   DIR/kernels.txt   kernel package names, one a line, in version order
//   DIR/backings.txt  backing names, one a line, in report order
//   DIR/cells/PACKAGE/BACKING/*.json   faultbench compare --save-json
//                     documents (pmd.json, 64K.json, pte.json, pud.json), and/or
//   DIR/cells/PACKAGE/BACKING/status   one line: why the cell has no or
//                     partial results ("hang: ...", "skipped: ...", "failed: ...")
// A cell with neither has not run yet. Blank lines and lines starting
// with '#' in the two lists are ignored.
//
// Thread safety: plain data and one free function; no state is shared.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "faultbench/diff/diff.h"
#include "faultbench/stats/summary.h"

namespace faultbench::matrix {

// "linux-image-6.12.117+deb13-amd64" -> "6.12.117+deb13".
std::string ShortKernel(const std::string& package);

// One job variant of a cell: each signature figure over the cell's runs.
struct VariantSummary {
  std::string label;  // "pmd/mmap"; "JOB pmd/mmap" when the matrix ran several jobs
  std::map<std::string, stats::Summary> figures;  // by metric name (diff/metrics.h), signature figures only
};

enum class CellState {
  kResults,  // runs and no status
  kPartial,  // runs and a status (a mode that hung after another finished)
  kStatus,   // a status and no runs
  kNotRun,   // neither
};
std::string CellStateName(CellState state);  // "results", "partial", "status", "not run"

struct Cell {
  std::string kernel;   // the package name, as kernels.txt has it
  std::string backing;
  CellState state = CellState::kNotRun;
  std::string status;   // the status file's line; "" without one
  int runs = 0;         // runs read from its JSON files
  std::vector<VariantSummary> variants;  // in the order of the labels' first appearance
  std::vector<std::string> skipped;      // files that hold no run (a truncated JSON of a hung VM)

  bool has_results() const { return runs > 0; }
  // The variant called `label`, or nullptr.
  const VariantSummary* Find(const std::string& label) const;
  // Its summary of `figure`, or nullptr where the variant or the figure is absent.
  const stats::Summary* Figure(const std::string& label, const std::string& figure) const;
};

// A figure diff's rule called changed between a cell and its neighbour,
// the nearest earlier kernel whose cell of the same backing has results.
struct Change {
  std::string backing, variant, figure;  // figure: the metric name
  std::string from_kernel, to_kernel;    // package names
  double base_median = 0, new_median = 0;
  bool up = false;  // the new median is the higher
  diff::FigureVerdict verdict = diff::FigureVerdict::kNoChange;  // kRegression or kImprovement
  std::string evidence;  // stats::ChangeJudgement::Evidence(): "ranges separate: [0, 0] vs [0.93, 0.95]"
};

// A neighbouring pair diff could not judge ("not comparable because ...",
// "a run failed: ..."): no figure of it is marked.
struct Unjudged {
  std::string backing, from_kernel, to_kernel;
  std::string why;  // diff's verdict text
};

struct Matrix {
  std::string dir;
  std::vector<std::string> kernels;   // package names, in kernels.txt's order
  std::vector<std::string> backings;  // in backings.txt's order
  std::vector<Cell> cells;            // every (backing, kernel): backings outer, kernels inner
  std::vector<Change> changes;        // in cell order, then variant and figure order
  std::vector<Unjudged> unjudged;

  const Cell& At(size_t backing, size_t kernel) const { return cells[backing * kernels.size() + kernel]; }
  // The change marked on (backing, variant, figure) at `kernel`, or nullptr.
  const Change* ChangeAt(const std::string& backing, const std::string& variant, const std::string& figure,
                         const std::string& kernel) const;
};

// Reads DIR and judges every backing's neighbouring kernels with
// diff::JudgeSides(..., UnderTest::kPackage). On success every cell of
// kernels x backings is present, run or not.
// Errors, each a usage error whose message says what to do:
//   NotFound         DIR does not exist, or is not a directory;
//   InvalidArgument  DIR/kernels.txt or DIR/backings.txt is missing or
//                    lists nothing, or a cell's status cannot be read.
// A JSON file of a cell that holds no run is not an error: it is named in
// the cell's `skipped`.
absl::StatusOr<Matrix> ReadMatrix(const std::string& dir);

}  // namespace faultbench::matrix
