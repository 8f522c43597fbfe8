#include "faultbench/sysfacts/pat_memtype.h"

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace faultbench {

std::string ReadPatMemtype(uint64_t start, uint64_t size) {
  // Lines look like "PAT: [mem 0x0000000040000000-0x0000000080000000] write-back".
  std::ifstream in("/sys/kernel/debug/x86/pat_memtype_list");
  std::string line, found;
  while (std::getline(in, line)) {
    unsigned long long lo = 0, hi = 0;
    char type[64] = {};
    if (std::sscanf(line.c_str(), "PAT: [mem 0x%llx-0x%llx] %63s", &lo, &hi, type) != 3) continue;
    if (lo < start + size && start < hi && found.find(type) == std::string::npos) {
      found = found.empty() ? type : absl::StrCat(found, ",", type);
    }
  }
  return found;
}

}  // namespace faultbench
