// What a store reports about itself: contents, space, and how the pool is
// really mapped.
#pragma once

#include <cstdint>
#include <string>

#include "pmstore/options.h"

namespace pmstore {

struct Stats {
  std::string path;
  // The pool's format version (doc/FORMAT.md): 2 for pools this library
  // creates; 1 for older pools, which `pmstore copy` converts.
  uint32_t format_version = 0;
  uint64_t keys = 0;
  uint64_t pool_bytes = 0;      // current size of the pool file
  uint64_t max_pool_bytes = 0;  // the size it may grow to
  uint64_t live_bytes = 0;      // held by records, values and index nodes
  uint64_t free_bytes = 0;      // allocatable without growing
  // Share of free bytes scattered in partly used chunks (0: all free space
  // is whole 2 MiB chunks; near 1: only small holes are left).
  double fragmentation = 0;
  // Options::read_only: the pool is mapped privately (copy-on-write), so
  // granularity, dax and map_sync describe that mapping, not how a
  // writable open would persist.
  bool read_only = false;
  Granularity granularity = Granularity::kPage;
  bool dax = false;
  bool map_sync = false;
  // A pool on device DAX: the device's align, the one page size the
  // kernel maps it with (2 MiB, or 1 GiB: then the huge entries that
  // pmd_mapped_share counts are PUD entries). 0 for a pool in a file.
  uint64_t device_dax_align = 0;
  // Share of the pool's resident pages mapped by huge entries (2 MiB PMD;
  // 1 GiB PUD on a device with that align), as the mapping layer verified
  // it; -1 when it could not be measured.
  double pmd_mapped_share = -1;
  // "pagemap_scan", "smaps", "page_size" (device DAX on kernels without
  // PAGEMAP_SCAN: its one page size), or why none.
  std::string pmd_verify_method;

  // Whether this open found the index leaves through the separator image
  // a clean close wrote (doc/FORMAT.md "Separator image"), instead of
  // walking the leaf chain (after a crash, or with no image or a stale or
  // damaged one).
  bool opened_from_separator_image = false;
};

}  // namespace pmstore
