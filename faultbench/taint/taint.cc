#include "faultbench/taint/taint.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace faultbench {

std::vector<std::string> TaintLines(const MachineState& state, double cpu_busy_fraction) {
  std::vector<std::string> lines;
  if (state.kernel_config_source.empty()) {
    lines.push_back("kernel config: not readable (no /proc/config.gz or /boot/config-*); debug options unknown");
  }
  for (const auto& option : state.kernel_debug_options) {
    lines.push_back(absl::StrCat("kernel debug option: ", option,
                                 "=y (debug kernels make faults many times slower)"));
  }
  if (!state.hypervisor.empty()) {
    lines.push_back(absl::StrCat("hypervisor: ", state.hypervisor,
                                 " (PAT/EPT effects differ from bare metal; a VM hid the 2016 PMD regression)"));
  }
  if (!state.emulation.empty()) {
    lines.push_back(absl::StrCat("emulation: ", state.emulation,
                                 " (the CPU is emulated in software: timings are not performance figures; fault "
                                 "counts, tracepoint tallies and the signature are exact)"));
  }
  if (state.free_page_reporting) {
    lines.push_back(
        "free page reporting: the hypervisor takes back guest memory that stays free, so the first touch of it "
        "costs host faults (a run after idle, or after deleting a big file, can be several times slower; "
        "compare --repeat shows it as spread)");
  }
  if (state.load_average_1m > 0.5 * state.online_cpus) {
    lines.push_back(absl::StrFormat("other load: 1-minute load average %.2f on %d CPUs before the run",
                                    state.load_average_1m, state.online_cpus));
  }
  if (cpu_busy_fraction >= 0.95) {
    lines.push_back(absl::StrFormat(
        "cpu saturation: workers used %.0f%% of all CPUs (the CPU, not memory, may be the limit)",
        cpu_busy_fraction * 100));
  }
  if (state.thp_defrag == "always") {
    lines.push_back("thp defrag: always (huge page faults may stall in direct compaction)");
  }
  if (state.cpu_governor.empty()) {
    lines.push_back("cpu governor: not exposed (frequency scaling unknown)");
  } else if (state.cpu_governor != "performance") {
    lines.push_back(absl::StrCat("cpu governor: ", state.cpu_governor, " (not 'performance'; frequency may vary)"));
  }
  return lines;
}

std::vector<std::string> MergeTaint(const std::vector<std::vector<std::string>>& runs_taint) {
  std::vector<std::string> kinds, first_line;
  std::vector<int> count;
  for (const std::vector<std::string>& lines : runs_taint) {
    std::vector<std::string> seen_in_run;
    for (const std::string& line : lines) {
      const std::string kind = line.substr(0, line.find(':'));
      if (std::find(seen_in_run.begin(), seen_in_run.end(), kind) != seen_in_run.end()) continue;
      seen_in_run.push_back(kind);
      const auto at = std::find(kinds.begin(), kinds.end(), kind);
      if (at == kinds.end()) {
        kinds.push_back(kind);
        first_line.push_back(line);
        count.push_back(1);
      } else {
        ++count[static_cast<size_t>(at - kinds.begin())];
      }
    }
  }
  const int runs = static_cast<int>(runs_taint.size());
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (count[i] < runs) absl::StrAppendFormat(&first_line[i], " (%d of %d runs)", count[i], runs);
  }
  return first_line;
}

}  // namespace faultbench
