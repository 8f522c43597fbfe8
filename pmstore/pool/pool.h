// pmstore/pool/: the pool file opened (or created and formatted), locked,
// checked and mapped, and grown; everything about a store that is not its
// data structures. May use format/, persist/, env/, mapping/ and base/.
//
// Thread-compatible; the store owns one and serialises its use.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "pmstore/env/env.h"
#include "pmstore/format/layout.h"
#include "pmstore/format/leaf.h"
#include "pmstore/mapping/mapping.h"
#include "pmstore/mapping/pool_file.h"
#include "pmstore/persist/persister.h"
#include "pmstore/pool/pool_lock.h"

namespace pmstore::internal {

// What opening a pool may do (the store's Options, less what is not the
// pool file's business).
struct PoolOptions {
  bool create_if_missing = false;
  bool error_if_exists = false;
  uint64_t initial_size = 0;
  uint64_t max_size = 0;  // 0: initial_size
  // Open fails with FailedPrecondition (before a new pool is published)
  // when the mapping offers only a coarser granularity than this.
  mapping::Granularity required_granularity = mapping::Granularity::kPage;
  // Open the file read-only, under a shared lock, and map it privately:
  // what is written to the mapping (recovery's replay) stays in this
  // process. Never creates; required_granularity is not checked (nothing
  // is persisted).
  bool read_only = false;
  // Options::exclusive: alone with the pool (pool_lock.h LockKind).
  bool exclusive = false;
  // Permission bits of a new pool file (the umask applies).
  uint32_t mode = 0644;
  // Where every system call about the pool file goes (tests fail them).
  env::Env* env = env::Env::Default();
};

struct Pool {
  std::string path;
  // This process's claim of the pool (pool_lock.h), given up after the
  // file (and with it the file lock) is closed.
  PoolLock lock;
  std::unique_ptr<mapping::PoolFile> file;
  std::unique_ptr<mapping::Mapping> mapping;
  Superblock superblock;
  bool created = false;
  bool read_only = false;  // PoolOptions::read_only
  // Mapped without write permission (a read-only open of device DAX): a
  // write faults, so recovery may only verify that it has nothing to do.
  // A read-only open of a file maps a private copy instead, and is false.
  bool mapped_read_only = false;
  // A pool on a device DAX device: the align of every mapping of it (2 MiB
  // or 1 GiB), which is the page size its mapping gets; 0 for a file.
  uint64_t device_align = 0;

  char* base() const { return mapping->address(); }
  uint64_t length() const { return mapping->length(); }
  LeafGeometry leaf_geometry() const { return LeafGeometry::Of(superblock); }
  PoolView view() const { return {base(), length(), path}; }
  // Heap chunks the file holds (what growth has added, committed or not).
  uint64_t file_chunks() const;
};

// The lock an open per `options` takes (pool_lock.h).
inline LockKind LockKindOf(const PoolOptions& options) {
  if (options.read_only) return options.exclusive ? LockKind::kReaderAlone : LockKind::kReader;
  return options.exclusive ? LockKind::kExclusive : LockKind::kWriter;
}

// Opens or creates the pool file per `options`, takes the lock, checks the
// superblock (magic, version, checksum, size) and maps it with a 2 MiB
// aligned reservation of the largest size the pool may grow to. A new pool
// is made under a temporary name, formatted and only then published under
// `path`. Errors name the file: see store.h.
absl::StatusOr<std::unique_ptr<Pool>> OpenPool(const std::string& path, const PoolOptions& options,
                                               PersisterFactory make_persister,
                                               std::unique_ptr<Persister>* persister);

// OpenPool's last step, for a file and a device alike: maps `pool.file`
// per `map_options` into pool.mapping, checks the granularity against
// options.required_granularity and makes the persister.
absl::Status MapPool(Pool& pool, const PoolOptions& options, const mapping::MapOptions& map_options,
                     PersisterFactory make_persister, std::unique_ptr<Persister>* persister);

// OpenPool for a character device (`st` is its stat): the pool on device
// DAX. The device is the pool: its size comes from sysfs, it never grows,
// and "exists" means the device holds a pool (the magic), so
// create_if_missing formats a device that holds none and error_if_exists
// refuses one that does. InvalidArgument for a character device that is
// not device DAX. A read-only open maps the device without write
// permission (Pool::mapped_read_only) and never formats it.
absl::StatusOr<std::unique_ptr<Pool>> OpenDevicePool(const std::string& path, const struct stat& st,
                                                     const PoolOptions& options, PersisterFactory make_persister,
                                                     std::unique_ptr<Persister>* persister);

// Removes the pool at `path` (Store::Destroy): a file is unlinked, a
// device DAX device's superblock erased (durably). Refuses what is not a
// pool (InvalidArgument) and a pool open anywhere (FailedPrecondition, as
// a second open is refused); NotFound when there is nothing at `path` or
// the device holds no pool.
absl::Status DestroyPool(const std::string& path, PersisterFactory make_persister, env::Env* env);

// A pool on a device being filled (a copy onto it) is hidden until it is
// whole: its magic erased, durably, and written back, durably, once its
// contents are durable. A crash in between leaves a device that holds no
// pool, never one that holds part of a copy; the file's equivalent is the
// temporary name a copy is renamed from. FailedPrecondition for a file.
absl::Status SetDevicePoolVisible(Pool& pool, Persister& persister, bool visible);

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
