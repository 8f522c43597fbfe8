// Renderings of what a run records beside its workers: the timing-free
// signature (result/signature.h) and the system it ran on (kernel, CPU,
// hypervisor or emulator, THP, file system). `faultbench diff` reads both
// back from the JSON to judge a change and whether two sides compare.
#pragma once

#include <string>

#include "faultbench/result/run_result.h"
#include "nlohmann/json.hpp"

namespace faultbench {

// {"vmstat": {"pgfault": 71, ...}, "page_tables_kb": K, "page_tables_delta_kb": D,
//  "dax_trace": {...} | null, "faults": F, "bytes_accessed": B, "faults_per_mib": R,
//  "verified": true, "pmd_share": 1.0, "pud_share": 0.0}
nlohmann::json SignatureJson(const RunSignature& signature);

// {"kernel": ..., "kernel_config": ..., "kernel_debug_options": [...], "hypervisor": ...,
//  "emulation": ..., "cpu_model": ..., "online_cpus": N, "cpu_governor": ..., "thp": {...},
//  "free_page_reporting": B, "filesystem": {"type", "source", "mount_point", "options", "dax"}}
nlohmann::json SystemJson(const RunResult& run);

// The text report's "signature" block, ending in a newline.
std::string SignatureText(const RunSignature& signature);

}  // namespace faultbench
