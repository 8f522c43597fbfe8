// A run's timing-free signature: what the kernel did for the workload,
// counted rather than timed. It is exact under emulation, where timings
// mean nothing, and it is what kernel regressions of the DAX PMD path were
// read from (0-day, 2019: minor faults -85%, thp_fault_fallback 666,825 ->
// 74,786, PageTables 1,178,141 -> 149,626 kB).
//
// The machine-wide counters are differences between two readings the run
// takes around the workload alone: when every worker has made and mapped
// its file, and when every worker is done with its I/O while its mapping
// is still in place (run/signature_probe.h); a job file's stonewall stages
// each take their own two readings, and the run's signature adds them up
// (AddCounterDeltas once per stage). Around the whole process they
// would also count its start-up (measured in the DAX VM: pgfault +1,700
// around a run that took 64 faults), and PageTables read after the run
// has already given the page tables back.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "faultbench/measure/dax_trace.h"
#include "faultbench/result/worker_result.h"
#include "faultbench/sysfacts/vm_counters.h"
#include "pmstore/mapping/verify.h"

namespace faultbench {

// The folios of one size the histograms found against what the per-size
// counters say the workload allocated: anon_fault_alloc + shmem_alloc -
// split. They agree unless something else (another process, a split
// after the count) changed folios of that size during the run.
struct FolioCheck {
  uint64_t size = 0;         // bytes
  uint64_t histogram = 0;    // folios the workers' histograms hold
  int64_t allocated = 0;     // allocations minus splits over the workload
  bool agree() const { return static_cast<int64_t>(histogram) == allocated; }
};

// The folio checks of `folios` (a run's summed histograms) against
// `mthp_deltas`: one per size above 4 KiB that either names, in size order.
std::vector<FolioCheck> CheckFolios(const std::map<uint64_t, uint64_t>& folios,
                                    const std::map<std::string, int64_t>& mthp_deltas);

struct RunSignature {
  // /proc/vmstat over the workload: the counters IsSignatureCounter keeps
  // that this kernel has, by name ("thp_fault_fallback", "pgfault", "numa_hit").
  std::map<std::string, int64_t> vmstat_deltas;
  // The per-size THP counters over the workload, by "SIZE.counter"
  // ("64K.anon_fault_alloc", "2M.split"): every event counter of every
  // size the kernel offers (sysfacts/thp.h); empty before 6.8.
  std::map<std::string, int64_t> mthp_deltas;
  // /proc/meminfo PageTables while the mappings were live, and its growth
  // since the start line (the page tables this run built); nullopt when
  // meminfo has no PageTables line.
  std::optional<uint64_t> page_tables_kb;
  std::optional<int64_t> page_tables_delta_kb;
  // The fs_dax tracepoint tallies of the workers that were traced (DAX
  // files on kernels without PAGEMAP_SCAN); nullopt when none was.
  std::optional<DaxTraceTally> dax_trace;
  // The workers' own faults (getrusage, exact per thread) per MiB of
  // distinct bytes touched, and the verified shares of PMD and PUD bytes.
  uint64_t faults = 0;
  uint64_t bytes_accessed = 0;
  double faults_per_mib = 0;
  bool verified = false;  // every worker's mapping was read back
  double pmd_share = 0, pud_share = 0;
  // The folios behind the workers' ranges, summed (pagemap + kpageflags,
  // root only): folio size in bytes -> folios. Empty when none was read.
  std::map<uint64_t, uint64_t> folios;
  // For anonymous memory (every page of it allocated by the workload),
  // each folio size above 4 KiB checked against its counters.
  std::vector<FolioCheck> folio_checks;
};

// The /proc/vmstat counters a signature keeps: thp_fault_alloc,
// thp_fault_fallback, thp_file_alloc, thp_file_mapped, pgfault, pgmajfault
// and every numa_* counter.
bool IsSignatureCounter(std::string_view name);

// Adds the counters' change from `before` to `after` (taken around one set
// of workers) into `signature`, and sets its live PageTables.
void AddCounterDeltas(const VmCounters& before, const VmCounters& after, RunSignature& signature);

// Sets the parts that come from the workers: faults per MiB, the verified
// PMD and PUD shares, the summed fs_dax tallies.
void SetWorkerParts(const std::vector<WorkerResult>& workers, RunSignature& signature);

}  // namespace faultbench
