// The transparent huge page knobs (/sys/kernel/mm/transparent_hugepage):
// doctor judges PMD mappings by them, taint flags defrag=always, and run/
// reads the per-size (multi-size THP) knobs a folio size needs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace faultbench {

inline constexpr char kThpDir[] = "/sys/kernel/mm/transparent_hugepage";

struct ThpFacts {
  std::string enabled;        // the bracketed choice of .../transparent_hugepage/enabled
  std::string shmem_enabled;
  std::string defrag;
};
ThpFacts ReadThpFacts();

// One folio size's knobs (Linux 6.8+ for anonymous memory, later for
// shmem): .../hugepages-64kB/{enabled,shmem_enabled}. A size has only the
// knobs the kernel offers for it (on 6.18 hugepages-8kB has shmem_enabled
// alone: 8 KiB folios are shmem's only).
struct MthpSize {
  uint64_t size = 0;          // bytes
  std::string dir;            // .../hugepages-64kB
  std::string enabled;        // its bracketed choice; "" when the size has no such knob
  std::string shmem_enabled;  // likewise
};
// Every size the kernel offers, smallest first; empty before 6.8.
std::vector<MthpSize> ReadMthpSizes(const std::string& thp_dir = kThpDir);

// The per-size counters of every size (.../hugepages-64kB/stats/NAME),
// keyed "64K.anon_fault_alloc": events since boot (allocations, fallbacks,
// splits), not the gauges (nr_anon).
std::map<std::string, uint64_t> ReadMthpStats(const std::string& thp_dir = kThpDir);

// The counters of a size's stats/ that ReadMthpStats keeps: anon_fault_alloc,
// anon_fault_fallback, anon_fault_fallback_charge, shmem_alloc,
// shmem_fallback, shmem_fallback_charge, split, split_deferred, split_failed.
const std::vector<std::string>& MthpEventCounters();

}  // namespace faultbench
