// The kernel's memory-management counters: /proc/vmstat (events since boot:
// faults, THP allocations and fallbacks, NUMA hits) and /proc/meminfo
// (current sizes: the page tables). Machine-wide, so a run's share of them
// is the difference of two readings taken around the workload alone (the
// process's own start-up takes faults too), and a size such as PageTables
// means something only while the mapping is still there.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace faultbench {

struct VmCounters {
  std::map<std::string, uint64_t> vmstat;  // every counter /proc/vmstat lists, by name
  std::optional<uint64_t> page_tables_kb;  // PageTables of /proc/meminfo; nullopt when absent
  // The per-size THP counters (thp.h ReadMthpStats): "64K.anon_fault_alloc".
  std::map<std::string, uint64_t> mthp;
};

// Both files and the per-size THP counters, read now; a file that cannot be read leaves its part empty.
// As root, the per-CPU differences of the size counters are folded in first
// (/proc/sys/vm/stat_refresh): PageTables otherwise lags by up to a stat
// threshold of pages per CPU (measured in the DAX VM: a 16 MiB 4 KiB
// mapping's 36 kB of page tables read as +0 kB).
VmCounters ReadVmCounters();

// "name value" lines of /proc/vmstat; malformed lines are skipped.
std::map<std::string, uint64_t> ParseVmstat(std::string_view text);

// The value of `field` in a /proc/meminfo text ("PageTables:  132 kB"), in kB.
std::optional<uint64_t> MeminfoKb(std::string_view text, std::string_view field);

}  // namespace faultbench
