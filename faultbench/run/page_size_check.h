// What a backing with one page size (device DAX, hugetlbfs; see
// sysfacts/fixed_page_size.h) allows, checked before anything is mapped so
// that a job it cannot run is a one-line error instead of a SIGBUS:
//
//  - --mapping=pud asks for 1 GiB entries, which only hugetlbfs with
//    pagesize=1G and device DAX with align=1G give (fsdax and the page
//    cache never map 1 GiB);
//  - where the backing has one page size, --mapping=pte|pmd|pud must name
//    it (device DAX refuses smaller faults; hugetlbfs maps only its own
//    size); --mapping=auto takes it, as fio does;
//  - a device DAX job must fit in the device, and be allowed to open it;
//  - the hugetlbfs jobs of a run must not need more huge pages than the
//    pool can still give (the message names the pool and the command that
//    reserves pages).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "faultbench/run/worker.h"
#include "faultbench/sysfacts/fixed_page_size.h"
#include "faultbench/workload/job_options.h"

namespace faultbench {

// InvalidArgument when `job.mapping` cannot be had on what backs its file.
absl::Status CheckMappingFits(const JobOptions& job, const FixedPageSize& fixed);

// InvalidArgument when `job.mapping` is a folio size and `file` is on a
// DAX file system (fsdax maps 4 KiB or 2 MiB entries of the device's
// memory: there are no folios). A file system's page cache takes any folio
// size: what it gives is read back (the folio sizes of the run).
absl::Status CheckFolioFits(const JobOptions& job, const std::string& file);

// The mapping each job asks for, device size and access, and hugetlb
// pools, over the run's planned workers (their files and the sizes their
// creators make them): InvalidArgument, PermissionDenied or
// ResourceExhausted.
absl::Status CheckFixedPageSizeJobs(const std::vector<WorkerContext>& workers);

}  // namespace faultbench
