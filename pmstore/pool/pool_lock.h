// The pool file's lock: one writable open of a pool at a time, across
// processes and within one, or any number of read-only opens.
//
// An OFD write lock on byte 0 excludes every other open file description
// of the file, this process's own included, and lasts until the
// descriptor that took it closes: other descriptors of the file closing
// leave it, where a classic POSIX lock would be dropped (a process refused
// its own pool, or running Check on it, once released its lock that way).
// An OFD lock reports no pid, so the holder records its pid the same way:
// an OFD read lock on the byte at kHolderPidBase + pid, which a refused
// opener finds with F_OFD_GETLK.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "pmstore/env/env.h"

namespace pmstore::internal {

// kExclusive: an OFD write lock on byte 0 (a writable open); kShared: a
// read lock there (a read-only open, whose descriptor cannot take a write
// lock), which other read-only opens share.
enum class LockKind { kExclusive, kShared };

// Locks the pool open as `fd`, named `path` in messages. FailedPrecondition
// naming a holder ("process 1234", or "this process (another open of
// it)") and how it holds the pool when another open's lock conflicts; the
// failing call's error otherwise.
absl::Status LockPool(env::Env* env, int fd, const std::string& path, LockKind kind);

}  // namespace pmstore::internal
