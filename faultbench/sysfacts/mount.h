// The mount that holds a path, from /proc/self/mountinfo: file system,
// source, options, and the options that decide huge pages (dax=, tmpfs
// huge=). Read by doctor (what backs a path) and by run (whether a run's
// directory is a DAX mount worth tracing).
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace faultbench {

struct MountFacts {
  std::string mount_point;
  std::string fs_type;      // "ext4", "xfs", "tmpfs", ...
  std::string source;       // "/dev/pmem0", "tmpfs", ...
  std::string options;      // mount and super options, comma separated
  std::string dax_option;   // "always", "never", "inode" or "" when not given
  std::string tmpfs_huge;   // tmpfs huge= value, "" when not tmpfs or not given
};

// The mount that holds `path` (the longest mount point that prefixes its
// real path), from /proc/self/mountinfo.
absl::StatusOr<MountFacts> ReadMountFacts(const std::string& real_path);

// Parses one line of /proc/self/mountinfo; nullopt for a malformed line.
std::optional<MountFacts> ParseMountInfoLine(const std::string& line);

}  // namespace faultbench
