#include "pmstore/pool/pool.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/units.h"
#include "pmstore/format/empty_pool.h"
#include "pmstore/format/superblock.h"
#include "pmstore/persist/persist_site.h"
#include "pmstore/pool/file_system.h"
#include "pmstore/pool/pool_lock.h"

namespace pmstore::internal {
namespace {

using base::RoundUp;

// Weaker granularities are larger enum values.
bool AtLeast(mapping::Granularity have, mapping::Granularity want) {
  return static_cast<int>(have) <= static_cast<int>(want);
}

// Where a new pool is made before it is published under its name; the
// pid keeps two creators apart, and a leftover (a crash mid-create) is
// visibly not a pool.
std::string CreatingPath(const std::string& path) { return absl::StrCat(path, ".creating.", getpid()); }

// The superblock of the pool at `path` (open as `file`).
absl::StatusOr<Superblock> ReadSuperblock(const mapping::PoolFile& file, const std::string& path) {
  char bytes[sizeof(Superblock)] = {};
  size_t n = 0;
  const int err = env::RetryInterrupted([&] { return file.env()->Pread(file.fd(), bytes, sizeof(bytes), 0, &n); });
  if (err != 0) return base::ErrnoStatus(err, "pread", path);
  return ParseSuperblock(bytes, n, file.size(), path);
}

// The most a new pool's file may hold: its maximum (or, with none, its
// initial size), in whole chunks. InvalidArgument below the smallest pool.
absl::StatusOr<uint64_t> NewPoolBytes(const PoolOptions& options, const std::string& path) {
  const uint64_t max_size = options.max_size == 0 ? options.initial_size : options.max_size;
  const uint64_t bytes = RoundUp(max_size, kChunkSize);
  if (bytes < MinimumPoolBytes()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": a pool may grow to no more than ", max_size, " bytes, below the smallest pool (",
        MinimumPoolBytes(), " bytes: 4 MiB of metadata, then one 2 MiB chunk); give a larger maximum size"));
  }
  return bytes;
}

// Why opening an existing pool file failed; a writable open that the
// file's permissions refuse says how to read it instead.
absl::Status OpenFailure(const absl::Status& status, const std::string& path, bool read_only) {
  if (read_only || status.code() != absl::StatusCode::kPermissionDenied) return WithPath(status, path);
  return absl::PermissionDeniedError(absl::StrCat(
      path, ": no permission to write the pool file (", status.message(),
      "); a user who may only read it opens it read-only (Options::read_only, read_only=True in Python)"));
}

}  // namespace

uint64_t Pool::file_chunks() const {
  const uint64_t chunks = (file->size() - superblock.heap_offset) / kChunkSize;
  return chunks < superblock.max_chunks ? chunks : superblock.max_chunks;
}

absl::Status WithPath(const absl::Status& status, const std::string& path) {
  if (status.ok() || status.message().find(path) != absl::string_view::npos) return status;
  return absl::Status(status.code(), absl::StrCat(path, ": ", status.message()));
}

absl::StatusOr<std::unique_ptr<Pool>> OpenPool(const std::string& path, const PoolOptions& options,
                                               PersisterFactory make_persister,
                                               std::unique_ptr<Persister>* persister) {
  env::Env* env = options.env;
  if (options.mode > 0777) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: mode 0%o is not permission bits (0 to 0777, e.g. 0640)", path, options.mode));
  }
  struct stat st;
  const int missing = env->Stat(path, &st);
  if (missing != 0 && missing != ENOENT) return base::ErrnoStatus(missing, "stat", path);
  const bool exists = missing == 0;
  if (exists && S_ISDIR(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, not a pool"));
  if (exists && S_ISCHR(st.st_mode)) return OpenDevicePool(path, st, options, make_persister, persister);
  if (exists && options.error_if_exists) return absl::AlreadyExistsError(absl::StrCat(path, ": pool already exists"));
  if (!exists && options.read_only) {
    return absl::NotFoundError(absl::StrCat(path, ": no such pool file (a read-only open never creates one)"));
  }
  if (!exists && !options.create_if_missing) {
    return absl::NotFoundError(absl::StrCat(path, ": no such pool file (create it first)"));
  }

  auto pool = std::make_unique<Pool>();
  pool->path = path;
  pool->read_only = options.read_only;
  const LockKind lock_kind = LockKindOf(options);
  // Set while a new pool exists only under its temporary name: any return
  // before it is published removes it.
  std::string unpublished;
  auto remove_unpublished = absl::MakeCleanup([&] {
    if (!unpublished.empty()) env->Unlink(unpublished);  // best effort: a leftover is visibly not a pool
  });
  Superblock& sb = pool->superblock;
  const std::string parent = std::filesystem::path(path).parent_path();
  PMSTORE_ASSIGN_OR_RETURN(const FileSystemFacts file_system,
                           ExamineFileSystem(env, exists ? path : (parent.empty() ? "." : parent), path));
  if (!exists) {
    PMSTORE_ASSIGN_OR_RETURN(const uint64_t max_bytes, NewPoolBytes(options, path));
    sb = NewSuperblock(max_bytes);
    const uint64_t size = std::clamp(RoundUp(options.initial_size, kChunkSize), sb.heap_offset + kChunkSize,
                                     sb.heap_offset + sb.max_chunks * kChunkSize);
    // Made under a temporary name and published once formatted, so a crash
    // during create leaves no half-made pool at `path`.
    auto file =
        mapping::PoolFile::Open(CreatingPath(path), mapping::OpenMode::kCreateExclusive, size, env, options.mode);
    if (!file.ok()) return WithPath(file.status(), path);
    unpublished = file->path();
    pool->file = std::make_unique<mapping::PoolFile>(std::move(*file));
    pool->created = true;
    PMSTORE_ASSIGN_OR_RETURN(pool->lock, LockPool(env, pool->file->fd(), path, lock_kind));
  } else {
    const auto open_mode = options.read_only ? mapping::OpenMode::kOpenReadOnly : mapping::OpenMode::kOpenExisting;
    auto file = mapping::PoolFile::Open(path, open_mode, 0, env);
    if (!file.ok()) return OpenFailure(file.status(), path, options.read_only);
    pool->file = std::make_unique<mapping::PoolFile>(std::move(*file));
    PMSTORE_ASSIGN_OR_RETURN(pool->lock, LockPool(env, pool->file->fd(), path, lock_kind));
    PMSTORE_ASSIGN_OR_RETURN(sb, ReadSuperblock(*pool->file, path));
  }

  mapping::MapOptions map_options;
  // 2 MiB pages where a store reaches memory directly (DAX) or the file
  // lives in memory (tmpfs). A disk file system's page cache writes a
  // dirty folio back whole, and ext4 gives a PMD mapping 2 MiB folios:
  // each durable put's msync wrote 2-4 MiB and took 4 ms, where with
  // 4 KiB pages it takes 0.5 ms (doc/STORE.md, "Writes on a disk").
  const bool huge_pages = pool->file->dax() || file_system.in_memory;
  map_options.intent = huge_pages ? mapping::PageIntent::kPmd : mapping::PageIntent::kPte;
  // A read-only open maps privately, where libpmem2 cannot (it maps to
  // persist), and persists nothing.
  map_options.engine = options.read_only ? mapping::Engine::kMmap : mapping::Engine::kPmem2;
  map_options.private_copy = options.read_only;
  // Growth adds whole chunks: a tail past the last whole one (a truncated
  // file, or a grow a crash cut short) is left unmapped. Whether the file
  // still holds every chunk the pool uses is the root's to say (ReadRoot).
  map_options.length = sb.heap_offset + pool->file_chunks() * kChunkSize;
  map_options.reserve = sb.heap_offset + sb.max_chunks * kChunkSize;
  PMSTORE_RETURN_IF_ERROR(MapPool(*pool, options, map_options, make_persister, persister));
  if (pool->created) {
    PMSTORE_RETURN_IF_ERROR(WithPath(WriteEmptyPool(pool->base(), sb, pool->file_chunks(), **persister), path));
    PMSTORE_RETURN_IF_ERROR(WithPath(pool->file->PublishAs(path), path));
    pool->mapping->set_path(path);
    unpublished.clear();
  }
  return pool;
}

absl::Status MapPool(Pool& pool, const PoolOptions& options, const mapping::MapOptions& map_options,
                     PersisterFactory make_persister, std::unique_ptr<Persister>* persister) {
  auto mapped = mapping::Mapping::Create(*pool.file, map_options);
  if (!mapped.ok()) return WithPath(mapped.status(), pool.path);
  pool.mapping = std::move(*mapped);
  const mapping::Granularity have = pool.mapping->granularity();
  if (!options.read_only && !AtLeast(have, options.required_granularity)) {
    return absl::FailedPreconditionError(
        absl::StrCat(pool.path, ": the mapping offers ", std::string(mapping::GranularityName(have)), " granularity, ",
                     std::string(mapping::GranularityName(options.required_granularity)), " is required"));
  }
  *persister = make_persister(*pool.mapping, *pool.file);
  return absl::OkStatus();
}

absl::StatusOr<Root> ReadRoot(const Pool& pool) {
  Root root;
  std::memcpy(&root, pool.base() + kRootOffset, sizeof(root));
  if (root.checksum != RootChecksum(root)) {
    return absl::DataLossError(absl::StrCat(pool.path, ": checksum failure in the root"));
  }
  if (root.num_chunks > pool.superblock.max_chunks || root.num_chunks > pool.file_chunks()) {
    return absl::DataLossError(absl::StrCat(pool.path, ": truncated file: the pool holds ", root.num_chunks,
                                            " chunks of 2 MiB, the file only ", pool.file_chunks()));
  }
  return root;
}

absl::Status GrowPool(Pool& pool, Persister& persister, uint64_t chunks) {
  const uint64_t size = pool.superblock.heap_offset + chunks * kChunkSize;
  PMSTORE_RETURN_IF_ERROR(WithPath(pool.file->Grow(size), pool.path));
  // The new length must survive a crash before any commit counts on it.
  PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kGrowSync, persister.SyncLength()));
  return WithPath(pool.mapping->Extend(*pool.file, size), pool.path);
}

}  // namespace pmstore::internal
