#include "faultbench/compare/numa_matrix.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "faultbench/numa/numa_policy.h"
#include "pmstore/base/status_macros.h"

namespace faultbench {
namespace {

using pmstore::mapping::EngineName;
using pmstore::mapping::PageIntentName;

// Nodes of this machine with CPUs, and with memory (libnuma's view).
absl::Status ReadNodes(MatrixPlan& plan) {
  PMSTORE_ASSIGN_OR_RETURN(const std::vector<int> nodes, ParseNodeSpec("all"));
  for (int node : nodes) {
    plan.node_cpus[node] = NodeCpus(node);
    if (!plan.node_cpus[node].empty()) plan.cpu_nodes.push_back(node);
    plan.mem_nodes.push_back(node);
  }
  if (plan.cpu_nodes.empty()) plan.cpu_nodes = nodes;  // no libnuma CPU view: every node, as numactl would try
  return absl::OkStatus();
}

// The device behind the job's files, when there is one: its node is
// marked, and on DAX it is the memory axis.
absl::Status ReadDevice(const JobOptions& job, MatrixPlan& plan) {
  auto report = ExamineLocation(job);
  if (!report.ok()) return absl::OkStatus();  // a run will say what is wrong with the path
  std::string device;
  int sysfs_node = -1;
  bool dax = false;
  if (report->fixed.devdax) {
    device = report->fixed.devdax->name;
    sysfs_node = report->fixed.devdax->numa_node;
    dax = true;
  } else if (!report->block.device.empty()) {
    device = report->block.device;
    sysfs_node = report->block.numa_node;
    dax = report->page_source == "dax";
  }
  if (device.empty()) return absl::OkStatus();
  auto node = NodeFromSysfs(sysfs_node, device);
  if (!node.ok()) {
    if (dax) return node.status();  // the memory axis would be unknown
    return absl::OkStatus();        // only the mark is lost
  }
  plan.marks[*node] = report->fixed.devdax ? device : "block:" + device;
  if (dax) {
    plan.dax_device = device;
    plan.mem_nodes = {*node};
  }
  return absl::OkStatus();
}

std::string CpuRange(const std::vector<int>& cpus) { return absl::StrJoin(cpus, ","); }

// Exact: every sampled page on the cell's memory node, every worker on its
// CPU node's CPUs.
void JudgePlacement(const MatrixPlan& plan, MatrixCell& cell) {
  uint64_t pages = 0, on_node = 0;
  for (const auto& [node, count] : cell.page_nodes) {
    pages += count;
    if (node == cell.mem_node) on_node += count;
  }
  const auto found = plan.node_cpus.find(cell.cpu_node);
  const std::vector<int> empty;
  const std::vector<int>& node_cpus = found == plan.node_cpus.end() ? empty : found->second;
  const bool cpus_ok = !cell.cpus.empty() && std::all_of(cell.cpus.begin(), cell.cpus.end(), [&](int cpu) {
    return std::find(node_cpus.begin(), node_cpus.end(), cpu) != node_cpus.end();
  });
  std::vector<std::string> off;
  if (pages == 0 || on_node != pages) {
    std::vector<std::string> nodes;
    for (const auto& [node, count] : cell.page_nodes) {
      nodes.push_back(absl::StrCat(node < 0 ? std::string("absent") : absl::StrCat(node), "=", count));
    }
    off.push_back(pages == 0 ? "no pages sampled" : "pages " + absl::StrJoin(nodes, " "));
  }
  if (!cpus_ok) off.push_back(absl::StrCat("cpus ", CpuRange(cell.cpus), " are not node ", cell.cpu_node, "'s"));
  cell.exact = off.empty();
  cell.placement = cell.exact ? "exact" : absl::StrJoin(off, "; ");
}

}  // namespace

absl::StatusOr<MatrixPlan> PlanNumaMatrix(const JobOptions& job) {
  if (job.numa.any()) {
    return absl::InvalidArgumentError(
        "--numa-matrix sets --cpunodebind and --membind for each cell: drop --cpunodebind, --membind, --preferred "
        "and --interleave");
  }
  MatrixPlan plan;
  PMSTORE_RETURN_IF_ERROR(ReadNodes(plan));
  PMSTORE_RETURN_IF_ERROR(ReadDevice(job, plan));
  return plan;
}

std::vector<NumaSet> MatrixSets(const MatrixPlan& plan) {
  std::vector<NumaSet> sets;
  for (int cpu : plan.cpu_nodes) {
    for (int mem : plan.mem_nodes) {
      NumaSet set;
      set.cpu_node = cpu;
      set.mem_node = mem;
      set.options.cpunodebind = absl::StrCat(cpu);
      if (plan.dax_device.empty()) {
        set.options.membind = absl::StrCat(mem);
        set.label = absl::StrCat("cpu", cpu, "/mem", mem);
      } else {
        set.label = absl::StrCat("cpu", cpu, "/", plan.dax_device);  // the device's pages, whatever the policy
      }
      sets.push_back(set);
    }
  }
  return sets;
}

std::vector<NumaMatrix> BuildMatrices(const MatrixPlan& plan, const std::vector<VariantSummary>& variants) {
  std::vector<NumaMatrix> matrices;
  for (const VariantSummary& v : variants) {
    if (v.cpu_node < 0) continue;
    const std::string name = absl::StrCat(std::string(PageIntentName(v.mode)), "/", std::string(EngineName(v.engine)));
    auto matrix = std::find_if(matrices.begin(), matrices.end(), [&](const NumaMatrix& m) { return m.variant == name; });
    if (matrix == matrices.end()) matrix = matrices.insert(matrices.end(), NumaMatrix{name, {}});
    MatrixCell cell;
    cell.cpu_node = v.cpu_node;
    cell.mem_node = v.mem_node;
    cell.iops = v.iops;
    cell.p50_ns = v.p50_ns;
    cell.faults_per_mib = v.faults_per_mib;
    cell.page_nodes = v.page_nodes;
    cell.placement_source = v.placement_source;
    cell.cpus = v.cpus;
    JudgePlacement(plan, cell);
    matrix->cells.push_back(std::move(cell));
  }
  for (NumaMatrix& m : matrices) {
    std::sort(m.cells.begin(), m.cells.end(), [](const MatrixCell& a, const MatrixCell& b) {
      return std::pair(a.cpu_node, a.mem_node) < std::pair(b.cpu_node, b.mem_node);
    });
  }
  return matrices;
}

absl::StatusOr<NumaMatrixOutcome> RunNumaMatrix(const CompareConfig& config) {
  if (!config.numa_sets.empty()) {
    return absl::InvalidArgumentError("--numa-matrix and --numa-sets both choose the NUMA sets: give one of them");
  }
  NumaMatrixOutcome outcome;
  PMSTORE_ASSIGN_OR_RETURN(outcome.plan, PlanNumaMatrix(config.job));
  CompareConfig cells = config;
  cells.numa_sets = MatrixSets(outcome.plan);
  PMSTORE_ASSIGN_OR_RETURN(outcome.comparison, RunComparison(cells));
  outcome.matrices = BuildMatrices(outcome.plan, outcome.comparison.variants);
  return outcome;
}

}  // namespace faultbench
