// What the kernel really mapped: bytes of a range backed by PMD (2 MiB)
// page-table entries versus PTE (4 KiB) entries, read back after the fact.
//
// Methods, best first:
//   pagemap_scan: ioctl(PAGEMAP_SCAN) with PAGE_IS_HUGE on /proc/self/pagemap
//                 (Linux 6.7+). Exact, per range, DAX included.
//   smaps:        FilePmdMapped + ShmemPmdMapped + AnonHugePages of the VMAs
//                 that overlap the range. Whole-VMA granularity; blind to DAX.
//   dax_trace:    fs_dax tracepoints (root, DAX files only); faultbench's
//                 measure/dax_trace.h counts them, not this layer.
//   faults:       inferred from minor faults per byte touched: the only
//                 method that works everywhere, and the least exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace pmstore::mapping {

enum class VerifyMethod { kPagemapScan, kSmaps, kDaxTrace, kFaults };
std::string_view VerifyMethodName(VerifyMethod method);  // "pagemap_scan", ...

struct MappingCensus {
  uint64_t pmd_bytes = 0;  // present, mapped by PMD entries
  uint64_t pte_bytes = 0;  // present, mapped by 4 KiB entries
  VerifyMethod method = VerifyMethod::kPagemapScan;
};

// The best method the kernel offers: pagemap_scan, else smaps.
absl::StatusOr<MappingCensus> VerifyMapping(const void* addr, size_t length);

absl::StatusOr<MappingCensus> VerifyWithPagemapScan(const void* addr, size_t length);
absl::StatusOr<MappingCensus> VerifyWithSmaps(const void* addr, size_t length);

// Infers the census from `minor_faults` taken while writing every page of
// `bytes_touched` once: about one fault per 2 MiB means PMD, one per 4 KiB
// means PTE. Only valid for write faults (read faults on the page cache map
// up to 16 pages at a time, fault-around).
MappingCensus InferFromWriteFaults(uint64_t minor_faults, uint64_t bytes_touched);

// True when this kernel answers PAGEMAP_SCAN (probed once, cached).
bool PagemapScanAvailable();

}  // namespace pmstore::mapping
