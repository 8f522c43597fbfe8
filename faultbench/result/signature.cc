#include "faultbench/result/signature.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "pmstore/base/units.h"
#include "pmstore/mapping/mapping.h"

namespace faultbench {

bool IsSignatureCounter(std::string_view name) {
  static constexpr std::string_view kNamed[] = {"thp_fault_alloc", "thp_fault_fallback", "thp_file_alloc",
                                                "thp_file_mapped", "pgfault",            "pgmajfault"};
  if (absl::StartsWith(absl::string_view(name.data(), name.size()), "numa_")) return true;
  return std::find(std::begin(kNamed), std::end(kNamed), name) != std::end(kNamed);
}

void AddCounterDeltas(const VmCounters& before, const VmCounters& after, RunSignature& signature) {
  for (const auto& [name, value] : after.vmstat) {
    const auto was = before.vmstat.find(name);
    if (!IsSignatureCounter(name) || was == before.vmstat.end()) continue;
    signature.vmstat_deltas[name] += static_cast<int64_t>(value) - static_cast<int64_t>(was->second);
  }
  for (const auto& [name, value] : after.mthp) {
    const auto was = before.mthp.find(name);
    if (was == before.mthp.end()) continue;
    signature.mthp_deltas[name] += static_cast<int64_t>(value) - static_cast<int64_t>(was->second);
  }
  if (after.page_tables_kb) {
    signature.page_tables_kb = std::max(signature.page_tables_kb.value_or(0), *after.page_tables_kb);
    if (before.page_tables_kb) {
      const int64_t grew = static_cast<int64_t>(*after.page_tables_kb) - static_cast<int64_t>(*before.page_tables_kb);
      signature.page_tables_delta_kb = std::max(signature.page_tables_delta_kb.value_or(grew), grew);
    }
  }
}

void SetWorkerParts(const std::vector<WorkerResult>& workers, RunSignature& signature) {
  uint64_t pmd = 0, pud = 0, present = 0;
  signature.faults = signature.bytes_accessed = 0;
  signature.verified = !workers.empty();
  signature.dax_trace.reset();
  signature.folios.clear();
  bool anonymous_only = !workers.empty();
  for (const WorkerResult& w : workers) {
    anonymous_only = anonymous_only && w.job.anon != AnonMemory::kNone;
    if (w.mapping.folios) {
      for (const auto& [size, count] : w.mapping.folios->folios) signature.folios[size] += count;
    }
    signature.faults += w.total.rusage.minor_faults + w.total.rusage.major_faults;
    signature.bytes_accessed += w.total.bytes_accessed;
    signature.verified = signature.verified && w.mapping.verified;
    const pmstore::mapping::MappingCensus& census = w.mapping.census;
    pmd += census.pmd_bytes;
    pud += census.pud_bytes;
    present += census.pmd_bytes + census.pte_bytes + census.pud_bytes;
    if (const auto& t = w.mapping.dax_trace) {
      if (!signature.dax_trace) signature.dax_trace.emplace();
      DaxTraceTally& sum = *signature.dax_trace;
      sum.pmd_nopage += t->pmd_nopage;
      sum.pmd_needdsync += t->pmd_needdsync;
      sum.pmd_fallback += t->pmd_fallback;
      sum.pmd_other += t->pmd_other;
      sum.pte_faults += t->pte_faults;
      sum.lost_events += t->lost_events;
    }
  }
  const double mib = static_cast<double>(signature.bytes_accessed) / (1 << 20);
  signature.faults_per_mib = mib > 0 ? static_cast<double>(signature.faults) / mib : 0;
  signature.pmd_share = present ? static_cast<double>(pmd) / static_cast<double>(present) : 0;
  signature.pud_share = present ? static_cast<double>(pud) / static_cast<double>(present) : 0;
  // Files' folios may be older than the run (tmpfs allocates at fallocate,
  // the page cache keeps them): only anonymous memory is the workload's own.
  signature.folio_checks.clear();
  if (anonymous_only && !signature.folios.empty()) {
    signature.folio_checks = CheckFolios(signature.folios, signature.mthp_deltas);
  }
}

std::vector<FolioCheck> CheckFolios(const std::map<uint64_t, uint64_t>& folios,
                                    const std::map<std::string, int64_t>& mthp_deltas) {
  std::map<uint64_t, FolioCheck> by_size;
  for (const auto& [size, count] : folios) {
    if (size > pmstore::base::kPageSize) by_size[size].histogram = count;
  }
  for (const auto& [name, delta] : mthp_deltas) {
    const size_t dot = name.find('.');
    const std::string counter = name.substr(dot + 1);
    const int sign = counter == "anon_fault_alloc" || counter == "shmem_alloc" ? 1 : counter == "split" ? -1 : 0;
    if (sign == 0) continue;
    auto size = pmstore::mapping::ParsePageIntent(name.substr(0, dot));
    if (!size.ok()) continue;
    const uint64_t bytes = pmstore::mapping::IntentPageSize(*size);
    if (bytes <= pmstore::base::kPageSize) continue;
    if (delta != 0 || by_size.contains(bytes)) by_size[bytes].allocated += sign * delta;
  }
  std::vector<FolioCheck> checks;
  for (auto& [size, check] : by_size) {
    check.size = size;
    checks.push_back(check);
  }
  return checks;
}

}  // namespace faultbench
