// The per-size THP knobs a run of anonymous memory needs, set for the run
// and put back after it.
//
// Which folio sizes a fault in anonymous memory may get is the kernel's
// per-size knobs' to say (Linux 6.8+: .../transparent_hugepage/
// hugepages-64kB/enabled for private memory, shmem_enabled for shmem). For
// --anon with --mapping=SIZE (a folio size, or pmd) the run needs the size
// asked for allowed in its MADV_HUGEPAGE mapping (madvise; shmem: advise)
// and every other size off (never), so a fault gets that size or falls
// back to 4 KiB and nothing between. Knobs already so are left alone;
// the others are set for the run. While it lasts, other processes'
// MADV_HUGEPAGE memory sees the same setting.
//
// The knobs go back to their old values when the run ends, whichever way
// it ends: KnobSetting's destructor writes them back, and should the
// process die first (SIGKILL, SIGINT, a crash), a small child process that
// holds the old values writes them back when its parent's end of the pipe
// between them closes. pte (MADV_NOHUGEPAGE) and auto (the machine as it
// is) need no knob; nor does a file, whose folios are its file system's.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "faultbench/sysfacts/thp.h"
#include "faultbench/workload/job_options.h"

namespace faultbench {

struct KnobWrite {
  std::string path;   // /sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled
  std::string value;  // what the run needs there: madvise, advise, never
};

// The knobs `job` needs written on this kernel, each once. InvalidArgument
// when the kernel cannot give the size: no per-size knobs (before 6.8), no
// such size, no knob of the kind for it (8 KiB folios are shmem's only),
// or shmem_enabled=deny|force, which overrides every size.
absl::StatusOr<std::vector<KnobWrite>> KnobWritesFor(const JobOptions& job);
// The same decision over given knob values: `sizes` as ReadMthpSizes reads
// them (empty: a kernel before 6.8), `top` the top-level knobs.
absl::StatusOr<std::vector<KnobWrite>> KnobWritesFor(const JobOptions& job, const std::vector<MthpSize>& sizes,
                                                     const ThpFacts& top);

// Every job's writes, each knob once. InvalidArgument when two jobs need
// one knob two ways (run them apart); PermissionDenied when a write is
// needed and this process is not root (the message names each knob and
// the value it needs, to set by hand).
absl::StatusOr<std::vector<KnobWrite>> KnobWritesForRun(const std::vector<JobOptions>& jobs);

class KnobSetting {
 public:
  // Reads each knob's value, starts the child that will put them back if
  // this process dies, then writes the new values. A write that fails puts
  // back the ones written before it and is the error.
  static absl::StatusOr<std::unique_ptr<KnobSetting>> Apply(const std::vector<KnobWrite>& writes);
  ~KnobSetting();  // writes the old values back
  KnobSetting(const KnobSetting&) = delete;
  KnobSetting& operator=(const KnobSetting&) = delete;

  // The old values, as they will be written back.
  const std::vector<KnobWrite>& old_values() const { return old_; }

 private:
  KnobSetting() = default;
  std::vector<KnobWrite> old_;
  int watchdog_pipe_ = -1;  // its write end; closing it without a byte makes the child write old_ back
  pid_t watchdog_ = -1;
};

}  // namespace faultbench
