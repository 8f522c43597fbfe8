#include "faultbench/measure/taint.h"

#include <sys/utsname.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "faultbench/doctor/system_facts.h"

namespace faultbench {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// /proc/config.gz is gzip: decompress it with the system's zcat rather than
// linking zlib for one file.
std::string ReadGzip(const std::string& path) {
  std::string text;
  FILE* pipe = popen(absl::StrCat("zcat ", path, " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return text;
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof(chunk), pipe)) > 0) text.append(chunk, n);
  pclose(pipe);
  return text;
}

// The signature a hypervisor puts in CPUID leaf 0x40000000 ("KVMKVMKVM",
// "Microsoft Hv", ...); some advertise another's to be compatible with
// its guests, so it is reported as the signature, not as a fact.
#if defined(__x86_64__) || defined(__i386__)
std::string CpuidSignature() {
  unsigned max_leaf = 0, b = 0, c = 0, d = 0;
  __cpuid(0x40000000, max_leaf, b, c, d);
  if (max_leaf < 0x40000000) return "";
  char text[13] = {};
  std::memcpy(text, &b, 4);
  std::memcpy(text + 4, &c, 4);
  std::memcpy(text + 8, &d, 4);
  std::string signature(text);
  while (!signature.empty() && signature.back() == ' ') signature.pop_back();
  return signature.empty() ? "" : absl::StrCat("CPUID signature '", signature, "'");
}
#else
std::string CpuidSignature() { return ""; }
#endif

std::string HypervisorVendor() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  bool flagged = false;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) {
      flagged = line.find(" hypervisor") != std::string::npos;
      break;
    }
  }
  if (!flagged) return "";
  std::string vendor = FirstLine("/sys/hypervisor/type");
  if (vendor.empty()) vendor = FirstLine("/sys/class/dmi/id/sys_vendor");
  if (vendor.empty()) vendor = CpuidSignature();
  return vendor.empty() ? "unknown" : vendor;
}

bool AnyBalloonReportsFreePages() {
  std::error_code ec;
  for (const auto& device : std::filesystem::directory_iterator("/sys/bus/virtio/devices", ec)) {
    const std::string dir = device.path().string();
    if (BalloonReportsFreePages(FirstLine(dir + "/device"), FirstLine(dir + "/features"))) return true;
  }
  return false;
}

}  // namespace

bool BalloonReportsFreePages(const std::string& device_id, const std::string& features) {
  constexpr size_t kReportingBit = 5;  // VIRTIO_BALLOON_F_REPORTING
  return device_id == "0x0005" && features.size() > kReportingBit && features[kReportingBit] == '1';
}

std::vector<std::string> DebugOptionsIn(const std::string& config_text) {
  static const char* const kDebugOptions[] = {
      "CONFIG_LOCKDEP",         "CONFIG_PROVE_LOCKING", "CONFIG_DEBUG_VM",        "CONFIG_KASAN",
      "CONFIG_DEBUG_PAGEALLOC", "CONFIG_DEBUG_OBJECTS", "CONFIG_DEBUG_ATOMIC_SLEEP", "CONFIG_KCSAN",
      "CONFIG_DEBUG_KMEMLEAK",  "CONFIG_PAGE_OWNER",    "CONFIG_DEBUG_LOCK_ALLOC", "CONFIG_KMSAN",
      "CONFIG_DEBUG_VM_PGTABLE", "CONFIG_PAGE_POISONING"};
  std::vector<std::string> enabled;
  std::istringstream lines(config_text);
  std::string line;
  while (std::getline(lines, line)) {
    for (const char* option : kDebugOptions) {
      if (line == absl::StrCat(option, "=y")) enabled.emplace_back(option);
    }
  }
  return enabled;
}

MachineState ReadMachineState() {
  MachineState state;
  std::string config = ReadGzip("/proc/config.gz");
  if (!config.empty()) {
    state.kernel_config_source = "/proc/config.gz";
  } else {
    utsname uts;
    if (uname(&uts) == 0) {
      const std::string path = absl::StrCat("/boot/config-", uts.release);
      config = ReadAll(path);
      if (!config.empty()) state.kernel_config_source = path;
    }
  }
  state.kernel_debug_options = DebugOptionsIn(config);
  state.hypervisor = HypervisorVendor();
  std::ifstream("/proc/loadavg") >> state.load_average_1m;
  state.online_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  state.thp_defrag = doctor::ReadThpFacts().defrag;
  state.cpu_governor = FirstLine("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  state.free_page_reporting = AnyBalloonReportsFreePages();
  return state;
}

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

}  // namespace faultbench
