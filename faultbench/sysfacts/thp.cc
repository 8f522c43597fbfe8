#include "faultbench/sysfacts/thp.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "faultbench/sysfacts/read_file.h"
#include "pmstore/mapping/mapping.h"

namespace faultbench {

ThpFacts ReadThpFacts() {
  const std::string dir = std::string(kThpDir) + "/";
  const auto knob = [&](const char* name) { return SelectedChoice(ReadFirstLine(dir + name)); };
  return ThpFacts{knob("enabled"), knob("shmem_enabled"), knob("defrag")};
}

std::vector<MthpSize> ReadMthpSizes(const std::string& thp_dir) {
  std::vector<MthpSize> sizes;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(thp_dir, ec)) {
    const std::string filename = entry.path().filename().string();
    absl::string_view name = filename;
    uint64_t kb = 0;
    if (!absl::ConsumePrefix(&name, "hugepages-") || !absl::ConsumeSuffix(&name, "kB") || !absl::SimpleAtoi(name, &kb)) {
      continue;
    }
    const std::string dir = entry.path().string();
    sizes.push_back({.size = kb << 10,
                     .dir = dir,
                     .enabled = SelectedChoice(ReadFirstLine(dir + "/enabled")),
                     .shmem_enabled = SelectedChoice(ReadFirstLine(dir + "/shmem_enabled"))});
  }
  std::sort(sizes.begin(), sizes.end(), [](const MthpSize& a, const MthpSize& b) { return a.size < b.size; });
  return sizes;
}

const std::vector<std::string>& MthpEventCounters() {
  static const std::vector<std::string> kCounters = {
      "anon_fault_alloc", "anon_fault_fallback", "anon_fault_fallback_charge", "shmem_alloc", "shmem_fallback",
      "shmem_fallback_charge", "split", "split_deferred", "split_failed"};
  return kCounters;
}

std::map<std::string, uint64_t> ReadMthpStats(const std::string& thp_dir) {
  std::map<std::string, uint64_t> stats;
  for (const MthpSize& size : ReadMthpSizes(thp_dir)) {
    const std::string prefix = pmstore::mapping::SizeName(size.size) + ".";
    for (const std::string& counter : MthpEventCounters()) {
      if (auto value = ReadNumber(size.dir + "/stats/" + counter)) stats[prefix + counter] = *value;
    }
  }
  return stats;
}

}  // namespace faultbench
