#include "faultbench/run/page_size_check.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "faultbench/run/target.h"
#include "faultbench/sysfacts/mount.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/units.h"

namespace faultbench {
namespace {

using pmstore::base::FormatBytes;
using pmstore::base::RoundUp;
using pmstore::mapping::IntentPageSize;
using pmstore::mapping::PageIntent;
using pmstore::mapping::PageIntentName;

std::string MappingFlag(PageIntent intent) { return absl::StrCat("--mapping=", std::string(PageIntentName(intent))); }

// The --mapping values that get `page_size`, for the advice in messages.
std::string IntentFor(uint64_t page_size) {
  const auto intent = pmstore::mapping::IntentOfPageSize(page_size);
  return intent ? MappingFlag(*intent) + " or --mapping=auto" : "--mapping=auto";
}

// A device's workers' ranges must end inside it; `end`: the farthest a
// worker's file size reaches (offset + range, or the device's own size).
absl::Status CheckDevice(const std::string& path, uint64_t end, const DevDaxFacts& dax) {
  if (dax.align == 0 || dax.size == 0) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": sysfs gives no size or align for ", dax.name,
                                                      " (", dax.sysfs_path, ")"));
  }
  if (end > dax.size) {
    return absl::InvalidArgumentError(absl::StrCat("--size: ", FormatBytes(end), " of ", path,
                                                   " asked for (offset + size), the device holds ",
                                                   FormatBytes(dax.size)));
  }
  if (access(path.c_str(), R_OK | W_OK) != 0) {
    return absl::PermissionDeniedError(absl::StrCat(path, " cannot be opened read-write (device DAX nodes are "
                                                    "root's, mode 0600): run as root or chmod it"));
  }
  return absl::OkStatus();
}

// Huge pages a file still needs: whole pages of the mount's size, less
// those the file already holds. That holds for --fresh-file too: the old
// file's pages go back to the pool when it is unlinked, before the new one
// takes its own (compare's repeats on fresh files depend on it).
uint64_t PagesNeeded(const std::string& path, uint64_t size, uint64_t page_size) {
  struct stat st {};
  const uint64_t have = stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_blocks) * 512 / page_size : 0;
  const uint64_t want = PreparedSize(size, {.page_size = page_size}) / page_size;
  return want - std::min(want, have);
}

std::string Where(const HugetlbfsFacts& mount) {
  return absl::StrCat("hugetlbfs ", mount.mount_point, " (pagesize ", FormatBytes(mount.page_size), ")");
}

// The pool of one page size, for `needed` pages over every mount of that size.
absl::Status CheckPool(const HugetlbfsFacts& mount, uint64_t needed) {
  if (!mount.pool) return absl::FailedPreconditionError(absl::StrCat(Where(mount), ": the kernel has no pool of that size"));
  const HugetlbPool& pool = *mount.pool;
  if (needed <= pool.Available()) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      Where(mount), ": the run needs ", needed, " huge page(s), the pool has ", pool.Available(), " free (nr_hugepages=",
      pool.nr, ", free=", pool.free, ", reserved=", pool.reserved, "); reserve more as root: ",
      pool.ReserveCommand(pool.nr + needed - pool.Available())));
}

// A mount's own size= limit, for the `needed` pages of its files.
absl::Status CheckMountLimit(const HugetlbfsFacts& mount, uint64_t needed) {
  if (!mount.mount_free_pages || needed <= *mount.mount_free_pages) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(Where(mount), ": the run needs ", needed,
                                                   " huge page(s), the mount's size= limit leaves ",
                                                   *mount.mount_free_pages, " of ", *mount.limit_pages));
}

}  // namespace

absl::Status CheckMappingFits(const JobOptions& job, const FixedPageSize& fixed) {
  const uint64_t wanted = IntentPageSize(job.mapping);
  const std::string path = WorkerFilePath(job, 0);
  if (!fixed.fixed()) {
    if (job.mapping != PageIntent::kPud) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "--mapping=pud asks for 1 GiB entries, which only hugetlbfs with pagesize=1G and device DAX with "
        "align=1G map; ", path, " is neither (fsdax and the page cache map 4 KiB and 2 MiB): use --mapping=pmd"));
  }
  if (wanted == 0 || wanted == fixed.page_size) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(MappingFlag(job.mapping), " asks for ", FormatBytes(wanted),
                                                 " entries, but ", fixed.What(path), " maps every page at ",
                                                 FormatBytes(fixed.page_size), ": use ", IntentFor(fixed.page_size)));
}

absl::Status CheckFolioFits(const JobOptions& job, const std::string& file) {
  if (!job.mapping.is_folio()) return absl::OkStatus();
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::canonical(std::filesystem::path(file).parent_path(), ec);
  if (ec) return absl::OkStatus();  // the directory check names a missing directory
  auto mount = ReadMountFacts(dir.string());
  if (!mount.ok() || mount->dax_option.empty() || mount->dax_option == "never") return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      MappingFlag(job.mapping), ": ", dir.string(), " is mounted dax=", mount->dax_option,
      ", and DAX maps the device's memory with 4 KiB or 2 MiB entries, no folios between: use --mapping=pte or pmd "
      "(or --anon for anonymous folios)"));
}

absl::Status CheckFixedPageSizeJobs(const std::vector<WorkerContext>& workers) {
  struct PlannedFile {
    const WorkerContext* first = nullptr;  // of the workers that map it
    uint64_t size = 0;                     // the most any stage's creator makes it
  };
  std::map<std::string, PlannedFile> files;
  for (const WorkerContext& c : workers) {
    if (c.worker_index == 0) PMSTORE_RETURN_IF_ERROR(CheckMappingFits(*c.job, c.fixed));
    if (!c.fixed.fixed()) continue;
    PlannedFile& file = files[c.file];
    if (file.first == nullptr) file.first = &c;
    file.size = std::max(file.size, c.file_size);
  }
  struct MountNeed {
    HugetlbfsFacts mount;
    uint64_t pages = 0;
  };
  std::map<std::string, MountNeed> by_mount;  // hugetlbfs mount point -> pages the run needs there
  for (const auto& [path, file] : files) {
    const FixedPageSize& fixed = file.first->fixed;
    if (fixed.devdax) PMSTORE_RETURN_IF_ERROR(CheckDevice(path, file.size, *fixed.devdax));
    if (fixed.hugetlbfs) {
      MountNeed& need = by_mount.try_emplace(fixed.hugetlbfs->mount_point, MountNeed{*fixed.hugetlbfs}).first->second;
      need.pages += PagesNeeded(path, file.size, fixed.page_size);
    }
  }
  std::map<uint64_t, uint64_t> pages_by_size;  // every mount of a size draws on its one pool
  for (const auto& [mount_point, need] : by_mount) {
    PMSTORE_RETURN_IF_ERROR(CheckMountLimit(need.mount, need.pages));
    pages_by_size[need.mount.page_size] += need.pages;
  }
  for (const auto& [mount_point, need] : by_mount) {
    PMSTORE_RETURN_IF_ERROR(CheckPool(need.mount, pages_by_size[need.mount.page_size]));
  }
  return absl::OkStatus();
}

}  // namespace faultbench
