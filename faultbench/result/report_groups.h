// fio's reporting entries and run status groups, as data: what fio's
// show_run_stats (stat.c) computes before it prints anything, so the text
// and JSON reporters only render.
//
// Entries: one per worker, except that consecutive workers of one group
// whose jobs set group_reporting merge into one entry (fio's threadstats),
// named after its first member. An entry adds its members up as fio's
// sum_thread_stats does: I/Os, bytes, latency histograms, CPU time,
// faults and context switches add up; the runtime of the entry's I/O is
// its longest member's, so IOPS and bandwidth are the group's rate, while
// job_runtime (and the CPU percentages over it) sums the members'. The
// verified mapping adds up too: pmd, pud and pte bytes of every member.
//
// Run status groups (fio's "Run status group N (all jobs)"), per groupid
// and direction: the entries' bytes, the shortest and longest entry
// runtime, the lowest and highest entry bandwidth, and the aggregate
// bandwidth, bytes over the longest runtime.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "faultbench/result/run_result.h"

namespace faultbench {

struct MappingTotals {
  uint64_t pmd_bytes = 0;
  uint64_t pud_bytes = 0;
  uint64_t pte_bytes = 0;
  int unverified = 0;  // members whose mapping could not be read back
  std::map<uint64_t, uint64_t> folios;  // folio size -> folios, over the members whose folios were read
  double PmdShare() const;
};

struct ReportEntry {
  std::string name;
  int group_id = 0;
  std::vector<size_t> members;  // indices into RunResult::workers, in run order
  bool aggregated = false;      // group_reporting merged its members (one or more)
  PhaseResult total;            // runtime_s: the longest member's
  double job_runtime_s = 0;     // the members' runtimes added up (fio's job_runtime)
  double ns_per_tick = 1.0;     // the members' mean
  MappingTotals mapping;
  int errors = 0;               // members that failed
  std::string first_error;
};

// The entries of `run`, in fio's order.
std::vector<ReportEntry> ReportEntries(const RunResult& run);

struct GroupRunStatus {
  struct Direction {
    uint64_t bytes = 0;
    double min_runtime_s = 0, max_runtime_s = 0;
    double min_bw = 0, max_bw = 0;  // bytes per second of one entry
    double aggregate_bw = 0;        // bytes / max_runtime_s
  };
  int group_id = 0;
  Direction read, write;
};

// One per group that has entries, by groupid.
std::vector<GroupRunStatus> RunStatusGroups(const std::vector<ReportEntry>& entries);

}  // namespace faultbench
