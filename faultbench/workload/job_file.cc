#include "faultbench/workload/job_file.h"

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/units.h"

namespace faultbench {
namespace {

absl::StatusOr<bool> ParseBool(std::string_view key, std::string_view value) {
  if (value.empty() || value == "1" || value == "true") return true;
  if (value == "0" || value == "false") return false;
  return absl::InvalidArgumentError(absl::StrCat("option ", std::string(key), ": expected 0 or 1, got '",
                                                 std::string(value), "'"));
}

absl::StatusOr<int> ParseInt(std::string_view key, std::string_view value) {
  int out = 0;
  if (!absl::SimpleAtoi(absl::string_view(value.data(), value.size()), &out)) {
    return absl::InvalidArgumentError(absl::StrCat("option ", std::string(key), ": '", std::string(value),
                                                   "' is not a number"));
  }
  return out;
}

// fio's numa_mem_policy: default | local | prefer:N | bind:NODES | interleave:NODES.
absl::Status ApplyMemPolicy(JobOptions& job, std::string_view value) {
  const size_t colon = value.find(':');
  const std::string mode(value.substr(0, colon));
  const std::string nodes = colon == std::string_view::npos ? "" : std::string(value.substr(colon + 1));
  job.numa.membind.clear();
  job.numa.preferred.clear();
  job.numa.interleave.clear();
  if (mode == "default" || mode == "local") return absl::OkStatus();
  if (nodes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("numa_mem_policy=", std::string(value), ": ", mode,
                                                   " needs nodes, e.g. ", mode, ":0"));
  }
  if (mode == "prefer") job.numa.preferred = nodes;
  else if (mode == "bind") job.numa.membind = nodes;
  else if (mode == "interleave") job.numa.interleave = nodes;
  else return absl::InvalidArgumentError(absl::StrCat("numa_mem_policy: unknown mode '", mode, "'"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<double> ParseSeconds(std::string_view text) {
  std::string body(text);
  double scale = 1.0;
  for (const auto& [suffix, factor] : {std::pair{"us", 1e-6}, std::pair{"ms", 1e-3}, std::pair{"s", 1.0},
                                       std::pair{"m", 60.0}, std::pair{"h", 3600.0}}) {
    if (absl::EndsWith(body, suffix)) {
      body.resize(body.size() - std::string_view(suffix).size());
      scale = factor;
      break;
    }
  }
  double value = 0;
  if (body.empty() || !absl::SimpleAtod(body, &value) || value < 0) {
    return absl::InvalidArgumentError(absl::StrCat("bad time '", std::string(text), "': use e.g. 30, 10s, 500ms, 2m"));
  }
  return value * scale;
}

absl::Status ApplyJobOption(JobOptions& job, std::string_view raw_key, std::string_view value) {
  const std::string key = absl::StrReplaceAll(std::string(raw_key), {{"-", "_"}});
  if (key == "name") job.name = std::string(value);
  else if (key == "filename") job.filename = std::string(value);
  else if (key == "directory") job.directory = std::string(value);
  else if (key == "size") { PMSTORE_ASSIGN_OR_RETURN(job.size, pmstore::base::ParseSize(value)); }
  else if (key == "bs" || key == "blocksize") { PMSTORE_ASSIGN_OR_RETURN(job.bs, pmstore::base::ParseSize(value)); }
  else if (key == "rw" || key == "readwrite") { PMSTORE_ASSIGN_OR_RETURN(job.rw, ParseRwMode(value)); }
  else if (key == "rwmixread") { PMSTORE_ASSIGN_OR_RETURN(job.rwmixread, ParseInt(key, value)); }
  else if (key == "rwmixwrite") {
    PMSTORE_ASSIGN_OR_RETURN(int write, ParseInt(key, value));
    job.rwmixread = 100 - write;
  }
  else if (key == "numjobs") { PMSTORE_ASSIGN_OR_RETURN(job.numjobs, ParseInt(key, value)); }
  else if (key == "shared_file") { PMSTORE_ASSIGN_OR_RETURN(job.shared_file, ParseBool(key, value)); }
  else if (key == "runtime") { PMSTORE_ASSIGN_OR_RETURN(job.runtime_s, ParseSeconds(value)); }
  else if (key == "time_based") { PMSTORE_ASSIGN_OR_RETURN(job.time_based, ParseBool(key, value)); }
  else if (key == "loops") { PMSTORE_ASSIGN_OR_RETURN(job.loops, ParseInt(key, value)); }
  else if (key == "ramp_time") { PMSTORE_ASSIGN_OR_RETURN(job.ramp_time_s, ParseSeconds(value)); }
  else if (key == "randseed") {
    if (!absl::SimpleAtoi(absl::string_view(value.data(), value.size()), &job.randseed)) {
      return absl::InvalidArgumentError(absl::StrCat("randseed: '", std::string(value), "' is not a number"));
    }
  }
  else if (key == "ioengine" || key == "engine") {
    PMSTORE_ASSIGN_OR_RETURN(job.engine, pmstore::mapping::ParseEngine(value));
  }
  else if (key == "mapping") { PMSTORE_ASSIGN_OR_RETURN(job.mapping, pmstore::mapping::ParsePageIntent(value)); }
  else if (key == "map_sync") { PMSTORE_ASSIGN_OR_RETURN(job.map_sync, ParseBool(key, value)); }
  else if (key == "prefault") { PMSTORE_ASSIGN_OR_RETURN(job.prefault, ParseBool(key, value)); }
  else if (key == "unlink") { PMSTORE_ASSIGN_OR_RETURN(job.unlink, ParseBool(key, value)); }
  else if (key == "fresh_file") { PMSTORE_ASSIGN_OR_RETURN(job.fresh_file, ParseBool(key, value)); }
  else if (key == "numa_cpu_nodes" || key == "cpunodebind") job.numa.cpunodebind = std::string(value);
  else if (key == "numa_mem_policy") return ApplyMemPolicy(job, value);
  else if (key == "membind") job.numa.membind = std::string(value);
  else if (key == "preferred") job.numa.preferred = std::string(value);
  else if (key == "interleave") job.numa.interleave = std::string(value);
  else if (key == "thread") {}  // workers are always threads here
  else return absl::InvalidArgumentError(absl::StrCat("unsupported option '", std::string(raw_key), "'"));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<JobOptions>> ParseJobFile(std::string_view text, const JobOptions& defaults) {
  JobOptions global = defaults;
  std::vector<JobOptions> jobs;
  JobOptions* current = nullptr;  // null while in [global] or before any section
  bool in_global = false;
  int line_number = 0;
  for (absl::string_view raw : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++line_number;
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[') {
      if (line.back() != ']') {
        return absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": unclosed section '",
                                                       std::string(line), "'"));
      }
      const std::string section(absl::StripAsciiWhitespace(line.substr(1, line.size() - 2)));
      in_global = section == "global";
      current = nullptr;
      if (!in_global) {
        jobs.push_back(global);
        jobs.back().name = section;
        current = &jobs.back();
      }
      continue;
    }
    if (!in_global && current == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": option outside a section"));
    }
    const size_t eq = line.find('=');
    const absl::string_view key = absl::StripAsciiWhitespace(line.substr(0, eq));
    const absl::string_view value =
        eq == absl::string_view::npos ? absl::string_view() : absl::StripAsciiWhitespace(line.substr(eq + 1));
    JobOptions& target = in_global ? global : *current;
    absl::Status status = ApplyJobOption(target, std::string_view(key.data(), key.size()),
                                         std::string_view(value.data(), value.size()));
    if (!status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": ", status.message()));
    }
    // [global] after a job section would not reach it in fio either; keep the
    // order rule simple: [global] options apply to the sections that follow.
  }
  if (jobs.empty()) return absl::InvalidArgumentError("no job section ([name] before its options)");
  return jobs;
}

absl::StatusOr<std::vector<JobOptions>> ReadJobFile(const std::string& path, const JobOptions& defaults) {
  if (std::filesystem::is_directory(path)) {
    return absl::InvalidArgumentError(absl::StrCat("job file ", path, " is a directory (did you mean --directory?)"));
  }
  std::ifstream in(path);
  if (!in) return pmstore::base::ErrnoStatus(errno, "open (job file)", path);
  std::stringstream text;
  text << in.rdbuf();
  auto jobs = ParseJobFile(text.str(), defaults);
  if (!jobs.ok()) {
    // "job file test.fio, line 3: unsupported option 'iodepth'"
    const std::string why(jobs.status().message());
    return absl::Status(jobs.status().code(),
                        absl::StrCat("job file ", path, why.starts_with("line ") ? ", " : ": ", why));
  }
  return jobs;
}

}  // namespace faultbench
