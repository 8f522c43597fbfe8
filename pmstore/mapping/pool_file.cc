#include "pmstore/mapping/pool_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/units.h"

#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX 0x00200000
#endif

namespace pmstore::mapping {
namespace {

using base::ErrnoStatus;
using base::kHugePageSize;
using base::RoundUp;

// Allocates [from, to) of the file. fallocate, not ftruncate: the blocks
// must exist now so that a store through the mapping cannot hit a hole on
// a full file system.
absl::Status Allocate(int fd, const std::string& path, uint64_t from, uint64_t to) {
  if (fallocate(fd, 0, static_cast<off_t>(from), static_cast<off_t>(to - from)) == 0) {
    return absl::OkStatus();
  }
  const int err = errno;
  return ErrnoStatus(err, absl::StrCat("fallocate ", to - from, " bytes at offset ", from, " of"), path);
}

}  // namespace

bool IsDax(int fd) {
  struct statx stx {};
  if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx) != 0) return false;
  return (stx.stx_attributes_mask & STATX_ATTR_DAX) && (stx.stx_attributes & STATX_ATTR_DAX);
}

absl::StatusOr<PoolFile> PoolFile::Open(const std::string& path, OpenMode mode, uint64_t size) {
  int flags = O_RDWR | O_CLOEXEC;
  if (mode == OpenMode::kCreateOrOpen) flags |= O_CREAT;
  if (mode == OpenMode::kCreateExclusive) flags |= O_CREAT | O_EXCL;

  // Know whether we create the file, so a failed allocation removes only
  // a file this call made.
  bool existed = access(path.c_str(), F_OK) == 0;
  if (mode != OpenMode::kOpenExisting && !existed && size == 0) {
    return absl::InvalidArgumentError(absl::StrCat("cannot create ", path, " with size 0"));
  }
  const int fd = open(path.c_str(), flags, 0644);
  if (fd < 0 && errno == EISDIR) return absl::InvalidArgumentError(absl::StrCat(path, " is a directory, not a file"));
  if (fd < 0) return ErrnoStatus(errno, "open", path);

  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return ErrnoStatus(err, "fstat", path);
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a regular file"));
  }
  uint64_t file_size = static_cast<uint64_t>(st.st_size);
  const bool created = !existed && file_size == 0;
  if (created) {
    file_size = RoundUp(size, kHugePageSize);
    if (auto status = Allocate(fd, path, 0, file_size); !status.ok()) {
      close(fd);
      unlink(path.c_str());
      return status;
    }
  }
  return PoolFile(fd, path, file_size, IsDax(fd));
}

absl::StatusOr<PoolFile> PoolFile::OpenDevice(const std::string& path, uint64_t size) {
  if (size == 0) return absl::InvalidArgumentError(absl::StrCat("cannot map 0 bytes of ", path));
  // No O_CREAT: a missing device node must not become a regular file in /dev.
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "open", path);
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a character device (device DAX is /dev/daxX.Y)"));
  }
  return PoolFile(fd, path, size, /*dax=*/true, /*device=*/true);
}

PoolFile::PoolFile(int fd, std::string path, uint64_t size, bool dax, bool device)
    : fd_(fd), path_(std::move(path)), size_(size), dax_(dax), device_(device) {}

PoolFile::PoolFile(PoolFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      size_(other.size_),
      dax_(other.dax_),
      device_(other.device_) {}

PoolFile& PoolFile::operator=(PoolFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    size_ = other.size_;
    dax_ = other.dax_;
    device_ = other.device_;
  }
  return *this;
}

PoolFile::~PoolFile() {
  if (fd_ >= 0) close(fd_);
}

namespace {

absl::Status RenameOnly(const std::string& from, const std::string& to) {
  if (renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return absl::OkStatus();
  const int err = errno;
  if (err == EEXIST) return absl::AlreadyExistsError(absl::StrCat(to, " already exists"));
  return ErrnoStatus(err, absl::StrCat("rename ", from, " to"), to);
}

// Makes a new name in the directory durable.
absl::Status SyncParentDirectory(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const int dir_fd = open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return ErrnoStatus(errno, "open directory", dir);
  const int rc = fsync(dir_fd);
  const int err = errno;
  close(dir_fd);
  if (rc != 0) return ErrnoStatus(err, "fsync directory", dir);
  return absl::OkStatus();
}

}  // namespace

absl::Status PoolFile::PublishAs(const std::string& new_path) {
  if (device_) return absl::FailedPreconditionError(absl::StrCat(path_, " is a device: it is not renamed"));
  if (fsync(fd_) != 0) return ErrnoStatus(errno, "fsync", path_);
  PMSTORE_RETURN_IF_ERROR(RenameOnly(path_, new_path));
  path_ = new_path;
  return SyncParentDirectory(new_path);
}

absl::Status RenameNoReplace(const std::string& from, const std::string& to) {
  PMSTORE_RETURN_IF_ERROR(RenameOnly(from, to));
  return SyncParentDirectory(to);
}

absl::Status PoolFile::SyncData() const {
  if (fdatasync(fd_) != 0) return ErrnoStatus(errno, "fdatasync", path_);
  return absl::OkStatus();
}

absl::Status PoolFile::Grow(uint64_t new_size) {
  new_size = RoundUp(new_size, kHugePageSize);
  if (new_size <= size_) return absl::OkStatus();
  if (device_) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot grow ", path_, " to ", new_size, " bytes: a device keeps its size"));
  }
  if (auto status = Allocate(fd_, path_, size_, new_size); !status.ok()) {
    // fallocate may have extended i_size before failing: put it back so the
    // file keeps its old size.
    if (ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
      return ErrnoStatus(errno, "ftruncate (undoing a failed grow)", path_);
    }
    return status;
  }
  size_ = new_size;
  return absl::OkStatus();
}

}  // namespace pmstore::mapping
