// A file that the mapping layer maps: opened or created, sized in 2 MiB
// multiples, its space preallocated; or a device DAX character device
// (/dev/daxX.Y), which is opened as it is.
//
// Preallocation is the point: a mapping over a sparse file turns a full
// disk into SIGBUS at the first store into a hole. Allocating with
// fallocate(2) at create and grow time turns it into a clear error instead.
//
// Thread-compatible: one thread at a time, or external locking.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "pmstore/env/env.h"

namespace pmstore::mapping {

enum class OpenMode {
  kOpenExisting,    // fail with NotFound when the file is missing
  kOpenReadOnly,    // the same, opened O_RDONLY: map it privately (MapOptions::private_copy)
  kCreateOrOpen,    // create when missing (sized as asked), else open as is
  kCreateExclusive  // fail with AlreadyExists when the file is there
};

class PoolFile {
 public:
  // Opens `path` read-write (kOpenReadOnly: read-only). When the file is
  // created, its size is `size` rounded up to 2 MiB and all of it is
  // allocated, and its permissions are `permissions` less the umask, as
  // open(2) gives them; an existing file keeps its size (`size` is then
  // ignored) and its permissions. Errors: NotFound,
  // AlreadyExists, PermissionDenied, ResourceExhausted (no space: the
  // partially created file is removed), InvalidArgument (a directory, or
  // creating with size 0). Messages name the call and the path. Every
  // system call goes through `env` (the mapping of the file too).
  static absl::StatusOr<PoolFile> Open(const std::string& path, OpenMode mode, uint64_t size,
                                       env::Env* env = env::Env::Default(), mode_t permissions = 0644);

  // Opens the device DAX character device at `path` read-write (or, with
  // `read_only`, O_RDONLY: map it with MapOptions::read_only), to map its
  // first `size` bytes. The device's size and align are sysfs facts the
  // caller reads; `size` must be a multiple of the align (the driver
  // refuses other mappings with EINVAL). A device is never created, grown
  // or renamed (Grow and PublishAs fail with FailedPrecondition); dax() is
  // true. Errors: NotFound, PermissionDenied, InvalidArgument (not a
  // character device, or size 0).
  static absl::StatusOr<PoolFile> OpenDevice(const std::string& path, uint64_t size,
                                             env::Env* env = env::Env::Default(), bool read_only = false);

  PoolFile(PoolFile&& other) noexcept;
  PoolFile& operator=(PoolFile&& other) noexcept;
  PoolFile(const PoolFile&) = delete;
  PoolFile& operator=(const PoolFile&) = delete;
  ~PoolFile();

  // Grows the file to `new_size` rounded up to 2 MiB and allocates the new
  // space. ResourceExhausted when the file system is full; the file then
  // keeps its old size and contents.
  absl::Status Grow(uint64_t new_size);

  // Learns the size another process's Grow gave the file (a reader that
  // follows that process's commits). A device's size never changes.
  absl::Status Refresh();

  // fdatasync: makes the file's data and length durable (after Grow, the
  // new length). The error names the call and the file.
  absl::Status SyncData() const;

  // Gives the file the name `new_path` atomically, failing with
  // AlreadyExists instead of replacing a file of that name, and makes the
  // new name durable (fsync of the directory). Create a file under a
  // temporary name, fill it, then publish it this way: a crash in between
  // never leaves a half-made file under the real name.
  absl::Status PublishAs(const std::string& new_path);

  // Unlinks the file by its path and makes the removal durable (fsync of
  // the directory); the descriptor stays open until the PoolFile goes.
  // FailedPrecondition for a device, which is never removed.
  absl::Status Remove();

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // statx STATX_ATTR_DAX: loads and stores reach the media without the page cache.
  bool dax() const { return dax_; }
  bool device() const { return device_; }  // a device DAX character device (OpenDevice)
  env::Env* env() const { return env_; }

 private:
  PoolFile(env::Env* env, int fd, std::string path, uint64_t size, bool dax, bool device = false);

  env::Env* env_ = nullptr;
  int fd_ = -1;
  std::string path_;
  uint64_t size_ = 0;
  bool dax_ = false;
  bool device_ = false;
};

// Renames `from` to `to` atomically, failing with AlreadyExists instead of
// replacing a file of that name, and makes the new name durable (fsync of
// the directory). PublishAs's rename, for a file that is not open.
absl::Status RenameNoReplace(const std::string& from, const std::string& to, env::Env* env = env::Env::Default());

// True when statx reports STATX_ATTR_DAX for the open file.
bool IsDax(int fd);

}  // namespace pmstore::mapping
