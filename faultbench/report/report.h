// Renderings of a finished run, separate from the run itself (fio's
// normal / json / terse split): each takes a RunResult and returns text.
//
//   normal: a human summary in the layout of fio's, plus what fio cannot
//           say (verified mapping, faults per MiB, placement, phases, taint);
//   json:   fio's JSON layout for the fields fio has (so fio tooling reads
//           it), plus a "faultbench" object per job and a "taint" list;
//   csv:    one header line and one row per job, for spreadsheets.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
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
DirectionFigures Figures(const DirectionStats& stats, double runtime_s, double ns_per_tick);

// A phase's metrics in the shape of a job's ("read", "write", cpu, faults),
// used for the job itself and for each entry of "phases".
nlohmann::json PhaseJson(const PhaseResult& phase, double ns_per_tick);

}  // namespace faultbench
