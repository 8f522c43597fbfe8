// Real runs of the run loop on real file systems: ext4 under /var/tmp, and
// tmpfs huge=always mounts made here (skipped with the reason when the
// mount is refused).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysinfo.h>

#include <set>

#include "faultbench/run/runner.h"
#include "support/read_text.h"
#include "support/temp_dir.h"
#include "support/tmpfs_mount.h"

namespace faultbench {
namespace {

using pmstore::mapping::PageIntent;

constexpr uint64_t kMiB = 1 << 20;

// Under ASan/TSan the copy's interceptor reads the shadow of the mapped
// range, and the first touch of each shadow page is a page fault of the
// worker thread too: fault counts then say nothing about PMD versus PTE
// (the verified census still does).
#ifdef PMSTORE_SANITIZE_BUILD
constexpr bool kShadowFaults = true;
#else
constexpr bool kShadowFaults = false;
#endif

JobOptions Job(const std::string& dir, uint64_t size, RwMode rw, PageIntent mapping) {
  JobOptions job;
  job.name = "t";
  job.directory = dir;
  job.size = size;
  job.rw = rw;
  job.mapping = mapping;
  job.fresh_file = true;
  return job;
}

RunResult MustRun(const std::vector<JobOptions>& jobs, std::vector<std::vector<uint64_t>>* logs = nullptr) {
  RunSettings settings;
  settings.progress = false;
  settings.offset_logs = logs;
  auto run = ExecuteJobs(jobs, settings);
  EXPECT_TRUE(run.ok()) << run.status();
  if (!run.ok()) return {};
  for (const WorkerResult& w : run->workers) EXPECT_EQ(w.error, "");
  return *std::move(run);
}

uint64_t Faults(const WorkerResult& w) { return w.total.rusage.minor_faults + w.total.rusage.major_faults; }

// PMD: >= 95% of the bytes verified PMD, about one write fault per 2 MiB.
void ExpectPmd(const WorkerResult& w, uint64_t size) {
  ASSERT_TRUE(w.mapping.verified) << w.mapping.verify_error;
  EXPECT_GE(w.mapping.PmdShare(), 0.95);
  EXPECT_GE(Faults(w), size / (2 * kMiB) * 9 / 10);
  if (!kShadowFaults) {
    EXPECT_LE(Faults(w), size / (2 * kMiB) * 3 / 2 + 8);
  }
  EXPECT_FALSE(w.mapping.DiffersFromRequest());
}

void ExpectPte(const WorkerResult& w, uint64_t size) {
  ASSERT_TRUE(w.mapping.verified) << w.mapping.verify_error;
  EXPECT_EQ(w.mapping.census.pmd_bytes, 0u);
  EXPECT_EQ(w.mapping.census.pte_bytes, size);
  EXPECT_GE(Faults(w), size / 4096 * 9 / 10);  // one write fault per 4 KiB page
}

TEST(RunOnTmpfs, PmdMappingVerifiesPmdWithOneFaultPer2MiB) {
  TmpfsMount mount("size=300m,huge=always");
  SKIP_UNLESS_MOUNTED(mount);
  const uint64_t size = 128 * kMiB;
  RunResult run = MustRun({Job(mount.dir(), size, RwMode::kRandWrite, PageIntent::kPmd)});
  ASSERT_EQ(run.workers.size(), 1u);
  ExpectPmd(run.workers[0], size);
  EXPECT_EQ(run.workers[0].total.write.ios, size / 4096);
  if (!kShadowFaults) {
    EXPECT_NEAR(run.workers[0].total.FaultsPerMib(), 0.5, 0.1);
  }
  // perf's page-fault counter, where the kernel lets us open it, agrees
  // with getrusage; it is absent (never zero) where it cannot be opened.
  const auto& perf_faults = run.workers[0].total.perf.page_faults;
  if (perf_faults.has_value()) {
    EXPECT_NEAR(static_cast<double>(*perf_faults), Faults(run.workers[0]), 4);
  }
}

TEST(RunOnTmpfs, PteMappingVerifiesNoPmdBytes) {
  TmpfsMount mount("size=300m,huge=always");
  SKIP_UNLESS_MOUNTED(mount);
  const uint64_t size = 64 * kMiB;
  RunResult run = MustRun({Job(mount.dir(), size, RwMode::kRandWrite, PageIntent::kPte)});
  ExpectPte(run.workers[0], size);
}

TEST(RunOnExt4, PmdMappingVerifiesPmdWithOneFaultPer2MiB) {
  TempDir dir("/var/tmp");
  const uint64_t size = 64 * kMiB;
  RunResult run = MustRun({Job(dir.path(), size, RwMode::kRandWrite, PageIntent::kPmd)});
  ExpectPmd(run.workers[0], size);
}

TEST(RunOnExt4, PteMappingVerifiesNoPmdBytes) {
  TempDir dir("/var/tmp");
  const uint64_t size = 64 * kMiB;
  RunResult run = MustRun({Job(dir.path(), size, RwMode::kRandWrite, PageIntent::kPte)});
  ExpectPte(run.workers[0], size);
}

// The offsets of two loops: each loop covers every block exactly once, and
// the second loop's order differs from the first.
TEST(RunSignature, MachineCountersAreReadAroundTheWorkloadWhileItIsMapped) {
  TempDir dir;
  const RunResult run = MustRun({Job(dir.path(), 16 * kMiB, RwMode::kWrite, PageIntent::kPte)});
  ASSERT_EQ(run.workers.size(), 1u);
  const RunSignature& s = run.signature;
  // Machine-wide, so other processes add to it, but the worker's own
  // faults all fall inside the interval.
  ASSERT_TRUE(s.vmstat_deltas.count("pgfault"));
  EXPECT_GE(s.vmstat_deltas.at("pgfault"), static_cast<int64_t>(Faults(run.workers[0])));
  EXPECT_TRUE(s.vmstat_deltas.count("thp_fault_fallback"));
  EXPECT_TRUE(s.page_tables_kb.has_value());
  EXPECT_TRUE(s.page_tables_delta_kb.has_value());
  EXPECT_EQ(s.faults, Faults(run.workers[0]));
  EXPECT_TRUE(s.verified);
  EXPECT_DOUBLE_EQ(s.pmd_share, 0);
}

TEST(RunOffsets, EveryBlockOncePerLoop) {
  TempDir dir("/var/tmp");
  JobOptions job = Job(dir.path(), 4 * kMiB, RwMode::kRandRw, PageIntent::kAuto);
  job.loops = 2;
  std::vector<std::vector<uint64_t>> logs;
  RunResult run = MustRun({job}, &logs);
  ASSERT_EQ(logs.size(), 1u);
  const uint64_t blocks = 4 * kMiB / 4096;
  ASSERT_EQ(logs[0].size(), 2 * blocks);
  for (int loop = 0; loop < 2; ++loop) {
    std::set<uint64_t> seen(logs[0].begin() + loop * blocks, logs[0].begin() + (loop + 1) * blocks);
    EXPECT_EQ(seen.size(), blocks) << "loop " << loop;
    EXPECT_EQ(*seen.rbegin(), (blocks - 1) * 4096);
  }
  EXPECT_FALSE(std::equal(logs[0].begin(), logs[0].begin() + blocks, logs[0].begin() + blocks));
  // Two phases: first touch, then steady state without faults to speak of.
  ASSERT_EQ(run.workers[0].phases.size(), 2u);
  EXPECT_EQ(run.workers[0].phases[0].name, "fault");
  EXPECT_GT(run.workers[0].phases[0].rusage.minor_faults, run.workers[0].phases[1].rusage.minor_faults);
}

TEST(RunOffsets, SameSeedSameOffsets) {
  TempDir dir("/var/tmp");
  JobOptions job = Job(dir.path(), 2 * kMiB, RwMode::kRandRead, PageIntent::kAuto);
  std::vector<std::vector<uint64_t>> a, b;
  MustRun({job}, &a);
  MustRun({job}, &b);
  EXPECT_EQ(a, b);
  job.randseed = 1234;
  MustRun({job}, &b);
  EXPECT_NE(a, b);
}

TEST(RunSharedFile, WorkersSplitOneFile) {
  TempDir dir("/var/tmp");
  JobOptions job = Job(dir.path(), 8 * kMiB, RwMode::kRandWrite, PageIntent::kPmd);
  job.numjobs = 2;
  job.shared_file = true;
  std::vector<std::vector<uint64_t>> logs;
  RunResult run = MustRun({job}, &logs);
  ASSERT_EQ(run.workers.size(), 2u);
  EXPECT_EQ(run.workers[0].file, run.workers[1].file);
  EXPECT_EQ(logs[0].size(), 1024u);
  EXPECT_EQ(logs[1].size(), 1024u);
  EXPECT_EQ(run.workers[0].range_bytes, 4 * kMiB);
}

TEST(RunPrefault, SteadyPhaseTakesNoFaults) {
  TmpfsMount mount("size=100m,huge=always");
  SKIP_UNLESS_MOUNTED(mount);
  JobOptions job = Job(mount.dir(), 32 * kMiB, RwMode::kRandRead, PageIntent::kPmd);
  job.prefault = true;
  RunResult run = MustRun({job});
  const WorkerResult& w = run.workers[0];
  ASSERT_EQ(w.phases.size(), 2u);
  EXPECT_EQ(w.phases[0].read.ios, 0u);
  EXPECT_GE(w.phases[0].rusage.minor_faults, 8u);
  if (!kShadowFaults) {
    EXPECT_EQ(w.phases[1].rusage.minor_faults, 0u);
  }
  EXPECT_EQ(w.total.read.ios, 32 * kMiB / 4096);
  EXPECT_GE(w.mapping.PmdShare(), 0.95);
}

TEST(RunTimeBased, RepeatsPassesUntilTheRuntime) {
  TempDir dir("/var/tmp");
  JobOptions job = Job(dir.path(), 2 * kMiB, RwMode::kRandRead, PageIntent::kPmd);
  job.time_based = true;
  job.runtime_s = 0.3;
  job.ramp_time_s = 0.05;
  RunResult run = MustRun({job});
  const WorkerResult& w = run.workers[0];
  EXPECT_GT(w.total.read.ios, 2 * 512u);  // more than two passes of 512 blocks
  EXPECT_GE(w.total.runtime_s, 0.25);
  EXPECT_LE(w.total.runtime_s, 1.5);
  // The ramp ate part of the first pass; whatever is left of it is the
  // fault phase, the rest is steady.
  ASSERT_EQ(w.phases.size(), 2u);
  EXPECT_GT(w.phases[1].read.ios, w.phases[0].read.ios);
}

TEST(RunPmem2Engine, WritesThroughLibpmem2AndVerifies) {
  TmpfsMount mount("size=64m,huge=always");
  SKIP_UNLESS_MOUNTED(mount);
  JobOptions job = Job(mount.dir(), 8 * kMiB, RwMode::kRandRw, PageIntent::kPmd);
  job.ioengine = JobEngine::kPmem2;
  RunResult run = MustRun({job});
  const WorkerResult& w = run.workers[0];
  EXPECT_EQ(w.mapping.engine, pmstore::mapping::Engine::kPmem2);
  EXPECT_EQ(w.mapping.granularity, "page");  // tmpfs is not DAX
  EXPECT_EQ(w.mapping.writes, "persisted");
  EXPECT_EQ(w.total.read.ios + w.total.write.ios, 2048u);
  EXPECT_GE(w.mapping.PmdShare(), 0.95);
}

// fio's libpmem engine: direct and sync decide how its writes reach the
// file; the dev-dax engine persists every write whatever they say.
TEST(RunLibpmemEngine, DirectAndSyncChooseTheWrites) {
  TmpfsMount mount("size=32m");
  SKIP_UNLESS_MOUNTED(mount);
  JobOptions job = Job(mount.dir(), 2 * kMiB, RwMode::kRandWrite, PageIntent::kAuto);
  job.ioengine = JobEngine::kLibpmem;
  job.direct = true;
  job.sync = true;
  EXPECT_EQ(MustRun({job}).workers[0].mapping.writes, "non-temporal, drained");
  job.direct = job.sync = false;
  EXPECT_EQ(MustRun({job}).workers[0].mapping.writes, "temporal, not drained");
  job.ioengine = JobEngine::kDevDax;
  job.direct = true;
  RunResult dev_dax = MustRun({job});
  EXPECT_EQ(dev_dax.workers[0].mapping.writes, "persisted");
  EXPECT_EQ(dev_dax.workers[0].mapping.engine, pmstore::mapping::Engine::kPmem2);
}

TEST(RunPreflight, MissingDirectoryAndHugeSizeAreRefusedBeforeRunning) {
  JobOptions missing = Job("/var/tmp/faultbench-no-such-dir", kMiB, RwMode::kRead, PageIntent::kAuto);
  EXPECT_EQ(ExecuteJobs({missing}, RunSettings{}).status().code(), absl::StatusCode::kNotFound);
  TmpfsMount mount("size=16m");
  SKIP_UNLESS_MOUNTED(mount);
  JobOptions huge = Job(mount.dir(), 64 * kMiB, RwMode::kRead, PageIntent::kAuto);
  EXPECT_EQ(ExecuteJobs({huge}, RunSettings{}).status().code(), absl::StatusCode::kResourceExhausted);
}

JobOptions Timed(const std::string& dir, const std::string& name, double runtime_s) {
  JobOptions job = Job(dir, 2 * kMiB, RwMode::kRandRead, PageIntent::kAuto);
  job.name = name;
  job.time_based = true;
  job.runtime_s = runtime_s;
  return job;
}

bool Overlap(const WorkerResult& a, const WorkerResult& b) { return a.start_ns < b.end_ns && b.start_ns < a.end_ns; }

// fio's stonewall: a job waits until every job before it has finished;
// without it, job sections run at once.
TEST(RunStonewall, SerialisesTheJobsAfterIt) {
  TempDir dir("/var/tmp");
  RunResult together = MustRun({Timed(dir.path(), "a", 0.2), Timed(dir.path(), "b", 0.2)});
  ASSERT_EQ(together.workers.size(), 2u);
  EXPECT_TRUE(Overlap(together.workers[0], together.workers[1]));
  EXPECT_EQ(together.workers[1].stage, 0);
  EXPECT_EQ(together.workers[1].group_id, 0);

  JobOptions b = Timed(dir.path(), "b", 0.2);
  b.stonewall = true;
  JobOptions c = Timed(dir.path(), "c", 0.2);
  c.new_group = true;  // a new reporting group, still beside b
  RunResult walled = MustRun({Timed(dir.path(), "a", 0.2), b, c});
  ASSERT_EQ(walled.workers.size(), 3u);
  const WorkerResult &wa = walled.workers[0], &wb = walled.workers[1], &wc = walled.workers[2];
  EXPECT_GE(wb.start_ns, wa.end_ns) << "b started before a ended";
  EXPECT_FALSE(Overlap(wa, wb));
  EXPECT_TRUE(Overlap(wb, wc)) << "new_group alone does not wait";
  EXPECT_EQ(wb.stage, 1);
  EXPECT_EQ(wc.stage, 1);
  // fio's groupids: stonewall and new_group each open a group.
  EXPECT_EQ(wa.group_id, 0);
  EXPECT_EQ(wb.group_id, 1);
  EXPECT_EQ(wc.group_id, 2);
}

// fio's norandommap: offsets drawn with replacement, so a pass repeats
// some blocks and misses others; by default every block comes once.
TEST(RunNorandommap, RepeatsOffsets) {
  TempDir dir("/var/tmp");
  JobOptions job = Job(dir.path(), 4 * kMiB, RwMode::kRandRead, PageIntent::kAuto);
  std::vector<std::vector<uint64_t>> logs;
  MustRun({job}, &logs);
  EXPECT_EQ(std::set<uint64_t>(logs[0].begin(), logs[0].end()).size(), logs[0].size());
  job.norandommap = true;
  RunResult run = MustRun({job}, &logs);
  const size_t distinct = std::set<uint64_t>(logs[0].begin(), logs[0].end()).size();
  ASSERT_EQ(logs[0].size(), 1024u);
  EXPECT_LT(distinct, 1024u * 3 / 4) << "about 63% of the blocks are drawn in one pass";
  EXPECT_GT(distinct, 1024u / 2);
  // Faults per MiB divide by the bytes really touched.
  EXPECT_EQ(run.workers[0].total.bytes_accessed, distinct * 4096);
}

TEST(RunRandrepeat, ZeroGivesNewOffsetsEachRunUnlessRandseedIsGiven) {
  TempDir dir("/var/tmp");
  JobOptions job = Job(dir.path(), 2 * kMiB, RwMode::kRandRead, PageIntent::kAuto);
  job.randrepeat = false;
  std::vector<std::vector<uint64_t>> a, b;
  MustRun({job}, &a);
  MustRun({job}, &b);
  EXPECT_NE(a, b);
  job.randseed_set = true;
  MustRun({job}, &a);
  MustRun({job}, &b);
  EXPECT_EQ(a, b);
}

bool OnExt4(const std::string& path) {
  struct statfs fs;
  return statfs(path.c_str(), &fs) == 0 && fs.f_type == 0xEF53;  // EXT4_SUPER_MAGIC
}

// fio's invalidate=1 drops the file's cached pages before the job, and its
// fadvise_hint=1 advises a random job's mapping MADV_RANDOM: no read-around,
// so every 4 KiB page is a major fault (fio 3.33 and faultbench measured
// majf = size / 4 KiB on ext4, doc/FAULTBENCH.md). With invalidate=0 the
// cached file takes none.
TEST(RunInvalidate, GivesMajorFaultsOnExt4) {
  TempDir dir("/var/tmp");
  if (!OnExt4(dir.path())) GTEST_SKIP() << "/var/tmp is not ext4 here";
  const uint64_t size = 16 * kMiB;
  JobOptions write = Job(dir.path(), size, RwMode::kWrite, PageIntent::kAuto);
  MustRun({write});  // the file's pages are now cached (and dirty)

  JobOptions read = Job(dir.path(), size, RwMode::kRandRead, PageIntent::kAuto);
  read.fresh_file = false;
  read.fadvise_hint.set = FadviseHint::kType;
  read.invalidate.set = false;
  RunResult kept = MustRun({read});
  EXPECT_EQ(kept.workers[0].total.rusage.major_faults, 0u);
  EXPECT_EQ(kept.workers[0].page_cache.resident_bytes, size);
  EXPECT_EQ(kept.workers[0].page_cache.fadvise, "random");

  read.invalidate.set = true;
  RunResult dropped = MustRun({read});
  const WorkerResult& w = dropped.workers[0];
  EXPECT_EQ(w.page_cache.resident_bytes, 0u) << "dirty pages are written back first, then dropped";
  EXPECT_TRUE(w.page_cache.invalidate);
  EXPECT_EQ(w.page_cache.invalidate_source, "set");
  EXPECT_GE(w.total.rusage.major_faults, size / 4096 * 95 / 100);
  EXPECT_LE(w.total.rusage.major_faults, size / 4096);
}

// fio's filename= with numjobs: every worker on the one file, each over
// all of it (faultbench's --shared-file splits it instead).
TEST(RunFilename, NumjobsWorkEachOverTheWholeFile) {
  TmpfsMount mount("size=64m");
  SKIP_UNLESS_MOUNTED(mount);
  JobOptions job = Job(mount.dir(), 4 * kMiB, RwMode::kRandWrite, PageIntent::kAuto);
  job.directory.clear();
  job.filename = mount.dir() + "/one";
  job.numjobs = 3;
  std::vector<std::vector<uint64_t>> logs;
  RunResult run = MustRun({job}, &logs);
  ASSERT_EQ(run.workers.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(run.workers[i].file, job.filename);
    EXPECT_EQ(run.workers[i].range_bytes, 4 * kMiB);
    EXPECT_EQ(std::set<uint64_t>(logs[i].begin(), logs[i].end()).size(), 1024u) << "worker " << i;
  }
}

// Offsets stay inside the range fio's offset/size/filesize lay out.
TEST(RunLayout, OffsetSizeAndFilesizeAsFioLaysThemOut) {
  TempDir dir("/var/tmp");
  JobOptions job = Job(dir.path(), 2 * kMiB, RwMode::kRandRead, PageIntent::kAuto);
  job.filesize = 8 * kMiB;
  job.offset = 4 * kMiB;
  std::vector<std::vector<uint64_t>> logs;
  RunResult run = MustRun({job}, &logs);
  const WorkerResult& w = run.workers[0];
  EXPECT_EQ(w.range_bytes, 4 * kMiB) << "from the offset to the end of the file";
  EXPECT_EQ(logs[0].size(), 512u) << "size= of I/O per loop";
  for (uint64_t offset : logs[0]) ASSERT_LT(offset, 4 * kMiB);
  struct stat st;
  ASSERT_EQ(stat(w.file.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), 8 * kMiB);
}

// fallocate=none makes a sparse file: a read job allocates nothing on ext4.
TEST(RunFallocate, NoneLeavesTheFileSparse) {
  TempDir dir("/var/tmp");
  if (!OnExt4(dir.path())) GTEST_SKIP() << "/var/tmp is not ext4 here";
  JobOptions job = Job(dir.path(), 8 * kMiB, RwMode::kRandRead, PageIntent::kAuto);
  RunResult preallocated = MustRun({job});
  struct stat st;
  ASSERT_EQ(stat(preallocated.workers[0].file.c_str(), &st), 0);
  EXPECT_GE(static_cast<uint64_t>(st.st_blocks) * 512, 8 * kMiB);
  job.fallocate = Fallocate::kNone;
  RunResult sparse = MustRun({job});
  ASSERT_EQ(stat(sparse.workers[0].file.c_str(), &st), 0);
  EXPECT_EQ(st.st_blocks, 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), 8 * kMiB);
}

// cpus_allowed_policy=split: each worker one CPU of the list, in turn.
TEST(RunCpusAllowed, SplitGivesEachWorkerItsOwnCpu) {
  if (get_nprocs() < 2) GTEST_SKIP() << "needs two CPUs";
  TempDir dir("/var/tmp");
  JobOptions job = Job(dir.path(), 2 * kMiB, RwMode::kRandRead, PageIntent::kAuto);
  job.numjobs = 3;
  job.cpus_allowed = "0-1";
  job.cpus_allowed_policy = CpusAllowedPolicy::kSplit;
  RunResult split = MustRun({job});
  EXPECT_EQ(split.workers[0].numa.cpus, std::vector<int>{0});
  EXPECT_EQ(split.workers[1].numa.cpus, std::vector<int>{1});
  EXPECT_EQ(split.workers[2].numa.cpus, std::vector<int>{0});
  job.cpus_allowed_policy = CpusAllowedPolicy::kShared;
  RunResult shared = MustRun({job});
  EXPECT_EQ(shared.workers[2].numa.cpus, (std::vector<int>{0, 1}));
  job.cpus_allowed = "4095";
  EXPECT_EQ(ExecuteJobs({job}, RunSettings{}).status().code(), absl::StatusCode::kInvalidArgument);
}

// buffer_pattern fills what is written; scramble_buffers=1 stamps every
// write, so no two 512-byte blocks of the file are alike.
TEST(RunBuffers, PatternAndScrambleShapeWhatIsWritten) {
  TmpfsMount mount("size=32m");
  SKIP_UNLESS_MOUNTED(mount);
  JobOptions job = Job(mount.dir(), kMiB, RwMode::kWrite, PageIntent::kAuto);
  job.buffer_pattern = "\xde\xad\xbe\xef";
  job.scramble_buffers.set = false;
  RunResult plain = MustRun({job});
  const std::string bytes = ReadText(plain.workers[0].file);
  ASSERT_GE(bytes.size(), kMiB);
  for (size_t i = 0; i < kMiB; ++i) ASSERT_EQ(bytes[i], job.buffer_pattern[i % 4]) << "byte " << i;

  job.scramble_buffers.set = true;
  RunResult scrambled = MustRun({job});
  const std::string stamped = ReadText(scrambled.workers[0].file);
  std::set<std::string> blocks;
  for (size_t b = 0; b < kMiB / 512; ++b) blocks.insert(stamped.substr(b * 512, 512));
  EXPECT_EQ(blocks.size(), kMiB / 512);
}

// disable_clat with disable_lat: no latency recorded, the I/O still counted.
TEST(RunLatency, DisabledLatenciesAreNotMeasured) {
  TempDir dir("/var/tmp");
  JobOptions job = Job(dir.path(), 2 * kMiB, RwMode::kRandRead, PageIntent::kAuto);
  job.disable_clat = job.disable_lat = true;
  RunResult run = MustRun({job});
  EXPECT_EQ(run.workers[0].total.read.ios, 512u);
  EXPECT_EQ(run.workers[0].total.read.latency.count(), 0u);
  job.disable_lat = false;  // one measurement is fio's lat here: still timed
  RunResult timed = MustRun({job});
  EXPECT_EQ(timed.workers[0].total.read.latency.count(), 512u);
}

}  // namespace
}  // namespace faultbench
