// A device DAX character device (/dev/daxX.Y) as sysfs describes it: its
// size, the align every mapping of it has, its NUMA node, and the nvdimm
// namespace it was made from. One reader for doctor (what the device is),
// run (how much to map, at which page size) and the placement report (the
// node DAX pages live on: move_pages(2) calls every DAX page absent).
//
// sysfs (Linux 5.10 - 6.x): /sys/dev/char/MAJ:MIN is the dax device (size,
// align, numa_node, target_node, resource; subsystem -> /sys/bus/dax, or
// /sys/class/dax before the dax bus); its parent is the nvdimm "dax" device
// (mode "ram" or "pmem": where the struct pages live; namespace), whose
// namespace says "dax" as its mode.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace faultbench {

struct DevDaxFacts {
  std::string name;           // "dax0.0"
  std::string dev_id;         // "252:0"
  std::string sysfs_path;     // canonical /sys/devices/... of the dax device
  uint64_t size = 0;          // bytes
  uint64_t align = 0;         // bytes: the only page size mappings of it get
  int numa_node = -1;         // the device's node, -1 when sysfs does not say
  int target_node = -1;       // the node its memory would join as system RAM (kmem)
  uint64_t resource = 0;      // physical start of its data
  std::string namespace_name; // "namespace0.0", "" when not from an nvdimm namespace
  std::string namespace_mode; // "devdax" (ndctl's name for the kernel's "dax"), or as sysfs says
  std::string struct_pages;   // "mem" (in RAM) or "dev" (on the device), ndctl's --map
  std::string region;         // "region0"
};

// The dax device behind character device number `rdev` (st_rdev of
// /dev/daxX.Y); nullopt when that device is not a dax device.
std::optional<DevDaxFacts> ReadDevDaxFacts(dev_t rdev);

// The same for a path: nullopt when `path` is not a dax character device.
std::optional<DevDaxFacts> ReadDevDaxFactsOfPath(const std::string& path);

}  // namespace faultbench
