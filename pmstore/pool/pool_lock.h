// The pool file's lock: one writable open of a pool at a time, across
// processes, or any number of read-only opens; and within one process one
// open of a pool at all.
//
// An OFD write lock on byte 0 excludes every other open file description
// of the file, this process's own included, and lasts until the
// descriptor that took it closes: other descriptors of the file closing
// leave it, where a classic POSIX lock would be dropped (a process refused
// its own pool, or running Check on it, once released its lock that way).
// An OFD lock reports no pid, so the holder records its pid the same way:
// an OFD read lock on the byte at kHolderPidBase + pid, which a refused
// opener finds with F_OFD_GETLK.
//
// Within a process a pool is opened once, writable or read-only, as LMDB
// opens an environment once per process: the open's threads share its
// Store. A process-wide table of the pools it has open (by device and
// inode; a device DAX pool by its device number) refuses a second open
// with a message that says so, before the file lock is asked for. The
// file lock alone would let two read-only opens in, and once processes
// share a pool for writing it will let two writable ones in too; two
// opens in one process would then keep two views of one pool's index.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pmstore/env/env.h"

namespace pmstore::internal {

// kExclusive: an OFD write lock on byte 0 (a writable open); kShared: a
// read lock there (a read-only open, whose descriptor cannot take a write
// lock), which other read-only opens share.
enum class LockKind { kExclusive, kShared };

// The claim of one open of a pool in this process's table, given up when
// destroyed (the file lock goes with the descriptor). Move-only.
class PoolLock {
 public:
  PoolLock() = default;
  PoolLock(PoolLock&& other) noexcept { *this = std::move(other); }
  PoolLock& operator=(PoolLock&& other) noexcept;
  ~PoolLock();

 private:
  friend absl::StatusOr<PoolLock> LockPool(env::Env* env, int fd, const std::string& path, LockKind kind);
  // The claimed file's identity and this claim's token (0: none).
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  uint64_t token_ = 0;
};

// Locks the pool open as `fd`, named `path` in messages. FailedPrecondition
// when this process has the pool open already ("already open in this
// process"), or naming a holder ("process 1234") and how it holds the pool
// when another process's lock conflicts; the failing call's error
// otherwise.
absl::StatusOr<PoolLock> LockPool(env::Env* env, int fd, const std::string& path, LockKind kind);

}  // namespace pmstore::internal
