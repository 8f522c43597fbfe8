// Renderings of a finished run, separate from the run itself (fio's
// normal / json / terse split): each takes a RunResult and returns text.
//
//   normal: a human summary in the layout of fio's, plus what fio cannot
//           say (verified mapping, faults per MiB, placement, phases, taint);
//   json:   fio's JSON layout for the fields fio has (so fio tooling reads
//           it), plus a "faultbench" object per job and a "taint" list;
//   csv:    one header line and one row per worker, for spreadsheets.
// Text and JSON have fio's entries: one per worker, or one per reporting
// group for jobs with group_reporting (result/report_groups.h); the text
// ends with fio's "Run status group" lines.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "faultbench/result/report_groups.h"
#include "faultbench/result/run_result.h"
#include "nlohmann/json.hpp"

namespace faultbench {

enum class OutputFormat { kNormal, kJson, kCsv };
absl::StatusOr<OutputFormat> ParseOutputFormat(std::string_view name);

std::string RenderRun(const RunResult& run, OutputFormat format);

std::string RenderText(const RunResult& run);
std::string RenderCsv(const RunResult& run);
nlohmann::json RunToJson(const RunResult& run);

// Per-direction numbers as fio computes them, shared by every renderer.
struct DirectionFigures {
  uint64_t ios = 0;
  uint64_t bytes = 0;
  double runtime_s = 0;
  double iops = 0;
  double bw_bytes = 0;  // bytes per second
  LatencyHistogram::Summary clat_ns;
};
// `percents`: the percentiles to report (Percentiles of the job).
DirectionFigures Figures(const DirectionStats& stats, double runtime_s, double ns_per_tick,
                         const std::vector<double>& percents);

// The job's percentile_list, or fio's default list.
const std::vector<double>& Percentiles(const JobOptions& job);

// {"4K": 12, "64K": 4090, "2M": 0}: folios by size, smallest first, with
// the size a folio or pmd intent asked for present even when none was
// found.
nlohmann::json FolioSizesJson(const std::map<uint64_t, uint64_t>& folios, pmstore::mapping::PageIntent requested);
// "4090 x 64K, 12 x 4K", largest first ("none" when empty).
std::string FolioSizesText(const std::map<uint64_t, uint64_t>& folios);

// A phase's metrics in the shape of a job's ("read", "write", cpu, faults),
// for each entry of "phases", with the latency options of `job`.
nlohmann::json PhaseJson(const PhaseResult& phase, double ns_per_tick, const JobOptions& job);

}  // namespace faultbench
