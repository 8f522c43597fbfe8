// How a file's blocks lie on the device, from FIEMAP: the share of its
// 2 MiB chunks that one physical extent covers at 2 MiB alignment, which
// is the condition for a DAX PMD fault (fs/dax.c).
#pragma once

#include <cstdint>
#include <string>

namespace faultbench {

struct ExtentFacts {
  bool examined = false;
  std::string why_not;          // set when !examined
  uint64_t extents = 0;
  uint64_t file_bytes = 0;      // bytes in 2 MiB chunks the file spans
  uint64_t aligned_bytes = 0;   // of those, in chunks one physical extent covers at 2 MiB alignment
};

// FIEMAP over the whole file. A 2 MiB chunk of the file counts as aligned
// when one extent covers all of it and physical == logical modulo 2 MiB.
ExtentFacts ReadExtentFacts(int fd);

}  // namespace faultbench
