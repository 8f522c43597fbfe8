// The superblock codec: the geometry of a new pool, and the checks that
// the superblock of an existing one describes a layout this library can
// use (magic, version, checksum, geometry, length), with the error a
// reader of each failure needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "pmstore/format/layout.h"

namespace pmstore::internal {

// Where the heap begins in a pool whose chunk table has `max_chunks` words.
uint64_t HeapOffset(uint64_t max_chunks);

// The smallest pool: the metadata before the heap (superblock, root, the
// redo log's two 1 MiB slots, the chunk table; 4 MiB in all) and one chunk.
uint64_t MinimumPoolBytes();

// The superblock of a new pool whose file may grow to `max_bytes` (a
// multiple of kChunkSize, at least MinimumPoolBytes()): the chunk table
// holds the chunks that fit after it.
Superblock NewSuperblock(uint64_t max_bytes);

// The superblock in the first `n` bytes of the file at `path`, of
// `file_size` bytes, in either version (as a Superblock; leaf_cell_bytes
// 0 for version 1). InvalidArgument: not a pool (too short, bad magic);
// FailedPrecondition: a version this library does not read; DataLoss: a
// checksum failure, an impossible layout, a file too short for its heap.
absl::StatusOr<Superblock> ParseSuperblock(const char* bytes, size_t n, uint64_t file_size, const std::string& path);

}  // namespace pmstore::internal
