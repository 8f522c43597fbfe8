#include "faultbench/workload/job_file.h"

#include <gtest/gtest.h>

namespace faultbench {
namespace {

// The job of the 2016 linux-kernel DAX PMD thread, unchanged.
constexpr char kTestFio[] = R"(
[global]
bs=4k
size=2G
directory=/mnt/pmem0
ioengine=mmap
# comment
[randrw]
rw=randrw
)";

TEST(JobFile, ReadsTheDaxPmdThreadJobUnchanged) {
  auto jobs = ParseJobFile(kTestFio, JobOptions{});
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  const JobOptions& job = (*jobs)[0];
  EXPECT_EQ(job.name, "randrw");
  EXPECT_EQ(job.bs, 4096u);
  EXPECT_EQ(job.size, 2ull << 30);
  EXPECT_EQ(job.directory, "/mnt/pmem0");
  EXPECT_EQ(job.rw, RwMode::kRandRw);
  EXPECT_EQ(job.engine, pmstore::mapping::Engine::kMmap);
  EXPECT_TRUE(ValidateJob(job).ok());
}

TEST(JobFile, UnsupportedOptionIsNamedWithItsLine) {
  auto jobs = ParseJobFile("[a]\nsize=1M\niodepth=32\n", JobOptions{});
  ASSERT_FALSE(jobs.ok());
  EXPECT_NE(jobs.status().message().find("iodepth"), std::string::npos);
  EXPECT_NE(jobs.status().message().find("line 3"), std::string::npos);
}

TEST(JobFile, FioNumaAndEngineOptionsMapToFaultbenchOnes) {
  auto jobs = ParseJobFile(
      "[global]\nnuma_cpu_nodes=0\nnuma_mem_policy=prefer:0\nioengine=libpmem\n[a]\n[b]\nnuma_mem_policy=bind:0\n"
      "time_based\nruntime=2s\n",
      JobOptions{});
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].numa.cpunodebind, "0");
  EXPECT_EQ((*jobs)[0].numa.preferred, "0");
  EXPECT_EQ((*jobs)[0].engine, pmstore::mapping::Engine::kPmem2);
  EXPECT_EQ((*jobs)[1].numa.membind, "0");
  EXPECT_TRUE((*jobs)[1].numa.preferred.empty());
  EXPECT_TRUE((*jobs)[1].time_based);
  EXPECT_DOUBLE_EQ((*jobs)[1].runtime_s, 2.0);
}

TEST(JobFile, UnlinkIsFiosBooleanAndOffByDefault) {
  auto jobs = ParseJobFile("[global]\nsize=1M\n[kept]\n[deleted]\nunlink=1\n", JobOptions{});
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_FALSE((*jobs)[0].unlink);
  EXPECT_TRUE((*jobs)[1].unlink);
}

TEST(JobFile, NoJobSectionIsAnError) {
  EXPECT_FALSE(ParseJobFile("[global]\nsize=1M\n", JobOptions{}).ok());
  EXPECT_FALSE(ParseJobFile("size=1M\n", JobOptions{}).ok());
}

TEST(JobFile, SecondsAcceptFioSuffixes) {
  EXPECT_DOUBLE_EQ(*ParseSeconds("30"), 30);
  EXPECT_DOUBLE_EQ(*ParseSeconds("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(*ParseSeconds("2m"), 120);
  EXPECT_FALSE(ParseSeconds("soon").ok());
  EXPECT_FALSE(ParseSeconds("").ok());
}

TEST(JobOptions, ValidationRejectsContradictions) {
  JobOptions job;
  job.directory = "/tmp";
  job.size = 1 << 20;
  EXPECT_TRUE(ValidateJob(job).ok());
  JobOptions no_size = job;
  no_size.size = 0;
  EXPECT_FALSE(ValidateJob(no_size).ok());
  JobOptions both = job;
  both.filename = "/tmp/x";
  EXPECT_FALSE(ValidateJob(both).ok());
  JobOptions time_based = job;
  time_based.time_based = true;
  EXPECT_FALSE(ValidateJob(time_based).ok());
  JobOptions mix = job;
  mix.rwmixread = 101;
  EXPECT_FALSE(ValidateJob(mix).ok());
}

TEST(JobOptions, FilesAreNamedAsFioNamesThem) {
  JobOptions job;
  job.name = "randrw";
  job.directory = "/mnt/pmem0";
  EXPECT_EQ(WorkerFilePath(job, 0), "/mnt/pmem0/randrw.0.0");
  EXPECT_EQ(WorkerFilePath(job, 3), "/mnt/pmem0/randrw.3.0");
  job.shared_file = true;
  EXPECT_EQ(WorkerFilePath(job, 3), "/mnt/pmem0/randrw.0.0");
}

}  // namespace
}  // namespace faultbench
