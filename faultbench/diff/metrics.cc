#include "faultbench/diff/metrics.h"

#include <vector>

#include "absl/strings/str_cat.h"

namespace faultbench::diff {
namespace {

// Noise floors by kind of figure. Throughput: 3 %, as compare's PMD/PTE
// verdict. Latency percentiles come from histograms with bins a few percent
// wide: 5 %. Fault counts and kernel events are exact, but a run of a fresh
// file can take a fault or two more (64-67 for 128 MiB on plain ext4 DAX),
// and the machine-wide counters see every other process: 10 %, with an
// absolute floor for counters that stay small (LKP leaves out vmstat
// figures below 1000; a DAX PMD fallback of 64 events must still count).
constexpr stats::NoiseFloor kThroughput = {.relative = 0.03};
constexpr stats::NoiseFloor kLatency = {.relative = 0.05};
constexpr stats::NoiseFloor kFaultRate = {.relative = 0.10, .absolute = 0.05};
constexpr stats::NoiseFloor kRareEvents = {.relative = 0.10, .absolute = 8};
constexpr stats::NoiseFloor kFrequentEvents = {.relative = 0.10, .absolute = 256};
constexpr stats::NoiseFloor kShare = {.absolute = 0.02};
constexpr stats::NoiseFloor kPageTables = {.relative = 0.10, .absolute = 64};

// Every metric, in the order tables list them: throughput, latency, then
// the signature.
std::vector<MetricInfo> Catalogue() {
  std::vector<MetricInfo> all;
  for (const char* dir : {"read", "write"}) {
    const std::string d = dir;
    all.push_back({d + ".iops", "IOPS", Worse::kDown, kThroughput, false});
    all.push_back({d + ".bw_mib", "MiB/s", Worse::kDown, kThroughput, false});
    all.push_back({d + ".clat_mean_ns", "ns", Worse::kUp, kLatency, false});
    all.push_back({d + ".clat_p99_ns", "ns", Worse::kUp, kLatency, false});
  }
  all.push_back({"faults_per_mib", "faults/MiB", Worse::kUp, kFaultRate, true});
  all.push_back({"minf", "faults", Worse::kUp, kRareEvents, true});
  all.push_back({"majf", "faults", Worse::kUp, kRareEvents, true});
  all.push_back({"pmd_share", "share", Worse::kDown, kShare, true});
  all.push_back({"pud_share", "share", Worse::kDown, kShare, true});
  all.push_back({"page_tables_delta_kb", "kB", Worse::kUp, kPageTables, true});
  all.push_back({"dax.pmd_installed", "events", Worse::kDown, kRareEvents, true});
  all.push_back({"dax.fallback", "events", Worse::kUp, kRareEvents, true});
  all.push_back({"dax.pte", "events", Worse::kUp, kRareEvents, true});
  all.push_back({"vmstat.thp_fault_alloc", "events", Worse::kDown, kRareEvents, true});
  all.push_back({"vmstat.thp_fault_fallback", "events", Worse::kUp, kRareEvents, true});
  all.push_back({"vmstat.thp_file_alloc", "events", Worse::kDown, kRareEvents, true});
  all.push_back({"vmstat.thp_file_mapped", "events", Worse::kDown, kRareEvents, true});
  all.push_back({"vmstat.pgfault", "events", Worse::kUp, kFrequentEvents, true});
  all.push_back({"vmstat.pgmajfault", "events", Worse::kUp, kFrequentEvents, true});
  // Allocations that landed where the policy wanted them: more is better;
  // every other numa_* counter (misses, migrations, hinting faults) is
  // worse when it grows.
  for (const char* counter : {"numa_hit", "numa_local", "numa_interleave"}) {
    all.push_back({std::string("vmstat.") + counter, "events", Worse::kDown, kFrequentEvents, true});
  }
  for (const char* counter : {"numa_miss", "numa_foreign", "numa_other", "numa_pte_updates", "numa_huge_pte_updates",
                              "numa_hint_faults", "numa_hint_faults_local", "numa_pages_migrated"}) {
    all.push_back({std::string("vmstat.") + counter, "events", Worse::kUp, kFrequentEvents, true});
  }
  // The per-size THP counters (hugepages-SIZE/stats, Linux 6.8+): fewer
  // allocations of a size are worse (its faults fell back), more fallbacks
  // and splits are worse.
  for (const char* size : {"8K", "16K", "32K", "64K", "128K", "256K", "512K", "1M", "2M"}) {
    for (const char* counter : {"anon_fault_alloc", "shmem_alloc"}) {
      all.push_back({absl::StrCat("mthp.", size, ".", counter), "events", Worse::kDown, kRareEvents, true});
    }
    for (const char* counter : {"anon_fault_fallback", "anon_fault_fallback_charge", "shmem_fallback",
                                "shmem_fallback_charge", "split", "split_deferred", "split_failed"}) {
      all.push_back({absl::StrCat("mthp.", size, ".", counter), "events", Worse::kUp, kRareEvents, true});
    }
  }
  return all;
}

const std::vector<MetricInfo>& All() {
  static const std::vector<MetricInfo> kAll = Catalogue();
  return kAll;
}

}  // namespace

const MetricInfo* FindMetric(std::string_view name) {
  for (const MetricInfo& m : All()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

int MetricOrder(std::string_view name) {
  const std::vector<MetricInfo>& all = All();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].name == name) return static_cast<int>(i);
  }
  return static_cast<int>(all.size());
}

}  // namespace faultbench::diff
