// Whether what backs a path fixes the page size of every mapping of it, and
// at what: a device DAX device maps at its align and refuses smaller faults
// (SIGBUS) and larger ones (fallback), and a hugetlbfs mount maps at its
// pagesize. Everything else (page cache, tmpfs, fsdax) gets what each fault
// gives, 4 KiB or 2 MiB. Read once by run (what to map and how to verify
// it), compare (which modes can run) and doctor (what to explain).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "faultbench/sysfacts/device_dax.h"
#include "faultbench/sysfacts/hugetlb.h"

namespace faultbench {

struct FixedPageSize {
  uint64_t page_size = 0;  // bytes; 0 when the backing does not fix it
  std::optional<DevDaxFacts> devdax;
  std::optional<HugetlbfsFacts> hugetlbfs;

  bool fixed() const { return page_size != 0; }
  // "device DAX /dev/dax0.0 (align 1.0 GiB)", "hugetlbfs /mnt/h (pagesize 2.0 MiB)", "" when not fixed.
  std::string What(const std::string& path) const;
};

// For a file, a device, or a file still to be made (its directory's mount).
FixedPageSize ReadFixedPageSize(const std::string& path);

}  // namespace faultbench
