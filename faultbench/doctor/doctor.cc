#include "faultbench/doctor/doctor.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "faultbench/measure/dax_trace.h"
#include "faultbench/sysfacts/kernel.h"
#include "faultbench/sysfacts/pat_memtype.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/units.h"
#include "pmstore/mapping/mapping.h"
#include "pmstore/mapping/pool_file.h"
#include "pmstore/mapping/verify.h"

namespace faultbench::doctor {
namespace {

using pmstore::base::kHugePageSize;

using pmstore::base::FormatBytes;

// "pmd" for 2 MiB: the --mapping value that asks for `page_size`.
std::string MappingFor(uint64_t page_size) {
  const auto intent = pmstore::mapping::IntentOfPageSize(page_size);
  return intent ? std::string(pmstore::mapping::PageIntentName(*intent)) : "auto";
}

constexpr const char* kShmemKnob = "/sys/kernel/mm/transparent_hugepage/shmem_enabled";

void JudgeShmem(DoctorReport& r) {
  r.page_source = "shmem";
  const std::string& knob = r.thp.shmem_enabled;
  if (knob == "deny") {
    r.blockers.push_back({"shmem_enabled is 'deny': huge pages are refused on every tmpfs mount",
                          absl::StrCat("echo advise > ", kShmemKnob)});
    return;
  }
  if (knob == "force") return;
  const std::string& huge = r.mount.tmpfs_huge;
  if (huge == "always" || huge == "within_size" || huge == "advise") {
    if (huge == "advise") r.warnings.push_back("tmpfs huge=advise: PMD only where the mapping asks with MADV_HUGEPAGE (faultbench's pmd intent does)");
    return;
  }
  r.blockers.push_back({absl::StrCat("tmpfs mounted with huge=", huge.empty() ? "never (the default)" : huge,
                                     ": files get no 2 MiB pages"),
                        absl::StrCat("mount -o remount,huge=always ", r.mount.mount_point,
                                     "   (or a new one: mount -t tmpfs -o huge=always tmpfs DIR)")});
}

// fsdax and device DAX alike map the pmem range with its PAT memtype.
void WarnUncachedPat(DoctorReport& r) {
  if (r.pat_memtype.find("uncached") != std::string::npos) {
    r.warnings.push_back(absl::StrCat("the pmem range has PAT memtype '", r.pat_memtype,
                                      "': uncached PMD mappings are the 2016 regression (commit 9049771f7d54)"));
  }
}

void JudgeDax(DoctorReport& r) {
  r.page_source = "dax";
  if (r.extents.examined && r.extents.file_bytes > 0 && r.extents.aligned_bytes < r.extents.file_bytes) {
    const double share = 100.0 * static_cast<double>(r.extents.aligned_bytes) / static_cast<double>(r.extents.file_bytes);
    const std::string fix =
        r.mount.fs_type == "xfs"
            ? absl::StrCat("xfs_io -c 'extsize 2m' ", r.mount.mount_point,
                           " before writing files (mkfs.xfs -d su=2m,sw=1 -m reflink=0 for the whole fs)")
            : absl::StrCat("mkfs.ext4 -O bigalloc -C 2M ", r.mount.source, ", then rewrite the file");
    r.blockers.push_back({absl::StrFormat("only %.1f%% of the file's 2 MiB chunks sit in 2 MiB aligned physical extents", share), fix});
  }
  if (!r.is_file) {
    r.warnings.push_back(
        r.mount.fs_type == "xfs"
            ? "new files are PMD-mappable only in 2 MiB aligned extents: check the directory's extsize (xfs_io -c extsize DIR)"
            : "new files are PMD-mappable only in 2 MiB aligned extents: ext4 gives them reliably with bigalloc -C 2M; run doctor on a file to check");
  }
  WarnUncachedPat(r);
}

// Device DAX maps the namespace itself: no page cache, no file system, no
// extents; every fault is exactly the device's align.
void JudgeDeviceDax(DoctorReport& r) {
  const DevDaxFacts& dax = *r.fixed.devdax;
  r.page_source = "device dax";
  WarnUncachedPat(r);
  r.warnings.push_back("device DAX maps the namespace directly: the page cache and file-system extent alignment do not "
                       "apply, and there are no fs_dax tracepoints");
  r.warnings.push_back(absl::StrCat("every fault maps exactly the align, ", FormatBytes(dax.align),
                                    " (smaller faults get SIGBUS, larger ones fall back): run it with --mapping=",
                                    MappingFor(dax.align), " or auto; a mapping is a whole number of aligns"));
  if (dax.align != kHugePageSize) {
    const std::string ns = dax.namespace_name.empty() ? "NAMESPACE" : dax.namespace_name;
    r.blockers.push_back({absl::StrCat("the device's align is ", FormatBytes(dax.align), ": every mapping of it is ",
                                       FormatBytes(dax.align), " entries, never 2 MiB"),
                          absl::StrCat("ndctl create-namespace -f -e ", ns, " -m devdax -a 2M   (erases the device)")});
  }
}

// hugetlbfs maps only its pagesize, from a pool reserved ahead.
void JudgeHugetlbfs(DoctorReport& r) {
  const HugetlbfsFacts& fs = *r.fixed.hugetlbfs;
  r.page_source = "hugetlbfs";
  r.warnings.push_back(absl::StrCat("hugetlbfs maps every page at its pagesize, ", FormatBytes(fs.page_size),
                                    ", from the pool reserved for that size: run it with --mapping=",
                                    MappingFor(fs.page_size), " or auto"));
  if (fs.pool && fs.pool->Available() == 0) {
    r.warnings.push_back(absl::StrCat("the ", FormatBytes(fs.page_size), " pool has no free page: a run here fails "
                                      "before it maps anything; make the pool N pages as root: echo N > ",
                                      fs.pool->sysfs_dir, "/nr_hugepages"));
  }
  if (fs.page_size != kHugePageSize) {
    r.blockers.push_back({absl::StrCat("hugetlbfs with pagesize ", FormatBytes(fs.page_size),
                                       ": every page is one entry of that size, never 2 MiB"),
                          "mount -t hugetlbfs -o pagesize=2M none DIR"});
  }
}

void JudgePageCache(DoctorReport& r) {
  r.page_source = "page cache";
  const std::string& fs = r.mount.fs_type;
  if (fs == "ext4" && !KernelAtLeast(r.kernel, 6, 16)) {
    r.blockers.push_back({absl::StrCat("ext4 on Linux ", r.kernel, " caches regular files in 4 KiB pages only (large folios came in 6.16)"),
                          "use xfs, tmpfs huge=always, or a DAX mount"});
  } else if (fs == "xfs" && !KernelAtLeast(r.kernel, 5, 18)) {
    r.blockers.push_back({absl::StrCat("xfs on Linux ", r.kernel, " has no large folios (they came in 5.18)"),
                          "use a newer kernel, tmpfs huge=always, or a DAX mount"});
  } else if (fs != "ext4" && fs != "xfs" && fs != "btrfs" && fs != "bcachefs") {
    r.blockers.push_back({absl::StrCat(fs, " does not map file pages with PMD entries"),
                          "put the file on ext4, xfs, tmpfs (huge=always) or a DAX mount"});
  }
  if (r.block.pmem) {
    r.warnings.push_back(absl::StrCat(r.block.device, " is pmem but mounted without dax: the page cache sits in between (mount -o dax)"));
  }
}

}  // namespace

void Judge(DoctorReport& r) {
  r.blockers.clear();
  r.warnings.clear();
  if (r.fixed.devdax) {
    JudgeDeviceDax(r);
  } else if (r.fixed.hugetlbfs) {
    JudgeHugetlbfs(r);
  } else if (r.mount.fs_type == "tmpfs") {
    JudgeShmem(r);
  } else if (r.statx_dax || (!r.is_file && (r.mount.dax_option == "always"))) {
    JudgeDax(r);
  } else {
    JudgePageCache(r);
  }
  if (r.is_file && r.file_size < kHugePageSize && !r.fixed.fixed()) {
    r.blockers.push_back({"the file is smaller than 2 MiB: a PMD must lie wholly inside i_size",
                          "make the file at least 2 MiB (faultbench and pmstore round sizes up to 2 MiB)"});
  }
  if (r.thp.defrag == "always" && (r.page_source == "page cache" || r.page_source == "shmem")) {
    r.warnings.push_back("THP defrag=always: faults may stall in direct compaction, which inflates fault latency");
  }
  r.pmd_possible = r.blockers.empty();
}

absl::StatusOr<DoctorReport> Examine(const std::string& path) {
  DoctorReport r;
  r.path = path;
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(path, ec);
  if (ec) return absl::NotFoundError(absl::StrCat(path, ": ", ec.message()));
  r.real_path = real.string();
  r.kernel = KernelRelease();
  r.pagemap_scan = pmstore::mapping::PagemapScanAvailable();
  r.fixed = ReadFixedPageSize(r.real_path);
  if (r.fixed.devdax) {  // all sysfs (and PAT's debugfs): no need to open the device (root's, 0600)
    r.dax_tracepoints = "not for device DAX (fs_dax traces file systems)";
    const PatMemtype pat = ReadPatMemtype(r.fixed.devdax->resource, r.fixed.devdax->size);
    r.pat_memtype = pat.memtype;
    r.pat_memtype_unknown = pat.unknown_reason;
    Judge(r);
    return r;
  }

  const int fd = open(r.real_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return pmstore::base::ErrnoStatus(errno, "open", path);
  struct stat st {};
  fstat(fd, &st);
  r.is_file = S_ISREG(st.st_mode);
  r.file_size = r.is_file ? static_cast<uint64_t>(st.st_size) : 0;
  r.statx_dax = pmstore::mapping::IsDax(fd);
  if (r.is_file) {
    r.extents = ReadExtentFacts(fd);
  } else {
    r.extents.why_not = "FIEMAP needs a file; PATH is a directory";
  }
  close(fd);

  PMSTORE_ASSIGN_OR_RETURN(r.mount, ReadMountFacts(r.real_path));
  r.thp = ReadThpFacts();
  r.block = ReadBlockFacts(st.st_dev);
  auto tracefs = FindDaxTracepoints();
  r.dax_tracepoints = tracefs.ok() ? "available" : std::string(tracefs.status().message());
  if (r.block.pmem) {
    const PatMemtype pat = ReadPatMemtype(r.block.pmem_start, r.block.pmem_size);
    r.pat_memtype = pat.memtype;
    r.pat_memtype_unknown = pat.unknown_reason;
  }
  Judge(r);
  return r;
}

}  // namespace faultbench::doctor
