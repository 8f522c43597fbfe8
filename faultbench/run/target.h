// What a worker maps: anonymous memory (--anon: private or shared, of the
// worker's file size, nothing made, nothing cached), or a file: made as
// fallocate= says, its cached pages dropped
// as invalidate= says, advised as fadvise_hint= says, and mapped with the
// job's page-size intent and engine. The one place that looks at, makes,
// opens and maps a job's target: a file, or a device DAX device
// (/dev/daxX.Y), which is one more branch in each function here. A device
// is never made (it is what it is), has no page cache (invalidate= and
// fadvise_hint= do not apply), and is mapped whole, as a file is.
//
// fio's order (ioengines.c td_io_open_file, engines/mmap.c), kept here:
// open, invalidate (fio: POSIX_FADV_DONTNEED; here fdatasync first, so a
// dirty page from an earlier run is dropped too instead of staying cached),
// fadvise RANDOM or SEQUENTIAL by the job's rw, map, then the mmap engine's
// own madvise of the same kind. fio skips all three for its libpmem and
// dev-dax engines (they are FIO_DISKLESSIO), and so does this.
//
// A mapping keeps its pages: POSIX_FADV_DONTNEED leaves pages that are
// mapped alone, which is why fio's later invalidations of a time_based job
// (when it wraps around the file) change nothing for a mapped file, and
// why they are not repeated here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "faultbench/result/worker_result.h"
#include "faultbench/sysfacts/fixed_page_size.h"
#include "faultbench/workload/job_options.h"
#include "pmstore/mapping/mapping.h"
#include "pmstore/mapping/pool_file.h"

namespace faultbench {

// What a job's target already is, before the run: its size (what size=N%
// and a job without size= take) and the bytes allocated to it (what the
// free-space check does not ask for again); zeros when it does not exist.
// A device DAX device's size is its sysfs size, all of it allocated.
struct ExistingTarget {
  uint64_t size = 0;
  uint64_t allocated = 0;
};
ExistingTarget StatTarget(const std::string& path);

// The bytes a target of `size` bytes takes on what backs it: whole pages
// where the backing fixes the page size (hugetlbfs pages, device DAX
// aligns), else whole 2 MiB (PoolFile's rounding).
uint64_t PreparedSize(uint64_t size, const FixedPageSize& fixed);

// Makes the file at `path` at least PreparedSize(size) bytes, creating it
// when missing: preallocated for fallocate=native|posix|keep, sparse for
// none|truncate. Nothing for a device DAX device. Called once per file, by
// the worker that creates it, before any worker opens it.
absl::Status PrepareTargetFile(const std::string& path, uint64_t size, Fallocate mode, const FixedPageSize& fixed);

struct Target {
  std::unique_ptr<pmstore::mapping::PoolFile> file;  // null for anonymous memory
  std::unique_ptr<pmstore::mapping::Mapping> mapping;
};

// Opens the prepared file (or the device) at `path`, sets its page-cache
// state and maps it; `page_cache` records what applied and why. For an
// --anon job maps `anon_bytes` of anonymous memory instead (`path` unused).
absl::StatusOr<Target> OpenAndMapTarget(const JobOptions& job, const std::string& path, const FixedPageSize& fixed,
                                        uint64_t anon_bytes, PageCacheOutcome& page_cache);

// Bytes of [start, start + length) in the page cache now (mincore), or
// nullopt where mincore refuses the range.
std::optional<uint64_t> ResidentBytes(const char* start, uint64_t length);

}  // namespace faultbench
