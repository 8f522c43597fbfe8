// What sysfs says about a device DAX character device (/dev/daxX.Y): its
// size and the align every mapping of it gets. The store sizes a pool on
// the device from these, and maps it at the align's page size (the driver
// refuses a mapping whose address or length is not a multiple of it);
// faultbench's fuller report (faultbench/sysfacts/device_dax.h) starts
// from the same reading.
//
// sysfs (Linux 5.10 - 7.x): /sys/dev/char/MAJ:MIN is the dax device, its
// subsystem /sys/bus/dax (or /sys/class/dax before the dax bus); `align`
// is the device's own from 5.10 on, its region's before.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace pmstore::mapping {

struct DeviceDax {
  std::string name;        // "dax0.0"
  std::string sysfs_path;  // canonical /sys/devices/... of the dax device
  uint64_t size = 0;       // bytes; 0 when sysfs does not say
  uint64_t align = 0;      // bytes; 0 when sysfs does not say
};

// The dax device behind character device number `rdev` (st_rdev of
// /dev/daxX.Y); nullopt when that device is not a dax device.
std::optional<DeviceDax> ReadDeviceDax(dev_t rdev);

}  // namespace pmstore::mapping
