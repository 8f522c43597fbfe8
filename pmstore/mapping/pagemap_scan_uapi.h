// PAGEMAP_SCAN (Linux 6.7) definitions, copied from include/uapi/linux/fs.h:
// Debian 12's kernel headers (6.1) predate them. Layout is kernel ABI.
#pragma once

#include <linux/ioctl.h>

#include <cstdint>

namespace pmstore::mapping::uapi {

struct page_region {
  uint64_t start;
  uint64_t end;
  uint64_t categories;
};

struct pm_scan_arg {
  uint64_t size;
  uint64_t flags;
  uint64_t start;
  uint64_t end;
  uint64_t walk_end;
  uint64_t vec;
  uint64_t vec_len;
  uint64_t max_pages;
  uint64_t category_inverted;
  uint64_t category_mask;
  uint64_t category_anyof_mask;
  uint64_t return_mask;
};

inline constexpr uint64_t PAGE_IS_PRESENT = 1ull << 3;
inline constexpr uint64_t PAGE_IS_HUGE = 1ull << 6;
inline constexpr unsigned long PAGEMAP_SCAN = _IOWR('f', 16, struct pm_scan_arg);

}  // namespace pmstore::mapping::uapi
