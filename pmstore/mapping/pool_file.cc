#include "pmstore/mapping/pool_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/units.h"
#include "pmstore/env/env.h"

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
absl::Status Allocate(env::Env* env, int fd, const std::string& path, uint64_t from, uint64_t to) {
  const int err = env::RetryInterrupted(
      [&] { return env->Fallocate(fd, static_cast<off_t>(from), static_cast<off_t>(to - from)); });
  if (err == 0) return absl::OkStatus();
  return ErrnoStatus(err, "fallocate", absl::StrCat(path, ", ", to - from, " bytes at offset ", from));
}

// An open descriptor, closed unless released.
class OpenFd {
 public:
  OpenFd(env::Env* env, int fd) : env_(env), fd_(fd) {}
  ~OpenFd() {
    if (fd_ >= 0) env_->Close(fd_);  // a descriptor nothing was written through: nothing to report
  }
  OpenFd(const OpenFd&) = delete;
  OpenFd& operator=(const OpenFd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  env::Env* env_;
  int fd_;
};

}  // namespace

bool IsDax(int fd) {
  struct statx stx {};
  if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx) != 0) return false;
  return (stx.stx_attributes_mask & STATX_ATTR_DAX) && (stx.stx_attributes & STATX_ATTR_DAX);
}

absl::StatusOr<PoolFile> PoolFile::Open(const std::string& path, OpenMode mode, uint64_t size, env::Env* env,
                                        mode_t permissions) {
  int flags = (mode == OpenMode::kOpenReadOnly ? O_RDONLY : O_RDWR) | O_CLOEXEC;
  if (mode == OpenMode::kCreateOrOpen) flags |= O_CREAT;
  if (mode == OpenMode::kCreateExclusive) flags |= O_CREAT | O_EXCL;

  // Know whether we create the file, so a failed allocation removes only
  // a file this call made.
  struct stat before {};
  const int missing = env->Stat(path, &before);
  if (missing != 0 && missing != ENOENT) return ErrnoStatus(missing, "stat", path);
  const bool existed = missing == 0;
  const bool creates = mode == OpenMode::kCreateOrOpen || mode == OpenMode::kCreateExclusive;
  if (creates && !existed && size == 0) {
    return absl::InvalidArgumentError(absl::StrCat("cannot create ", path, " with size 0"));
  }
  int raw_fd = -1;
  const int err = env::RetryInterrupted([&] { return env->Open(path, flags, permissions, &raw_fd); });
  if (err == EISDIR) return absl::InvalidArgumentError(absl::StrCat(path, " is a directory, not a file"));
  if (err != 0) return ErrnoStatus(err, "open", path);
  OpenFd fd(env, raw_fd);

  struct stat st {};
  if (const int stat_err = env->Fstat(fd.get(), &st); stat_err != 0) return ErrnoStatus(stat_err, "fstat", path);
  if (!S_ISREG(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat(path, " is not a regular file"));
  uint64_t file_size = static_cast<uint64_t>(st.st_size);
  const bool created = !existed && file_size == 0;
  if (created) {
    file_size = RoundUp(size, kHugePageSize);
    if (auto status = Allocate(env, fd.get(), path, 0, file_size); !status.ok()) {
      env->Unlink(path);  // this call made it; removing it is best effort
      return status;
    }
  }
  const bool dax = IsDax(fd.get());
  return PoolFile(env, fd.release(), path, file_size, dax);
}

absl::StatusOr<PoolFile> PoolFile::OpenDevice(const std::string& path, uint64_t size, env::Env* env,
                                               bool read_only) {
  if (size == 0) return absl::InvalidArgumentError(absl::StrCat("cannot map 0 bytes of ", path));
  // No O_CREAT: a missing device node must not become a regular file in /dev.
  int raw_fd = -1;
  const int flags = (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC;
  const int err = env::RetryInterrupted([&] { return env->Open(path, flags, 0, &raw_fd); });
  if (err != 0) return ErrnoStatus(err, "open", path);
  OpenFd fd(env, raw_fd);
  struct stat st {};
  if (env->Fstat(fd.get(), &st) != 0 || !S_ISCHR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a character device (device DAX is /dev/daxX.Y)"));
  }
  return PoolFile(env, fd.release(), path, size, /*dax=*/true, /*device=*/true);
}

PoolFile::PoolFile(env::Env* env, int fd, std::string path, uint64_t size, bool dax, bool device)
    : env_(env), fd_(fd), path_(std::move(path)), size_(size), dax_(dax), device_(device) {}

PoolFile::PoolFile(PoolFile&& other) noexcept
    : env_(other.env_),
      fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      size_(other.size_),
      dax_(other.dax_),
      device_(other.device_) {}

PoolFile& PoolFile::operator=(PoolFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) env_->Close(fd_);
    env_ = other.env_;
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    size_ = other.size_;
    dax_ = other.dax_;
    device_ = other.device_;
  }
  return *this;
}

// Everything written through the file was synced before (its owner made
// it durable, or reported why not): a failing close loses nothing.
PoolFile::~PoolFile() {
  if (fd_ >= 0) env_->Close(fd_);
}

namespace {

absl::Status RenameOnly(env::Env* env, const std::string& from, const std::string& to) {
  const int err = env->RenameNoReplace(from, to);
  if (err == 0) return absl::OkStatus();
  if (err == EEXIST) return absl::AlreadyExistsError(absl::StrCat(to, " already exists"));
  return ErrnoStatus(err, "rename", absl::StrCat(from, " to ", to));
}

// Makes a new name in the directory durable.
absl::Status SyncParentDirectory(env::Env* env, const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  const std::string dir = parent.empty() ? std::string(".") : parent;
  int raw_fd = -1;
  const int err = env::RetryInterrupted([&] { return env->Open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, &raw_fd); });
  if (err != 0) return ErrnoStatus(err, "open", absl::StrCat("directory ", dir));
  OpenFd fd(env, raw_fd);
  const int sync_err = env::RetryInterrupted([&] { return env->Fsync(fd.get()); });
  if (sync_err != 0) return ErrnoStatus(sync_err, "fsync", absl::StrCat("directory ", dir));
  return absl::OkStatus();
}

}  // namespace

absl::Status PoolFile::PublishAs(const std::string& new_path) {
  if (device_) return absl::FailedPreconditionError(absl::StrCat(path_, " is a device: it is not renamed"));
  const int err = env::RetryInterrupted([&] { return env_->Fsync(fd_); });
  if (err != 0) return ErrnoStatus(err, "fsync", path_);
  PMSTORE_RETURN_IF_ERROR(RenameOnly(env_, path_, new_path));
  path_ = new_path;
  return SyncParentDirectory(env_, new_path);
}

absl::Status PoolFile::Remove() {
  if (device_) return absl::FailedPreconditionError(absl::StrCat(path_, " is a device: it is not removed"));
  const int err = env_->Unlink(path_);
  if (err != 0) return ErrnoStatus(err, "unlink", path_);
  return SyncParentDirectory(env_, path_);
}

absl::Status RenameNoReplace(const std::string& from, const std::string& to, env::Env* env) {
  PMSTORE_RETURN_IF_ERROR(RenameOnly(env, from, to));
  return SyncParentDirectory(env, to);
}

absl::Status PoolFile::SyncData() const {
  const int err = env::RetryInterrupted([&] { return env_->Fdatasync(fd_); });
  if (err != 0) return ErrnoStatus(err, "fdatasync", path_);
  return absl::OkStatus();
}

absl::Status PoolFile::Refresh() {
  if (device_) return absl::OkStatus();
  struct stat st;
  if (const int err = env_->Fstat(fd_, &st); err != 0) return ErrnoStatus(err, "fstat", path_);
  size_ = static_cast<uint64_t>(st.st_size);
  return absl::OkStatus();
}

absl::Status PoolFile::Grow(uint64_t new_size) {
  new_size = RoundUp(new_size, kHugePageSize);
  if (new_size <= size_) return absl::OkStatus();
  if (device_) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot grow ", path_, " to ", new_size, " bytes: a device keeps its size"));
  }
  if (auto status = Allocate(env_, fd_, path_, size_, new_size); !status.ok()) {
    // fallocate may have extended i_size before failing: put it back so the
    // file keeps its old size.
    const int err = env::RetryInterrupted([&] { return env_->Ftruncate(fd_, static_cast<off_t>(size_)); });
    if (err != 0) return ErrnoStatus(err, "ftruncate", absl::StrCat(path_, ", undoing a failed grow"));
    return status;
  }
  size_ = new_size;
  return absl::OkStatus();
}

}  // namespace pmstore::mapping
