// A block device as sysfs describes it: its name, its NUMA node, and for
// pmem its physical range. One reader for doctor (the device behind a
// path) and numa/ (numactl's block:DEV and file:PATH), so both name the
// same node for the same device.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace faultbench {

struct BlockFacts {
  std::string device;   // "vda", "pmem0"; "" when the file system has no block device
  std::string dev_id;   // "254:0"
  // The first numa_node up the device's sysfs path (the device, then the
  // bus devices above it), as the kernel reports it: -1 when none says.
  int numa_node = -1;
  bool pmem = false;    // a pmem (nd_pmem) block device
  uint64_t pmem_start = 0, pmem_size = 0;  // physical range of a pmem namespace
};

// The block device of device number `dev` (a file's st_dev), from
// /sys/dev/block/MAJ:MIN; `device` stays "" when there is none (tmpfs,
// overlay, 9p, ...).
BlockFacts ReadBlockFacts(dev_t dev);

// The block device named `name` ("vda", "pmem0", "nvme0n1p1"), from
// /sys/class/block; nullopt when there is no such device.
std::optional<BlockFacts> ReadBlockFactsByName(const std::string& name);

}  // namespace faultbench
