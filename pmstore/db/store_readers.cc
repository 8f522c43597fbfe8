// Store::Readers and Store::ClearStaleReaders: the pool's reader table
// (share/lock_region.h), read without opening the pool.
#include <fcntl.h>
#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/format/superblock.h"
#include "pmstore/mapping/device_dax.h"
#include "pmstore/share/lock_region.h"
#include "pmstore/store.h"

namespace pmstore {
namespace {

// InvalidArgument when the file at `path` (a regular file, of `size`
// bytes) holds no pool's magic. A damaged pool is still a pool, whose
// readers are worth listing. (A device DAX device cannot be read(): for
// one, that it is device DAX is enough.)
absl::Status CheckIsPool(env::Env* env, const std::string& path, uint64_t size) {
  int fd = -1;
  if (const int err = env->Open(path, O_RDONLY | O_CLOEXEC, 0, &fd); err != 0) {
    return base::ErrnoStatus(err, "open", path);
  }
  char bytes[sizeof(internal::Superblock)] = {};
  size_t n = 0;
  const int err = env::RetryInterrupted([&] { return env->Pread(fd, bytes, sizeof(bytes), 0, &n); });
  env->Close(fd);
  if (err != 0) return base::ErrnoStatus(err, "pread", path);
  const absl::Status parsed = internal::ParseSuperblock(bytes, n, size, path).status();
  return absl::IsInvalidArgument(parsed) ? parsed : absl::OkStatus();
}

// The stat of the pool at `path`, whose device and inode name its table.
absl::StatusOr<struct stat> StatPool(env::Env* env, const std::string& path) {
  struct stat st;
  const int err = env->Stat(path, &st);
  if (err == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such pool"));
  if (err != 0) return base::ErrnoStatus(err, "stat", path);
  if (S_ISDIR(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, not a pool"));
  if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": neither a file nor a device DAX device, so not a pool"));
  }
  if (S_ISREG(st.st_mode)) PMSTORE_RETURN_IF_ERROR(CheckIsPool(env, path, st.st_size));
  if (S_ISCHR(st.st_mode) && !mapping::ReadDeviceDax(st.st_rdev).has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": a character device that is not device DAX; a pool lives in a file or on a device DAX device"));
  }
  return st;
}

}  // namespace

absl::StatusOr<std::vector<ReaderInfo>> Store::Readers(const std::string& path) {
  env::Env* env = env::Env::Default();
  PMSTORE_ASSIGN_OR_RETURN(const struct stat st, StatPool(env, path));
  PMSTORE_ASSIGN_OR_RETURN(const std::vector<internal::ReaderSlotInfo> slots, internal::ListReaders(env, st));
  std::vector<ReaderInfo> readers;
  readers.reserve(slots.size());
  for (const internal::ReaderSlotInfo& slot : slots) {
    readers.push_back({.slot = slot.slot,
                       .pid = slot.pid,
                       .writable = slot.writable,
                       .stale = slot.stale,
                       .opened_unix_ns = slot.opened_unix_ns,
                       .pinned_commit = slot.pinned_commit,
                       .last_commit = slot.last_commit});
  }
  return readers;
}

absl::StatusOr<int> Store::ClearStaleReaders(const std::string& path) {
  env::Env* env = env::Env::Default();
  PMSTORE_ASSIGN_OR_RETURN(const struct stat st, StatPool(env, path));
  return internal::ClearStaleReaders(env, st);
}

}  // namespace pmstore
