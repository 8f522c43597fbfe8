// What a backing with one page size allows (run/page_size_check.h) and the
// size a target is made (run/target.h), on facts written down here, so each
// rule is seen on its own.
#include "faultbench/run/page_size_check.h"

#include <gtest/gtest.h>

#include "faultbench/run/target.h"

namespace faultbench {
namespace {

using pmstore::mapping::PageIntent;

constexpr uint64_t k2MiB = 2 << 20, k1GiB = 1 << 30;

JobOptions Job(PageIntent mapping, uint64_t size = 64 << 20) {
  JobOptions job;
  job.filename = "/dev/dax0.0";
  job.size = size;
  job.mapping = mapping;
  return job;
}

FixedPageSize Device(uint64_t align) {
  return {.page_size = align, .devdax = DevDaxFacts{.name = "dax0.0", .size = 4ull << 30, .align = align}};
}

FixedPageSize Hugetlbfs(uint64_t page_size) {
  return {.page_size = page_size, .hugetlbfs = HugetlbfsFacts{.mount_point = "/mnt/huge", .page_size = page_size}};
}

TEST(CheckMappingFits, PudNeedsABackingThatMaps1GiB) {
  const absl::Status s = CheckMappingFits(Job(PageIntent::kPud), FixedPageSize{});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("only hugetlbfs with pagesize=1G and device DAX with align=1G"), std::string::npos) << s;
  EXPECT_TRUE(CheckMappingFits(Job(PageIntent::kPud), Device(k1GiB)).ok());
  EXPECT_TRUE(CheckMappingFits(Job(PageIntent::kPud), Hugetlbfs(k1GiB)).ok());
  for (PageIntent ordinary : {PageIntent::kPte, PageIntent::kPmd, PageIntent::kAuto}) {
    EXPECT_TRUE(CheckMappingFits(Job(ordinary), FixedPageSize{}).ok());
  }
}

TEST(CheckMappingFits, OnOnePageSizeOnlyThatSizeOrAutoRuns) {
  for (const FixedPageSize& fixed : {Device(k2MiB), Hugetlbfs(k2MiB)}) {
    EXPECT_TRUE(CheckMappingFits(Job(PageIntent::kPmd), fixed).ok());
    EXPECT_TRUE(CheckMappingFits(Job(PageIntent::kAuto), fixed).ok()) << "fio's NULL hint takes the size it gets";
    for (PageIntent other : {PageIntent::kPte, PageIntent::kPud}) {
      const absl::Status s = CheckMappingFits(Job(other), fixed);
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
      EXPECT_NE(s.message().find("maps every page at 2.0 MiB: use --mapping=pmd or --mapping=auto"), std::string::npos)
          << s;
    }
  }
  const absl::Status s = CheckMappingFits(Job(PageIntent::kPmd), Device(k1GiB));
  EXPECT_NE(s.message().find("device DAX /dev/dax0.0 (align 1.0 GiB)"), std::string::npos) << s;
  EXPECT_NE(s.message().find("use --mapping=pud"), std::string::npos) << s;
}

TEST(PreparedSize, WholePagesOfTheBackingsSize) {
  EXPECT_EQ(PreparedSize(64 << 20, Device(k1GiB)), k1GiB);
  EXPECT_EQ(PreparedSize(3 << 20, Hugetlbfs(k2MiB)), 4u << 20);
  EXPECT_EQ(PreparedSize(3ull << 30, Hugetlbfs(k1GiB)), 3ull << 30);
  EXPECT_EQ(PreparedSize(3 << 20, FixedPageSize{}), 4u << 20) << "PoolFile's 2 MiB rounding";
}

// The run's plan decides what a device must hold: the farthest any worker's
// file size reaches (offset + size, or the whole device), not one job's size.
TEST(CheckFixedPageSizeJobs, ADeviceMustHoldEveryPlannedWorker) {
  const JobOptions job = Job(PageIntent::kPmd);
  std::vector<WorkerContext> workers(2);
  for (int w = 0; w < 2; ++w) {
    workers[w].job = &job;
    workers[w].worker_index = w;
    workers[w].file = job.filename;
    workers[w].fixed = Device(k2MiB);
    workers[w].file_size = 4ull << 30;
  }
  workers[1].file_size = (4ull << 30) + k2MiB;  // its range ends past the device
  absl::Status s = CheckFixedPageSizeJobs(workers);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("the device holds 4.0 GiB"), std::string::npos) << s;

  workers[1].file_size = 4ull << 30;
  s = CheckFixedPageSizeJobs(workers);
  EXPECT_NE(s.code(), absl::StatusCode::kInvalidArgument) << "the whole device fits: " << s;
}

}  // namespace
}  // namespace faultbench
