#include "faultbench/sysfacts/device_dax.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "faultbench/sysfacts/read_file.h"
#include "pmstore/mapping/device_dax.h"

namespace faultbench {
namespace {

namespace fs = std::filesystem;

int ReadNode(const fs::path& file) {
  int node = -1;
  return absl::SimpleAtoi(ReadFirstLine(file), &node) ? node : -1;
}

// The nvdimm side: the parent "dax" device names the namespace, whose mode
// is the kernel's word for what ndctl calls devdax.
void ReadNamespace(const fs::path& dax_device, DevDaxFacts& facts) {
  const fs::path parent = dax_device.parent_path();
  facts.namespace_name = ReadFirstLine(parent / "namespace");
  const std::string pages = ReadFirstLine(parent / "mode");  // nd_pfn's mode: where the struct pages are
  facts.struct_pages = pages == "ram" ? "mem" : pages == "pmem" ? "dev" : pages;
  if (facts.namespace_name.empty()) return;
  facts.region = parent.parent_path().filename();
  const std::string mode = ReadFirstLine(parent.parent_path() / facts.namespace_name / "mode");
  facts.namespace_mode = mode == "dax" ? "devdax" : mode;
}

}  // namespace

std::optional<DevDaxFacts> ReadDevDaxFacts(dev_t rdev) {
  const std::optional<pmstore::mapping::DeviceDax> device = pmstore::mapping::ReadDeviceDax(rdev);
  if (!device.has_value()) return std::nullopt;
  const fs::path real = device->sysfs_path;
  DevDaxFacts facts;
  facts.name = device->name;
  facts.dev_id = absl::StrCat(major(rdev), ":", minor(rdev));
  facts.sysfs_path = device->sysfs_path;
  facts.size = device->size;
  facts.align = device->align;
  facts.numa_node = ReadNode(real / "numa_node");
  facts.target_node = ReadNode(real / "target_node");
  facts.resource = ReadNumber(real / "resource", /*hex=*/true).value_or(0);
  ReadNamespace(real, facts);
  return facts;
}

std::optional<DevDaxFacts> ReadDevDaxFactsOfPath(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return std::nullopt;
  return ReadDevDaxFacts(st.st_rdev);
}

}  // namespace faultbench
