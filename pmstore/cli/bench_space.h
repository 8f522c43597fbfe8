// How much room `pmstore bench` needs: the pool size it picks when --size
// is not given, and the check that the file system holds it, so that a
// run too large is refused before minutes of fill rather than after.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "pmstore/cli/bench.h"

namespace pmstore::cli {

// The pool's size (and LMDB's map's) for config.num keys of
// config.value_size: room for either engine, at least 1 GiB.
uint64_t PoolBytesFor(const BenchConfig& config);

// OK when the file system of config.pool has room for a pool of
// config.size (and LMDB's file with --compare); else ResourceExhausted
// saying what to lower.
absl::Status CheckRoom(const BenchConfig& config);

}  // namespace pmstore::cli
