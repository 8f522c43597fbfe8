#include "faultbench/sysfacts/vm_counters.h"

#include <unistd.h>

#include <charconv>
#include <fstream>

#include "absl/strings/str_split.h"
#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"
#include "faultbench/sysfacts/read_file.h"
#include "faultbench/sysfacts/thp.h"

namespace faultbench {
namespace {

std::optional<uint64_t> ParseCount(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  return value;
}

}  // namespace

std::map<std::string, uint64_t> ParseVmstat(std::string_view text) {
  std::map<std::string, uint64_t> counters;
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    const size_t space = line.find(' ');
    if (space == absl::string_view::npos || space == 0) continue;
    if (auto value = ParseCount(line.substr(space + 1))) counters[std::string(line.substr(0, space))] = *value;
  }
  return counters;
}

std::optional<uint64_t> MeminfoKb(std::string_view text, std::string_view field) {
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, absl::string_view(field.data(), field.size())) || !absl::ConsumePrefix(&rest, ":")) {
      continue;
    }
    absl::ConsumeSuffix(&rest, "kB");
    return ParseCount(rest);
  }
  return std::nullopt;
}

VmCounters ReadVmCounters() {
  if (geteuid() == 0) std::ofstream("/proc/sys/vm/stat_refresh") << "1\n";  // best effort: unreadable stays lagged
  VmCounters counters;
  counters.vmstat = ParseVmstat(ReadWholeFile("/proc/vmstat"));
  counters.page_tables_kb = MeminfoKb(ReadWholeFile("/proc/meminfo"), "PageTables");
  counters.mthp = ReadMthpStats();
  return counters;
}

}  // namespace faultbench
