// One faultbench job: what fio calls a job section, plus faultbench's own
// choices about how the file is mapped and measured.
//
// Field names and meanings follow fio where fio has the option, so a job
// file or a command line written for fio means the same thing here. The
// struct is plain data: built by the command line or the job-file reader,
// checked once by ValidateJob, then only read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "pmstore/mapping/mapping.h"

namespace faultbench {

// fio's rw= values that faultbench runs. kReadWrite is fio's sequential mix
// (rw=rw / rw=readwrite).
enum class RwMode { kRead, kWrite, kRandRead, kRandWrite, kRandRw, kReadWrite };

std::string_view RwModeName(RwMode mode);  // fio's spelling: "randrw", ...
absl::StatusOr<RwMode> ParseRwMode(std::string_view text);
bool IsRandom(RwMode mode);
// Share of I/Os that read, in percent, given the job's rwmixread.
int ReadPercent(RwMode mode, int rwmixread);

// The engine a job names. fio's mmap, libpmem and dev-dax, and faultbench's
// pmem2 (every write through libpmem2's persisting memcpy):
//   mmap:    memcpy both ways over a MAP_SHARED mapping;
//   libpmem: reads memcpy, writes pmem2 memcpy with fio's flags: direct=1
//            non-temporal stores, direct=0 temporal; sync=1 drains after
//            every write, sync=0 never (PMEM2_F_MEM_NODRAIN);
//   dev-dax: like fio's dev-dax engine, every write copied and persisted
//            (flush + drain), whatever direct and sync say;
//   pmem2:   every write copied and persisted, libpmem2 choosing the stores.
enum class JobEngine { kMmap, kPmem2, kLibpmem, kDevDax };
std::string_view JobEngineName(JobEngine engine);  // "mmap", "pmem2", "libpmem", "dev-dax"
// The engines above by name; fio's other engines are refused with the reason.
absl::StatusOr<JobEngine> ParseJobEngine(std::string_view name);
// How the engine maps the file: plain mmap, or libpmem2 (MAP_SYNC on DAX).
pmstore::mapping::Engine MappingEngine(JobEngine engine);

// fio's random_distribution. With every kind but kRandom the offsets are
// drawn with replacement (fio turns the random map off for them).
enum class RandomDistribution { kRandom, kZipf, kPareto, kNormal };
std::string_view RandomDistributionName(RandomDistribution kind);  // fio's: "random", "zipf", ...
struct Distribution {
  RandomDistribution kind = RandomDistribution::kRandom;
  double parameter = 0;  // zipf theta, pareto h, normal deviation in percent
  double center = -1;    // fio's optional center in [0, 1]; -1: fio's default (a seeded offset)
};

enum class CpusAllowedPolicy { kShared, kSplit };

// fio's fallocate=: how a new file's space is reserved. kNative and kPosix
// preallocate (a full disk is an error at setup, not a SIGBUS), kKeep
// preallocates without changing the size before the file is sized, kNone
// and kTruncate make a sparse file.
enum class Fallocate { kNative, kPosix, kKeep, kNone, kTruncate };
std::string_view FallocateName(Fallocate mode);

// fio's fadvise_hint: kType advises random or sequential access by the
// job's rw (fio's default), kOff nothing.
enum class FadviseHint { kOff, kType, kRandom, kSequential };

// An option whose default depends on where the job comes from: fio's own
// default in a job file, faultbench's on the command line (where the run
// has always kept the page cache as it found it).
template <typename T>
struct ContextDefault {
  std::optional<T> set;  // given explicitly, in the job file or as a flag
  T fio_default;
  T command_line_default;
  T Get(bool from_job_file) const { return set ? *set : (from_job_file ? fio_default : command_line_default); }
  // Why Get() has its value: "set", "fio's default in job files" or
  // "faultbench's default on the command line".
  std::string_view Source(bool from_job_file) const {
    if (set) return "set";
    return from_job_file ? "fio's default in job files" : "faultbench's default on the command line";
  }
};

// What a job maps, as will-it-scale names its page-fault tests (page_fault1
// private anonymous, page_fault2 private file, page_fault3 shared file):
// a file, shared (fio's mmap engine) or, with `private`, copied on write;
// or anonymous memory, private (MAP_PRIVATE|MAP_ANONYMOUS: the process's
// own pages) or shared (MAP_SHARED|MAP_ANONYMOUS: shmem pages). fio has no
// anonymous engine; anonymous memory is faultbench's own (--anon, anon=).
enum class AnonMemory { kNone, kPrivate, kShared };
std::string_view AnonMemoryName(AnonMemory anon);  // "", "private", "shared"
// "private", "shared" (or "" / "1" for private); InvalidArgument otherwise.
absl::StatusOr<AnonMemory> ParseAnonMemory(std::string_view text);

// numactl-style node policies, kept as the user wrote them ("0-1",
// "block:pmem0", "file:/mnt/x"); resolved to node masks by numa/.
struct NumaOptions {
  std::string cpunodebind;
  std::string membind;
  std::string preferred;
  std::string interleave;
  bool any() const { return !cpunodebind.empty() || !membind.empty() || !preferred.empty() || !interleave.empty(); }
};

struct JobOptions {
  // --- fio's options -------------------------------------------------------
  std::string name = "faultbench";
  std::string description;
  std::string filename;   // one file, relative to directory when both are given
  std::string directory;  // files named by filename_format inside, as fio names them
  // What $jobname stands for in filename_format when it is not `name`
  // (compare gives each variant files of its own); "" = name.
  std::string file_stem;
  std::string filename_format = "$jobname.$jobnum.$filenum";
  uint64_t size = 0;          // bytes per job (per file), rounded down to bs; 0: the file's size
  unsigned size_percent = 0;  // size=N%: N percent of the file's real size (0: not a percentage)
  uint64_t filesize = 0;      // the file's size when it differs from size (0: size)
  uint64_t offset = 0;        // first byte of the file the job uses
  unsigned offset_percent = 0;    // offset=N%: at N percent of the file's real size
  uint64_t offset_increment = 0;  // each further worker of the job starts this much later
  uint64_t io_size = 0;       // bytes of I/O per loop (0: the range's size)
  uint64_t bs = 4096;
  RwMode rw = RwMode::kRead;
  int rwmixread = 50;
  int numjobs = 1;
  bool shared_file = false;  // numjobs workers split one file of `size` (faultbench's own)
  double runtime_s = 0;      // 0: no limit
  bool time_based = false;   // repeat passes until runtime_s
  int loops = 1;
  double ramp_time_s = 0;    // I/O in this first interval is not measured
  uint64_t randseed = 0x89;  // fio's default seed
  bool randseed_set = false; // randseed given: it wins over randrepeat=0, as in fio
  bool randrepeat = true;    // 0: a different seed every run (unless randseed is given)
  bool norandommap = false;  // random offsets uniform with replacement, not each block once
  Distribution random_distribution;
  bool unlink = false;       // delete the job's files when the run is done
  JobEngine ioengine = JobEngine::kMmap;
  bool direct = false;       // libpmem: non-temporal stores
  bool sync = false;         // libpmem: drain after every write
  Fallocate fallocate = Fallocate::kNative;
  ContextDefault<bool> invalidate{.fio_default = true, .command_line_default = false};
  ContextDefault<FadviseHint> fadvise_hint{.fio_default = FadviseHint::kType,
                                           .command_line_default = FadviseHint::kOff};
  ContextDefault<bool> scramble_buffers{.fio_default = true, .command_line_default = false};
  std::string buffer_pattern;  // bytes repeated over the write buffer ("" = faultbench's fill)
  // Ordering and groups (fio's stonewall, new_group, group_reporting).
  bool stonewall = false;    // start only when every job before it has finished
  bool new_group = false;    // start a new reporting group (stonewall implies it)
  bool group_reporting = false;
  std::string cpus_allowed;  // CPU list ("0-3,6"); "" = no restriction
  CpusAllowedPolicy cpus_allowed_policy = CpusAllowedPolicy::kShared;
  // Latency measurement (fio's disable_*, *_percentiles, percentile_list).
  bool disable_lat = false;
  bool disable_clat = false;
  bool disable_slat = false;
  bool clat_percentiles = true;
  bool lat_percentiles = false;
  std::vector<double> percentile_list;  // empty: fio's default list
  // fio options that change nothing here, as the job wrote them
  // ("iodepth=32"): the report names them in one line.
  std::vector<std::string> inert_options;
  bool from_job_file = false;  // decides the ContextDefault options

  // --- faultbench's own -----------------------------------------------------
  pmstore::mapping::PageIntent mapping = pmstore::mapping::PageIntent::kAuto;
  AnonMemory anon = AnonMemory::kNone;  // anonymous memory instead of a file (directory, filename unused)
  bool private_mapping = false;         // a file mapped MAP_PRIVATE: writes are copied on write, never the file's
  bool map_sync = false;
  bool prefault = false;    // populate every page first, measure steady state
  bool fresh_file = false;  // unlink and recreate, so no mapping state carries over
  NumaOptions numa;

  pmstore::mapping::Engine engine() const { return MappingEngine(ioengine); }
  bool anonymous() const { return anon != AnonMemory::kNone; }
  // "file shared", "file private", "anon private", "anon shared".
  std::string MemoryName() const;
  // Where the job's memory is, for a report's headline: its directory or
  // file, or "anonymous private memory", "anonymous shared memory (shmem)".
  std::string Location() const;
  bool invalidates() const { return invalidate.Get(from_job_file); }
  FadviseHint fadvises() const { return fadvise_hint.Get(from_job_file); }
  bool scrambles() const { return scramble_buffers.Get(from_job_file); }
  // Whether each I/O is timed at all: fio's disable_clat and disable_lat
  // both off one measurement here (a mapping has no submission step).
  bool times_io() const { return !(disable_clat && disable_lat); }
};

// Checks values that do not depend on the machine (sizes, ranges, option
// combinations). InvalidArgument with a one-line message naming the option.
absl::Status ValidateJob(const JobOptions& job);

// The file worker `index` uses ("" for anonymous memory): filename (under directory when both are
// set), or filename_format's name inside directory ($jobname = file_stem
// when set, else the job's name; $jobnum = the worker, $filenum = 0), or
// the one file of a --shared-file job.
std::string WorkerFilePath(const JobOptions& job, int index);

// Deletes a job's file for `flag` (--fresh-file before a run, --unlink
// after it). A file already gone is not an error: workers of a
// --shared-file job name the same file. Like fio, it deletes regular files
// only: a device (/dev/daxX.Y) is left alone.
absl::Status UnlinkJobFile(const std::string& path, std::string_view flag);

}  // namespace faultbench
