#include "pmstore/mapping/verify.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/units.h"
#include "pmstore/mapping/pagemap_scan_uapi.h"

namespace pmstore::mapping {
namespace {

using base::kHugePageSize;
using base::kPageSize;

// Closes the fd on every path out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

std::string_view VerifyMethodName(VerifyMethod method) {
  switch (method) {
    case VerifyMethod::kPagemapScan: return "pagemap_scan";
    case VerifyMethod::kSmaps: return "smaps";
    case VerifyMethod::kDaxTrace: return "dax_trace";
    case VerifyMethod::kFaults: return "faults";
    case VerifyMethod::kPageSize: return "page_size";
  }
  return "unknown";
}

absl::StatusOr<MappingCensus> VerifyWithPagemapScan(const void* addr, size_t length) {
  Fd pagemap{open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)};
  if (pagemap.fd < 0) return base::ErrnoStatus(errno, "open", "/proc/self/pagemap");

  const auto start = reinterpret_cast<uint64_t>(addr) & ~(kPageSize - 1);
  const uint64_t end = base::RoundUp(reinterpret_cast<uint64_t>(addr) + length, kPageSize);
  std::vector<uapi::page_region> regions(512);
  MappingCensus census;
  census.method = VerifyMethod::kPagemapScan;
  // The kernel stops when the output vector is full and reports where it
  // stopped (walk_end): continue from there until the range is covered.
  for (uint64_t cursor = start; cursor < end;) {
    uapi::pm_scan_arg arg{};
    arg.size = sizeof(arg);
    arg.start = cursor;
    arg.end = end;
    arg.vec = reinterpret_cast<uint64_t>(regions.data());
    arg.vec_len = regions.size();
    arg.category_mask = uapi::PAGE_IS_PRESENT;  // only mapped pages
    arg.return_mask = uapi::PAGE_IS_PRESENT | uapi::PAGE_IS_HUGE;
    const long n = ioctl(pagemap.fd, uapi::PAGEMAP_SCAN, &arg);
    if (n < 0) return base::ErrnoStatus(errno, "ioctl PAGEMAP_SCAN", "/proc/self/pagemap");
    for (long i = 0; i < n; ++i) {
      const uint64_t bytes = regions[i].end - regions[i].start;
      (regions[i].categories & uapi::PAGE_IS_HUGE ? census.pmd_bytes : census.pte_bytes) += bytes;
    }
    if (arg.walk_end <= cursor) break;  // no progress: never loop forever
    cursor = arg.walk_end;
  }
  return census;
}

bool PagemapScanAvailable() {
  static const bool available = [] {
    static char probe[kPageSize] __attribute__((aligned(4096)));
    return VerifyWithPagemapScan(probe, sizeof(probe)).ok();
  }();
  return available;
}

absl::StatusOr<MappingCensus> VerifyWithSmaps(const void* addr, size_t length) {
  std::ifstream smaps("/proc/self/smaps");
  if (!smaps) return base::ErrnoStatus(errno, "open", "/proc/self/smaps");
  const auto lo = reinterpret_cast<uint64_t>(addr);
  const uint64_t hi = lo + length;
  MappingCensus census;
  census.method = VerifyMethod::kSmaps;
  bool inside = false;
  uint64_t rss_kb = 0, pmd_kb = 0, hugetlb_kb = 0;
  const auto flush_vma = [&] {
    if (!inside) return;
    // hugetlb pages are not in Rss: they have lines of their own.
    census.pmd_bytes += (pmd_kb + hugetlb_kb) << 10;
    census.pte_bytes += (rss_kb - std::min(rss_kb, pmd_kb)) << 10;
  };
  std::string line;
  while (std::getline(smaps, line)) {
    // A VMA header looks like "7f12...-7f34... rw-s 00000000 fe:01 123 /path".
    const size_t dash = line.find('-');
    const size_t space = line.find(' ');
    uint64_t vma_lo = 0, vma_hi = 0;
    if (dash != std::string::npos && space != std::string::npos && dash < space &&
        absl::SimpleHexAtoi(absl::string_view(line.data(), dash), &vma_lo) &&
        absl::SimpleHexAtoi(absl::string_view(line.data() + dash + 1, space - dash - 1), &vma_hi)) {
      flush_vma();
      inside = vma_lo < hi && lo < vma_hi;
      rss_kb = pmd_kb = hugetlb_kb = 0;
      continue;
    }
    if (!inside) continue;
    std::vector<absl::string_view> parts = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (parts.size() < 2) continue;
    uint64_t kb = 0;
    if (!absl::SimpleAtoi(parts[1], &kb)) continue;
    if (parts[0] == "Rss:") rss_kb = kb;
    if (parts[0] == "FilePmdMapped:" || parts[0] == "ShmemPmdMapped:" || parts[0] == "AnonHugePages:") pmd_kb += kb;
    if (parts[0] == "Shared_Hugetlb:" || parts[0] == "Private_Hugetlb:") hugetlb_kb += kb;
  }
  flush_vma();
  return census;
}

absl::StatusOr<MappingCensus> VerifyMapping(const void* addr, size_t length) {
  if (PagemapScanAvailable()) return VerifyWithPagemapScan(addr, length);
  return VerifyWithSmaps(addr, length);
}

MappingCensus CensusAtPageSize(uint64_t present_bytes, uint64_t page_size) {
  MappingCensus census;
  census.method = VerifyMethod::kPageSize;
  if (page_size >= base::kGiantPageSize) {
    census.pud_bytes = present_bytes;
  } else if (page_size >= kHugePageSize) {
    census.pmd_bytes = present_bytes;
  } else {
    census.pte_bytes = present_bytes;
  }
  return census;
}

MappingCensus InferFromWriteFaults(uint64_t minor_faults, uint64_t bytes_touched) {
  MappingCensus census;
  census.method = VerifyMethod::kFaults;
  if (minor_faults == 0 || bytes_touched == 0) return census;
  // Bytes per fault between 4 KiB (all PTE) and 2 MiB (all PMD): solve
  // pmd/2M + pte/4K = faults with pmd + pte = bytes for the PMD share.
  const double faults = static_cast<double>(minor_faults);
  const double bytes = static_cast<double>(bytes_touched);
  const double all_pte = bytes / kPageSize, all_pmd = bytes / kHugePageSize;
  double pmd_share = (all_pte - faults) / (all_pte - all_pmd);
  pmd_share = std::clamp(pmd_share, 0.0, 1.0);
  census.pmd_bytes = static_cast<uint64_t>(pmd_share * bytes) / kHugePageSize * kHugePageSize;
  census.pte_bytes = bytes_touched - census.pmd_bytes;
  return census;
}

}  // namespace pmstore::mapping
