// hugetlbfs and the kernel's huge page pools: the page size of a mount
// (statfs f_bsize), its size= limit, and the pool of pages of that size
// (/sys/kernel/mm/hugepages/hugepages-NkB). Read by doctor (what the pool
// holds and how to reserve more) and by run (a run that needs more pages
// than are free fails before anything is mapped, instead of a SIGBUS).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace faultbench {

struct HugetlbPool {
  uint64_t page_size = 0;  // bytes
  std::string sysfs_dir;   // /sys/kernel/mm/hugepages/hugepages-1048576kB
  uint64_t nr = 0;         // nr_hugepages: the pool
  uint64_t free = 0;       // free_hugepages, reserved ones included
  uint64_t reserved = 0;   // resv_hugepages: promised to mappings, not yet faulted
  uint64_t surplus = 0;    // surplus_hugepages
  uint64_t overcommit = 0; // nr_overcommit_hugepages: surplus pages allowed on demand

  // Pages a new file can still get: the free ones nobody was promised, plus
  // the surplus overcommit still allows.
  uint64_t Available() const;
  // The command that makes the pool `pages` pages: "echo N > DIR/nr_hugepages".
  std::string ReserveCommand(uint64_t pages) const;
};

// The pool of `page_size` pages; nullopt when the kernel has no such size.
std::optional<HugetlbPool> ReadHugetlbPool(uint64_t page_size);
// Every size the kernel offers, smallest first.
std::vector<HugetlbPool> ReadHugetlbPools();

struct HugetlbfsFacts {
  std::string mount_point;
  uint64_t page_size = 0;                   // the mount's pagesize=
  std::optional<uint64_t> limit_pages;      // its size= in pages; nullopt: no limit
  std::optional<uint64_t> mount_free_pages; // pages left under that limit
  std::optional<HugetlbPool> pool;          // the pool of page_size
};

// The hugetlbfs mount that holds `path` (a file, or the directory a file
// will be made in); nullopt when it is not on hugetlbfs.
std::optional<HugetlbfsFacts> ReadHugetlbfsFacts(const std::string& path);

}  // namespace faultbench
