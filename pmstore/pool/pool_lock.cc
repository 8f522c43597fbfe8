#include "pmstore/pool/pool_lock.h"

#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "pmstore/base/errno_status.h"

namespace pmstore::internal {
namespace {

// Where the holder's pid is recorded: far beyond any pool's length (locks
// need no bytes behind them), with room for every pid (pid_max is at most
// 2^22).
constexpr off_t kHolderPidBase = off_t{1} << 40;
constexpr off_t kMaxPid = off_t{1} << 22;

struct flock Range(short type, off_t start, off_t length) {
  struct flock lock = {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = start;
  lock.l_len = length;
  return lock;
}

// Who holds the pool and how, for the refusal's message: "process 1234,
// which has it open read-only".
std::string Holder(env::Env* env, int fd) {
  struct flock how = Range(F_WRLCK, 0, 1);
  const bool read_only = env->Lock(fd, F_OFD_GETLK, &how) == 0 && how.l_type == F_RDLCK;
  const std::string mode = read_only ? "read-only" : "for writing";
  struct flock query = Range(F_WRLCK, kHolderPidBase, kMaxPid);
  if (env->Lock(fd, F_OFD_GETLK, &query) != 0 || query.l_type == F_UNLCK) {
    return absl::StrCat("another process (which has not yet recorded its pid), which has it open ", mode);
  }
  const pid_t pid = static_cast<pid_t>(query.l_start - kHolderPidBase);
  if (pid == getpid()) return absl::StrCat("this process, which has it open ", mode, " (another open of it)");
  return absl::StrCat("process ", pid, ", which has it open ", mode);
}

}  // namespace

absl::Status LockPool(env::Env* env, int fd, const std::string& path, LockKind kind) {
  struct flock lock = Range(kind == LockKind::kShared ? F_RDLCK : F_WRLCK, 0, 1);
  const int err = env->Lock(fd, F_OFD_SETLK, &lock);
  if (err == EAGAIN || err == EACCES) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": pool in use by ", Holder(env, fd),
                     " (a pool open for writing is open nowhere else; read-only opens share it with each other: "
                     "close it there first)"));
  }
  if (err != 0) return base::ErrnoStatus(err, "fcntl(F_OFD_SETLK)", path);
  struct flock pid = Range(F_RDLCK, kHolderPidBase + getpid(), 1);
  const int pid_err = env->Lock(fd, F_OFD_SETLK, &pid);
  if (pid_err != 0) return base::ErrnoStatus(pid_err, "fcntl(F_OFD_SETLK)", path);
  return absl::OkStatus();
}

}  // namespace pmstore::internal
