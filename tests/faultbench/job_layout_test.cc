#include "faultbench/workload/job_layout.h"

#include <gtest/gtest.h>

namespace faultbench {
namespace {

constexpr uint64_t kMiB = 1 << 20;

JobOptions Job() {
  JobOptions job;
  job.name = "j";
  job.directory = "/d";
  return job;
}

TEST(JobLayout, SizeIsTheRangeAndTheIoOfALoop) {
  JobOptions job = Job();
  job.size = 8 * kMiB;
  auto layout = LayOutWorker(job, 0, 0);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->range_offset, 0u);
  EXPECT_EQ(layout->range_bytes, 8 * kMiB);
  EXPECT_EQ(layout->file_size, 8 * kMiB);
  EXPECT_EQ(layout->ios_per_loop, 2048u);
  // An existing larger file keeps its size; the range is still size.
  layout = LayOutWorker(job, 0, 64 * kMiB);
  EXPECT_EQ(layout->file_size, 64 * kMiB);
  EXPECT_EQ(layout->range_bytes, 8 * kMiB);
}

// fio: filesize is the file's size and the range runs to its end; a
// smaller size is only the I/O of one loop.
TEST(JobLayout, FilesizeWithASmallerSizeCoversTheFileAndDoesSizePerLoop) {
  JobOptions job = Job();
  job.size = 4 * kMiB;
  job.filesize = 32 * kMiB;
  job.offset = 2 * kMiB;
  auto layout = LayOutWorker(job, 0, 0);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->file_size, 32 * kMiB);
  EXPECT_EQ(layout->range_offset, 2 * kMiB);
  EXPECT_EQ(layout->range_bytes, 30 * kMiB);
  EXPECT_EQ(layout->ios_per_loop, 4 * kMiB / 4096);
}

TEST(JobLayout, PercentagesAreOfTheFilesRealSize) {
  JobOptions job = Job();
  job.size_percent = 50;
  job.offset_percent = 25;
  auto layout = LayOutWorker(job, 0, 16 * kMiB);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->range_offset, 4 * kMiB);
  EXPECT_EQ(layout->range_bytes, 8 * kMiB);
  // Of filesize, for a file still to be made.
  job.filesize = 8 * kMiB;
  layout = LayOutWorker(job, 0, 0);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->range_offset, 2 * kMiB);
  EXPECT_EQ(layout->range_bytes, 4 * kMiB);
  EXPECT_EQ(layout->file_size, 8 * kMiB);
}

TEST(JobLayout, OffsetIncrementMovesEachWorkerAlong) {
  JobOptions job = Job();
  job.size = kMiB;
  job.offset = kMiB;
  job.offset_increment = 2 * kMiB;
  job.numjobs = 3;
  auto third = LayOutWorker(job, 2, 0);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(third->range_offset, 5 * kMiB);
  EXPECT_EQ(third->file_size, 6 * kMiB);
}

TEST(JobLayout, SharedFileSplitsTheRange) {
  JobOptions job = Job();
  job.size = 8 * kMiB;
  job.numjobs = 4;
  job.shared_file = true;
  auto second = LayOutWorker(job, 1, 0);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->range_offset, 2 * kMiB);
  EXPECT_EQ(second->range_bytes, 2 * kMiB);
  EXPECT_EQ(second->ios_per_loop, 512u);
  EXPECT_EQ(second->file_size, 8 * kMiB);
}

TEST(JobLayout, WithoutSizeAnExistingFileIsTheRange) {
  JobOptions job = Job();
  auto layout = LayOutWorker(job, 0, 12 * kMiB);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->range_bytes, 12 * kMiB);
}

TEST(JobLayout, RangesThatCannotBeAreOneLineErrors) {
  JobOptions job = Job();
  auto missing = LayOutWorker(job, 0, 0);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("size= is required"), std::string::npos) << missing.status();
  job.size_percent = 50;
  auto percent = LayOutWorker(job, 0, 0);
  ASSERT_FALSE(percent.ok());
  EXPECT_NE(percent.status().message().find("does not exist: give filesize="), std::string::npos)
      << percent.status();
  job.size_percent = 0;
  job.filesize = kMiB;
  job.offset = 2 * kMiB;
  EXPECT_FALSE(LayOutWorker(job, 0, 0).ok());
  JobOptions tiny = Job();
  tiny.size = 8192;
  tiny.bs = 16384;
  EXPECT_FALSE(LayOutWorker(tiny, 0, 0).ok());
}

}  // namespace
}  // namespace faultbench
