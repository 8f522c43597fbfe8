// One faultbench job: what fio calls a job section, plus faultbench's own
// choices about how the file is mapped and measured.
//
// Field names and meanings follow fio where fio has the option, so a job
// file or a command line written for fio means the same thing here. The
// struct is plain data: built by the command line or the job-file reader,
// checked once by ValidateJob, then only read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

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
  std::string filename;   // one file; exclusive with directory
  std::string directory;  // files named NAME.JOB.0 inside, as fio names them
  uint64_t size = 0;      // bytes per job (per file), rounded down to bs
  uint64_t bs = 4096;
  RwMode rw = RwMode::kRead;
  int rwmixread = 50;
  int numjobs = 1;
  bool shared_file = false;  // numjobs workers split one file of `size`
  double runtime_s = 0;      // 0: no limit
  bool time_based = false;   // repeat passes until runtime_s
  int loops = 1;
  double ramp_time_s = 0;    // I/O in this first interval is not measured
  uint64_t randseed = 0x89;  // fio's default seed
  bool unlink = false;       // delete the job's files when the run is done

  // --- faultbench's own -----------------------------------------------------
  pmstore::mapping::PageIntent mapping = pmstore::mapping::PageIntent::kAuto;
  pmstore::mapping::Engine engine = pmstore::mapping::Engine::kMmap;
  bool map_sync = false;
  bool prefault = false;    // populate every page first, measure steady state
  bool fresh_file = false;  // unlink and recreate, so no mapping state carries over
  NumaOptions numa;
};

// Checks values that do not depend on the machine (sizes, ranges, option
// combinations). InvalidArgument with a one-line message naming the option.
absl::Status ValidateJob(const JobOptions& job);

// Number of bs-sized blocks one worker covers per pass.
uint64_t BlocksPerWorker(const JobOptions& job);

// The file worker `index` uses (fio's naming: DIR/NAME.INDEX.0), or the
// shared file.
std::string WorkerFilePath(const JobOptions& job, int index);

// Deletes a job's file for `flag` (--fresh-file before a run, --unlink
// after it). A file already gone is not an error: workers of a
// --shared-file job name the same file. Like fio, it deletes regular files
// only: a device (/dev/daxX.Y) is left alone.
absl::Status UnlinkJobFile(const std::string& path, std::string_view flag);

}  // namespace faultbench
