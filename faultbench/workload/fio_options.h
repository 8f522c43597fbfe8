// fio's job options, one by one: what each does to a JobOptions.
//
// Every option a job file or a flag may carry falls in one of four kinds,
// and the table in fio_options.cc says which:
//   supported  sets the JobOptions field with fio's meaning;
//   inert      accepted, changes nothing in a synchronous mmap engine
//              (iodepth, iodepth_batch*, thread, ...): kept in
//              JobOptions::inert_options so the report says so in one line;
//   refused    an fio option that makes no sense here: InvalidArgument
//              saying why (ioengine=libaio, verify, rate, thp, ...);
//   unknown    not an fio option faultbench knows: InvalidArgument
//              "unsupported option 'NAME'".
// faultbench's own options (mapping, map_sync, prefault, fresh_file,
// shared_file and the numactl names) are accepted too, with '-' or '_'.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "faultbench/workload/job_options.h"

namespace faultbench {

// Sets one option, by its fio name (or faultbench's, with '-' or '_').
// `value` is empty for a bare `key` line.
absl::Status ApplyJobOption(JobOptions& job, std::string_view key, std::string_view value);

// fio's time syntax: "30" (seconds), "500ms", "10s", "2m", "1h", "100us".
absl::StatusOr<double> ParseSeconds(std::string_view text);

// A CPU list as fio's cpus_allowed takes it ("0-3,6,8-9"): the CPUs in order.
absl::StatusOr<std::vector<int>> ParseCpuList(std::string_view text);

// One line per reason the job's inert options change nothing, naming them
// as the job wrote them: "iodepth=32, thread: change nothing in a
// synchronous mmap engine: ...". direct and sync count for every engine but
// libpmem. Empty when there are none.
std::vector<std::string> InertOptionNotes(const JobOptions& job);

// The options ApplyJobOption supports, inerts and refuses, with the reason
// of each refusal: for the documentation and its test.
struct OptionKinds {
  std::vector<std::string> supported;
  std::vector<std::string> inert;
  std::vector<std::pair<std::string, std::string>> refused;  // name, why
};
const OptionKinds& FioOptionKinds();

}  // namespace faultbench
