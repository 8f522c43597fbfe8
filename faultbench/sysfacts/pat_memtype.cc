#include "faultbench/sysfacts/pat_memtype.h"

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace faultbench {
namespace {

constexpr const char* kDebugfs = "/sys/kernel/debug";
constexpr const char* kPatList = "/sys/kernel/debug/x86/pat_memtype_list";

// "" once the list can be opened, else why not (mounting debugfs as root).
std::string MakePatListReadable() {
  if (access(kPatList, R_OK) == 0) return "";
  if (geteuid() != 0) return "needs root and debugfs";
  if (access(absl::StrCat(kDebugfs, "/x86").c_str(), F_OK) != 0 &&
      mount("debugfs", kDebugfs, "debugfs", 0, nullptr) != 0) {
    return absl::StrCat("cannot mount debugfs on ", kDebugfs, ": ", std::strerror(errno));
  }
  if (access(kPatList, R_OK) != 0) return absl::StrCat("no ", kPatList, " (PAT disabled, or not x86)");
  return "";
}

}  // namespace

PatMemtype ReadPatMemtype(uint64_t start, uint64_t size) {
  PatMemtype result;
  result.unknown_reason = MakePatListReadable();
  if (!result.unknown_reason.empty()) return result;
  // Lines look like "PAT: [mem 0x0000000040000000-0x0000000080000000] write-back".
  std::ifstream in(kPatList);
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long lo = 0, hi = 0;
    char type[64] = {};
    if (std::sscanf(line.c_str(), "PAT: [mem 0x%llx-0x%llx] %63s", &lo, &hi, type) != 3) continue;
    if (lo < start + size && start < hi && result.memtype.find(type) == std::string::npos) {
      result.memtype = result.memtype.empty() ? type : absl::StrCat(result.memtype, ",", type);
    }
  }
  if (result.memtype.empty()) result.unknown_reason = absl::StrCat("no entry for the range in ", kPatList);
  return result;
}

}  // namespace faultbench
