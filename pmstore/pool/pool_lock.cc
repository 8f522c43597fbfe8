#include "pmstore/pool/pool_lock.h"

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
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
// which has it open read-only". Empty when nobody holds it any more: the
// holder closed it between the refused lock and this question.
std::optional<std::string> Holder(env::Env* env, int fd) {
  struct flock how = Range(F_WRLCK, 0, 1);
  std::string mode = "open";
  if (env->Lock(fd, F_OFD_GETLK, &how) == 0) {
    if (how.l_type == F_UNLCK) return std::nullopt;
    mode = how.l_type == F_RDLCK ? "open read-only" : "open for writing";
  }
  struct flock query = Range(F_WRLCK, kHolderPidBase, kMaxPid);
  if (env->Lock(fd, F_OFD_GETLK, &query) != 0 || query.l_type == F_UNLCK) {
    return absl::StrCat("another process (which has not yet recorded its pid), which has it ", mode);
  }
  // Never this process: its second open was refused before the lock
  // (OpenPools).
  const pid_t pid = static_cast<pid_t>(query.l_start - kHolderPidBase);
  return absl::StrCat("process ", pid, ", which has it ", mode);
}

// How many times the lock is asked for while, each time, its holder closes
// the pool before it can be named. Bounded: processes that open and close
// the pool in a tight loop must not keep this open spinning.
constexpr int kTriesWhenTheHolderLeft = 3;

// The pools this process has open: (device, inode) to the claim's owner.
// A child forked after an open inherits the parent's entries, which name
// the parent's pid: the child may open those pools itself (its copies of
// the parent's stores refuse every call, StoreImpl::Forked).
class OpenPools {
 public:
  static OpenPools& Get() {
    static OpenPools* const table = new OpenPools;  // never destroyed: stores may close during exit
    return *table;
  }

  // A token for the new claim, or 0 when this process holds one already.
  uint64_t Claim(dev_t dev, ino_t ino) {
    std::lock_guard<std::mutex> lock(mu_);
    Owner& owner = owners_[{dev, ino}];
    if (owner.token != 0 && owner.pid == getpid()) return 0;
    owner = Owner{getpid(), ++last_token_};
    return owner.token;
  }
  void Release(dev_t dev, ino_t ino, uint64_t token) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = owners_.find({dev, ino});
    if (it != owners_.end() && it->second.token == token && it->second.pid == getpid()) owners_.erase(it);
  }

 private:
  OpenPools() {
    // A thread of the parent holding the mutex at a fork would leave it
    // held for ever in the child.
    pthread_atfork([] { Get().mu_.lock(); }, [] { Get().mu_.unlock(); }, [] { Get().mu_.unlock(); });
  }

  struct Owner {
    pid_t pid = 0;
    uint64_t token = 0;
  };
  std::mutex mu_;
  absl::flat_hash_map<std::pair<dev_t, ino_t>, Owner> owners_;
  uint64_t last_token_ = 0;
};

}  // namespace

PoolLock& PoolLock::operator=(PoolLock&& other) noexcept {
  if (this != &other) {
    if (token_ != 0) OpenPools::Get().Release(dev_, ino_, token_);
    dev_ = other.dev_;
    ino_ = other.ino_;
    token_ = std::exchange(other.token_, 0);
  }
  return *this;
}

PoolLock::~PoolLock() {
  if (token_ != 0) OpenPools::Get().Release(dev_, ino_, token_);
}

absl::StatusOr<PoolLock> LockPool(env::Env* env, int fd, const std::string& path, LockKind kind) {
  struct stat st;
  if (const int err = env->Fstat(fd, &st); err != 0) return base::ErrnoStatus(err, "fstat", path);
  PoolLock claim;
  // A device DAX pool is its device, whichever node names it.
  claim.dev_ = S_ISCHR(st.st_mode) ? st.st_rdev : st.st_dev;
  claim.ino_ = S_ISCHR(st.st_mode) ? 0 : st.st_ino;
  claim.token_ = OpenPools::Get().Claim(claim.dev_, claim.ino_);
  if (claim.token_ == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": pool already open in this process (a process opens a pool once and shares that Store between "
              "its threads, as LMDB opens an environment once; use the open one, or close it first)"));
  }
  const short type = kind == LockKind::kShared ? F_RDLCK : F_WRLCK;
  int err = 0;
  for (int tries = 1;; ++tries) {
    struct flock lock = Range(type, 0, 1);
    err = env->Lock(fd, F_OFD_SETLK, &lock);
    if (err != EAGAIN && err != EACCES) break;
    std::optional<std::string> holder = Holder(env, fd);
    if (!holder.has_value() && tries < kTriesWhenTheHolderLeft) continue;
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": pool in use by ", holder.value_or("other processes, which open and close it in turn"),
                     " (a pool open for writing is open nowhere else; read-only opens share it with each other: "
                     "close it there first)"));
  }
  if (err != 0) return base::ErrnoStatus(err, "fcntl(F_OFD_SETLK)", path);
  struct flock pid = Range(F_RDLCK, kHolderPidBase + getpid(), 1);
  const int pid_err = env->Lock(fd, F_OFD_SETLK, &pid);
  if (pid_err != 0) return base::ErrnoStatus(pid_err, "fcntl(F_OFD_SETLK)", path);
  return claim;
}

}  // namespace pmstore::internal
