#include "faultbench/workload/job_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>

#include "support/temp_dir.h"

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

std::string MessageOf(const absl::Status& status) { return std::string(status.message()); }

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
  EXPECT_EQ(job.ioengine, JobEngine::kMmap);
  EXPECT_TRUE(ValidateJob(job).ok());
}

TEST(JobFile, UnknownOptionIsNamedWithItsLine) {
  auto jobs = ParseJobFile("[a]\nsize=1M\nfrobnicate=32\n", JobOptions{});
  ASSERT_FALSE(jobs.ok());
  EXPECT_EQ(MessageOf(jobs.status()), "line 3: unsupported option 'frobnicate'");
}

// An fio option that makes no sense for a mapped file says why, in one line.
TEST(JobFile, RefusedFioOptionsSayWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"ioengine=libaio", "system calls"},
      {"ioengine=sync", "system calls"},
      {"verify=md5", "checks no data"},
      {"rate_iops=100", "back to back"},
      {"thp=1", "MAP_PRIVATE"},
      {"bssplit=4k/50:64k/50", "one block size"},
      {"fsync=1", "sync=1 drains after every write"},
      {"write_lat_log=lat", "no per-I/O logs"},
      {"nrfiles=4", "one file per worker"},
      {"random_distribution=zoned:50/10:50/90", "zoned"},
      {"rw=randtrim", "no trim"},
      {"mem=shmhuge", "malloc"},
      {"bs=4k,64k", "one size for reads and writes"},
      {"filename=/a:/b", nullptr},  // refused by ValidateJob, below
  };
  for (const auto& [line, why] : cases) {
    auto jobs = ParseJobFile(std::string("[a]\ndirectory=/tmp\nsize=1M\n") + line + "\n", JobOptions{});
    if (why == nullptr) {
      ASSERT_TRUE(jobs.ok()) << line;
      EXPECT_NE(MessageOf(ValidateJob((*jobs)[0])).find("several files"), std::string::npos) << line;
      continue;
    }
    ASSERT_FALSE(jobs.ok()) << line;
    const std::string message = MessageOf(jobs.status());
    EXPECT_NE(message.find(why), std::string::npos) << line << ": " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

// libpmem.fio's options that change nothing here: accepted, and named in
// one line with the reason.
TEST(JobFile, InertOptionsAreAcceptedAndNamedInOneLine) {
  auto jobs =
      ParseJobFile("[global]\niodepth=1\niodepth_batch=1\nthread\n[a]\nioengine=libpmem\ndirect=1\n", JobOptions{});
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  const std::vector<std::string> notes = InertOptionNotes((*jobs)[0]);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("iodepth=1, iodepth_batch=1, thread: change nothing in a synchronous mmap engine", 0), 0u)
      << notes[0];
  // direct and sync matter to libpmem alone: the mmap engine names them.
  auto mmap = ParseJobFile("[a]\nioengine=mmap\ndirect=1\nsync=1\n", JobOptions{});
  ASSERT_TRUE(mmap.ok());
  ASSERT_EQ(InertOptionNotes((*mmap)[0]).size(), 1u);
  EXPECT_EQ(InertOptionNotes((*mmap)[0])[0].rfind("direct=1, sync=1: change nothing for the mmap engine", 0), 0u);
}

// invalidate, fadvise_hint and scramble_buffers take fio's defaults in job
// files and faultbench's on the command line; the job says which applied.
TEST(JobFile, FioDefaultsApplyInJobFilesAndTheCommandLineKeepsFaultbenchs) {
  JobOptions command_line;
  EXPECT_FALSE(command_line.invalidates());
  EXPECT_EQ(command_line.fadvises(), FadviseHint::kOff);
  EXPECT_FALSE(command_line.scrambles());
  EXPECT_EQ(command_line.invalidate.Source(command_line.from_job_file), "faultbench's default on the command line");

  auto jobs = ParseJobFile("[a]\n[b]\ninvalidate=0\nfadvise_hint=random\nscramble_buffers=0\n", command_line);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  const JobOptions& a = (*jobs)[0];
  EXPECT_TRUE(a.invalidates());
  EXPECT_EQ(a.invalidate.Source(a.from_job_file), "fio's default in job files");
  EXPECT_EQ(a.fadvises(), FadviseHint::kType);
  EXPECT_TRUE(a.scrambles());
  const JobOptions& b = (*jobs)[1];
  EXPECT_FALSE(b.invalidates());
  EXPECT_EQ(b.invalidate.Source(b.from_job_file), "set");
  EXPECT_EQ(b.fadvises(), FadviseHint::kRandom);
  EXPECT_FALSE(b.scrambles());

  // A flag given on the command line is the default the job file builds on.
  JobOptions flagged;
  flagged.invalidate.set = false;
  auto kept = ParseJobFile("[a]\n", flagged);
  ASSERT_TRUE(kept.ok());
  EXPECT_FALSE((*kept)[0].invalidates());
}

TEST(JobFile, OrderingGroupAndCpuOptions) {
  auto jobs = ParseJobFile(
      "[global]\ngroup_reporting\ncpus_allowed=0-1\ncpus_allowed_policy=split\nnumjobs=4\n"
      "[a]\n[b]\nwait_for_previous\n[c]\nnew_group\n[d]\nstonewall\ncpumask=0x5\n",
      JobOptions{});
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 4u);
  EXPECT_TRUE((*jobs)[0].group_reporting);
  EXPECT_FALSE((*jobs)[0].stonewall);
  EXPECT_TRUE((*jobs)[1].stonewall);
  EXPECT_TRUE((*jobs)[2].new_group);
  EXPECT_FALSE((*jobs)[2].stonewall);
  EXPECT_TRUE((*jobs)[3].stonewall);
  EXPECT_EQ((*jobs)[0].cpus_allowed, "0-1");
  EXPECT_EQ((*jobs)[0].cpus_allowed_policy, CpusAllowedPolicy::kSplit);
  EXPECT_EQ((*jobs)[3].cpus_allowed, "0,2");
  EXPECT_EQ((*jobs)[3].numjobs, 4);
  EXPECT_FALSE(ParseJobFile("[a]\ncpus_allowed=1-0\n", JobOptions{}).ok());
  EXPECT_FALSE(ParseJobFile("[a]\ncpus_allowed_policy=spread\n", JobOptions{}).ok());
}

TEST(JobFile, OffsetOptions) {
  auto jobs = ParseJobFile(
      "[a]\nnorandommap\nrandrepeat=0\nrandom_distribution=zipf:1.2\nsize=50%\noffset=25%\n"
      "[b]\nrandom_distribution=pareto:0.3:0.5\nsize=8m\nfilesize=64m\noffset=1m\noffset_increment=4m\nfallocate=none\n"
      "[c]\nrandom_distribution=normal:5\nio_size=1g\nrandseed=42\n",
      JobOptions{});
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  const JobOptions& a = (*jobs)[0];
  EXPECT_TRUE(a.norandommap);
  EXPECT_FALSE(a.randrepeat);
  EXPECT_EQ(a.random_distribution.kind, RandomDistribution::kZipf);
  EXPECT_DOUBLE_EQ(a.random_distribution.parameter, 1.2);
  EXPECT_EQ(a.random_distribution.center, -1);
  EXPECT_EQ(a.size_percent, 50u);
  EXPECT_EQ(a.offset_percent, 25u);
  const JobOptions& b = (*jobs)[1];
  EXPECT_EQ(b.random_distribution.kind, RandomDistribution::kPareto);
  EXPECT_DOUBLE_EQ(b.random_distribution.center, 0.5);
  EXPECT_EQ(b.size, 8u << 20);
  EXPECT_EQ(b.filesize, 64u << 20);
  EXPECT_EQ(b.offset, 1u << 20);
  EXPECT_EQ(b.offset_increment, 4u << 20);
  EXPECT_EQ(b.fallocate, Fallocate::kNone);
  const JobOptions& c = (*jobs)[2];
  EXPECT_EQ(c.random_distribution.kind, RandomDistribution::kNormal);
  EXPECT_EQ(c.io_size, 1ull << 30);
  EXPECT_TRUE(c.randseed_set);
  EXPECT_EQ(c.randseed, 42u);
  for (const char* bad : {"zipf:1", "zipf:0", "pareto:1.5", "normal:100", "zipf:1.2:2", "uniform"}) {
    EXPECT_FALSE(ParseJobFile(std::string("[a]\nrandom_distribution=") + bad + "\n", JobOptions{}).ok()) << bad;
  }
  EXPECT_FALSE(ParseJobFile("[a]\nsize=0%\n", JobOptions{}).ok());
  EXPECT_FALSE(ParseJobFile("[a]\nfallocate=maybe\n", JobOptions{}).ok());
}

TEST(JobFile, LatencyAndBufferOptions) {
  auto jobs = ParseJobFile(
      "[a]\ndisable_lat=1\ndisable_clat=1\ndisable_slat=1\nclat_percentiles=0\nlat_percentiles=1\n"
      "percentile_list=99.9:50:99\nbuffer_pattern=0xdeadbeef'ab'257\n"
      "[b]\ngtod_reduce=1\nzero_buffers\n",
      JobOptions{});
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  const JobOptions& a = (*jobs)[0];
  EXPECT_TRUE(a.disable_lat && a.disable_clat && a.disable_slat);
  EXPECT_FALSE(a.times_io());
  EXPECT_FALSE(a.clat_percentiles);
  EXPECT_TRUE(a.lat_percentiles);
  EXPECT_EQ(a.percentile_list, (std::vector<double>{50, 99, 99.9}));  // sorted, as fio sorts them
  EXPECT_EQ(a.buffer_pattern, std::string("\xde\xad\xbe\xef" "ab" "\x01\x01", 8));
  EXPECT_FALSE((*jobs)[1].times_io());
  EXPECT_EQ((*jobs)[1].buffer_pattern, std::string(1, '\0'));
  EXPECT_FALSE(ParseJobFile("[a]\npercentile_list=0:50\n", JobOptions{}).ok());
  EXPECT_FALSE(ParseJobFile("[a]\nbuffer_pattern=%o\n", JobOptions{}).ok());
}

TEST(JobFile, EnginesAndTheirWriteOptions) {
  auto jobs = ParseJobFile("[a]\nioengine=libpmem\ndirect=1\nsync=dsync\n[b]\nioengine=dev-dax\n[c]\nbuffered=0\n",
                           JobOptions{});
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ((*jobs)[0].ioengine, JobEngine::kLibpmem);
  EXPECT_EQ((*jobs)[0].engine(), pmstore::mapping::Engine::kPmem2);
  EXPECT_TRUE((*jobs)[0].direct);
  EXPECT_TRUE((*jobs)[0].sync);
  EXPECT_EQ((*jobs)[1].ioengine, JobEngine::kDevDax);
  EXPECT_EQ((*jobs)[1].engine(), pmstore::mapping::Engine::kPmem2);
  EXPECT_TRUE((*jobs)[2].direct);
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
  EXPECT_EQ((*jobs)[0].ioengine, JobEngine::kLibpmem);
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

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// include files (relative to the job file), ${VAR} from the environment,
// and fio's keywords with arithmetic.
TEST(JobFile, IncludesVariablesAndKeywords) {
  TempDir dir;
  Write(dir.File("common.inc"), "bs=8k\nrw=randwrite\n");
  Write(dir.File("job.fio"), "[global]\ninclude common.inc\ndirectory=${FB_JOB_FILE_TEST_DIR}/x\n"
                             "[a]\nsize=$pagesize*4\nnumjobs=$ncpus\n");
  setenv("FB_JOB_FILE_TEST_DIR", "/mnt/pmem", 1);
  auto jobs = ReadJobFile(dir.File("job.fio"), JobOptions{});
  unsetenv("FB_JOB_FILE_TEST_DIR");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  const JobOptions& a = (*jobs)[0];
  EXPECT_EQ(a.bs, 8192u);
  EXPECT_EQ(a.rw, RwMode::kRandWrite);
  EXPECT_EQ(a.directory, "/mnt/pmem/x");
  EXPECT_EQ(a.size, static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) * 4);
  EXPECT_EQ(a.numjobs, sysconf(_SC_NPROCESSORS_CONF));

  auto unset = ReadJobFile(dir.File("job.fio"), JobOptions{});
  ASSERT_FALSE(unset.ok());
  EXPECT_NE(MessageOf(unset.status()).find("line 3: ${FB_JOB_FILE_TEST_DIR} is not set"), std::string::npos)
      << unset.status();

  Write(dir.File("bad.inc"), "iodepth=1\nverify=crc32\n");
  Write(dir.File("bad.fio"), "[a]\ninclude bad.inc\n");
  auto bad = ReadJobFile(dir.File("bad.fio"), JobOptions{});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(MessageOf(bad.status()).find(dir.File("bad.inc") + ", line 2: option 'verify'"), std::string::npos)
      << bad.status();
  Write(dir.File("section.inc"), "[b]\n");
  Write(dir.File("section.fio"), "[a]\ninclude section.inc\n");
  EXPECT_FALSE(ReadJobFile(dir.File("section.fio"), JobOptions{}).ok());
}

// fio's --section, and several job files run as fio runs them.
TEST(JobFile, SectionsAndSeveralFiles) {
  TempDir dir;
  Write(dir.File("one.fio"), "[global]\nsize=1M\n[a]\n[b]\n");
  Write(dir.File("two.fio"), "[c]\n[d]\n");
  auto b = ReadJobFiles({dir.File("one.fio")}, JobOptions{}, {"b"});
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(b->size(), 1u);
  EXPECT_EQ((*b)[0].name, "b");
  EXPECT_EQ((*b)[0].size, 1u << 20);  // [global] still applies
  auto missing = ReadJobFiles({dir.File("one.fio")}, JobOptions{}, {"z"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(MessageOf(missing.status()).find("no such job section (the file has: a, b)"), std::string::npos)
      << missing.status();

  auto both = ReadJobFiles({dir.File("one.fio"), dir.File("two.fio")}, JobOptions{}, {});
  ASSERT_TRUE(both.ok()) << both.status();
  ASSERT_EQ(both->size(), 4u);
  EXPECT_FALSE((*both)[1].stonewall);
  EXPECT_TRUE((*both)[2].stonewall) << "the first job of a later file waits for the earlier files";
  EXPECT_FALSE((*both)[3].stonewall);
  EXPECT_EQ((*both)[2].size, 0u) << "[global] of one file does not reach the next";
}

TEST(JobFile, SecondsAcceptFioSuffixes) {
  EXPECT_DOUBLE_EQ(*ParseSeconds("30"), 30);
  EXPECT_DOUBLE_EQ(*ParseSeconds("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(*ParseSeconds("2m"), 120);
  EXPECT_FALSE(ParseSeconds("soon").ok());
  EXPECT_FALSE(ParseSeconds("").ok());
}

TEST(JobFile, CpuListsAsFioWritesThem) {
  EXPECT_EQ(*ParseCpuList("0-3,6"), (std::vector<int>{0, 1, 2, 3, 6}));
  EXPECT_EQ(*ParseCpuList("5,1,1"), (std::vector<int>{1, 5}));
  EXPECT_FALSE(ParseCpuList("a-b").ok());
  EXPECT_FALSE(ParseCpuList("").ok());
}

// Every option is one kind only, and every refusal has a reason.
TEST(FioOptions, EachOptionHasOneKindAndEveryRefusalAReason) {
  const OptionKinds& kinds = FioOptionKinds();
  std::set<std::string> names;
  for (const auto& name : kinds.supported) EXPECT_TRUE(names.insert(name).second) << name;
  for (const auto& name : kinds.inert) EXPECT_TRUE(names.insert(name).second) << name;
  for (const auto& [name, why] : kinds.refused) {
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_GT(why.size(), 20u) << name;
  }
  for (const char* name : {"stonewall", "group_reporting", "norandommap", "invalidate", "percentile_list",
                           "random_distribution", "filename_format", "cpus_allowed_policy", "scramble_buffers"}) {
    EXPECT_TRUE(std::count(kinds.supported.begin(), kinds.supported.end(), name)) << name;
  }
}

TEST(JobOptions, ValidationRejectsContradictions) {
  JobOptions job;
  job.directory = "/tmp";
  job.size = 1 << 20;
  EXPECT_TRUE(ValidateJob(job).ok());
  JobOptions neither = job;
  neither.directory.clear();
  EXPECT_FALSE(ValidateJob(neither).ok());
  JobOptions time_based = job;
  time_based.time_based = true;
  EXPECT_FALSE(ValidateJob(time_based).ok());
  JobOptions mix = job;
  mix.rwmixread = 101;
  EXPECT_FALSE(ValidateJob(mix).ok());
  JobOptions many = job;
  many.percentile_list.assign(21, 50);
  EXPECT_FALSE(ValidateJob(many).ok());
  // fio's filename= with numjobs: every job on the one file.
  JobOptions shared = job;
  shared.directory.clear();
  shared.filename = "/tmp/f";
  shared.numjobs = 4;
  EXPECT_TRUE(ValidateJob(shared).ok());
}

TEST(JobOptions, FilesAreNamedAsFioNamesThem) {
  JobOptions job;
  job.name = "randrw";
  job.directory = "/mnt/pmem0";
  EXPECT_EQ(WorkerFilePath(job, 0), "/mnt/pmem0/randrw.0.0");
  EXPECT_EQ(WorkerFilePath(job, 3), "/mnt/pmem0/randrw.3.0");
  job.filename_format = "$jobname-$jobnum-$filenum.dat";
  EXPECT_EQ(WorkerFilePath(job, 3), "/mnt/pmem0/randrw-3-0.dat");
  job.shared_file = true;
  EXPECT_EQ(WorkerFilePath(job, 3), "/mnt/pmem0/randrw-0-0.dat");
  // filename= is relative to directory=, as in fio; every worker maps it.
  job.filename = "data";
  EXPECT_EQ(WorkerFilePath(job, 2), "/mnt/pmem0/data");
  job.filename = "/dev/shm/data";
  EXPECT_EQ(WorkerFilePath(job, 2), "/dev/shm/data");
}

}  // namespace
}  // namespace faultbench
