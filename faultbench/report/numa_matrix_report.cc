#include "faultbench/report/numa_matrix_report.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "faultbench/report/compare_report.h"
#include "faultbench/plot/heatmap.h"

namespace faultbench {
namespace {

using nlohmann::json;

// "node 1 (block:pmem0)": a node with the device it holds, as numactl names it.
std::string NodeLabel(const MatrixPlan& plan, int node) {
  const auto mark = plan.marks.find(node);
  return absl::StrCat("node ", node, mark == plan.marks.end() ? "" : " (" + mark->second + ")");
}

std::string ColumnLabel(const MatrixPlan& plan, int mem_node) {
  if (plan.dax_device.empty()) return NodeLabel(plan, mem_node);
  return absl::StrCat(plan.dax_device, " on node ", mem_node);
}

std::string ColumnAxis(const MatrixPlan& plan) {
  return plan.dax_device.empty() ? "memory node" : "DAX device (its pages are the device's)";
}

const MatrixCell* CellAt(const NumaMatrix& m, int cpu, int mem) {
  for (const MatrixCell& c : m.cells) {
    if (c.cpu_node == cpu && c.mem_node == mem) return &c;
  }
  return nullptr;
}

}  // namespace

std::string NumaMatrixText(const NumaMatrixOutcome& outcome) {
  std::string out = CompareText(outcome.comparison);
  const MatrixPlan& plan = outcome.plan;
  for (const NumaMatrix& m : outcome.matrices) {
    absl::StrAppendFormat(&out, "\nNUMA matrix, %s: median IOPS, p50, faults/MiB, placement (%s)\n", m.variant,
                          m.AllExact() ? "exact in every cell" : "NOT exact in every cell");
    // Rows of text first, then every column as wide as its widest entry.
    std::vector<std::vector<std::string>> rows = {{absl::StrCat("cpu \\ ", ColumnAxis(plan))}};
    for (int mem : plan.mem_nodes) rows[0].push_back(ColumnLabel(plan, mem));
    for (int cpu : plan.cpu_nodes) {
      std::vector<std::string> row = {NodeLabel(plan, cpu)};
      for (int mem : plan.mem_nodes) {
        const MatrixCell* c = CellAt(m, cpu, mem);
        row.push_back(c == nullptr ? "not run"
                                   : absl::StrFormat("%.0f IOPS %.0f ns %.2f/MiB %s", c->iops.median,
                                                     c->p50_ns.median, c->faults_per_mib.median, c->placement));
      }
      rows.push_back(std::move(row));
    }
    std::vector<size_t> widths(rows[0].size(), 0);
    for (const auto& row : rows) {
      for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
    }
    for (const auto& row : rows) {
      for (size_t i = 0; i < row.size(); ++i) {
        absl::StrAppendFormat(&out, "%s%-*s", i == 0 ? "" : " | ", i + 1 == row.size() ? 0 : widths[i], row[i]);
      }
      absl::StrAppend(&out, "\n");
    }
  }
  if (!plan.dax_device.empty()) {
    absl::StrAppend(&out, "\nOn DAX the pages are ", plan.dax_device,
                    "'s wherever --membind points: its node is from sysfs (move_pages calls DAX pages absent).\n");
  }
  return out;
}

json NumaMatrixJson(const NumaMatrixOutcome& outcome) {
  json doc = CompareJson(outcome.comparison);
  const MatrixPlan& plan = outcome.plan;
  json marks = json::object();
  for (const auto& [node, device] : plan.marks) marks[std::to_string(node)] = device;
  json matrices = json::array();
  for (const NumaMatrix& m : outcome.matrices) {
    json cells = json::array();
    for (const MatrixCell& c : m.cells) {
      json page_nodes = json::object();
      for (const auto& [node, pages] : c.page_nodes) page_nodes[node < 0 ? "absent" : std::to_string(node)] = pages;
      cells.push_back({{"cpu_node", c.cpu_node},
                       {"mem_node", c.mem_node},
                       {"iops", SpreadJson(c.iops)},
                       {"clat_p50_ns", SpreadJson(c.p50_ns)},
                       {"faults_per_mib", SpreadJson(c.faults_per_mib)},
                       {"page_nodes", page_nodes},
                       {"page_nodes_source", c.placement_source},
                       {"cpus", c.cpus},
                       {"exact", c.exact},
                       {"placement", c.placement}});
    }
    matrices.push_back({{"variant", m.variant}, {"all_exact", m.AllExact()}, {"cells", cells}});
  }
  doc["numa_matrix"] = {{"cpu_nodes", plan.cpu_nodes},
                        {"mem_nodes", plan.mem_nodes},
                        {"dax_device", plan.dax_device.empty() ? json() : json(plan.dax_device)},
                        {"marks", marks},
                        {"matrices", matrices}};
  return doc;
}

std::string NumaMatrixSvg(const NumaMatrixOutcome& outcome) {
  const MatrixPlan& plan = outcome.plan;
  Heatmap h;
  h.title = "faultbench compare --numa-matrix: " + WorkloadAndRepeats(outcome.comparison);
  h.subtitles.push_back("in " + outcome.comparison.location);
  for (const std::string& line : outcome.comparison.taint) {
    if (line.starts_with("hypervisor")) h.subtitles.push_back(line.substr(0, line.find(" (")));
  }
  h.footer = "shade: median IOPS, in proportion to the panel's highest; red border: pages or workers not where the cell asked";
  for (const NumaMatrix& m : outcome.matrices) {
    HeatmapPanel p;
    p.title = absl::StrCat(m.variant, m.AllExact() ? ": placement exact in every cell" : ": placement NOT exact");
    p.row_axis = "CPU node";
    p.column_axis = ColumnAxis(plan);
    for (int cpu : plan.cpu_nodes) p.row_labels.push_back(NodeLabel(plan, cpu));
    for (int mem : plan.mem_nodes) p.column_labels.push_back(ColumnLabel(plan, mem));
    for (int cpu : plan.cpu_nodes) {
      std::vector<HeatmapCell> row;
      for (int mem : plan.mem_nodes) {
        const MatrixCell* c = CellAt(m, cpu, mem);
        if (c == nullptr) {
          row.push_back({0, {"not run"}, true});
          continue;
        }
        row.push_back({c->iops.median,
                       {absl::StrFormat("%.0f IOPS", c->iops.median), absl::StrFormat("p50 %.0f ns", c->p50_ns.median),
                        absl::StrFormat("%.2f faults/MiB", c->faults_per_mib.median), c->placement},
                       !c->exact});
      }
      p.cells.push_back(std::move(row));
    }
    h.panels.push_back(std::move(p));
  }
  return RenderHeatmapSvg(h);
}

}  // namespace faultbench
