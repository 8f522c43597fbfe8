// What one worker measured: plain data handed from the run (run/) to the
// reporters (report/) and to compare/, none of which sees another's code.
// The run fills it in; everyone above reads it.
//
// A reporting group's aggregate (fio's group_reporting) is computed from
// these by report_groups.h; the timing-free signature of a run belongs
// beside this file, as data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "faultbench/measure/counters.h"
#include "faultbench/measure/dax_trace.h"
#include "faultbench/measure/latency_histogram.h"
#include "faultbench/numa/numa_policy.h"
#include "faultbench/workload/job_options.h"
#include "pmstore/mapping/verify.h"

namespace faultbench {

struct DirectionStats {
  uint64_t ios = 0;
  uint64_t bytes = 0;
  LatencyHistogram latency;  // in clock ticks; see WorkerResult::ns_per_tick
};

// One measured stretch of a worker's run.
struct PhaseResult {
  std::string name;        // "fault", "steady" or "all"
  double runtime_s = 0;    // wall time of the phase
  DirectionStats read, write;
  uint64_t bytes_first_touched = 0;  // distinct bytes this phase touched for the first time
  uint64_t bytes_accessed = 0;       // distinct bytes touched, capped at the worker's range
  RusageSnapshot rusage;
  PerfSnapshot perf;

  // Faults (minor + major) per MiB of distinct bytes accessed in the phase.
  double FaultsPerMib() const;
};

// Adds everything `part` counted into `total`, except runtime_s (phases
// add theirs, a group takes its longest member's). The first part added
// sets the perf counters: a counter missing in any part is missing in the
// total, never a partial sum.
void AddCounters(PhaseResult& total, const PhaseResult& part, bool first);

// Where the backing has one page size (device DAX: its align; hugetlbfs:
// its pagesize), the census is that page size over the present bytes, and
// this is what it rests on: no reader of page tables tells a 1 GiB leaf
// from a 2 MiB one (PAGEMAP_SCAN's PAGE_IS_HUGE is either), smaps'
// KernelPageSize is the setting, and kpageflags has no page for DAX.
struct PageSizeEvidence {
  uint64_t page_size = 0;        // bytes
  std::string backing;           // "device DAX /dev/dax0.0 (align 1.0 GiB)"
  std::string presence;          // how the present bytes were found: "pagemap_scan", "smaps", or
                                 // "touched" (device DAX maps every byte touched, or raises SIGBUS)
  uint64_t faults = 0;           // the worker's page faults while it measured (ramp included)
  uint64_t expected_faults = 0;  // one per page of page_size it touched
  // At most one fault per page (a few more for the rest of the process):
  // the faults agree with the page size. Sanitizer shadow faults break it.
  bool FaultsAgree() const { return faults <= 2 * expected_faults + 16; }
};

struct MappingOutcome {
  pmstore::mapping::PageIntent requested = pmstore::mapping::PageIntent::kAuto;
  std::string memory;       // what was mapped: "file shared", "file private", "anon private", "anon shared"
  pmstore::mapping::Engine engine = pmstore::mapping::Engine::kMmap;
  std::string granularity;  // "page", "cache_line", "byte"
  std::string writes;       // how each write reaches the file (engine/io_engine.h DescribeWrites)
  bool map_sync = false;
  bool dax = false;
  bool verified = false;    // census below is valid
  std::string verify_error; // why not, when !verified
  pmstore::mapping::MappingCensus census;
  // The fs_dax fault tallies behind a `dax_trace` census (runner.cc).
  std::optional<DaxTraceTally> dax_trace;
  // Behind a `page_size` census (device DAX, hugetlbfs).
  std::optional<PageSizeEvidence> page_size;
  // The folios behind the range, by size (pmstore/mapping/verify.h
  // ReadFolioSizes: pagemap + kpageflags, root only); why not, when absent.
  std::optional<pmstore::mapping::FolioCensus> folios;
  std::string folios_error;
  uint64_t PresentBytes() const;  // pud + pmd + pte
  double PmdShare() const;  // pmd / present, 0 when nothing is present
  double PudShare() const;  // pud / present
  // The share of the present bytes the folios read back hold in folios of
  // `size` (the zero page and pages without a struct page count as none);
  // 0 without folios. FolioShare(): of the requested folio size.
  double FolioShareOf(uint64_t size) const;
  double FolioShare() const { return FolioShareOf(requested.folio_size()); }
  // True when the verified mapping contradicts the request (pmd or pud
  // asked and < 95% of that size, pte asked and any huge entry, or a folio
  // size asked and any huge entry or, where the folios were read, < 95% of
  // the bytes in folios of that size).
  bool DiffersFromRequest() const;
};

// What the job's page-cache options did to the file before its first I/O.
struct PageCacheOutcome {
  bool invalidate = false;          // invalidate= as it applied
  std::string invalidate_source;    // "set", "fio's default in job files", ...
  std::string action;               // what was done, or why nothing was
  std::string fadvise;              // the access advice given: "random", "sequential" or "none"
  std::string fadvise_source;
  std::optional<uint64_t> resident_bytes;  // of the worker's range, cached when its I/O began (mincore)
};

struct NumaOutcome {
  std::vector<int> cpus;  // the worker's CPU affinity while it ran
  MemPolicy policy = MemPolicy::kDefault;
  std::vector<int> nodes;
  PagePlacement placement;
};

struct WorkerResult {
  JobOptions job;
  int job_index = 0;     // position of the job (section) in the run
  int worker_index = 0;  // 0..numjobs-1 within the job
  int group_id = 0;      // fio's groupid: stonewall and new_group start a new one
  int stage = 0;         // stonewalls run one after another: the stage this worker ran in
  uint64_t seed = 0;     // of its random offsets
  uint64_t start_ns = 0, end_ns = 0;  // CLOCK_MONOTONIC around its measured I/O (after setup and ramp)
  std::string file;
  uint64_t range_bytes = 0;  // bytes of the file this worker covers
  double ns_per_tick = 1.0;

  PhaseResult total;  // every measured I/O (after ramp); fio's job-level numbers
  std::vector<PhaseResult> phases;  // fault then steady, when both exist
  MappingOutcome mapping;
  PageCacheOutcome page_cache;
  NumaOutcome numa;
  std::string perf_unavailable;  // why dTLB counters are missing; "" when present
  std::vector<std::string> doctor_reasons;  // when the mapping differs from the request
  std::vector<std::string> notes;  // the job's options that change nothing here, one line per reason
  std::string error;  // non-empty: the worker failed, other fields may be partial
  bool failed_in_setup = false;  // before any I/O: placement, file, mapping
  bool bus_error = false;  // a SIGBUS ended the I/O: the file shrank under the mapping
};

}  // namespace faultbench
