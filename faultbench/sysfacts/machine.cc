#include "faultbench/sysfacts/machine.h"

#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/ascii.h"
#include "faultbench/sysfacts/kernel.h"
#include "faultbench/sysfacts/read_file.h"
#include "faultbench/sysfacts/thp.h"
#include "pmstore/base/cpu_flags.h"

namespace faultbench {
namespace {

// The signature a hypervisor puts in CPUID leaf 0x40000000 ("KVMKVMKVM",
// "Microsoft Hv", ...); some advertise another's to be compatible with
// its guests, so it is reported as the signature, not as a fact.
#if defined(__x86_64__) || defined(__i386__)
std::string CpuidSignature() {
  if (!pmstore::base::CpuHasFlag("hypervisor")) return "";
  unsigned max_leaf = 0, b = 0, c = 0, d = 0;
  __cpuid(0x40000000, max_leaf, b, c, d);
  if (max_leaf < 0x40000000) return "";
  char text[13] = {};
  std::memcpy(text, &b, 4);
  std::memcpy(text + 4, &c, 4);
  std::memcpy(text + 8, &d, 4);
  std::string signature(text);
  while (!signature.empty() && signature.back() == ' ') signature.pop_back();
  return signature;
}
#else
std::string CpuidSignature() { return ""; }
#endif

std::string HypervisorVendor(const std::string& cpuid_signature) {
  if (!pmstore::base::CpuHasFlag("hypervisor")) return "";
  std::string vendor = ReadFirstLine("/sys/hypervisor/type");
  if (vendor.empty()) vendor = ReadFirstLine("/sys/class/dmi/id/sys_vendor");
  if (vendor.empty() && !cpuid_signature.empty()) vendor = absl::StrCat("CPUID signature '", cpuid_signature, "'");
  return vendor.empty() ? "unknown" : vendor;
}

bool AnyBalloonReportsFreePages() {
  std::error_code ec;
  for (const auto& device : std::filesystem::directory_iterator("/sys/bus/virtio/devices", ec)) {
    const std::string dir = device.path().string();
    if (BalloonReportsFreePages(ReadFirstLine(dir + "/device"), ReadFirstLine(dir + "/features"))) return true;
  }
  return false;
}

}  // namespace

std::string CpuModelIn(const std::string& cpuinfo) {
  for (absl::string_view line : absl::StrSplit(cpuinfo, '\n')) {
    if (!absl::StartsWith(line, "model name")) continue;
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  }
  return "";
}

std::string EmulationOf(const std::string& cpuid_signature, const std::string& cpu_model) {
  if (cpuid_signature == "TCGTCGTCGTCG" || absl::StartsWith(cpu_model, "QEMU TCG CPU")) return "qemu TCG";
  return "";
}

bool BalloonReportsFreePages(const std::string& device_id, const std::string& features) {
  constexpr size_t kReportingBit = 5;  // VIRTIO_BALLOON_F_REPORTING
  return device_id == "0x0005" && features.size() > kReportingBit && features[kReportingBit] == '1';
}

MachineState ReadMachineState() {
  MachineState state;
  const KernelConfig config = ReadKernelConfig();
  state.kernel_config_source = config.source;
  state.kernel_debug_options = DebugOptionsIn(config.text, ReadFirstLine("/proc/cmdline"));
  state.kernel_release = KernelRelease();
  const std::string signature = CpuidSignature();
  state.hypervisor = HypervisorVendor(signature);
  state.cpu_model = CpuModelIn(ReadWholeFile("/proc/cpuinfo"));
  state.emulation = EmulationOf(signature, state.cpu_model);
  std::ifstream("/proc/loadavg") >> state.load_average_1m;
  state.online_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  const ThpFacts thp = ReadThpFacts();
  state.thp_enabled = thp.enabled;
  state.thp_defrag = thp.defrag;
  state.thp_shmem_enabled = thp.shmem_enabled;
  state.cpu_governor = ReadFirstLine("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  state.free_page_reporting = AnyBalloonReportsFreePages();
  return state;
}

}  // namespace faultbench
