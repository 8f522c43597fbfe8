#include "faultbench/workload/job_options.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/units.h"

namespace faultbench {
namespace {

// fio's engines that faultbench does not run, by why.
const std::set<std::string_view>& SyscallEngines() {
  static const std::set<std::string_view> kEngines = {
      "sync",  "psync",  "vsync",     "pvsync",    "pvsync2",  "libaio",     "io_uring", "io_uring_cmd",
      "posixaio", "solarisaio", "windowsaio", "splice", "sg", "falloc", "ftruncate", "e4defrag",
      "filecreate", "filestat", "filedelete"};
  return kEngines;
}
const std::set<std::string_view>& UnmappedEngines() {
  static const std::set<std::string_view> kEngines = {
      "net",  "netsplice", "rdma",   "rados", "rbd",     "http",  "gfapi",   "gfapi_async", "libhdfs",
      "nfs",  "nbd",       "dfs",    "ime_psync", "ime_psyncv", "ime_aio", "libiscsi", "libblkio",
      "xnvme", "libzbc",   "mtd",    "libcufile", "guasi"};
  return kEngines;
}

}  // namespace

std::string_view RwModeName(RwMode mode) {
  switch (mode) {
    case RwMode::kRead: return "read";
    case RwMode::kWrite: return "write";
    case RwMode::kRandRead: return "randread";
    case RwMode::kRandWrite: return "randwrite";
    case RwMode::kRandRw: return "randrw";
    case RwMode::kReadWrite: return "rw";
  }
  return "unknown";
}

absl::StatusOr<RwMode> ParseRwMode(std::string_view text) {
  if (text == "read") return RwMode::kRead;
  if (text == "write") return RwMode::kWrite;
  if (text == "randread") return RwMode::kRandRead;
  if (text == "randwrite") return RwMode::kRandWrite;
  if (text == "randrw") return RwMode::kRandRw;
  if (text == "rw" || text == "readwrite") return RwMode::kReadWrite;
  if (text.find(':') != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rw=", std::string(text), ": the ':N' suffix (skip or repeat offsets) is not supported; faultbench's "
        "orders are sequential, a permutation, or norandommap/random_distribution draws"));
  }
  if (text == "trim" || text == "randtrim" || text == "trimwrite" || text == "randtrimwrite") {
    return absl::InvalidArgumentError(absl::StrCat("rw=", std::string(text),
                                                   ": a memory mapping has no trim (discard) operation"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown rw '", std::string(text), "': use read, write, randread, randwrite, randrw or rw"));
}

bool IsRandom(RwMode mode) {
  return mode == RwMode::kRandRead || mode == RwMode::kRandWrite || mode == RwMode::kRandRw;
}

int ReadPercent(RwMode mode, int rwmixread) {
  switch (mode) {
    case RwMode::kRead:
    case RwMode::kRandRead: return 100;
    case RwMode::kWrite:
    case RwMode::kRandWrite: return 0;
    case RwMode::kRandRw:
    case RwMode::kReadWrite: return rwmixread;
  }
  return 100;
}

std::string_view JobEngineName(JobEngine engine) {
  switch (engine) {
    case JobEngine::kMmap: return "mmap";
    case JobEngine::kPmem2: return "pmem2";
    case JobEngine::kLibpmem: return "libpmem";
    case JobEngine::kDevDax: return "dev-dax";
  }
  return "mmap";
}

absl::StatusOr<JobEngine> ParseJobEngine(std::string_view name) {
  if (name == "mmap") return JobEngine::kMmap;
  if (name == "pmem2") return JobEngine::kPmem2;
  if (name == "libpmem") return JobEngine::kLibpmem;
  if (name == "dev-dax") return JobEngine::kDevDax;
  const std::string quoted = absl::StrCat("ioengine=", std::string(name), ": ");
  if (SyscallEngines().contains(name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        quoted, "it moves data with system calls, not with loads and stores through a mapping, so its cost is "
        "not a page fault's; faultbench runs mmap, libpmem and dev-dax (use fio itself for this engine)"));
  }
  if (UnmappedEngines().contains(name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        quoted, "its target is not a file faultbench can map; faultbench runs mmap, libpmem and dev-dax"));
  }
  if (name == "cpuio" || name == "null" || name == "exec") {
    return absl::InvalidArgumentError(absl::StrCat(quoted, "it does no I/O to a mapped file, so there are no "
                                                           "page faults to study"));
  }
  if (name == "pmemblk") {
    return absl::InvalidArgumentError(absl::StrCat(
        quoted, "libpmemblk hides the mapping behind block reads and writes (and is gone from PMDK): use "
        "ioengine=libpmem on the same DAX file system"));
  }
  if (name.starts_with("external")) {
    return absl::InvalidArgumentError(absl::StrCat(quoted, "faultbench cannot load fio's engine plugins"));
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown ioengine '", std::string(name),
                                                 "': use mmap, libpmem, dev-dax or pmem2"));
}

pmstore::mapping::Engine MappingEngine(JobEngine engine) {
  return engine == JobEngine::kMmap ? pmstore::mapping::Engine::kMmap : pmstore::mapping::Engine::kPmem2;
}

std::string_view RandomDistributionName(RandomDistribution kind) {
  switch (kind) {
    case RandomDistribution::kRandom: return "random";
    case RandomDistribution::kZipf: return "zipf";
    case RandomDistribution::kPareto: return "pareto";
    case RandomDistribution::kNormal: return "normal";
  }
  return "random";
}

std::string_view AnonMemoryName(AnonMemory anon) {
  switch (anon) {
    case AnonMemory::kNone: return "";
    case AnonMemory::kPrivate: return "private";
    case AnonMemory::kShared: return "shared";
  }
  return "";
}

absl::StatusOr<AnonMemory> ParseAnonMemory(std::string_view text) {
  if (text.empty() || text == "1" || text == "private") return AnonMemory::kPrivate;
  if (text == "shared") return AnonMemory::kShared;
  if (text == "0") return AnonMemory::kNone;
  return absl::InvalidArgumentError(absl::StrCat(
      "anon=", std::string(text), ": use private (MAP_PRIVATE|MAP_ANONYMOUS, the default) or shared (shmem)"));
}

std::string JobOptions::MemoryName() const {
  if (anonymous()) return absl::StrCat("anon ", std::string(AnonMemoryName(anon)));
  return private_mapping ? "file private" : "file shared";
}

std::string JobOptions::Location() const {
  if (anon == AnonMemory::kPrivate) return "anonymous private memory";
  if (anon == AnonMemory::kShared) return "anonymous shared memory (shmem)";
  return directory.empty() ? filename : directory;
}

std::string_view FallocateName(Fallocate mode) {
  switch (mode) {
    case Fallocate::kNative: return "native";
    case Fallocate::kPosix: return "posix";
    case Fallocate::kKeep: return "keep";
    case Fallocate::kNone: return "none";
    case Fallocate::kTruncate: return "truncate";
  }
  return "native";
}

absl::Status ValidateJob(const JobOptions& job) {
  auto bad = [&](auto&&... parts) {
    return absl::InvalidArgumentError(absl::StrCat("job '", job.name, "': ", parts...));
  };
  if (job.name.empty()) return absl::InvalidArgumentError("--name must not be empty");
  if (job.anonymous()) {
    if (!job.filename.empty()) {
      return bad("--anon maps anonymous memory, not a file: drop --filename=", job.filename, " (or --anon)");
    }
    if (job.size == 0) return bad("--anon needs --size: anonymous memory has no file whose size it could take");
    if (job.size_percent > 0 || job.offset_percent > 0) return bad("--anon: a percentage of what? give sizes in bytes");
    if (job.ioengine != JobEngine::kMmap || job.map_sync) {
      return bad("--anon: anonymous memory is copied with memcpy (--engine=mmap); libpmem, dev-dax, pmem2 and "
                 "--map-sync need a file");
    }
    if (job.private_mapping) return bad("--private maps a file copy-on-write; for private anonymous memory give --anon");
    if (job.shared_file) return bad("--shared-file splits a file; with --anon every worker maps memory of its own");
    if (job.mapping == pmstore::mapping::PageIntent::kPud) {
      return bad("--mapping=pud: anonymous memory has no 1 GiB transparent huge pages; use --mapping=pmd, or "
                 "hugetlbfs with pagesize=1G for 1 GiB pages");
    }
  } else if (job.filename.empty() && job.directory.empty()) {
    return bad("give --filename or --directory (or --anon for anonymous memory)");
  }
  if (job.private_mapping && (job.ioengine != JobEngine::kMmap || job.map_sync)) {
    return bad("--private: a copy-on-write mapping is mmap's alone (libpmem2 and MAP_SYNC map a file shared)");
  }
  if (job.filename.find(':') != std::string::npos) {
    return bad("filename=", job.filename, " names several files (fio separates them with ':'); faultbench maps "
               "one file per job: give one");
  }
  if (job.bs == 0 || job.bs % 64 != 0) return bad("--bs must be a positive multiple of 64 bytes");
  if (job.size != 0 && job.size < job.bs) return bad("--size (", job.size, ") is smaller than --bs (", job.bs, ")");
  if (job.size_percent > 100 || job.offset_percent > 100) return bad("a percentage of the file must be 1..100");
  if (job.rwmixread < 0 || job.rwmixread > 100) return bad("--rwmixread must be 0..100");
  if (job.numjobs < 1 || job.numjobs > 1024) return bad("--numjobs must be 1..1024");
  if (job.loops < 1) return bad("--loops must be >= 1");
  if (job.runtime_s < 0 || job.ramp_time_s < 0) return bad("--runtime and --ramp_time must be >= 0");
  if (job.time_based && job.runtime_s == 0) return bad("--time_based needs --runtime");
  if (job.map_sync && job.ioengine == JobEngine::kDevDax) {
    return bad("map_sync: the dev-dax engine maps as fio's does (MAP_SHARED); its writes persist themselves");
  }
  if (job.percentile_list.size() > 20) return bad("percentile_list takes at most 20 values (as in fio)");
  for (double p : job.percentile_list) {
    if (!(p > 0 && p <= 100)) return bad("percentile_list: ", p, " is not in (0, 100]");
  }
  if (!job.numa.preferred.empty() && !job.numa.membind.empty()) {
    return bad("--preferred and --membind are exclusive (as in numactl)");
  }
  if (!job.numa.interleave.empty() && (!job.numa.membind.empty() || !job.numa.preferred.empty())) {
    return bad("--interleave is exclusive with --membind and --preferred (as in numactl)");
  }
  return absl::OkStatus();
}

std::string WorkerFilePath(const JobOptions& job, int index) {
  if (job.anonymous()) return "";
  if (!job.filename.empty()) {
    if (job.directory.empty() || job.filename.starts_with("/")) return job.filename;
    return absl::StrCat(job.directory, "/", job.filename);
  }
  const int job_number = job.shared_file ? 0 : index;
  const std::string& job_name = job.file_stem.empty() ? job.name : job.file_stem;
  const std::string name = absl::StrReplaceAll(
      job.filename_format, {{"$jobname", job_name}, {"$jobnum", absl::StrCat(job_number)}, {"$filenum", "0"}});
  return absl::StrCat(job.directory, "/", name);
}

absl::Status UnlinkJobFile(const std::string& path, std::string_view flag) {
  // fio unlinks only regular files: a device node (/dev/daxX.Y) stays.
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return absl::OkStatus();
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return pmstore::base::ErrnoStatus(errno, absl::StrCat("unlink (", std::string(flag), ")"), path);
  }
  return absl::OkStatus();
}

}  // namespace faultbench
