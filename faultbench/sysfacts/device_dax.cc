#include "faultbench/sysfacts/device_dax.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "faultbench/sysfacts/read_file.h"

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
  const std::string dev_id = absl::StrCat(major(rdev), ":", minor(rdev));
  std::error_code ec;
  const fs::path real = fs::canonical("/sys/dev/char/" + dev_id, ec);
  if (ec) return std::nullopt;
  const std::string subsystem = fs::canonical(real / "subsystem", ec).filename();
  if (ec || subsystem != "dax") return std::nullopt;  // /sys/bus/dax or /sys/class/dax
  DevDaxFacts facts;
  facts.name = real.filename();
  facts.dev_id = dev_id;
  facts.sysfs_path = real.string();
  facts.size = ReadNumber(real / "size").value_or(0);
  facts.align = ReadNumber(real / "align").value_or(0);
  // kernels before the device's own align
  if (facts.align == 0) facts.align = ReadNumber(real.parent_path() / "align").value_or(0);
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
