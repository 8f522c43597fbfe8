// Store::CopyTo: a copy of a snapshot of a live store into a new pool.
//
// Written over the public API only (an iterator, Store::Open, WriteBatch):
// the copy is what any reader of the store sees, and the destination is an
// ordinary pool, made by the same create path as any other. What this file
// adds is the naming: the destination is built under a temporary name,
// closed (which makes it durable) and only then renamed into place, so its
// name never shows a pool half copied. A device DAX device, which is the
// pool and has no name to rename from, holds the copy hidden instead until
// it is durable (its magic written last).
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/mapping/pool_file.h"
#include "pmstore/db/store_impl.h"

namespace pmstore {
namespace {

// A chunk is one commit of the destination: large enough that the commit's
// fixed cost (a fence, or an msync pass, per commit) is spread over many
// keys, small enough that a batch never nears the log's capacity and the
// copy's extra memory stays a few MiB.
constexpr size_t kChunkKeys = 1024;
constexpr size_t kChunkBytes = 4u << 20;

// The temporary name: the pid keeps processes apart, the counter keeps
// apart two copies to the same destination from one process.
std::string CopyingPath(const std::string& dest_path) {
  static std::atomic<uint64_t> next{0};
  return absl::StrCat(dest_path, ".copying.", getpid(), ".", next.fetch_add(1));
}

absl::Status RefuseExisting(env::Env* env, const std::string& dest_path) {
  struct stat st;
  const int err = env->Lstat(dest_path, &st);
  if (err == 0) {
    return absl::AlreadyExistsError(
        absl::StrCat(dest_path, ": already exists (a copy never replaces a file: remove it or name a new one)"));
  }
  if (err != ENOENT) return base::ErrnoStatus(err, "stat", dest_path);
  return absl::OkStatus();
}

// Writes every entry `source` yields into `dest` in chunks of unsynced
// writes; the caller makes them durable by closing `dest`.
absl::Status CopyEntries(Iterator& source, Store& dest, const Store::CopyProgress& progress) {
  const WriteOptions unsynced{.sync = false};
  WriteBatch chunk;
  uint64_t keys = 0;
  uint64_t bytes = 0;
  auto flush = [&]() -> absl::Status {
    if (chunk.Count() == 0) return absl::OkStatus();
    PMSTORE_RETURN_IF_ERROR(dest.Write(unsynced, chunk));
    keys += chunk.Count();
    bytes += chunk.ApproximateSize();
    chunk.Clear();
    if (progress) progress(keys, bytes);
    return absl::OkStatus();
  };
  for (source.SeekToFirst(); source.Valid(); source.Next()) {
    chunk.Put(source.key(), source.value());
    if (chunk.Count() >= kChunkKeys || chunk.ApproximateSize() >= kChunkBytes) PMSTORE_RETURN_IF_ERROR(flush());
  }
  PMSTORE_RETURN_IF_ERROR(source.status());
  return flush();
}

}  // namespace

absl::StatusOr<mode_t> StoreImpl::PermissionBits() {
  internal::SharedGuard lock(&mu_);  // Close releases the pool file
  if (closed_) return ClosedError();
  struct stat st;
  if (const int err = env_->Fstat(pool_->file->fd(), &st); err != 0) return base::ErrnoStatus(err, "fstat", path_);
  return st.st_mode & 0777;
}

absl::Status StoreImpl::SetDevicePoolVisible(bool visible) {
  internal::TurnGuard turn(&write_mu_);
  PMSTORE_RETURN_IF_ERROR(Writable());
  return internal::SetDevicePoolVisible(*pool_, *persister_, visible);
}

absl::Status StoreImpl::CopyOntoDevice(Iterator& source, const std::string& device, const Options& create,
                                       const CopyProgress& progress) {
  // Refuses a device that holds a pool (error_if_exists), as a file that
  // exists is refused.
  PMSTORE_ASSIGN_OR_RETURN(std::unique_ptr<StoreImpl> dest,
                           OpenWith(device, create, &internal::MakeMappingPersister, env_));
  PMSTORE_RETURN_IF_ERROR(dest->SetDevicePoolVisible(false));
  PMSTORE_RETURN_IF_ERROR(internal::WithPath(CopyEntries(source, *dest, progress), device));
  PMSTORE_RETURN_IF_ERROR(dest->Sync());
  PMSTORE_RETURN_IF_ERROR(dest->SetDevicePoolVisible(true));
  return dest->Close();
}

absl::Status StoreImpl::CopyTo(const ReadOptions& options, const std::string& dest_path,
                               const CopyProgress& progress) {
  if (Forked()) return ForkedError();
  struct stat dest_st;
  const int missing = env_->Stat(dest_path, &dest_st);
  if (missing != 0 && missing != ENOENT) return base::ErrnoStatus(missing, "stat", dest_path);
  const bool onto_device = missing == 0 && S_ISCHR(dest_st.st_mode);
  if (!onto_device) PMSTORE_RETURN_IF_ERROR(RefuseExisting(env_, dest_path));
  // The iterator first: its snapshot (options.snapshot, or the one it
  // takes) is the state copied, fixed before the destination costs
  // anything.
  std::unique_ptr<Iterator> source = NewIterator(options, {});
  const Stats geometry = GetStats();
  if (geometry.pool_bytes == 0) return ClosedError();
  PMSTORE_ASSIGN_OR_RETURN(const mode_t source_mode, PermissionBits());

  Options create;
  create.create_if_missing = true;
  create.error_if_exists = true;
  create.initial_size = geometry.pool_bytes;
  create.max_size = geometry.max_pool_bytes;
  // A copy of a version 1 pool converts it (doc/FORMAT.md "Versions"): its
  // leaves carry cells, so the same keys may need more room.
  if (geometry.format_version < internal::kFormatVersion) create.max_size *= 2;
  create.sync = false;
  // The copy holds the same data, so it gets the source's permission bits
  // (less the umask, as any new pool): a copy of a 0600 pool must not be
  // readable by everyone.
  create.mode = source_mode;
  if (onto_device) return CopyOntoDevice(*source, dest_path, create, progress);
  const std::string copying = CopyingPath(dest_path);
  PMSTORE_ASSIGN_OR_RETURN(std::unique_ptr<Store> dest,
                           OpenWith(copying, create, &internal::MakeMappingPersister, env_));
  auto remove_copying = absl::MakeCleanup([&] {
    dest->Close().IgnoreError();  // the copy is being thrown away: what its close says does not matter
    dest.reset();
    env_->Unlink(copying);  // best effort: a leftover is named as a copy in progress
  });
  PMSTORE_RETURN_IF_ERROR(internal::WithPath(CopyEntries(*source, *dest, progress), dest_path));
  source.reset();
  // Close makes every unsynced write durable (or says why not).
  PMSTORE_RETURN_IF_ERROR(internal::WithPath(dest->Close(), dest_path));
  PMSTORE_RETURN_IF_ERROR(internal::WithPath(mapping::RenameNoReplace(copying, dest_path, env_), dest_path));
  std::move(remove_copying).Cancel();
  return absl::OkStatus();
}

}  // namespace pmstore
