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

#include <vector>

#include "absl/status/statusor.h"
#include "faultbench/compare/compare.h"

namespace faultbench {

// Reads the machine's nodes and what backs the job's files. InvalidArgument
// when the job already pins NUMA (the matrix sets it per cell).
absl::StatusOr<MatrixPlan> PlanNumaMatrix(const JobOptions& job);

// One NUMA set per cell, CPU node major: "cpu0/mem1" (on DAX "cpu0/pmem0").
std::vector<NumaSet> MatrixSets(const MatrixPlan& plan);

// The matrices of a finished comparison over MatrixSets(plan): one per mode
// and engine.
std::vector<NumaMatrix> BuildMatrices(const MatrixPlan& plan, const std::vector<VariantSummary>& variants);

// Plans, runs (RunComparison) and builds the matrices. Errors as RunComparison's.
absl::StatusOr<NumaMatrixOutcome> RunNumaMatrix(const CompareConfig& config);

}  // namespace faultbench
