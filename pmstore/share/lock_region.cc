#include "pmstore/share/lock_region.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <optional>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/env/fork_generation.h"
#include "pmstore/share/region_layout.h"

namespace pmstore::internal {
namespace {

using region::kBytes;
using region::kSlotWritable;
using region::SlotWords;

constexpr off_t kInitByte = 0;
constexpr off_t kUseByte = 1;
constexpr off_t kSlotLockBase = 4096;

// Attempts to join a region that the last process to leave it removes
// between our open and our init lock, each time.
constexpr int kJoinAttempts = 8;

// A slot's commit word: 1 + the commit, 0 for none.
std::optional<uint64_t> CommitOf(uint64_t word) {
  return word == 0 ? std::nullopt : std::optional<uint64_t>(word - 1);
}

struct flock Range(short type, off_t start) {
  struct flock lock = {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = start;
  lock.l_len = 1;
  return lock;
}

// F_OFD_SETLKW `type` on byte `at`: waits only for a maker, a joiner or a
// remover of the region, each of which holds it briefly.
absl::Status WaitForLock(env::Env* env, int fd, short type, off_t at, const std::string& path) {
  struct flock lock = Range(type, at);
  const int err = env::RetryInterrupted([&] { return env->Lock(fd, F_OFD_SETLKW, &lock); });
  if (err != 0) return base::ErrnoStatus(err, "fcntl(F_OFD_SETLKW)", path);
  return absl::OkStatus();
}

// F_OFD_SETLK `type` on byte `at`: true if taken, false if another open
// file description holds a conflicting lock.
absl::StatusOr<bool> TryLock(env::Env* env, int fd, short type, off_t at, const std::string& path) {
  struct flock lock = Range(type, at);
  const int err = env->Lock(fd, F_OFD_SETLK, &lock);
  if (err == EAGAIN || err == EACCES) return false;
  if (err != 0) return base::ErrnoStatus(err, "fcntl(F_OFD_SETLK)", path);
  return true;
}

void Unlock(env::Env* env, int fd, off_t at) {
  struct flock lock = Range(F_UNLCK, at);
  env->Lock(fd, F_OFD_SETLK, &lock);  // cannot fail on a byte this description may hold
}

// Whether the region open as `fd` is still the file at `path`: the last
// process to leave a region removes it, and one that opened it just
// before must open the new one instead.
absl::StatusOr<bool> StillLinked(env::Env* env, int fd, const std::string& path) {
  struct stat open_st, linked_st;
  if (const int err = env->Fstat(fd, &open_st); err != 0) return base::ErrnoStatus(err, "fstat", path);
  const int err = env->Stat(path, &linked_st);
  if (err == ENOENT) return false;
  if (err != 0) return base::ErrnoStatus(err, "stat", path);
  return open_st.st_dev == linked_st.st_dev && open_st.st_ino == linked_st.st_ino;
}

// Maps the region open as `fd`, checking its size first: a file of
// another size is of another layout version, and a mapping past its end
// would fault.
absl::StatusOr<void*> MapRegion(env::Env* env, int fd, int prot, const std::string& path) {
  struct stat st;
  if (const int err = env->Fstat(fd, &st); err != 0) return base::ErrnoStatus(err, "fstat", path);
  if (static_cast<uint64_t>(st.st_size) != kBytes) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": the pool's lock region is ", st.st_size, " bytes, not the ", kBytes,
        " of this pmstore's layout: a process of another pmstore version has the pool open; close it first"));
  }
  void* region = nullptr;
  if (const int err = env->Mmap(nullptr, kBytes, prot, MAP_SHARED, fd, 0, &region); err != 0) {
    return base::ErrnoStatus(err, "mmap", path);
  }
  return region;
}

absl::Status CheckHeader(const void* region, const std::string& path) {
  const auto* header = static_cast<const region::Header*>(region);
  if (header->magic == region::kMagic && header->version == region::kVersion && header->slot_count == kReaderSlots) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s: the pool's lock region is of layout version %u, this pmstore's is %u: a process of another pmstore "
      "version has the pool open; close it first",
      path, header->version, region::kVersion));
}

// MapRegion, then the header checked; unmapped again when either fails.
absl::StatusOr<void*> MapChecked(env::Env* env, int fd, int prot, const std::string& path) {
  PMSTORE_ASSIGN_OR_RETURN(void* region, MapRegion(env, fd, prot, path));
  if (absl::Status valid = CheckHeader(region, path); !valid.ok()) {
    env->Munmap(region, kBytes);
    return valid;
  }
  return region;
}

// With the init lock held: joins the region open as `fd` (the use lock
// taken for reading), making it anew first when nobody is attached
// (*made).
absl::StatusOr<void*> JoinOrMake(env::Env* env, int fd, const std::string& path, const struct stat& pool_st,
                                 bool* made) {
  *made = false;
  PMSTORE_ASSIGN_OR_RETURN(const bool alone, TryLock(env, fd, F_WRLCK, kUseByte, path));
  if (!alone) {
    PMSTORE_ASSIGN_OR_RETURN(const bool joined, TryLock(env, fd, F_RDLCK, kUseByte, path));
    if (!joined) {
      return absl::InternalError(absl::StrCat(path, ": the use lock is held for writing by another process"));
    }
    return MapChecked(env, fd, PROT_READ | PROT_WRITE, path);
  }
  // Nobody attached: whatever the file holds (a region of a process that
  // died, of another boot or version) is stale. Emptied, then sized: the
  // new pages read as zeros, every slot free.
  if (const int err = env->Ftruncate(fd, 0); err != 0) return base::ErrnoStatus(err, "ftruncate", path);
  if (const int err = env->Ftruncate(fd, kBytes); err != 0) return base::ErrnoStatus(err, "ftruncate", path);
  // Its pages made now, up to the image ring's first run (the writer
  // reserves the others as it reaches them): a page of a full tmpfs made
  // by a write would raise SIGBUS in whoever wrote it.
  constexpr size_t kReservedBytes = region::kImageEntriesOffset + kLeafImageReserveRun * sizeof(region::ImageEntry);
  if (const int err = env->Fallocate(fd, 0, kReservedBytes); err != 0) {
    const absl::Status failed = base::ErrnoStatus(err, "fallocate", path);
    return absl::Status(failed.code(),
                        absl::StrCat(failed.message(), ": no room in ", kLockRegionDirectory,
                                     " for the pool's lock region (", kReservedBytes, " bytes to begin with)"));
  }
  // The pool's permission bits, whatever the umask: whoever may open the
  // pool may take a slot. EPERM: a file another user made; it keeps the
  // bits that user gave it, from the same pool.
  if (const int err = env->Fchmod(fd, pool_st.st_mode & 0666); err != 0 && err != EPERM) {
    return base::ErrnoStatus(err, "fchmod", path);
  }
  PMSTORE_ASSIGN_OR_RETURN(void* region, MapRegion(env, fd, PROT_READ | PROT_WRITE, path));
  if (absl::Status turn = CrossProcessTurn::MakeIn(region, path); !turn.ok()) {
    env->Munmap(region, kBytes);
    return turn;
  }
  ChangeRing::MakeIn(region);
  region::ImageWordsOf(region)->reserved.store(kLeafImageReserveRun, std::memory_order_relaxed);
  region::Header* header = region::HeaderOf(region);
  header->version = region::kVersion;
  header->slot_count = kReaderSlots;
  header->pool_dev = pool_st.st_dev;
  header->pool_ino = pool_st.st_ino;
  header->magic = region::kMagic;
  PMSTORE_ASSIGN_OR_RETURN(const bool joined, TryLock(env, fd, F_RDLCK, kUseByte, path));  // the write lock, downgraded
  if (!joined) return absl::InternalError(absl::StrCat(path, ": could not downgrade the use lock"));
  *made = true;
  return region;
}

int64_t ChangedUnixNs(const struct stat& st) { return int64_t{st.st_ctim.tv_sec} * 1'000'000'000 + st.st_ctim.tv_nsec; }

// When a process last attached to the region mapped at `region`: the
// newest time a slot was taken, else (no slot ever taken) the file's
// change time (its making).
int64_t LastAttachedUnixNs(void* region, const struct stat& st) {
  const uint32_t high = std::min(region::HeaderOf(region)->slots_high.load(std::memory_order_acquire), kReaderSlots);
  int64_t newest = 0;
  for (uint32_t index = 0; index < high; ++index) {
    newest = std::max(newest, region::SlotsOf(region)[index].opened_unix_ns.load(std::memory_order_relaxed));
  }
  return newest != 0 ? newest : ChangedUnixNs(st);
}

// With byte 0 held for writing: whether the region open as `fd` is still
// the file at `path` and nobody is attached to it (the use byte taken for
// writing), so that it may be removed, as the last process to leave it
// does.
absl::StatusOr<bool> Unattached(env::Env* env, int fd, const std::string& path) {
  PMSTORE_ASSIGN_OR_RETURN(const bool linked, StillLinked(env, fd, path));
  if (!linked) return false;
  return TryLock(env, fd, F_WRLCK, kUseByte, path);
}

// RemoveLeftoverRegions for one region: whether it was removed.
bool RemoveIfLeftOver(env::Env* env, const std::string& path, int64_t now_unix_ns) {
  int fd = -1;
  if (env->Open(path, O_RDWR | O_CLOEXEC, 0, &fd) != 0) return false;
  auto close_fd = absl::MakeCleanup([&] { env->Close(fd); });  // and its locks with it
  // Made within the age (joins leave the change time alone): nothing to
  // read further, the common case.
  struct stat st;
  if (env->Fstat(fd, &st) != 0 || now_unix_ns - ChangedUnixNs(st) < kLeftoverRegionAgeNs) return false;
  // As the last process to leave removes it (RemoveLeftoverRegion), but
  // passing over a region whose init lock is held rather than waiting.
  const absl::StatusOr<bool> init = TryLock(env, fd, F_WRLCK, kInitByte, path);
  if (!init.ok() || !*init) return false;
  const absl::StatusOr<bool> unattached = Unattached(env, fd, path);
  if (!unattached.ok() || !*unattached) return false;
  absl::StatusOr<void*> region = MapChecked(env, fd, PROT_READ, path);
  if (!region.ok()) return false;
  const int64_t last = LastAttachedUnixNs(*region, st);
  env->Munmap(*region, kBytes);
  return now_unix_ns - last >= kLeftoverRegionAgeNs && env->Unlink(path) == 0;
}

int64_t UnixNanos() {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
}

// The region descriptors of this process, which a forked child points at
// /dev/null: its copies would otherwise keep the parent's slot locks (and
// use lock) held after the parent died. (The mapping, which would do the
// same, is not inherited at all.)
std::mutex fork_mu;
std::vector<int>* region_fds = new std::vector<int>;  // never destroyed: a child may fork during exit

void LockBeforeFork() { fork_mu.lock(); }
void UnlockInParent() { fork_mu.unlock(); }
void DropInChild() {
  // Only async-signal-safe calls: the child of a threaded process.
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd >= 0) {
    for (int fd : *region_fds) dup3(null_fd, fd, O_CLOEXEC);
    close(null_fd);
  }
  fork_mu.unlock();
}

void RegisterForFork(int fd) {
  static std::once_flag registered;
  std::call_once(registered, [] { pthread_atfork(LockBeforeFork, UnlockInParent, DropInChild); });
  std::lock_guard<std::mutex> lock(fork_mu);
  region_fds->push_back(fd);
}

void UnregisterForFork(int fd) {
  std::lock_guard<std::mutex> lock(fork_mu);
  region_fds->erase(std::find(region_fds->begin(), region_fds->end(), fd));
}

// Opens the region of `pool_st` for reading the table (ListReaders) or
// clearing it (ClearStaleReaders), with the init lock held for reading so
// that nobody makes or removes it meanwhile. -1 when there is none.
absl::StatusOr<int> OpenExisting(env::Env* env, const std::string& path, int flags) {
  int fd = -1;
  const int err = env->Open(path, flags | O_CLOEXEC, 0, &fd);
  if (err == ENOENT) return -1;
  if (err != 0) return base::ErrnoStatus(err, "open", path);
  auto close_fd = absl::MakeCleanup([&] { env->Close(fd); });
  PMSTORE_RETURN_IF_ERROR(WaitForLock(env, fd, F_RDLCK, kInitByte, path));
  PMSTORE_ASSIGN_OR_RETURN(const bool linked, StillLinked(env, fd, path));
  if (!linked) return -1;  // removed by the last process to leave
  std::move(close_fd).Cancel();
  return fd;
}

// The region open as `fd` mapped, or nullptr for a leftover that holds no
// table of this version (of a process that died while making it, or of
// another pmstore version) and that nobody is attached to. A leftover of
// this version is listed: its slots are all stale, the last words of
// processes that died with the pool open.
absl::StatusOr<void*> MapExisting(env::Env* env, int fd, int prot, const std::string& path) {
  struct flock in_use = Range(F_WRLCK, kUseByte);
  if (const int err = env->Lock(fd, F_OFD_GETLK, &in_use); err != 0) {
    return base::ErrnoStatus(err, "fcntl(F_OFD_GETLK)", path);
  }
  const bool leftover = in_use.l_type == F_UNLCK;
  absl::StatusOr<void*> region = MapChecked(env, fd, prot, path);
  // FailedPrecondition: another size or header than this version's.
  if (leftover && absl::IsFailedPrecondition(region.status())) return nullptr;
  return region;
}

// Frees the slots of the region mapped at `region` (open as `fd`) whose
// process died: the slot's lock can be taken. Slot `own` is the caller's,
// whose lock `fd` holds (and so could take again): it is left alone.
absl::StatusOr<int> ClearStaleSlots(env::Env* env, int fd, void* region, const std::string& path,
                                    uint32_t own = kReaderSlots) {
  const uint32_t high = std::min(region::HeaderOf(region)->slots_high.load(std::memory_order_acquire), kReaderSlots);
  int cleared = 0;
  for (uint32_t index = 0; index < high; ++index) {
    SlotWords& slot = region::SlotsOf(region)[index];
    if (index == own || slot.pid.load(std::memory_order_acquire) == 0) continue;
    // Holding the slot's lock keeps a new owner out while it is freed.
    PMSTORE_ASSIGN_OR_RETURN(const bool dead, TryLock(env, fd, F_WRLCK, kSlotLockBase + index, path));
    if (!dead) continue;
    slot.pinned_commit.store(0, std::memory_order_relaxed);  // a dead process reads nothing
    slot.newest_pinned.store(0, std::memory_order_relaxed);
    slot.last_commit.store(0, std::memory_order_relaxed);
    if (slot.pid.exchange(0, std::memory_order_acq_rel) != 0) ++cleared;
    Unlock(env, fd, kSlotLockBase + index);
  }
  return cleared;
}

}  // namespace

std::string LockRegionPath(const struct stat& pool_st) {
  // A device DAX pool is named for its device number, the same whatever
  // node the device is opened through; a file for its device and inode.
  if (S_ISCHR(pool_st.st_mode)) {
    return absl::StrFormat("%s/pmstore-dev-%u.%u.lock", kLockRegionDirectory, major(pool_st.st_rdev),
                           minor(pool_st.st_rdev));
  }
  return absl::StrFormat("%s/pmstore-%u.%u-%u.lock", kLockRegionDirectory, major(pool_st.st_dev), minor(pool_st.st_dev),
                         static_cast<uint64_t>(pool_st.st_ino));
}

absl::StatusOr<std::unique_ptr<ReaderSlot>> ReaderSlot::Attach(env::Env* env, int pool_fd, bool writable) {
  struct stat pool_st;
  if (const int err = env->Fstat(pool_fd, &pool_st); err != 0) return base::ErrnoStatus(err, "fstat", "the pool");
  const std::string path = LockRegionPath(pool_st);
  const uint64_t fork_generation = env::CountForks();
  for (int attempt = 0; attempt < kJoinAttempts; ++attempt) {
    int fd = -1;
    if (const int err = env->Open(path, O_RDWR | O_CREAT | O_CLOEXEC, pool_st.st_mode & 0666, &fd); err != 0) {
      return base::ErrnoStatus(err, "open", path);
    }
    auto close_fd = absl::MakeCleanup([&] { env->Close(fd); });
    PMSTORE_RETURN_IF_ERROR(WaitForLock(env, fd, F_WRLCK, kInitByte, path));
    PMSTORE_ASSIGN_OR_RETURN(const bool linked, StillLinked(env, fd, path));
    if (!linked) continue;
    bool made = false;
    PMSTORE_ASSIGN_OR_RETURN(void* region, JoinOrMake(env, fd, path, pool_st, &made));
    auto unmap = absl::MakeCleanup([&] { env->Munmap(region, kBytes); });
    // A mapping holds its file description as a descriptor does: a forked
    // child's copy of it would keep this process's slot lock alive.
    if (madvise(region, kBytes, MADV_DONTFORK) != 0) return base::ErrnoStatus(errno, "madvise", path);

    for (uint32_t index = 0; index < kReaderSlots; ++index) {
      PMSTORE_ASSIGN_OR_RETURN(const bool taken, TryLock(env, fd, F_WRLCK, kSlotLockBase + index, path));
      if (!taken) continue;
      // Free, or stale: its owner's lock died with it.
      SlotWords& slot = region::SlotsOf(region)[index];
      slot.flags.store(writable ? kSlotWritable : 0, std::memory_order_relaxed);
      slot.opened_unix_ns.store(UnixNanos(), std::memory_order_relaxed);
      slot.pinned_commit.store(0, std::memory_order_relaxed);
      slot.newest_pinned.store(0, std::memory_order_relaxed);
      slot.last_commit.store(0, std::memory_order_relaxed);
      slot.pid.store(getpid(), std::memory_order_release);
      std::atomic<uint32_t>& high = region::HeaderOf(region)->slots_high;
      if (high.load(std::memory_order_relaxed) <= index) high.store(index + 1, std::memory_order_release);
      Unlock(env, fd, kInitByte);
      std::move(close_fd).Cancel();
      std::move(unmap).Cancel();
      RegisterForFork(fd);
      // Once per region made (a pool's first open since its last close),
      // not per open.
      if (made) RemoveLeftoverRegions(env, RegionFiles(path), UnixNanos());
      return std::unique_ptr<ReaderSlot>(new ReaderSlot(env, path, fd, region, index, fork_generation));
    }
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": all ", kReaderSlots, " slots of the pool's reader table are held by live processes"));
  }
  return absl::UnavailableError(absl::StrCat(path, ": the pool's lock region was removed and made again ",
                                             kJoinAttempts, " times while this process joined it"));
}

ReaderSlot::ReaderSlot(env::Env* env, std::string path, int fd, void* region, uint32_t index, uint64_t fork_generation)
    : env_(env), path_(std::move(path)), fd_(fd), region_(region), index_(index), fork_generation_(fork_generation) {}

void ReaderSlot::PublishPinned(std::optional<uint64_t> oldest, std::optional<uint64_t> newest) {
  SlotWords& slot = region::SlotsOf(region_)[index_];
  slot.newest_pinned.store(newest.has_value() ? *newest + 1 : 0, std::memory_order_relaxed);
  slot.pinned_commit.store(oldest.has_value() ? *oldest + 1 : 0, std::memory_order_release);
}

std::optional<uint64_t> ReaderSlot::OldestPinned() const {
  // The commit published before the pins are loaded (a Dekker pair with
  // PinNewestPublished's store and reload): sequentially consistent.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const uint32_t high =
      std::min(region::HeaderOf(region_)->slots_high.load(std::memory_order_acquire), kReaderSlots);
  const SlotWords* slots = region::SlotsOf(region_);
  uint64_t oldest = 0;  // a slot's word: 1 + the commit, 0 for none
  for (uint32_t index = 0; index < high; ++index) {
    const uint64_t word = slots[index].pinned_commit.load(std::memory_order_acquire);
    if (word != 0 && (oldest == 0 || word < oldest)) oldest = word;
  }
  return CommitOf(oldest);
}

std::optional<uint64_t> ReaderSlot::NewestOtherPin() const {
  const uint32_t high = std::min(region::HeaderOf(region_)->slots_high.load(std::memory_order_acquire), kReaderSlots);
  const SlotWords* slots = region::SlotsOf(region_);
  uint64_t newest = 0;  // a slot's word: 1 + the commit, 0 for none
  for (uint32_t index = 0; index < high; ++index) {
    if (index != index_) newest = std::max(newest, slots[index].newest_pinned.load(std::memory_order_relaxed));
  }
  return CommitOf(newest);
}

uint64_t ReaderSlot::PinNewestPublished(const ChangeRing& ring) {
  uint64_t commit = ring.published().value_or(0);
  for (;;) {
    PublishPinned(commit, commit);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const uint64_t now = ring.published().value_or(0);
    if (now == commit) return commit;
    commit = now;
  }
}

absl::StatusOr<int> ReaderSlot::ClearStale() { return ClearStaleSlots(env_, fd_, region_, path_, index_); }

void ReaderSlot::PublishLastCommit(uint64_t commit) {
  region::SlotsOf(region_)[index_].last_commit.store(commit + 1, std::memory_order_release);
}

ReaderSlot::~ReaderSlot() {
  UnregisterForFork(fd_);
  if (env::ForkGeneration() == fork_generation_) {
    region::SlotsOf(region_)[index_].pinned_commit.store(0, std::memory_order_relaxed);
    region::SlotsOf(region_)[index_].newest_pinned.store(0, std::memory_order_relaxed);
    region::SlotsOf(region_)[index_].pid.store(0, std::memory_order_release);
    Unlock(env_, fd_, kSlotLockBase + index_);
    // Leaving: the last to leave removes the region, with the init lock
    // held so that nobody joins it meanwhile (a joiner that opened it
    // already finds it unlinked and opens the next).
    if (WaitForLock(env_, fd_, F_WRLCK, kInitByte, path_).ok()) {
      Unlock(env_, fd_, kUseByte);
      auto alone = TryLock(env_, fd_, F_WRLCK, kUseByte, path_);
      if (alone.ok() && *alone) env_->Unlink(path_);  // best effort: a leftover is made anew by the next
    }
    env_->Munmap(region_, kBytes);
  }
  // In a forked child the descriptor is /dev/null now and the slot is still
  // the parent's. The region was never mapped there (MADV_DONTFORK), so its
  // range is free for the child's own mappings (a thread's stack, a large
  // allocation), which unmapping it would take away.
  env_->Close(fd_);
}

absl::StatusOr<std::vector<ReaderSlotInfo>> ListReaders(env::Env* env, const struct stat& pool_st) {
  const std::string path = LockRegionPath(pool_st);
  PMSTORE_ASSIGN_OR_RETURN(const int fd, OpenExisting(env, path, O_RDONLY));
  std::vector<ReaderSlotInfo> readers;
  if (fd < 0) return readers;
  auto close_fd = absl::MakeCleanup([&] { env->Close(fd); });
  PMSTORE_ASSIGN_OR_RETURN(void* region, MapExisting(env, fd, PROT_READ, path));
  if (region == nullptr) return readers;
  auto unmap = absl::MakeCleanup([&] { env->Munmap(region, kBytes); });
  for (uint32_t index = 0; index < kReaderSlots; ++index) {
    const SlotWords& slot = region::SlotsOf(region)[index];
    const int64_t pid = slot.pid.load(std::memory_order_acquire);
    if (pid == 0) continue;
    struct flock owner = Range(F_WRLCK, kSlotLockBase + index);
    if (const int err = env->Lock(fd, F_OFD_GETLK, &owner); err != 0) {
      return base::ErrnoStatus(err, "fcntl(F_OFD_GETLK)", path);
    }
    readers.push_back({.slot = index,
                       .pid = pid,
                       .writable = (slot.flags.load(std::memory_order_relaxed) & kSlotWritable) != 0,
                       .stale = owner.l_type == F_UNLCK,
                       .opened_unix_ns = slot.opened_unix_ns.load(std::memory_order_relaxed),
                       .pinned_commit = CommitOf(slot.pinned_commit.load(std::memory_order_relaxed)),
                       .last_commit = CommitOf(slot.last_commit.load(std::memory_order_relaxed))});
  }
  return readers;
}

absl::StatusOr<int> ClearStaleReaders(env::Env* env, const struct stat& pool_st) {
  const std::string path = LockRegionPath(pool_st);
  auto opened = OpenExisting(env, path, O_RDWR);
  if (!opened.ok() && opened.status().code() == absl::StatusCode::kPermissionDenied) {
    return absl::PermissionDeniedError(
        absl::StrCat(opened.status().message(),
                     ": clearing stale slots needs write permission on the pool's lock region, "
                     "which has the pool file's permission bits"));
  }
  PMSTORE_ASSIGN_OR_RETURN(const int fd, std::move(opened));
  if (fd < 0) return 0;
  auto close_fd = absl::MakeCleanup([&] { env->Close(fd); });
  PMSTORE_ASSIGN_OR_RETURN(void* region, MapExisting(env, fd, PROT_READ | PROT_WRITE, path));
  if (region == nullptr) return 0;
  auto unmap = absl::MakeCleanup([&] { env->Munmap(region, kBytes); });
  return ClearStaleSlots(env, fd, region, path);
}

absl::Status RemoveLeftoverRegion(env::Env* env, const struct stat& pool_st) {
  const std::string path = LockRegionPath(pool_st);
  int fd = -1;
  const int err = env->Open(path, O_RDWR | O_CLOEXEC, 0, &fd);
  if (err == ENOENT) return absl::OkStatus();
  if (err != 0) return base::ErrnoStatus(err, "open", path);
  auto close_fd = absl::MakeCleanup([&] { env->Close(fd); });
  // As the last process to leave removes it: with the init lock held, so
  // that nobody joins meanwhile, and only when nobody holds the use lock.
  PMSTORE_RETURN_IF_ERROR(WaitForLock(env, fd, F_WRLCK, kInitByte, path));
  PMSTORE_ASSIGN_OR_RETURN(const bool unattached, Unattached(env, fd, path));
  if (!unattached) return absl::OkStatus();
  if (const int unlinked = env->Unlink(path); unlinked != 0 && unlinked != ENOENT) {
    return base::ErrnoStatus(unlinked, "unlink", path);
  }
  return absl::OkStatus();
}

std::vector<std::string> RegionFiles(const std::string& except) {
  std::vector<std::string> paths;
  DIR* dir = opendir(kLockRegionDirectory);
  if (dir == nullptr) return paths;
  while (const struct dirent* entry = readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (!name.starts_with("pmstore-") || !name.ends_with(".lock")) continue;
    std::string path = absl::StrCat(kLockRegionDirectory, "/", std::string(name));
    if (path != except) paths.push_back(std::move(path));
  }
  closedir(dir);
  return paths;
}

int RemoveLeftoverRegions(env::Env* env, const std::vector<std::string>& paths, int64_t now_unix_ns) {
  int removed = 0;
  for (const std::string& path : paths) removed += RemoveIfLeftOver(env, path, now_unix_ns) ? 1 : 0;
  return removed;
}

}  // namespace pmstore::internal
