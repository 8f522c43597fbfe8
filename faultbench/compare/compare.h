// `faultbench compare`: the same workload once per mode (pte, pmd, auto),
// engine and NUMA set, repeated, in alternating order, each on a fresh file;
// then medians with their spread, and a verdict on PMD versus PTE that only
// calls a difference when it exceeds the spread across repeats.
//
// Alternating the order (A B, B A, A B, ...) keeps a slow drift of the
// machine (page cache, THP pool, thermal) from favouring one mode; fresh
// files keep an earlier mode's page tables and 4 KiB entries from carrying
// over, unless --reuse-file asks for exactly that to reproduce it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "faultbench/doctor/doctor.h"
#include "faultbench/report/report.h"
#include "faultbench/stats/summary.h"
#include "nlohmann/json.hpp"
#include "faultbench/workload/job_options.h"

namespace faultbench {

struct NumaSet {
  std::string label;  // as the user wrote it, "default" when none
  NumaOptions options;
  // A cell of --numa-matrix (numa_matrix.h): its CPU node and memory node
  // (on DAX, the device's node); -1 for sets of --numa-sets.
  int cpu_node = -1, mem_node = -1;
};

// What doctor says about where the job's files live: its directory, or its
// file (the file's directory while the file is still to be made).
absl::StatusOr<doctor::DoctorReport> ExamineLocation(const JobOptions& job);

// "cpunodebind=0 membind=1;cpunodebind=0 membind=0": sets separated by ';',
// each a space-separated list of numactl-style options.
absl::StatusOr<std::vector<NumaSet>> ParseNumaSets(const std::string& text);

struct CompareConfig {
  JobOptions job;  // the workload; its mapping and engine are replaced per variant
  std::vector<pmstore::mapping::PageIntent> modes = {pmstore::mapping::PageIntent::kPte,
                                                     pmstore::mapping::PageIntent::kPmd};
  std::vector<pmstore::mapping::Engine> engines;  // empty: the job's engine
  std::vector<NumaSet> numa_sets;                 // empty: the job's NUMA options
  int repeat = 3;
  // --repeat=auto: rounds in alternating order until every verdict calls a
  // difference (3 rounds at least) or `repeat_budget_s` would be exceeded
  // (at most kMaxAutoRounds); `repeat` is then ignored.
  bool repeat_auto = false;
  double repeat_budget_s = 60;
  // One unmeasured run of the first variant on a file of its own first, so
  // that memory the hypervisor took back while the machine was idle (free
  // page reporting) is not charged to the first measured run.
  bool warmup = true;
  bool reuse_file = false;
  OutputFormat format = OutputFormat::kNormal;
  std::string output_path;
  std::string plot_path;  // "" = no plot
  std::string save_json_path;  // "" = none; else the JSON document also goes here
  bool progress = true;
  bool numa_matrix = false;  // every (CPU node, memory node) pair: RunNumaMatrix (numa_matrix.h)
};

// One variant's figures over its repeats (every value kept: the verdict's
// rule and the plot's dots need them).
using Spread = stats::Summary;

struct VariantSummary {
  std::string label;  // "pmd/mmap", "pte/pmem2/membind=1"
  pmstore::mapping::PageIntent mode = pmstore::mapping::PageIntent::kPte;
  pmstore::mapping::Engine engine = pmstore::mapping::Engine::kMmap;
  std::string numa_label;
  int cpu_node = -1, mem_node = -1;  // its NumaSet's
  Spread iops, bw_bytes, p50_ns, p99_ns, faults_per_mib, pmd_share, pud_share;
  std::vector<std::string> files;
  // Where the pages and the workers were, over every repeat and worker:
  // sampled pages by node (-1 absent), how that was found, the CPUs used.
  std::map<int, uint64_t> page_nodes;
  std::string placement_source;
  std::vector<int> cpus;
};

struct Verdict {
  bool available = false;  // both pte and pmd were run
  bool called = false;     // a difference was called (faster, slower, REGRESSION)
  double pmd_over_pte = 0;  // of the median IOPS; not set when judged on the signature
  std::string text;        // "PMD faster x7.62", "no significant difference", "REGRESSION: ..."
  std::string judged_on = "timings";  // or "signature (emulation: qemu TCG)"
  std::string evidence;    // the rule's evidence (stats::ChangeJudgement::Evidence)
  std::vector<std::string> causes;  // for a regression: what the doctor found
};

// The verdict for one (engine, numa) group on IOPS; `pte` and `pmd` may be
// null. A difference is called by stats::JudgeChange (ranges separate, 3 %
// floor, 3 repeats a mode at least). Under emulation compare judges the
// signature instead (signature_verdict.h).
Verdict JudgePmdOverPte(const VariantSummary* pte, const VariantSummary* pmd);

// What a compare produced, for the renderers (compare_report.h).
struct GroupVerdict {
  std::string group;  // "mmap", "mmap/membind=1"
  Verdict verdict;
};
struct CompareOutcome {
  std::string location;  // "./data (ext4, page cache)": where the files lived
  std::string emulation;  // "qemu TCG" when the runs ran under emulation: judged on the signature
  int rounds = 0;         // repeats each variant ran
  std::string repeat_note;  // --repeat=auto: decided, or why not within the budget
  std::vector<VariantSummary> variants;
  // Modes of --modes that what backs the files cannot give (device DAX and
  // hugetlbfs have one page size): "pte: --mapping=pte asks for ...".
  std::vector<std::string> skipped;
  std::vector<GroupVerdict> groups;
  std::vector<std::string> taint;  // the runs' taint, merged (MergeTaint, taint/taint.h)
  nlohmann::json runs = nlohmann::json::array();  // one full run document per run
};

// Runs every variant --repeat times and judges them. Usage errors (checked
// before the first run) are returned; a run that fails sets `exit_code` to 1
// and is reported on stderr, the others still count. A mode the backing
// cannot give is skipped and named in `skipped`; when no mode is left, that
// is the error.
absl::StatusOr<CompareOutcome> RunComparison(const CompareConfig& config, int& exit_code);

}  // namespace faultbench
