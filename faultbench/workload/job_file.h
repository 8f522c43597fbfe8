// fio job files, read as fio 3.33 reads them: `[global]` plus one section
// per job, `key=value` or bare `key` lines, `#` and `;` comments, and
//   include FILE     the options of FILE in the current section (a relative
//                    FILE is looked up next to the job file; no sections in it);
//   ${VAR}           the environment variable VAR (an unset VAR is an error
//                    naming it, where fio would put an empty string);
//   $pagesize, $mb_memory, $ncpus   this machine's values, and simple
//                    integer arithmetic with them ($mb_memory/2), as fio does;
//   sections         fio's --section: run only the named job sections.
// A [global] section applies to the job sections after it. Several job
// files run as fio runs them: the first job of each later file is a
// stonewall, so it starts when the earlier files' jobs are done.
//
// The test.fio of the 2016 DAX PMD thread runs unchanged:
//
//   [global]
//   bs=4k
//   size=2G
//   directory=/mnt/pmem0
//   ioengine=mmap
//   [randrw]
//   rw=randrw
//
// Options are applied by fio_options.h; an error names the file and line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "faultbench/workload/fio_options.h"
#include "faultbench/workload/job_options.h"

namespace faultbench {

struct JobFileOptions {
  std::vector<std::string> sections;  // fio's --section: only these job sections ([global] always)
  bool stonewall_first = false;       // the first job waits for every earlier one (a later file)
};

// Jobs of a job file's text; each job section starts from `defaults` with
// the [global] options applied, and is named after its section. `path`
// locates relative includes and names the file in errors ("" for text
// without a file: includes are then relative to the working directory).
absl::StatusOr<std::vector<JobOptions>> ParseJobFile(std::string_view text, const JobOptions& defaults,
                                                     const JobFileOptions& options = {}, const std::string& path = "");

// Reads and parses the file at `path`; NotFound names the path.
absl::StatusOr<std::vector<JobOptions>> ReadJobFile(const std::string& path, const JobOptions& defaults,
                                                    const JobFileOptions& options = {});

// Several job files, in order, as one run (see above). InvalidArgument
// when `sections` names a section none of them has.
absl::StatusOr<std::vector<JobOptions>> ReadJobFiles(const std::vector<std::string>& paths,
                                                     const JobOptions& defaults,
                                                     const std::vector<std::string>& sections);

}  // namespace faultbench
