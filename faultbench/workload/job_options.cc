#include "faultbench/workload/job_options.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/units.h"

namespace faultbench {

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

absl::Status ValidateJob(const JobOptions& job) {
  auto bad = [&](auto&&... parts) {
    return absl::InvalidArgumentError(absl::StrCat("job '", job.name, "': ", parts...));
  };
  if (job.name.empty()) return absl::InvalidArgumentError("--name must not be empty");
  if (job.filename.empty() == job.directory.empty()) {
    return bad("give exactly one of --filename or --directory");
  }
  if (job.size == 0) return bad("--size is required (e.g. --size=1G)");
  if (job.bs == 0 || job.bs % 64 != 0) return bad("--bs must be a positive multiple of 64 bytes");
  if (job.size < job.bs) return bad("--size (", job.size, ") is smaller than --bs (", job.bs, ")");
  if (job.rwmixread < 0 || job.rwmixread > 100) return bad("--rwmixread must be 0..100");
  if (job.numjobs < 1 || job.numjobs > 1024) return bad("--numjobs must be 1..1024");
  if (job.loops < 1) return bad("--loops must be >= 1");
  if (job.runtime_s < 0 || job.ramp_time_s < 0) return bad("--runtime and --ramp_time must be >= 0");
  if (job.time_based && job.runtime_s == 0) return bad("--time_based needs --runtime");
  if (!job.filename.empty() && job.numjobs > 1 && !job.shared_file) {
    return bad("--filename with --numjobs>1 needs --shared-file (or use --directory for one file per job)");
  }
  if (job.shared_file && job.size / job.bs < static_cast<uint64_t>(job.numjobs)) {
    return bad("--shared-file: --size holds fewer blocks than --numjobs");
  }
  if (!job.numa.preferred.empty() && !job.numa.membind.empty()) {
    return bad("--preferred and --membind are exclusive (as in numactl)");
  }
  if (!job.numa.interleave.empty() && (!job.numa.membind.empty() || !job.numa.preferred.empty())) {
    return bad("--interleave is exclusive with --membind and --preferred (as in numactl)");
  }
  return absl::OkStatus();
}

uint64_t BlocksPerWorker(const JobOptions& job) {
  const uint64_t blocks = job.size / job.bs;
  return job.shared_file ? blocks / static_cast<uint64_t>(job.numjobs) : blocks;
}

std::string WorkerFilePath(const JobOptions& job, int index) {
  if (!job.filename.empty()) return job.filename;
  const int file_index = job.shared_file ? 0 : index;
  return absl::StrCat(job.directory, "/", job.name, ".", file_index, ".0");
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
