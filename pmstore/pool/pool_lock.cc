#include "pmstore/pool/pool_lock.h"

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "pmstore/base/errno_status.h"

namespace pmstore::internal {
namespace {

// Where the holders' pids are recorded: far beyond any pool's length
// (locks need no bytes behind them), with room for every pid (pid_max is
// at most 2^22); read-only opens in one range, writable ones in the next,
// so that a refusal names the holder of the lock it met.
constexpr off_t kHolderPidBase = off_t{1} << 40;
constexpr off_t kMaxPid = off_t{1} << 22;
constexpr off_t kWriterPidBase = kHolderPidBase + kMaxPid;

struct flock Range(short type, off_t start, off_t length) {
  struct flock lock = {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = start;
  lock.l_len = length;
  return lock;
}

// The two locked bytes (pool_lock.h).
constexpr off_t kOpenByte = 0;
constexpr off_t kWriterByte = 1;

// How the open holding a lock on `byte` that conflicts with `wanted`
// holds the pool, and whether its lock is a write lock; empty when none
// does (it closed the pool since).
std::optional<std::pair<std::string, bool>> Mode(env::Env* env, int fd, off_t byte, short wanted) {
  struct flock how = Range(wanted, byte, 1);
  if (env->Lock(fd, F_OFD_GETLK, &how) != 0) return std::pair<std::string, bool>("open", false);
  if (how.l_type == F_UNLCK) return std::nullopt;
  const bool written = how.l_type == F_WRLCK;
  if (byte == kOpenByte)
    return std::pair<std::string, bool>(written ? "open for writing, alone (Options::exclusive)" : "open", written);
  return std::pair<std::string, bool>(
      written ? "open for writing"
              : "open read-only, alone (Options::exclusive, or it recovered a crash's last commit in its own memory)",
      written);
}

// The pid one of the opens that hold the pool records in the range at
// `base` (a read lock on base + pid), or 0 when none does.
pid_t RecordedPid(env::Env* env, int fd, off_t base) {
  struct flock query = Range(F_WRLCK, base, kMaxPid);
  if (env->Lock(fd, F_OFD_GETLK, &query) != 0 || query.l_type == F_UNLCK) return 0;
  return static_cast<pid_t>(query.l_start - base);
}

// Who holds the pool and how, for the refusal's message: "process 1234,
// which has it open for writing". Empty when nobody holds the conflicting
// lock any more: the holder closed the pool between the refused lock and
// this question.
std::optional<std::string> Holder(env::Env* env, int fd, off_t byte, short wanted) {
  const auto mode = Mode(env, fd, byte, wanted);
  if (!mode.has_value()) return std::nullopt;
  // A write lock is a writable open's: its pid is in the writers' range.
  // Never this process: its second open was refused before the lock
  // (OpenPools).
  pid_t pid = mode->second ? 0 : RecordedPid(env, fd, kHolderPidBase);
  if (pid == 0) pid = RecordedPid(env, fd, kWriterPidBase);
  if (pid == 0) return absl::StrCat("another process (which has not yet recorded its pid), which has it ", mode->first);
  return absl::StrCat("process ", pid, ", which has it ", mode->first);
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
    writer_present_ = other.writer_present_;
  }
  return *this;
}

PoolLock::~PoolLock() {
  if (token_ != 0) OpenPools::Get().Release(dev_, ino_, token_);
}

absl::Status PoolLock::AdmitWriters(env::Env* env, int fd, const std::string& path) {
  struct flock unlock = Range(F_UNLCK, kWriterByte, 1);
  const int err = env->Lock(fd, F_OFD_SETLK, &unlock);
  return err == 0 ? absl::OkStatus() : base::ErrnoStatus(err, "fcntl(F_OFD_SETLK)", path);
}

namespace {

// How long a writer waits for the writer byte while a read-only open holds
// it for reading: such an open holds it for the whole of its open call
// only, unless it is alone (then the wait ends in the refusal).
constexpr auto kWriterByteWait = std::chrono::seconds(1);
constexpr auto kWriterByteRetry = std::chrono::milliseconds(5);

// Takes `type` on `byte`. EAGAIN (as fcntl says it) when another open's
// lock conflicts after the waits above; *conflict then names it.
int TakeByte(env::Env* env, int fd, off_t byte, short type, std::optional<std::string>* conflict) {
  const auto give_up = std::chrono::steady_clock::now() + kWriterByteWait;
  for (int tries = 1;; ++tries) {
    struct flock lock = Range(type, byte, 1);
    int err = env->Lock(fd, F_OFD_SETLK, &lock);
    if (err == EACCES) err = EAGAIN;
    if (err != EAGAIN) return err;
    *conflict = Holder(env, fd, byte, type);
    if (!conflict->has_value() && tries < kTriesWhenTheHolderLeft) continue;
    // A writer behind a read-only open's lock on the writer byte.
    const bool behind_reader = byte == kWriterByte && type == F_WRLCK &&
                               conflict->value_or("").find("open read-only") != std::string::npos;  // Mode's words
    if (!behind_reader || std::chrono::steady_clock::now() >= give_up) return EAGAIN;
    std::this_thread::sleep_for(kWriterByteRetry);
  }
}

}  // namespace

absl::Status PoolLock::ShutOutReaders(env::Env* env, int fd, const std::string& path) {
  std::optional<std::string> conflict;
  const int err = TakeByte(env, fd, kOpenByte, F_WRLCK, &conflict);
  if (err == EAGAIN) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": pool in use by ", conflict.value_or("other processes"),
                     ", and this writable open could not reach the lock region through which read-only opens "
                     "follow a writer's commits (see the open's reader table error; close the pool there first)"));
  }
  return err == 0 ? absl::OkStatus() : base::ErrnoStatus(err, "fcntl(F_OFD_SETLK)", path);
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
  const auto refused = [&](const std::optional<std::string>& holder) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": pool in use by ", holder.value_or("other processes, which open and close it in turn"),
                     " (one writable open at a time, beside any number of read-only ones; an exclusive open "
                     "(Options::exclusive, --exclusive) is alone with the pool: close it there first)"));
  };
  std::optional<std::string> conflict;
  const short open_type = kind == LockKind::kExclusive ? F_WRLCK : F_RDLCK;
  int err = TakeByte(env, fd, kOpenByte, open_type, &conflict);
  if (err == EAGAIN) return refused(conflict);
  if (err != 0) return base::ErrnoStatus(err, "fcntl(F_OFD_SETLK)", path);
  if (kind != LockKind::kExclusive) {
    err = TakeByte(env, fd, kWriterByte, kind == LockKind::kWriter ? F_WRLCK : F_RDLCK, &conflict);
    if (err == EAGAIN && kind == LockKind::kReader) {
      claim.writer_present_ = true;
    } else if (err == EAGAIN) {
      return refused(conflict);
    } else if (err != 0) {
      return base::ErrnoStatus(err, "fcntl(F_OFD_SETLK)", path);
    }
  }
  const bool writable = kind == LockKind::kExclusive || kind == LockKind::kWriter;
  struct flock pid = Range(F_RDLCK, (writable ? kWriterPidBase : kHolderPidBase) + getpid(), 1);
  const int pid_err = env->Lock(fd, F_OFD_SETLK, &pid);
  if (pid_err != 0) return base::ErrnoStatus(pid_err, "fcntl(F_OFD_SETLK)", path);
  return claim;
}

}  // namespace pmstore::internal
