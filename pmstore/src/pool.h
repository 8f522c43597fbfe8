// A pool file opened, locked, validated and mapped: everything about a
// store that is not its data structures.
//
// Thread-compatible; the store owns one and serialises its use.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "pmstore/mapping/mapping.h"
#include "pmstore/mapping/pool_file.h"
#include "pmstore/options.h"
#include "pmstore/src/format.h"
#include "pmstore/src/persister.h"

namespace pmstore::internal {

struct Pool {
  std::string path;
  std::unique_ptr<mapping::PoolFile> file;
  std::unique_ptr<mapping::Mapping> mapping;
  Superblock superblock;
  bool created = false;

  char* base() const { return mapping->address(); }
  uint64_t length() const { return mapping->length(); }
  LeafGeometry leaf_geometry() const { return LeafGeometry::Of(superblock); }
  // Heap chunks the file holds (what growth has added, committed or not).
  uint64_t file_chunks() const;
};

// Opens or creates the pool file per `options`, takes the lock, checks the
// superblock (magic, version, checksum, size) and maps it with a 2 MiB
// aligned reservation of the largest size the pool may grow to. A new pool
// is formatted (the magic is persisted last, so a crash mid-create leaves
// a file that is not a pool rather than a damaged one). Errors name the
// file: see store.h.
absl::StatusOr<std::unique_ptr<Pool>> OpenPool(const std::string& path, const Options& options,
                                               PersisterFactory make_persister,
                                               std::unique_ptr<Persister>* persister);

// Replays the redo log (the last one or two commits, in order) and makes
// the result durable (a persister failure is returned as is).
// *next_seq: the sequence number of the next commit; *last: the header of
// the commit record recovery took as the last one (seq 0: none).
absl::Status ReplayLog(Pool& pool, Persister& persister, uint64_t* next_seq, LogHeader* last);

// Reads and checks the root line (after replay).
absl::StatusOr<Root> ReadRoot(const Pool& pool);

// Grows the file and the mapping to hold `chunks` heap chunks, making the
// new length durable first. ResourceExhausted when the file system is full
// (the file keeps its size); any other error is a failing file system
// (fallocate, the ftruncate that undoes it, fdatasync) or mapping.
absl::Status GrowPool(Pool& pool, Persister& persister, uint64_t chunks);

// "PATH: message", same code.
absl::Status WithPath(const absl::Status& status, const std::string& path);

}  // namespace pmstore::internal
