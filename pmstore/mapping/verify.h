// What the kernel really mapped: bytes of a range backed by PUD (1 GiB),
// PMD (2 MiB) and PTE (4 KiB) page-table entries, read back after the fact.
//
// Methods, best first:
//   pagemap_scan: ioctl(PAGEMAP_SCAN) with PAGE_IS_HUGE on /proc/self/pagemap
//                 (Linux 6.7+). Exact, per range, DAX included; but a huge
//                 leaf is a huge leaf: it does not tell 2 MiB from 1 GiB.
//   smaps:        FilePmdMapped + ShmemPmdMapped + AnonHugePages (and the
//                 hugetlb lines) of the VMAs that overlap the range.
//                 Whole-VMA granularity; blind to DAX. Its KernelPageSize is
//                 the mapping's setting, not what was installed.
//   page_size:    where the backing has one page size (hugetlbfs, device
//                 DAX), every present byte is mapped at that size; the
//                 caller checks the fault count against it
//                 (CensusAtPageSize).
//   dax_trace:    fs_dax tracepoints (root, DAX files only); faultbench's
//                 measure/dax_trace.h counts them, not this layer.
//   faults:       inferred from minor faults per byte touched: the only
//                 method that works everywhere, and the least exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>

#include "absl/status/statusor.h"

namespace pmstore::mapping {

enum class VerifyMethod { kPagemapScan, kSmaps, kDaxTrace, kFaults, kPageSize };
std::string_view VerifyMethodName(VerifyMethod method);  // "pagemap_scan", ...

struct MappingCensus {
  uint64_t pmd_bytes = 0;  // present, mapped by PMD entries (pagemap_scan, smaps: any huge leaf)
  uint64_t pte_bytes = 0;  // present, mapped by 4 KiB entries
  uint64_t pud_bytes = 0;  // present, mapped by 1 GiB entries (page_size only: no reader tells them apart)
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

// The census of `present_bytes` of a mapping whose backing has the one page
// size `page_size` (4 KiB, 2 MiB or 1 GiB): all of them PTE, PMD or PUD.
MappingCensus CensusAtPageSize(uint64_t present_bytes, uint64_t page_size);

// True when this kernel answers PAGEMAP_SCAN (probed once, cached).
bool PagemapScanAvailable();

// The folios behind a mapped range, by size: a 64 KiB folio is mapped by
// sixteen 4 KiB entries, and no page-table reader tells it from sixteen
// 4 KiB folios. The kernel offers no better source than the page frames
// themselves: each present page's PFN from /proc/self/pagemap, and that
// PFN's flags from /proc/kpageflags, where a folio larger than 4 KiB is a
// compound head followed, PFN after PFN, by its tail pages. Both need
// root (CAP_SYS_ADMIN: without it pagemap hides PFNs and kpageflags cannot
// be opened). A folio that lies partly outside the range counts once, at
// its whole size; pages with no struct page (DAX, PFN maps) and the shared
// zero page are no folio of the range's and are counted apart.
struct FolioCensus {
  std::map<uint64_t, uint64_t> folios;  // folio size in bytes -> folios (distinct heads)
  std::map<uint64_t, uint64_t> bytes;   // folio size -> bytes of the range mapped from folios of that size
  uint64_t zero_page_bytes = 0;         // present bytes mapped from the shared zero page (reads of anon memory)
  uint64_t no_page_bytes = 0;           // present bytes whose PFN has no struct page (DAX)
  uint64_t folio_bytes() const;         // the sum of `bytes`
};
inline constexpr std::string_view kFolioCensusSource = "pagemap+kpageflags";

// PermissionDenied (not root) or the failing call's status.
absl::StatusOr<FolioCensus> ReadFolioSizes(const void* addr, size_t length);

}  // namespace pmstore::mapping
