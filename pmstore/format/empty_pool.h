// A new pool's first state: chunk 0 a small chunk holding the first
// (empty) leaf, the root naming it, the superblock's magic persisted last,
// so that a crash while formatting leaves a file that is not a pool rather
// than a damaged one.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "pmstore/format/layout.h"
#include "pmstore/persist/persister.h"

namespace pmstore::internal {

// Formats the pool mapped at `base` whose file holds `file_chunks` heap
// chunks, with superblock `sb`; everything durable when it returns OK.
absl::Status WriteEmptyPool(char* base, const Superblock& sb, uint64_t file_chunks, Persister& persister);

}  // namespace pmstore::internal
