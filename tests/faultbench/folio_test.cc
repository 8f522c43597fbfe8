// Folio sizes in anonymous memory on this machine's kernel: every size its
// per-size THP knobs offer, private (enabled) and shared (shmem_enabled),
// run for real. Each run's folio histogram is checked against the size it
// asked for and against the kernel's own per-size counters (allocations
// minus splits), and the same check is shown to fail on a copy of the run
// that misreports one size. The knobs are back as they were after every
// run, and after a run that is killed.
//
// Root only (the knobs, and the PFNs behind the histogram); skipped with
// the reason elsewhere and on kernels without multi-size THP (before 6.8).
// One test at a time (RESOURCE_LOCK thp_knobs): they set machine-wide knobs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "faultbench/run/runner.h"
#include "faultbench/sysfacts/read_file.h"
#include "faultbench/sysfacts/thp.h"
#include "nlohmann/json.hpp"
#include "pmstore/mapping/mapping.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace faultbench {
namespace {

using pmstore::mapping::PageIntent;
using pmstore::mapping::SizeName;

// Every knob a run may set, and its value now.
std::map<std::string, std::string> Knobs() {
  std::map<std::string, std::string> knobs;
  for (const MthpSize& s : ReadMthpSizes()) {
    knobs[s.dir + "/enabled"] = s.enabled;
    knobs[s.dir + "/shmem_enabled"] = s.shmem_enabled;
  }
  return knobs;
}

#define SKIP_UNLESS_MULTI_SIZE_THP()                                                              \
  if (geteuid() != 0) GTEST_SKIP() << "needs root: the THP knobs and the PFNs behind folio sizes"; \
  if (ReadMthpSizes().empty()) GTEST_SKIP() << "this kernel has no per-size THP knobs (before 6.8)"

// The intent that asks for `size`: pmd for 2 MiB, else the folio size.
PageIntent IntentOf(uint64_t size) { return size == (2u << 20) ? PageIntent::kPmd : PageIntent::Folio(size); }

JobOptions AnonJob(uint64_t folio, AnonMemory anon) {
  JobOptions job;
  job.name = "folio";
  job.anon = anon;
  job.size = std::max<uint64_t>(8 << 20, 8 * folio);  // at least 8 folios of the size
  job.rw = RwMode::kRandWrite;  // every page written once: every folio allocated by the workload
  job.mapping = IntentOf(folio);
  return job;
}

// What is wrong with `run`'s folios, as one line each: its worker must
// hold exactly range/size folios of `size` and nothing else, and the
// signature's checks against the per-size counters must agree for that
// size and every size in the histogram.
std::vector<std::string> FolioMismatches(const RunResult& run, uint64_t size) {
  std::vector<std::string> wrong;
  const WorkerResult& w = run.workers.at(0);
  if (!w.mapping.folios) return {"no folios read back: " + w.mapping.folios_error};
  const std::map<uint64_t, uint64_t> expected = {{size, w.range_bytes / size}};
  if (w.mapping.folios->folios != expected) {
    std::string got;
    for (const auto& [s, n] : w.mapping.folios->folios) got += SizeName(s) + "=" + std::to_string(n) + " ";
    wrong.push_back("histogram " + got + "where " + std::to_string(w.range_bytes / size) + " x " + SizeName(size) +
                    " were asked for");
  }
  // The checks of the sizes this run's histogram holds and of the size it
  // asked for; any other size's counters moved for other processes.
  bool checked = false;
  for (const FolioCheck& c : run.signature.folio_checks) {
    if (c.size != size && !run.signature.folios.contains(c.size)) continue;
    if (!c.agree()) {
      wrong.push_back(SizeName(c.size) + ": " + std::to_string(c.histogram) + " in the histogram, " +
                      std::to_string(c.allocated) + " allocated minus split");
    }
    checked = checked || c.size == size;
  }
  if (!checked) wrong.push_back("no check of " + SizeName(size) + " against its counters");
  return wrong;
}

// A copy of `run` whose histogram misreports one size: one folio of
// `size` reported as two of half the size (a reader that stopped at a
// tail page halfway would do that).
RunResult MisreportOneSize(RunResult run, uint64_t size) {
  pmstore::mapping::FolioCensus& census = *run.workers.at(0).mapping.folios;
  if (--census.folios[size] == 0) census.folios.erase(size);
  census.folios[size / 2] += 2;
  SetWorkerParts(run.workers, run.signature);  // the signature re-reads the worker's histogram
  return run;
}

void RunEverySize(AnonMemory anon) {
  const std::map<std::string, std::string> before = Knobs();
  int sizes_run = 0;
  for (const MthpSize& s : ReadMthpSizes()) {
    if ((anon == AnonMemory::kShared ? s.shmem_enabled : s.enabled).empty()) continue;  // no knob of this kind
    SCOPED_TRACE("anon " + std::string(AnonMemoryName(anon)) + " " + SizeName(s.size));
    // The per-size counters are the whole system's: a test beside this
    // one that allocates shmem folios of the same size (a pool on tmpfs
    // huge=always) moves them too. A run that disagrees is run again, up
    // to three times; a histogram that is wrong disagrees every time.
    absl::StatusOr<RunResult> run;
    std::vector<std::string> wrong;
    for (int attempt = 0; attempt < 3; ++attempt) {
      run = ExecuteJobs({AnonJob(s.size, anon)}, RunSettings{.progress = false});
      ASSERT_TRUE(run.ok()) << run.status();
      ASSERT_EQ(run->workers.at(0).error, "");
      wrong = FolioMismatches(*run, s.size);
      if (wrong.empty()) break;
    }
    EXPECT_TRUE(wrong.empty()) << wrong.front();
    EXPECT_DOUBLE_EQ(run->workers[0].mapping.FolioShareOf(s.size), 1.0);
    // The check fails on a histogram that misreports this one size.
    EXPECT_FALSE(FolioMismatches(MisreportOneSize(*run, s.size), s.size).empty()) << "the mutant went unnoticed";
    EXPECT_EQ(Knobs(), before) << "the knobs were not put back";
    ++sizes_run;
  }
  EXPECT_GT(sizes_run, 0);
}

TEST(FolioSizes, PrivateAnonymousMemoryGetsEverySizeItsKnobsOffer) {
  SKIP_UNLESS_MULTI_SIZE_THP();
  RunEverySize(AnonMemory::kPrivate);
}

TEST(FolioSizes, SharedAnonymousMemoryGetsEverySizeItsKnobsOffer) {
  SKIP_UNLESS_MULTI_SIZE_THP();
  RunEverySize(AnonMemory::kShared);
}

TEST(FolioSizes, PteGetsFourKilobyteFoliosOnly) {
  SKIP_UNLESS_MULTI_SIZE_THP();
  JobOptions job = AnonJob(64 << 10, AnonMemory::kPrivate);
  job.mapping = PageIntent::kPte;
  auto run = ExecuteJobs({job}, RunSettings{.progress = false});
  ASSERT_TRUE(run.ok()) << run.status();
  const auto& folios = run->workers.at(0).mapping.folios;
  ASSERT_TRUE(folios.has_value());
  EXPECT_EQ(folios->folios, (std::map<uint64_t, uint64_t>{{4096, job.size / 4096}}));
  EXPECT_TRUE(run->thp_knobs.empty()) << "pte needs no knob";
}

// The job-file spelling, through the binary: anon=shared and mapping=16K.
TEST(FolioSizes, JobFilesNameAnonymousMemoryAndFolioSizes) {
  SKIP_UNLESS_MULTI_SIZE_THP();
  TempDir dir;
  {
    std::ofstream job(dir.File("anon.fio"));
    job << "[global]\nsize=8M\nrw=randwrite\n[shm16k]\nanon=shared\nmapping=16K\n";
  }
  const CommandResult r = RunCommand(std::string(FAULTBENCH_BINARY) + " run --output-format=json " + dir.File("anon.fio"));
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json fb = nlohmann::json::parse(r.out)["jobs"][0]["faultbench"];
  EXPECT_EQ(fb["mapping"]["memory"], "anon shared");
  EXPECT_EQ(fb["folio_sizes"], (nlohmann::json{{"16K", 512}}));
  EXPECT_EQ(fb["folio_sizes_source"], "pagemap+kpageflags");
}

// Polls `done` every 20 ms for up to `seconds`.
template <typename Done>
bool Within(double seconds, Done done) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// A run killed while its knobs are set (SIGKILL: no destructor runs) gets
// them put back by its watchdog; so does one ended by Ctrl-C's SIGINT.
TEST(ThpKnobWatchdog, KnobsComeBackWhenTheRunIsKilled) {
  SKIP_UNLESS_MULTI_SIZE_THP();
  const std::map<std::string, std::string> before = Knobs();
  const std::string knob = std::string(kThpDir) + "/hugepages-64kB/enabled";
  if (SelectedChoice(ReadFirstLine(knob)) != "never") GTEST_SKIP() << knob << " is not never: nothing to watch change";
  for (int sig : {SIGKILL, SIGINT}) {
    SCOPED_TRACE(strsignal(sig));
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      execl(FAULTBENCH_BINARY, FAULTBENCH_BINARY, "run", "--anon", "--mapping=64K", "--size=16M", "--rw=randwrite",
            "--time_based", "--runtime=30s", "--output=/dev/null", static_cast<char*>(nullptr));
      _exit(127);
    }
    EXPECT_TRUE(Within(10, [&] { return SelectedChoice(ReadFirstLine(knob)) == "madvise"; })) << "never set";
    kill(pid, sig);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status)) << "the run was not ended by the signal";
    EXPECT_TRUE(Within(5, [&] { return Knobs() == before; })) << "the knobs were not put back";
  }
}

}  // namespace
}  // namespace faultbench
