#include "faultbench/run/target.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/units.h"

namespace faultbench {
namespace {

using pmstore::base::ErrnoStatus;
using pmstore::mapping::Mapping;
using pmstore::mapping::PoolFile;

bool DisklessEngine(JobEngine engine) { return engine == JobEngine::kLibpmem || engine == JobEngine::kDevDax; }

// The access kind fadvise_hint asks for, as fio picks it: by rw for "1";
// none for the disk-less engines, and none for a device (no page cache).
FadviseHint AdviceFor(const JobOptions& job, const FixedPageSize& fixed) {
  if (DisklessEngine(job.ioengine) || fixed.devdax) return FadviseHint::kOff;
  const FadviseHint hint = job.fadvises();
  if (hint != FadviseHint::kType) return hint;
  return IsRandom(job.rw) ? FadviseHint::kRandom : FadviseHint::kSequential;
}

// Sizes a file fio's fallocate=keep, none or truncate way (native and
// posix are PoolFile's own: preallocated, so a full disk fails here).
absl::Status SizeFile(const std::string& path, uint64_t size, Fallocate mode) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, "open", path);
  struct stat st {};
  absl::Status status;
  if (fstat(fd, &st) != 0) {
    status = ErrnoStatus(errno, "fstat", path);
  } else if (static_cast<uint64_t>(st.st_size) < size) {
    if (mode == Fallocate::kKeep && fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(size)) != 0) {
      status = ErrnoStatus(errno, "fallocate (fallocate=keep)", path);
    } else if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
      status = ErrnoStatus(errno, "ftruncate", path);
    }
  }
  close(fd);
  return status;
}

// invalidate=1: the file's cached pages go, as fio drops them. Dirty pages
// are written first: POSIX_FADV_DONTNEED alone would leave them cached.
void DropCachedPages(const JobOptions& job, const FixedPageSize& fixed, int fd, const std::string& path,
                     PageCacheOutcome& out) {
  if (fixed.devdax) {
    out.action = "not applied: a device DAX device has no page cache";
    return;
  }
  if (DisklessEngine(job.ioengine)) {
    out.action = absl::StrCat("not applied: fio skips invalidate for ", std::string(JobEngineName(job.ioengine)),
                              " (a disk-less engine), and so does faultbench");
    return;
  }
  if (!out.invalidate) {
    out.action = "kept: the file's cached pages were left as they were";
    return;
  }
  if (fdatasync(fd) != 0) {
    out.action = absl::StrCat("fdatasync failed (", ErrnoStatus(errno, "fdatasync", path).message(),
                              "): cached pages not dropped");
    return;
  }
  const int err = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  out.action = err == 0
                   ? "dropped: fdatasync, then POSIX_FADV_DONTNEED over the file"
                   : absl::StrCat("POSIX_FADV_DONTNEED failed: ", ErrnoStatus(err, "posix_fadvise", path).message());
}

// fio's fadvise_hint, on the file first (fio's td_io_open_file) ...
void AdviseFile(FadviseHint advice, int fd, PageCacheOutcome& out) {
  out.fadvise = advice == FadviseHint::kRandom ? "random" : advice == FadviseHint::kSequential ? "sequential" : "none";
  if (advice == FadviseHint::kOff) return;
  posix_fadvise(fd, 0, 0, advice == FadviseHint::kRandom ? POSIX_FADV_RANDOM : POSIX_FADV_SEQUENTIAL);
}

// ... then, for the mmap engine, on the mapping (engines/mmap.c).
// MADV_RANDOM turns off the fault path's read-around: every page not
// cached is then its own major fault.
void AdviseMapping(FadviseHint advice, const JobOptions& job, const Mapping& mapping) {
  if (advice == FadviseHint::kOff || job.ioengine != JobEngine::kMmap) return;
  madvise(mapping.address(), mapping.length(), advice == FadviseHint::kRandom ? MADV_RANDOM : MADV_SEQUENTIAL);
}

}  // namespace

ExistingTarget StatTarget(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return {};
  if (S_ISCHR(st.st_mode)) {
    const std::optional<DevDaxFacts> dax = ReadDevDaxFacts(st.st_rdev);
    return dax ? ExistingTarget{.size = dax->size, .allocated = dax->size} : ExistingTarget{};
  }
  return {.size = static_cast<uint64_t>(st.st_size), .allocated = static_cast<uint64_t>(st.st_blocks) * 512};
}

uint64_t PreparedSize(uint64_t size, const FixedPageSize& fixed) {
  return pmstore::base::RoundUp(size, fixed.fixed() ? fixed.page_size : pmstore::base::kHugePageSize);
}

absl::Status PrepareTargetFile(const std::string& path, uint64_t size, Fallocate mode, const FixedPageSize& fixed) {
  if (fixed.devdax) return absl::OkStatus();  // a device is what it is; the plan checked the job fits in it
  // On hugetlbfs whole pages of its size: the file's end is a page's end
  // (hugetlbfs refuses any other size).
  size = PreparedSize(size, fixed);
  if (mode == Fallocate::kKeep || mode == Fallocate::kNone || mode == Fallocate::kTruncate) {
    return SizeFile(path, size, mode);
  }
  PMSTORE_ASSIGN_OR_RETURN(PoolFile file, PoolFile::Open(path, pmstore::mapping::OpenMode::kCreateOrOpen, size));
  return file.size() < size ? file.Grow(size) : absl::OkStatus();
}

absl::StatusOr<Target> OpenAndMapTarget(const JobOptions& job, const std::string& path, const FixedPageSize& fixed,
                                        uint64_t anon_bytes, PageCacheOutcome& page_cache) {
  Target target;
  pmstore::mapping::MapOptions options;
  options.intent = job.mapping;
  options.engine = job.engine();
  options.map_sync = job.map_sync;
  options.private_copy = job.private_mapping;
  if (job.anonymous()) {
    page_cache.invalidate_source = std::string(job.invalidate.Source(job.from_job_file));
    page_cache.fadvise_source = std::string(job.fadvise_hint.Source(job.from_job_file));
    page_cache.action = "not applied: anonymous memory has no page cache";
    page_cache.fadvise = "none";
    PMSTORE_ASSIGN_OR_RETURN(target.mapping, Mapping::CreateAnonymous(anon_bytes, job.anon == AnonMemory::kShared,
                                                                      options));
    return target;
  }
  // A device is mapped whole (its size is a whole number of aligns, the
  // only lengths its driver maps), as a file is.
  PMSTORE_ASSIGN_OR_RETURN(PoolFile file, fixed.devdax
                                              ? PoolFile::OpenDevice(path, fixed.devdax->size)
                                              : PoolFile::Open(path, pmstore::mapping::OpenMode::kOpenExisting, 0));
  target.file = std::make_unique<PoolFile>(std::move(file));
  page_cache.invalidate = job.invalidates();
  page_cache.invalidate_source = std::string(job.invalidate.Source(job.from_job_file));
  page_cache.fadvise_source = std::string(job.fadvise_hint.Source(job.from_job_file));
  DropCachedPages(job, fixed, target.file->fd(), path, page_cache);
  const FadviseHint advice = AdviceFor(job, fixed);
  AdviseFile(advice, target.file->fd(), page_cache);

  PMSTORE_ASSIGN_OR_RETURN(target.mapping, Mapping::Create(*target.file, options));
  AdviseMapping(advice, job, *target.mapping);
  return target;
}

std::optional<uint64_t> ResidentBytes(const char* start, uint64_t length) {
  const uint64_t page = pmstore::base::kPageSize;
  const auto first = reinterpret_cast<uintptr_t>(start) & ~(page - 1);
  const uint64_t span = reinterpret_cast<uintptr_t>(start) + length - first;
  std::vector<unsigned char> pages((span + page - 1) / page);
  if (mincore(reinterpret_cast<void*>(first), span, pages.data()) != 0) return std::nullopt;
  uint64_t resident = 0;
  for (unsigned char p : pages) resident += p & 1;
  return std::min(resident * page, length);
}

}  // namespace faultbench
