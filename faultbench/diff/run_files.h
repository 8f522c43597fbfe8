// The runs `faultbench diff` compares, read from the files the tools wrote:
// faultbench's run JSON, faultbench's compare JSON (each of its runs), and
// fio's JSON from any engine. Each run becomes one sample per job, the job
// named as its tool named it and told apart by its variant (faultbench:
// the mapping and engine, "pmd/mmap"; fio: the ioengine, "psync").
//
// A job's entries (fio's clones without group_reporting, faultbench's
// workers) are added up into one sample: IOPS and bandwidth summed,
// latency means weighted by I/Os, p99 the worst entry's, faults summed.
// A group_reporting entry (fio's or faultbench's) is a result of its own,
// named after the group's first job as fio names it: faultbench's group
// entry gives its variant and doctor reasons from its members, and its
// verified shares only when every member's mapping was read back.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "faultbench/taint/comparability.h"
#include "nlohmann/json.hpp"

namespace faultbench::diff {

struct JobSample {
  std::string name;     // the job's name ("jobname")
  std::string variant;  // "pmd/mmap", "psync"
  std::map<std::string, double> figures;       // by metric name (metrics.h)
  std::map<std::string, std::string> options;  // the job's options as recorded: the workload
  double busiest_cpu_percent = 0;              // highest usr+sys of one of its entries
  std::vector<std::string> doctor_reasons;     // faultbench: why a mapping differed from its request
};

struct RunSample {
  std::string source;  // the file, or "FILE: runs[3]" for a run of a compare document
  std::string tool;    // "fio-3.33", "faultbench-0.1.0"
  std::vector<JobSample> jobs;
  bool knows_system = false;  // faultbench records system facts and taint; fio does not
  SideFacts facts;            // the system facts (comparability.h), job options aside
  std::vector<std::string> taint;
  std::string error;  // non-empty: a job of the run failed
};

// The runs of one parsed document. InvalidArgument when it is none of the
// three kinds.
absl::StatusOr<std::vector<RunSample>> RunsOfDocument(const nlohmann::json& doc, const std::string& source);

// Every run in `paths`: files, or directories searched (recursively, in
// name order) for *.json. A file named directly must hold runs; a file
// found in a directory that holds none (a doctor or bench report) is left
// out and named in `skipped`. NotFound for a missing path, InvalidArgument
// for a file that is not JSON.
absl::StatusOr<std::vector<RunSample>> ReadRuns(const std::vector<std::string>& paths,
                                               std::vector<std::string>* skipped);

}  // namespace faultbench::diff
