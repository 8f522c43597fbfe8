// The figures `faultbench diff` knows: for each, its unit, which direction
// is worse, its noise floor (stats/change.h), and whether it is part of the
// timing-free signature (judged under emulation too) or a timing (judged
// only on a real CPU).
//
// Names are the keys of a sample's figures (run_files.h): "read.iops",
// "write.clat_p99_ns", "faults_per_mib", "vmstat.thp_fault_fallback",
// "dax.fallback", ...
#pragma once

#include <string>
#include <string_view>

#include "faultbench/stats/change.h"

namespace faultbench::diff {

enum class Worse { kUp, kDown };

struct MetricInfo {
  std::string name;
  std::string unit;         // "IOPS", "MiB/s", "ns", "faults/MiB", "%", "events", "kB"
  Worse worse = Worse::kUp;
  stats::NoiseFloor floor;  // in the unit above
  bool signature = false;   // timing-free: exact under emulation
};

// The metric called `name`, or nullptr for a name diff does not know.
const MetricInfo* FindMetric(std::string_view name);

// Where `name` sorts in a table: throughput, latency, then the signature.
int MetricOrder(std::string_view name);

}  // namespace faultbench::diff
