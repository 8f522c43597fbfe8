// What the file system under a pool file means for the store, from its
// type (Env::FileSystemType): whether it may hold a pool at all, and
// whether its pages live in memory. Asked before the file is opened or
// made, so that a refusal touches nothing (a network file system may not
// even allocate a new pool's space: 9p fails fallocate).
//
// A network file system may not: NFS, SMB and the like keep the pages of
// one file coherent between the processes of one machine only, not
// between machines, so the pool lock (an OFD lock, pool_lock.h) would not
// keep two machines from writing one pool, and neither a cache-line flush
// nor an msync would be what makes a commit durable: the server would.
// LMDB's documentation gives the same rule ("do not use LMDB databases on
// remote filesystems"); pmstore enforces it.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "pmstore/env/env.h"

namespace pmstore::internal {

struct FileSystemFacts {
  // tmpfs, hugetlbfs or ramfs: a sync writes nothing back, and 2 MiB pages
  // cost nothing extra.
  bool in_memory = false;
};

// The facts of the file system that holds `where`: the pool file at
// `pool_path`, or for a pool not made yet the directory it goes in.
// FailedPrecondition naming the file system when it is a network file
// system; the lookup's error otherwise. Messages begin with `pool_path`.
absl::StatusOr<FileSystemFacts> ExamineFileSystem(env::Env* env, const std::string& where,
                                                  const std::string& pool_path);

}  // namespace pmstore::internal
