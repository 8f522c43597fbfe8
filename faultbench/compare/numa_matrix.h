// `faultbench compare --numa-matrix`: the workload once per (CPU node,
// memory node) pair, the NUMA-pinned matrix users run with numactl, and
// the matrix of what each cell measured beside where its pages and its
// workers really were.
//
// A cell runs with --cpunodebind=C --membind=M (compare's variants, repeats
// and alternating order, RunComparison). Its placement is exact when every
// sampled page was on M and every worker ran on C's CPUs.
//
// On DAX (fsdax files, device DAX) the pages belong to the device wherever
// the memory policy points, and move_pages(2) calls every one of them
// absent: the memory axis is then the device alone, no --membind is set, and
// a cell's pages are on the device's node as sysfs says (numa/:
// AttributeToDaxDevice). The matrix is CPU node x the device.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "faultbench/compare/compare.h"

namespace faultbench {

struct MatrixPlan {
  std::vector<int> cpu_nodes;  // nodes with CPUs
  std::vector<int> mem_nodes;  // nodes with memory; on DAX the device's node alone
  std::string dax_device;      // "pmem0", "dax0.0" when the pages are a device's, else ""
  // The device behind the files, by its node: "block:pmem0" (numactl's
  // name for it), "dax0.0".
  std::map<int, std::string> marks;
  std::map<int, std::vector<int>> node_cpus;  // for the exactness of each cell
};

// Reads the machine's nodes and what backs the job's files. InvalidArgument
// when the job already pins NUMA (the matrix sets it per cell).
absl::StatusOr<MatrixPlan> PlanNumaMatrix(const JobOptions& job);

// One NUMA set per cell, CPU node major: "cpu0/mem1" (on DAX "cpu0/pmem0").
std::vector<NumaSet> MatrixSets(const MatrixPlan& plan);

struct MatrixCell {
  int cpu_node = -1, mem_node = -1;
  Spread iops, p50_ns, faults_per_mib;
  std::map<int, uint64_t> page_nodes;  // sampled pages by node over the repeats (-1: absent)
  std::string placement_source;        // "move_pages", "device pmem0 (sysfs numa_node)"
  std::vector<int> cpus;               // the workers' CPUs
  bool exact = false;
  std::string placement;  // "exact", else what was off: "pages 0=512 1=512", "cpus 0-1 are not node 0's"
};

struct NumaMatrix {
  std::string variant;  // "pmd/mmap": the mode and engine this matrix ran
  std::vector<MatrixCell> cells;  // CPU node major, in the plan's order
  bool AllExact() const;
};

// The matrices of a finished comparison over MatrixSets(plan): one per mode
// and engine.
std::vector<NumaMatrix> BuildMatrices(const MatrixPlan& plan, const std::vector<VariantSummary>& variants);

struct NumaMatrixOutcome {
  CompareOutcome comparison;
  MatrixPlan plan;
  std::vector<NumaMatrix> matrices;
};

// Plans, runs (RunComparison) and builds the matrices. Errors as RunComparison's.
absl::StatusOr<NumaMatrixOutcome> RunNumaMatrix(const CompareConfig& config, int& exit_code);

}  // namespace faultbench
