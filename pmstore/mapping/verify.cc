#include "pmstore/mapping/verify.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <unordered_set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"
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

namespace {

// include/uapi/linux/kernel-page-flags.h and Documentation/admin-guide/mm/pagemap.rst.
constexpr uint64_t kCompoundHead = 1ull << 15;
constexpr uint64_t kCompoundTail = 1ull << 16;
constexpr uint64_t kNoPage = 1ull << 20;
constexpr uint64_t kZeroPage = 1ull << 24;
constexpr uint64_t kPagemapPresent = 1ull << 63;
constexpr uint64_t kPagemapPfn = (1ull << 55) - 1;

// /proc/kpageflags read a window of PFNs at a time: a folio's pages are
// neighbours, and so, often, are the folios of one mapping.
class PageFlags {
 public:
  explicit PageFlags(int fd) : fd_(fd), window_(kWindow) {}
  absl::StatusOr<uint64_t> Of(uint64_t pfn) {
    if (pfn < first_ || pfn >= first_ + loaded_) {
      first_ = pfn & ~(kWindow - 1);
      const ssize_t n = pread(fd_, window_.data(), kWindow * sizeof(uint64_t), static_cast<off_t>(first_ * 8));
      if (n < 0) return base::ErrnoStatus(errno, "pread", "/proc/kpageflags");
      loaded_ = static_cast<uint64_t>(n) / sizeof(uint64_t);
      if (pfn >= first_ + loaded_) return absl::OutOfRangeError(absl::StrCat("PFN ", pfn, " is past /proc/kpageflags"));
    }
    return window_[pfn - first_];
  }

 private:
  static constexpr uint64_t kWindow = 512;
  int fd_;
  std::vector<uint64_t> window_;
  uint64_t first_ = 0, loaded_ = 0;
};

struct Folio {
  uint64_t head = 0;
  uint64_t pages = 0;  // 0: none yet
  bool Holds(uint64_t pfn) const { return pfn >= head && pfn < head + pages; }
};

// The folio that holds `pfn`: its compound head (walked back to) and the
// tail pages after it; a page that is neither is a folio of its own.
absl::StatusOr<Folio> FolioOf(PageFlags& flags, uint64_t pfn) {
  PMSTORE_ASSIGN_OR_RETURN(uint64_t f, flags.Of(pfn));
  if ((f & (kCompoundHead | kCompoundTail)) == 0) return Folio{pfn, 1};
  uint64_t head = pfn;
  while (f & kCompoundTail) {
    if (head == 0) return absl::InternalError("kpageflags: a tail page with no head before it");
    PMSTORE_ASSIGN_OR_RETURN(f, flags.Of(--head));
  }
  uint64_t end = head + 1;
  for (;;) {
    auto next = flags.Of(end);
    if (!next.ok() || (*next & kCompoundTail) == 0) break;
    ++end;
  }
  return Folio{head, end - head};
}

}  // namespace

uint64_t FolioCensus::folio_bytes() const {
  uint64_t sum = 0;
  for (const auto& [size, n] : bytes) sum += n;
  return sum;
}

absl::StatusOr<FolioCensus> ReadFolioSizes(const void* addr, size_t length) {
  Fd kpageflags{open("/proc/kpageflags", O_RDONLY | O_CLOEXEC)};
  if (kpageflags.fd < 0) {
    const int err = errno;
    if (err == EACCES || err == EPERM) {
      return absl::PermissionDeniedError(
          "folio sizes need root: /proc/kpageflags and the PFNs in /proc/self/pagemap are CAP_SYS_ADMIN's");
    }
    return base::ErrnoStatus(err, "open", "/proc/kpageflags");
  }
  Fd pagemap{open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)};
  if (pagemap.fd < 0) return base::ErrnoStatus(errno, "open", "/proc/self/pagemap");
  PageFlags flags(kpageflags.fd);
  FolioCensus census;
  Folio current;
  std::unordered_set<uint64_t> counted;  // heads of folios larger than a page, counted once
  const uint64_t first_page = reinterpret_cast<uint64_t>(addr) / kPageSize;
  const uint64_t pages = (reinterpret_cast<uint64_t>(addr) + length + kPageSize - 1) / kPageSize - first_page;
  std::vector<uint64_t> entries(8192);
  for (uint64_t done = 0; done < pages;) {
    const uint64_t n = std::min<uint64_t>(entries.size(), pages - done);
    const ssize_t got = pread(pagemap.fd, entries.data(), n * 8, static_cast<off_t>((first_page + done) * 8));
    if (got < 0) return base::ErrnoStatus(errno, "pread", "/proc/self/pagemap");
    if (static_cast<uint64_t>(got) != n * 8) return absl::InternalError("/proc/self/pagemap: short read");
    for (uint64_t i = 0; i < n; ++i) {
      if ((entries[i] & kPagemapPresent) == 0) continue;
      const uint64_t pfn = entries[i] & kPagemapPfn;
      if (pfn == 0) return absl::PermissionDeniedError("/proc/self/pagemap hides the PFNs (CAP_SYS_ADMIN needed)");
      if (!current.Holds(pfn)) {
        PMSTORE_ASSIGN_OR_RETURN(const uint64_t f, flags.Of(pfn));
        if (f & kNoPage) {
          census.no_page_bytes += kPageSize;
          continue;
        }
        if (f & kZeroPage) {
          census.zero_page_bytes += kPageSize;
          continue;
        }
        PMSTORE_ASSIGN_OR_RETURN(current, FolioOf(flags, pfn));
        if (current.pages == 1 || counted.insert(current.head).second) ++census.folios[current.pages * kPageSize];
      }
      census.bytes[current.pages * kPageSize] += kPageSize;
    }
    done += n;
  }
  return census;
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
