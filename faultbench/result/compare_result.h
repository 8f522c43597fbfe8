// What a comparison measured and judged, as plain data: compare/ runs the
// variants and fills this in; report/ renders it (text, JSON, SVG) and
// cli/ prints it. Nothing here is rendered text, except the causes the
// doctor gives in its own words and the reasons a mode was not run.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "faultbench/result/run_result.h"
#include "faultbench/stats/change.h"
#include "faultbench/stats/summary.h"
#include "faultbench/workload/job_options.h"

namespace faultbench {

// One variant's figures over its repeats (every value kept: the verdict's
// rule and the plot's dots need them).
using Spread = stats::Summary;

struct VariantSummary {
  std::string label;  // "pmd/mmap", "pte/pmem2/membind=1"
  pmstore::mapping::PageIntent mode = pmstore::mapping::PageIntent::kPte;
  pmstore::mapping::Engine engine = pmstore::mapping::Engine::kMmap;
  std::string numa_label;
  int cpu_node = -1, mem_node = -1;  // its NUMA set's (a --numa-matrix cell), else -1
  Spread iops, bw_bytes, p50_ns, p99_ns, faults_per_mib, pmd_share, pud_share;
  // For a folio size: the share of the bytes in folios of that size (where
  // the folios were read back: root); 0 otherwise.
  Spread folio_share;
  std::vector<std::string> files;
  // Where the pages and the workers were, over every repeat and worker:
  // sampled pages by node (-1 absent), how that was found, the CPUs used.
  std::map<int, uint64_t> page_nodes;
  std::string placement_source;
  std::vector<int> cpus;
};

// What a verdict found, for one pair of variants of one group (engine and
// NUMA set): the base (the group's smallest size, pte) against a larger
// size (pmd, or a folio size).
enum class VerdictKind {
  kNoPair,        // the group lacks one of the two
  kTooFewRuns,    // fewer than 3 repeats on a side: no spread known, nothing called
  // On timings (a real CPU): median IOPS, LKP's rule (ranges separate, 3 % floor).
  kFaster,        // every variant run beat every base run
  kSlower,        // every variant run lost: a regression
  kNoDifference,  // ranges overlap, or the difference is under the floor
  // On the signature (under emulation, where timings mean nothing):
  kMappedAsAsked,  // mapped at the variant's size, fewer faults per MiB than the base
  kNotMapped,      // the variant's runs were not mapped at their size: a regression
  kMoreFaults,     // more faults per MiB than the base: a regression
  kSameFaults,     // no significant difference in faults per MiB
};

struct Verdict {
  VerdictKind kind = VerdictKind::kNoPair;
  pmstore::mapping::PageIntent base = pmstore::mapping::PageIntent::kPte;
  pmstore::mapping::PageIntent variant = pmstore::mapping::PageIntent::kPmd;
  std::string emulation;  // "": judged on timings; else the emulator ("qemu TCG"): judged on the signature
  double ratio = 0;       // median IOPS, variant over base (timings)
  // The rule's judgement of base against variant: IOPS on timings, faults
  // per MiB on the signature. Its Evidence() is the verdict's evidence.
  stats::ChangeJudgement change;
  int base_runs = 0, variant_runs = 0;
  double base_faults_per_mib = 0, variant_faults_per_mib = 0;  // medians
  double faults_factor = 0;  // mean faults per MiB, base over variant
  double variant_share = 0;  // median share of the variant's bytes mapped at its size (PMD, PUD, its folios)
  // For a regression, or a variant not mapped at its size: what the doctor
  // found for its files, in its words.
  std::vector<std::string> causes;

  bool available() const { return kind != VerdictKind::kNoPair; }
  bool judged_on_timings() const { return emulation.empty(); }
  // A difference was called (faster, slower, mapped, not mapped, more faults).
  bool called() const;
  bool regression() const;
};

struct GroupVerdict {
  std::string group;  // "mmap", "mmap/membind=1"
  Verdict verdict;
};

// How many rounds ran, and for --repeat=auto whether the verdicts were
// decided within the budget.
struct RepeatOutcome {
  bool is_auto = false;
  int rounds = 0;
  bool decided = false;       // auto: every verdict with a pair called a difference
  bool most_rounds = false;   // auto: stopped at kMaxAutoRounds
  double elapsed_s = 0, budget_s = 0;
};

// One measured run of a comparison.
struct CompareRun {
  std::string variant;  // its VariantSummary's label
  pmstore::mapping::PageIntent mode = pmstore::mapping::PageIntent::kPte;
  pmstore::mapping::Engine engine = pmstore::mapping::Engine::kMmap;
  std::string numa;
  int repeat = 0;
  RunResult result;
};

// A run that failed, or a file --unlink could not delete: what and why.
struct CompareFailure {
  std::string what;  // the variant's label, or "--unlink"
  std::string error;
};

struct CompareOutcome {
  JobOptions workload;    // the job every variant ran (its mapping and engine replaced per variant)
  bool reuse_file = false;
  std::string location;   // "./data (ext4, page cache)": where the files lived
  std::string emulation;  // "qemu TCG" when the runs ran under emulation: judged on the signature
  RepeatOutcome repeats;
  std::vector<VariantSummary> variants;
  // Modes that what backs the files cannot give (device DAX and hugetlbfs
  // have one page size): "pte: --mapping=pte asks for ...".
  std::vector<std::string> skipped;
  std::vector<GroupVerdict> groups;
  std::vector<std::string> taint;  // the runs' taint, merged (MergeTaint, taint/taint.h)
  std::vector<CompareRun> runs;    // every measured run, in the order they ran
  std::vector<CompareFailure> failures;
};

// --- compare --numa-matrix ----------------------------------------------------

// The machine's nodes and what backs the files, for a matrix of every
// (CPU node, memory node) pair.
struct MatrixPlan {
  std::vector<int> cpu_nodes;  // nodes with CPUs
  std::vector<int> mem_nodes;  // nodes with memory; on DAX the device's node alone
  std::string dax_device;      // "pmem0", "dax0.0" when the pages are a device's, else ""
  // The device behind the files, by its node: "block:pmem0" (numactl's
  // name for it), "dax0.0".
  std::map<int, std::string> marks;
  std::map<int, std::vector<int>> node_cpus;  // for the exactness of each cell
};

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

struct NumaMatrixOutcome {
  CompareOutcome comparison;
  MatrixPlan plan;
  std::vector<NumaMatrix> matrices;
};

}  // namespace faultbench
