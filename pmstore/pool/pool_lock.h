// The pool file's lock: one writable open of a pool at a time, across
// processes, beside any number of read-only opens that follow its commits
// (doc/FORMAT.md, "Many processes on one pool"), unless an open asks to
// be alone (Options::exclusive); and within one process one open of a pool
// at all.
//
// Two bytes of the file, locked with OFD locks:
//   byte 0, the open byte: a read lock for every open that shares the
//     pool, a write lock for an exclusive writable open (no one else);
//   byte 1, the writer byte: a write lock for the one writable open among
//     those that share, a read lock for a read-only open that no writer
//     may join (an exclusive one, or one that recovered a crash's commit
//     into its private mapping, which would stop following the file).
//
// An OFD lock conflicts with every other open file description of the
// file, this process's own included, and lasts until the descriptor that
// took it closes: other descriptors of the file closing leave it, where a
// classic POSIX lock would be dropped (a process refused its own pool, or
// running Check on it, once released its lock that way). An OFD lock
// reports no pid, so each holder records its pid the same way: an OFD
// read lock on a byte at pid past a base far beyond the pool, one base
// for read-only opens and one for writable ones, which a refused opener
// finds with F_OFD_GETLK.
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

enum class LockKind {
  kExclusive,    // a writable open alone (Options::exclusive; Destroy): byte 0 written
  kWriter,       // the writable open beside read-only ones: byte 0 read, byte 1 written
  kReader,       // a read-only open beside a writer: byte 0 read; byte 1 read while no writer holds it
  kReaderAlone,  // a read-only open no writer may join (Options::exclusive): bytes 0 and 1 read
};

// The claim of one open of a pool in this process's table, given up when
// destroyed (the file lock goes with the descriptor). Move-only.
class PoolLock {
 public:
  PoolLock() = default;
  PoolLock(PoolLock&& other) noexcept { *this = std::move(other); }
  PoolLock& operator=(PoolLock&& other) noexcept;
  ~PoolLock();

  // A kReader open: whether a writer held the pool when it was locked (it
  // then holds no lock on the writer byte, and a writer may be changing
  // the pool as it is read).
  bool writer_present() const { return writer_present_; }
  // A kReader open that found no writer keeps writers out until it calls
  // this: while it looks for a crash's commit to recover into its private
  // mapping, which it may only do alone. Drops its read lock on the
  // writer byte, on the descriptor it was locked through.
  absl::Status AdmitWriters(env::Env* env, int fd, const std::string& path);
  // A kWriter open that cannot publish its commits (no lock region) makes
  // itself kExclusive: read-only opens could not follow it.
  // FailedPrecondition naming a holder when one is open already.
  absl::Status ShutOutReaders(env::Env* env, int fd, const std::string& path);

 private:
  friend absl::StatusOr<PoolLock> LockPool(env::Env* env, int fd, const std::string& path, LockKind kind);
  // The claimed file's identity and this claim's token (0: none).
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  uint64_t token_ = 0;
  bool writer_present_ = false;
};

// Locks the pool open as `fd`, named `path` in messages, as `kind` says.
// FailedPrecondition when this process has the pool open already
// ("already open in this process"), or naming a holder ("process 1234")
// and how it holds the pool when another process's lock conflicts; the
// failing call's error otherwise. A writer waits up to a second for a
// read-only open that holds the writer byte only while it opens.
absl::StatusOr<PoolLock> LockPool(env::Env* env, int fd, const std::string& path, LockKind kind);

}  // namespace pmstore::internal
