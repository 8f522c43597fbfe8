#include "pmstore/pool/file_system.h"

#include <array>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "pmstore/base/errno_status.h"

namespace pmstore::internal {
namespace {

// Linux's network file systems, as /proc/self/mountinfo names them, and the
// FUSE ones whose backing is always remote. Other FUSE file systems are
// let be: their backing may be local (ntfs-3g).
constexpr std::array<std::string_view, 15> kNetworkFileSystems{
    "nfs",   "nfs4", "cifs",   "smb3",       "smbfs",          "ceph",      "afs",         "coda",
    "ncpfs", "9p",   "lustre", "fuse.sshfs", "fuse.glusterfs", "fuse.s3fs", "fuse.rclone",
};

constexpr std::array<std::string_view, 3> kInMemoryFileSystems{"tmpfs", "hugetlbfs", "ramfs"};

template <size_t N>
bool Among(const std::array<std::string_view, N>& names, std::string_view type) {
  for (std::string_view name : names) {
    if (name == type) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<FileSystemFacts> ExamineFileSystem(env::Env* env, const std::string& where,
                                                  const std::string& pool_path) {
  std::string type;
  if (const int err = env::RetryInterrupted([&] { return env->FileSystemType(where, &type); }); err != 0) {
    const absl::Status failed = base::ErrnoStatus(err, "statx", where);
    return absl::Status(failed.code(), absl::StrCat(pool_path, ": ", failed.message()));
  }
  if (Among(kNetworkFileSystems, type)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: a pool cannot live on %s, a network file system: it keeps a file's mapped pages coherent within "
        "one machine only, and makes nothing durable by a cache flush or an msync alone. Keep the pool on a "
        "local file system (ext4, xfs, tmpfs) or a DAX device; a closed pool may be copied off with cp",
        pool_path, type));
  }
  return FileSystemFacts{.in_memory = Among(kInMemoryFileSystems, type)};
}

}  // namespace pmstore::internal
