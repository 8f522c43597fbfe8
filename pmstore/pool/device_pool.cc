// Pools on device DAX (/dev/daxX.Y) and the removal of a pool. A device
// has no file system: it cannot be created under a temporary name and
// published, grown, read with pread or mapped privately. So the device is
// the pool, "the pool exists" means its first bytes hold the magic, a new
// pool is formatted in place with the magic written last (WriteEmptyPool),
// and removing one erases its superblock durably.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/units.h"
#include "pmstore/format/empty_pool.h"
#include "pmstore/format/superblock.h"
#include "pmstore/mapping/device_dax.h"
#include "pmstore/pool/pool.h"
#include "pmstore/pool/pool_lock.h"

namespace pmstore::internal {
namespace {

// The dax device behind `st`, with what a pool needs sysfs to say.
absl::StatusOr<mapping::DeviceDax> DeviceOf(const std::string& path, const struct stat& st) {
  std::optional<mapping::DeviceDax> device = mapping::ReadDeviceDax(st.st_rdev);
  if (!device.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": a character device that is not device DAX; a pool lives in a file or on a device DAX "
                           "device (/dev/daxX.Y: ndctl create-namespace --mode=devdax)"));
  }
  if (device->size == 0 || device->align == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": sysfs (", device->sysfs_path, ") gives no size or align for the device"));
  }
  if (base::RoundDown(device->size, kChunkSize) < MinimumPoolBytes()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": the device holds ", device->size,
                                                   " bytes, below the smallest pool (", MinimumPoolBytes(), " bytes)"));
  }
  return *device;
}

// The device opened, locked and mapped whole, its superblock not yet read:
// for writing, or with options.read_only under a shared lock and mapped
// without write permission. The driver maps a device shared only, so a
// read-only open cannot have a private copy to recover into, as a file's
// has: its recovery may only find that nothing is to be done
// (Pool::mapped_read_only).
absl::StatusOr<std::unique_ptr<Pool>> MapDevice(const std::string& path, const mapping::DeviceDax& device,
                                                const PoolOptions& options, PersisterFactory make_persister,
                                                std::unique_ptr<Persister>* persister) {
  auto file = mapping::PoolFile::OpenDevice(path, device.size, options.env, options.read_only);
  if (!options.read_only && absl::IsPermissionDenied(file.status())) {
    return absl::PermissionDeniedError(absl::StrCat(
        path, ": no permission to write the device (", file.status().message(),
        "); a user who may only read it opens it read-only (Options::read_only, read_only=True in Python)"));
  }
  if (!file.ok()) return WithPath(file.status(), path);
  auto pool = std::make_unique<Pool>();
  pool->path = path;
  pool->device_align = device.align;
  pool->read_only = options.read_only;
  pool->mapped_read_only = options.read_only;
  pool->file = std::make_unique<mapping::PoolFile>(std::move(*file));
  PMSTORE_ASSIGN_OR_RETURN(pool->lock, LockPool(options.env, pool->file->fd(), path, LockKindOf(options)));
  mapping::MapOptions map_options;
  // The driver maps at its align and refuses an address that is not a
  // multiple of it: 1 GiB aligns need a PUD-aligned reservation.
  map_options.intent = device.align >= base::kGiantPageSize ? mapping::PageIntent::kPud : mapping::PageIntent::kPmd;
  // libpmem2 maps to persist, which a read-only open never does.
  map_options.engine = options.read_only ? mapping::Engine::kMmap : mapping::Engine::kPmem2;
  map_options.read_only = options.read_only;
  map_options.length = device.size;  // a multiple of the align, as the driver requires of a mapping
  map_options.reserve = device.size;
  PMSTORE_RETURN_IF_ERROR(MapPool(*pool, options, map_options, make_persister, persister));
  return pool;
}

// Whether `bytes` (the first of a pool file or device) begin with the magic.
bool HasMagic(const char* bytes) { return std::memcmp(bytes, kMagic, sizeof(kMagic)) == 0; }

}  // namespace

absl::StatusOr<std::unique_ptr<Pool>> OpenDevicePool(const std::string& path, const struct stat& st,
                                                     const PoolOptions& options, PersisterFactory make_persister,
                                                     std::unique_ptr<Persister>* persister) {
  PMSTORE_ASSIGN_OR_RETURN(const mapping::DeviceDax device, DeviceOf(path, st));
  PMSTORE_ASSIGN_OR_RETURN(auto pool, MapDevice(path, device, options, make_persister, persister));
  const uint64_t pool_bytes = base::RoundDown(pool->file->size(), kChunkSize);
  Superblock& sb = pool->superblock;
  if (HasMagic(pool->base())) {
    if (options.error_if_exists) {
      return absl::AlreadyExistsError(absl::StrCat(
          path, ": the device already holds a pool (pmstore create --force, or Store::Destroy, erases it)"));
    }
    PMSTORE_ASSIGN_OR_RETURN(sb, ParseSuperblock(pool->base(), sizeof(Superblock), pool_bytes, path));
    return pool;
  }
  if (!options.create_if_missing || options.read_only) {
    return absl::NotFoundError(absl::StrCat(path, ": the device holds no pool (create one: pmstore create ", path, ")",
                                            options.read_only ? "; a read-only open never formats one" : ""));
  }
  // The whole device, whatever initial_size and max_size say: it never grows.
  sb = NewSuperblock(pool_bytes);
  pool->created = true;
  PMSTORE_RETURN_IF_ERROR(WithPath(WriteEmptyPool(pool->base(), sb, pool->file_chunks(), **persister), path));
  return pool;
}

absl::Status SetDevicePoolVisible(Pool& pool, Persister& persister, bool visible) {
  if (pool.device_align == 0) {
    return absl::FailedPreconditionError(absl::StrCat(pool.path, ": only a pool on a device is hidden while filled"));
  }
  if (visible) {
    std::memcpy(pool.base(), kMagic, sizeof(kMagic));
  } else {
    std::memset(pool.base(), 0, sizeof(kMagic));
  }
  PMSTORE_RETURN_IF_ERROR(WithPath(persister.Flush(pool.base(), sizeof(kMagic)), pool.path));
  return WithPath(persister.Drain(), pool.path);
}

absl::Status DestroyPool(const std::string& path, PersisterFactory make_persister, env::Env* env) {
  struct stat st;
  const int missing = env->Stat(path, &st);
  if (missing == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such pool file"));
  if (missing != 0) return base::ErrnoStatus(missing, "stat", path);
  if (S_ISDIR(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, not a pool"));
  PoolOptions options;
  options.env = env;
  if (S_ISCHR(st.st_mode)) {
    PMSTORE_ASSIGN_OR_RETURN(const mapping::DeviceDax device, DeviceOf(path, st));
    std::unique_ptr<Persister> persister;
    PMSTORE_ASSIGN_OR_RETURN(auto pool, MapDevice(path, device, options, make_persister, &persister));
    if (!HasMagic(pool->base())) return absl::NotFoundError(absl::StrCat(path, ": the device holds no pool"));
    // The magic first, on its own: once it is gone, whatever else the
    // superblock still says can never be taken for a pool.
    std::memset(pool->base(), 0, sizeof(kMagic));
    PMSTORE_RETURN_IF_ERROR(WithPath(persister->Flush(pool->base(), sizeof(kMagic)), path));
    return WithPath(persister->Drain(), path);
  }
  auto file = mapping::PoolFile::Open(path, mapping::OpenMode::kOpenExisting, 0, env);
  if (!file.ok()) return WithPath(file.status(), path);
  PMSTORE_ASSIGN_OR_RETURN(const PoolLock lock, LockPool(env, file->fd(), path, LockKind::kExclusive));
  char magic[sizeof(kMagic)] = {};
  size_t n = 0;
  const int err = env::RetryInterrupted([&] { return env->Pread(file->fd(), magic, sizeof(magic), 0, &n); });
  if (err != 0) return base::ErrnoStatus(err, "pread", path);
  if (n != sizeof(magic) || !HasMagic(magic)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a pmstore pool (bad magic); left as it is"));
  }
  return WithPath(file->Remove(), path);
}

}  // namespace pmstore::internal
