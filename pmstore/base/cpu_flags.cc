#include "pmstore/base/cpu_flags.h"

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"

namespace pmstore::base {

std::set<std::string, std::less<>> ParseCpuFlags(std::string_view cpuinfo) {
  std::set<std::string, std::less<>> flags;
  for (absl::string_view line : absl::StrSplit(absl::string_view(cpuinfo.data(), cpuinfo.size()), '\n')) {
    if (!absl::StartsWith(line, "flags")) continue;
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    for (absl::string_view word : absl::StrSplit(line.substr(colon + 1), ' ', absl::SkipEmpty())) {
      flags.emplace(word);
    }
    break;  // every processor lists the same flags; the first one speaks for all
  }
  return flags;
}

bool CpuHasFlag(std::string_view flag) {
  static const std::set<std::string, std::less<>> flags = [] {
    std::ifstream in("/proc/cpuinfo");
    std::stringstream text;
    text << in.rdbuf();
    return ParseCpuFlags(text.str());
  }();
  return flags.find(flag) != flags.end();
}

}  // namespace pmstore::base
