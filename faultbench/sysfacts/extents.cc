#include "faultbench/sysfacts/extents.h"

#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "pmstore/base/units.h"

namespace faultbench {

using pmstore::base::kHugePageSize;

ExtentFacts ReadExtentFacts(int fd) {
  ExtentFacts facts;
  constexpr unsigned kBatch = 256;
  std::vector<char> buffer(sizeof(fiemap) + kBatch * sizeof(fiemap_extent));
  auto* map = reinterpret_cast<fiemap*>(buffer.data());
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    facts.why_not = std::strerror(errno);
    return facts;
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  facts.file_bytes = size / kHugePageSize * kHugePageSize;
  for (uint64_t start = 0; start < size;) {
    std::memset(buffer.data(), 0, buffer.size());
    map->fm_start = start;
    map->fm_length = size - start;
    map->fm_flags = FIEMAP_FLAG_SYNC;
    map->fm_extent_count = kBatch;
    if (ioctl(fd, FS_IOC_FIEMAP, map) != 0) {
      facts.why_not = errno == EOPNOTSUPP ? "the file system does not support FIEMAP" : std::strerror(errno);
      return facts;
    }
    if (map->fm_mapped_extents == 0) break;
    bool last = false;
    for (unsigned i = 0; i < map->fm_mapped_extents; ++i) {
      const fiemap_extent& e = map->fm_extents[i];
      ++facts.extents;
      if ((e.fe_physical - e.fe_logical) % kHugePageSize == 0) {
        // Count the whole 2 MiB chunks of the file this extent covers.
        const uint64_t first = pmstore::base::RoundUp(e.fe_logical, kHugePageSize);
        const uint64_t end = std::min<uint64_t>(e.fe_logical + e.fe_length, size) / kHugePageSize * kHugePageSize;
        if (end > first) facts.aligned_bytes += end - first;
      }
      start = e.fe_logical + e.fe_length;
      last = e.fe_flags & FIEMAP_EXTENT_LAST;
    }
    if (last) break;
  }
  facts.examined = true;
  return facts;
}

}  // namespace faultbench
