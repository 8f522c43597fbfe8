// Facts about a path and the machine, read from procfs, sysfs, statx and
// FIEMAP. Reading only: no verdicts here (see doctor.h), so each reader can
// be tested against the real system on its own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace faultbench::doctor {

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

struct ExtentFacts {
  bool examined = false;
  std::string why_not;          // set when !examined
  uint64_t extents = 0;
  uint64_t file_bytes = 0;      // bytes in 2 MiB chunks the file spans
  uint64_t aligned_bytes = 0;   // of those, in chunks one physical extent covers at 2 MiB alignment
};

// FIEMAP over the whole file. A 2 MiB chunk of the file counts as aligned
// when one extent covers all of it and physical == logical modulo 2 MiB:
// the condition for a DAX PMD fault (fs/dax.c).
ExtentFacts ReadExtentFacts(int fd);

struct ThpFacts {
  std::string enabled;        // the bracketed choice of .../transparent_hugepage/enabled
  std::string shmem_enabled;
  std::string defrag;
};
ThpFacts ReadThpFacts();

// The bracketed word of a sysfs choice line: "always [madvise] never" -> "madvise".
std::string SelectedChoice(const std::string& line);

struct BlockFacts {
  std::string device;   // "vda", "pmem0"; "" when the file system has no block device
  std::string dev_id;   // "254:0"
  int numa_node = -1;   // -1: unknown or not reported
  bool pmem = false;    // a pmem (nd_pmem) block device
  uint64_t pmem_start = 0, pmem_size = 0;  // physical range of a pmem namespace
};
BlockFacts ReadBlockFacts(dev_t dev);

// The PAT memtype(s) that debugfs lists over [start, start+size), e.g.
// "write-back"; "" when debugfs does not show it (not root, not mounted).
std::string ReadPatMemtype(uint64_t start, uint64_t size);

std::string KernelRelease();             // uname -r
bool KernelAtLeast(const std::string& release, int major, int minor);

}  // namespace faultbench::doctor
