// fio job files: `[global]` plus one section per job, `key=value` or bare
// `key` lines, `#` and `;` comments. The test.fio of the 2016 DAX PMD
// thread runs unchanged:
//
//   [global]
//   bs=4k
//   size=2G
//   directory=/mnt/pmem0
//   ioengine=mmap
//   [randrw]
//   rw=randrw
//
// Besides the options of JobOptions, fio's ioengine=mmap|libpmem,
// numa_cpu_nodes and numa_mem_policy are understood. Any other option is an
// InvalidArgument naming it and its line, so a job never silently means
// something other than it says.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "faultbench/workload/job_options.h"

namespace faultbench {

// Sets one option, by its fio name (or faultbench's, with '-' or '_').
absl::Status ApplyJobOption(JobOptions& job, std::string_view key, std::string_view value);

// fio's time syntax: "30" (seconds), "500ms", "10s", "2m", "1h", "100us".
absl::StatusOr<double> ParseSeconds(std::string_view text);

// Jobs of a job file's text; each job section starts from `defaults` with
// the [global] options applied, and is named after its section.
absl::StatusOr<std::vector<JobOptions>> ParseJobFile(std::string_view text, const JobOptions& defaults);

// Reads and parses the file at `path`; NotFound names the path.
absl::StatusOr<std::vector<JobOptions>> ReadJobFile(const std::string& path, const JobOptions& defaults);

}  // namespace faultbench
