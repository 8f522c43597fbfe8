// `faultbench doctor`: can the kernel map PATH with PMD (2 MiB) entries,
// and if not, what blocks it and which command fixes each blocker. PATH may
// also be a device DAX device (/dev/daxX.Y) or on hugetlbfs, where one page
// size is all there is: doctor says which, and what the device or the huge
// page pool holds.
//
// Examine() gathers facts (sysfacts/) and Judge() turns facts into the
// verdict; Judge is a pure function so each rule is tested on its own.
// Renderers are separate from both (fio's split of run and report).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "faultbench/sysfacts/block_device.h"
#include "faultbench/sysfacts/extents.h"
#include "faultbench/sysfacts/fixed_page_size.h"
#include "faultbench/sysfacts/mount.h"
#include "faultbench/sysfacts/thp.h"

namespace faultbench::doctor {

struct Blocker {
  std::string reason;  // what prevents PMD mappings
  std::string fix;     // the command or setting that removes it
};

struct DoctorReport {
  std::string path;       // as given
  std::string real_path;  // symlinks resolved
  bool is_file = false;
  uint64_t file_size = 0;
  MountFacts mount;
  bool statx_dax = false;  // STATX_ATTR_DAX of the path
  ExtentFacts extents;
  ThpFacts thp;
  BlockFacts block;
  std::string kernel;
  bool pagemap_scan = false;
  std::string dax_tracepoints;  // "available" or why not
  std::string pat_memtype;      // of the pmem range, "" when unknown
  std::string pat_memtype_unknown;  // why pat_memtype is "" ("needs root and debugfs", ...)
  // Device DAX or hugetlbfs: the one page size every mapping gets, and the
  // device or mount (with its pool) behind it.
  FixedPageSize fixed;

  // Verdict (Judge).
  bool pmd_possible = false;
  std::string page_source;  // "dax", "device dax", "hugetlbfs", "page cache" or "shmem": what backs the mapping
  std::vector<Blocker> blockers;
  std::vector<std::string> warnings;  // not blockers, but they change the numbers
};

// Reads every fact about `path` and judges it. NotFound (one line, naming
// the path) when the path does not exist.
absl::StatusOr<DoctorReport> Examine(const std::string& path);

// Fills the verdict fields of `report` from its facts.
void Judge(DoctorReport& report);

std::string RenderText(const DoctorReport& report);
std::string RenderJson(const DoctorReport& report);

}  // namespace faultbench::doctor
