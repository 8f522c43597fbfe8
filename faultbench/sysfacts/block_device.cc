#include "faultbench/sysfacts/block_device.h"

#include <sys/sysmacros.h>

#include <climits>
#include <filesystem>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "faultbench/sysfacts/read_file.h"

namespace faultbench {
namespace {

namespace fs = std::filesystem;

// A block device (or a partition of it) sits below the bus device that
// knows its node: walk up until a numa_node file appears.
int NearestNumaNode(fs::path dir) {
  for (; dir.has_parent_path() && dir != "/sys/devices" && dir != "/"; dir = dir.parent_path()) {
    std::ifstream in(dir / "numa_node");
    int node = INT_MIN;
    if (in >> node) return node;
  }
  return -1;
}

// Fills the facts sysfs gives under `real`, the device's canonical sysfs path.
void ReadDeviceDirectory(const fs::path& real, BlockFacts& facts) {
  facts.device = real.filename();
  facts.numa_node = NearestNumaNode(real);
  // A partition's device attributes live on its parent disk.
  fs::path disk = real;
  if (fs::exists(real / "partition")) disk = real.parent_path();
  facts.pmem = disk.filename().string().starts_with("pmem");
  if (facts.pmem) {
    facts.pmem_start = ReadNumber(disk / "device" / "resource", /*hex=*/true).value_or(0);
    facts.pmem_size = ReadNumber(disk / "device" / "size").value_or(0);
  }
}

}  // namespace

BlockFacts ReadBlockFacts(dev_t dev) {
  BlockFacts facts;
  facts.dev_id = absl::StrCat(major(dev), ":", minor(dev));
  std::error_code ec;
  const fs::path real = fs::canonical("/sys/dev/block/" + facts.dev_id, ec);
  if (!ec) ReadDeviceDirectory(real, facts);  // else no block device: tmpfs, overlay, 9p, ...
  return facts;
}

std::optional<BlockFacts> ReadBlockFactsByName(const std::string& name) {
  std::error_code ec;
  const fs::path real = fs::canonical(fs::path("/sys/class/block") / name, ec);
  if (ec) return std::nullopt;
  BlockFacts facts;
  facts.dev_id = ReadFirstLine(real / "dev");
  ReadDeviceDirectory(real, facts);
  return facts;
}

}  // namespace faultbench
