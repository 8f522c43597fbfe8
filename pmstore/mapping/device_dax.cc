#include "pmstore/mapping/device_dax.h"

#include <sys/sysmacros.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "pmstore/base/kernel_file.h"

namespace pmstore::mapping {

namespace fs = std::filesystem;

std::optional<DeviceDax> ReadDeviceDax(dev_t rdev) {
  std::error_code ec;
  const fs::path real = fs::canonical(absl::StrCat("/sys/dev/char/", major(rdev), ":", minor(rdev)), ec);
  if (ec) return std::nullopt;
  const std::string subsystem = fs::canonical(real / "subsystem", ec).filename();
  if (ec || subsystem != "dax") return std::nullopt;  // /sys/bus/dax or /sys/class/dax
  DeviceDax device;
  device.name = real.filename();
  device.sysfs_path = real.string();
  device.size = base::ReadNumber(real / "size").value_or(0);
  // Kernels before the device's own align keep it on the region.
  device.align = base::ReadNumber(real / "align").value_or(base::ReadNumber(real.parent_path() / "align").value_or(0));
  return device;
}

}  // namespace pmstore::mapping
