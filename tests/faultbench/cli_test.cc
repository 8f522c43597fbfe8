// The faultbench binary as users call it: exit status, one-line errors,
// parsable output, job files, compare's summary and plot.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "nlohmann/json.hpp"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "support/tmpfs_mount.h"

namespace {

using Result = CommandResult;

// Runs the binary with `args` (a shell word list), capturing both streams.
Result Faultbench(const std::string& args, const TempDir&) {
  return RunCommand(std::string(FAULTBENCH_BINARY) + " " + args);
}

// A directory of its own for a run's job files.
std::string JobsDir(const TempDir& dir) {
  const std::string jobs = dir.File("jobs");
  std::filesystem::create_directory(jobs);
  return jobs;
}

void ExpectOneLineUsageError(const Result& r, const std::string& mentions) {
  EXPECT_EQ(r.status, 2) << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "more than one line: " << r.err;
  EXPECT_NE(r.err.find(mentions), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(FaultbenchCli, JsonOutputParsesAndHasFioFields) {
  TempDir dir;
  Result r = Faultbench("run --directory=" + dir.path() + " --size=16M --rw=randrw --mapping=pmd --output-format=json", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  const auto& job = doc.at("jobs").at(0);
  EXPECT_EQ(job.at("read").at("total_ios").get<uint64_t>() + job.at("write").at("total_ios").get<uint64_t>(), 4096u);
  for (const char* key : {"io_bytes", "bw", "bw_bytes", "iops", "runtime", "total_ios"}) {
    EXPECT_TRUE(job.at("read").contains(key)) << key;
  }
  EXPECT_TRUE(job.at("read").at("clat_ns").at("percentile").contains("50.000000"));
  EXPECT_TRUE(job.contains("minf"));
  EXPECT_EQ(job.at("faultbench").at("mapping").at("requested"), "pmd");
  EXPECT_TRUE(doc.at("taint").is_array());
}

TEST(FaultbenchCli, OutputFileAndCsv) {
  TempDir dir;
  Result r = Faultbench("run --directory=" + dir.path() + " --size=4M --rw=read --output-format=csv --output=" +
                     dir.File("out.csv"),
                 dir);
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(dir.File("out.csv"));
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  EXPECT_EQ(header.rfind("jobname,", 0), 0u);
  EXPECT_EQ(row.rfind("faultbench,0,", 0), 0u);
}

TEST(FaultbenchCli, UnlinkDeletesTheJobFilesOnceTheRunHasBeenVerified) {
  TempDir dir;
  const std::string jobs = JobsDir(dir);
  Result kept = Faultbench("run --directory=" + jobs + " --size=4M --numjobs=2 --rw=randwrite", dir);
  ASSERT_EQ(kept.status, 0) << kept.err;
  EXPECT_TRUE(std::filesystem::exists(jobs + "/faultbench.1.0")) << "fio's default keeps the files";

  Result r = Faultbench("run --directory=" + jobs + " --size=4M --numjobs=2 --rw=randwrite --unlink --output-format=json",
                        dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(jobs));
  const nlohmann::json mapping = nlohmann::json::parse(r.out).at("jobs").at(1).at("faultbench").at("mapping");
  EXPECT_EQ(mapping.at("pmd_bytes").get<uint64_t>() + mapping.at("pte_bytes").get<uint64_t>(), 4u << 20)
      << "verified before the file went";
}

TEST(FaultbenchCli, CompareWithUnlinkLeavesNoFileBehind) {
  TempDir dir;
  const std::string jobs = JobsDir(dir);
  Result r = Faultbench("compare --directory=" + jobs + " --size=4M --rw=randwrite --repeat=1 --unlink", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("PMD/PTE (mmap)"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::is_empty(jobs));
}

// The page-cache form of the 2016 carryover: a PTE pass faults the file
// into 4 KiB folios, and a PMD mapping of the same cached file cannot use
// PMD entries until they are dropped (fresh files map PMD, see run_test).
TEST(FaultbenchCli, ReusedPageCacheFileKeepsThePmdRunsAtPteAndCompareSaysWhy) {
  TempDir dir("/var/tmp");
  const std::string jobs = JobsDir(dir);
  Result r = Faultbench("compare --directory=" + jobs + " --size=16M --rw=randwrite --repeat=1 --reuse-file", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("cause: not PMD-mapped after all"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PMD-mapped: not a PMD result)"), std::string::npos) << "the verdict says so too: " << r.out;
  EXPECT_NE(r.out.find("page cache still holds the file in the 4 KiB folios"), std::string::npos) << r.out;
}

TEST(FaultbenchCli, BadInputIsOneLineAndExitTwo) {
  TempDir dir;
  ExpectOneLineUsageError(Faultbench("run --directory=" + dir.path() + " --sise=1M", dir), "--sise");
  ExpectOneLineUsageError(Faultbench("run --directory=" + dir.path() + " --size=1M --rw=sideways", dir), "sideways");
  ExpectOneLineUsageError(Faultbench("run --directory=/var/tmp/faultbench-missing-dir --size=1M", dir), "does not exist");
  ExpectOneLineUsageError(Faultbench("run --directory=" + dir.path() + " --size=64T", dir), "free");
  ExpectOneLineUsageError(Faultbench("run --directory=" + dir.path() + " --size=1M --membind=4000", dir), "node 4000");
  ExpectOneLineUsageError(Faultbench("run --directory=" + dir.path() + " --size=1M --cpunodebind=9", dir), "node 9");
  ExpectOneLineUsageError(Faultbench("run --size=1M", dir), "--directory");
  // /var/tmp is not DAX: MAP_SYNC is refused before anything runs.
  ExpectOneLineUsageError(Faultbench("run --directory=" + dir.path() + " --size=4M --map-sync", dir), "DAX");
}

TEST(FaultbenchCli, JobFileRunsAndUnsupportedOptionIsNamed) {
  TempDir dir;
  {
    std::ofstream job(dir.File("test.fio"));
    job << "[global]\nbs=4k\nsize=4M\ndirectory=" << dir.path() << "\nioengine=mmap\n[randrw]\nrw=randrw\n";
  }
  Result r = Faultbench("run --output-format=json " + dir.File("test.fio"), dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("jobs").at(0).at("jobname"), "randrw");
  {
    std::ofstream job(dir.File("bad.fio"));
    job << "[a]\nsize=4M\ndirectory=" << dir.path() << "\niodepth=8\nfrobnicate=8\n";
  }
  ExpectOneLineUsageError(Faultbench("run " + dir.File("bad.fio"), dir),
                          "job file " + dir.File("bad.fio") + ", line 5: unsupported option 'frobnicate'");
  {
    std::ofstream job(dir.File("verify.fio"));
    job << "[a]\nsize=4M\ndirectory=" << dir.path() << "\nverify=md5\n";
  }
  ExpectOneLineUsageError(Faultbench("run " + dir.File("verify.fio"), dir),
                          "line 4: option 'verify' is not supported: faultbench checks no data");
  ExpectOneLineUsageError(Faultbench("run " + dir.path(), dir), "is a directory (did you mean --directory?)");
  ExpectOneLineUsageError(Faultbench("run " + dir.File("missing.fio"), dir), "No such file or directory");
}

// A job file of fio's semantics end to end: group_reporting makes one
// entry of three workers, percentile_list picks the percentiles, stonewall
// starts a new group, --section runs one section, iodepth is named as
// changing nothing, and invalidate says which default applied.
TEST(FaultbenchCli, JobFileGroupsPercentilesSectionsAndDefaults) {
  TempDir dir;
  const std::string jobs = JobsDir(dir);
  {
    std::ofstream job(dir.File("groups.fio"));
    job << "[global]\ndirectory=" << jobs << "\nsize=4M\nrw=randread\nnumjobs=3\niodepth=4\n"
        << "[grouped]\ngroup_reporting\npercentile_list=50:99.9\n[single]\nstonewall\n";
  }
  Result r = Faultbench("run --output-format=json " + dir.File("groups.fio"), dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc.at("jobs").size(), 4u);
  const auto& grouped = doc["jobs"][0];
  EXPECT_EQ(grouped["jobname"], "grouped");
  EXPECT_EQ(grouped["groupid"], 0);
  EXPECT_EQ(grouped["read"]["total_ios"], 3 * 1024);
  EXPECT_EQ(grouped["faultbench"]["members"], 3);
  const auto& percentiles = grouped["read"]["clat_ns"]["percentile"];
  EXPECT_EQ(percentiles.size(), 2u) << percentiles;
  EXPECT_TRUE(percentiles.contains("50.000000") && percentiles.contains("99.900000")) << percentiles;
  for (int i = 1; i < 4; ++i) {
    EXPECT_EQ(doc["jobs"][i]["jobname"], "single");
    EXPECT_EQ(doc["jobs"][i]["groupid"], 1);
    EXPECT_EQ(doc["jobs"][i]["read"]["clat_ns"]["percentile"].size(), 17u) << "fio's default list";
  }
  const auto& page_cache = grouped["faultbench"]["page_cache"];
  EXPECT_TRUE(page_cache["invalidate"].get<bool>());
  EXPECT_EQ(page_cache["invalidate_source"], "fio's default in job files");
  EXPECT_EQ(grouped["faultbench"]["notes"].size(), 1u);

  Result text = Faultbench("run --section=single " + dir.File("groups.fio"), dir);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_EQ(text.out.find("grouped"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("single: (groupid=0, jobs=1)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("note         : iodepth=4: change nothing in a synchronous mmap engine"),
            std::string::npos) << text.out;
  EXPECT_NE(text.out.find("page cache   : invalidate=1 (fio's default in job files): dropped"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("Run status group 0 (all jobs):"), std::string::npos) << text.out;
  ExpectOneLineUsageError(Faultbench("run --section=nope " + dir.File("groups.fio"), dir),
                          "no such job section (the file has: grouped, single)");

  // On the command line faultbench keeps the page cache, unless told.
  Result flags = Faultbench("run --directory=" + jobs + " --size=4M --output-format=json", dir);
  ASSERT_EQ(flags.status, 0) << flags.err;
  const auto flag_cache = nlohmann::json::parse(flags.out)["jobs"][0]["faultbench"]["page_cache"];
  EXPECT_FALSE(flag_cache["invalidate"].get<bool>());
  EXPECT_EQ(flag_cache["invalidate_source"], "faultbench's default on the command line");
  Result told = Faultbench("run --directory=" + jobs + " --size=4M --invalidate=1 --output-format=json", dir);
  ASSERT_EQ(told.status, 0) << told.err;
  EXPECT_EQ(nlohmann::json::parse(told.out)["jobs"][0]["faultbench"]["page_cache"]["invalidate_source"], "set");
}

// fio: a randseed given wins over randrepeat=0. --randseed on the command
// line is the default beneath the job file, and a given one counts as set:
// two runs of a randrepeat=0 job with --randseed=N use seed N both times,
// and without it each run draws a seed of its own.
TEST(FaultbenchCli, RandseedFlagWinsOverRandrepeatZeroOfAJobFile) {
  TempDir dir;
  const std::string jobs = JobsDir(dir);
  {
    std::ofstream job(dir.File("norepeat.fio"));
    job << "[global]\ndirectory=" << jobs << "\nsize=1M\nrw=randread\nrandrepeat=0\n[a]\n";
  }
  auto seed = [&](const std::string& flags) {
    Result r = Faultbench("run --output-format=json " + flags + " " + dir.File("norepeat.fio"), dir);
    EXPECT_EQ(r.status, 0) << r.err;
    return r.status == 0 ? nlohmann::json::parse(r.out)["jobs"][0]["faultbench"]["seed"].get<uint64_t>() : 0;
  };
  EXPECT_EQ(seed("--randseed=4242"), 4242u);
  EXPECT_EQ(seed("--randseed=4242"), 4242u);
  EXPECT_NE(seed(""), seed(""));  // randrepeat=0 without a seed: a new one each run
}

TEST(FaultbenchCli, StrictFailsWhenTheMappingDiffers) {
  TempDir dir;
  // tmpfs huge=never cannot give PMD mappings, whatever the address.
  TmpfsMount mount("size=32m,huge=never");
  SKIP_UNLESS_MOUNTED(mount);
  Result r = Faultbench("run --directory=" + mount.dir() + " --size=8M --rw=write --mapping=pmd --strict", dir);
  EXPECT_EQ(r.status, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("WARNING"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("--strict"), std::string::npos) << r.err;
  Result relaxed = Faultbench("run --directory=" + mount.dir() + " --size=8M --rw=write --mapping=pmd", dir);
  EXPECT_EQ(relaxed.status, 0) << relaxed.err;  // Nor 64 KiB folios: huge=never gives the page cache 4 KiB folios.
  Result folio = Faultbench("run --directory=" + mount.dir() + " --size=8M --rw=write --mapping=64K --strict", dir);
  EXPECT_EQ(folio.status, 3) << folio.out << folio.err;
  EXPECT_NE(folio.err.find("asked for 64K folios but 0.0% of it is in them"), std::string::npos) << folio.err;
}

// Node 0 exists on every machine: bind CPUs and memory to it and check the
// report says so, down to where the pages landed.
TEST(FaultbenchCli, NumaBindingIsAppliedAndReported) {
  TempDir dir;
  Result r = Faultbench("run --directory=" + dir.path() +
                            " --size=8M --rw=write --cpunodebind=0 --membind=0 --output-format=json",
                        dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto numa = nlohmann::json::parse(r.out).at("jobs").at(0).at("faultbench").at("numa");
  EXPECT_EQ(numa.at("policy"), "bind");
  EXPECT_EQ(numa.at("nodes"), nlohmann::json::array({0}));
  EXPECT_FALSE(numa.at("cpus").empty());
  EXPECT_EQ(numa.at("page_nodes").at("0"), 2048);
}

// tmpfs huge=never cannot map PMD: compare must not present pte vs "pmd" as
// a PTE-versus-PMD result without saying so.
TEST(FaultbenchCli, CompareNamesTheCauseWhenPmdRunsAreNotPmdMapped) {
  TempDir dir;
  TmpfsMount mount("size=64m,huge=never");
  SKIP_UNLESS_MOUNTED(mount);
  Result r = Faultbench("compare --directory=" + mount.dir() + " --size=8M --rw=randwrite --repeat=1 --save-json=" +
                            dir.File("cmp.json"),
                        dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("not PMD-mapped after all: 0.0%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cause: "), std::string::npos) << r.out;
  std::ifstream saved(dir.File("cmp.json"));
  const nlohmann::json doc = nlohmann::json::parse(saved);
  EXPECT_FALSE(doc.at("summary").at("causes").empty());
}

TEST(FaultbenchCli, CompareWritesSummaryAndPlot) {
  TempDir dir;
  Result r = Faultbench("compare --directory=" + dir.path() + " --size=8M --rw=randwrite --repeat=2 --output-format=json --plot=" +
                     dir.File("cmp.svg"),
                 dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc.at("runs").size(), 4u);
  // Alternating order: pte, pmd, then pmd, pte.
  EXPECT_EQ(doc["runs"][0]["mode"], "pte");
  EXPECT_EQ(doc["runs"][2]["mode"], "pmd");
  EXPECT_TRUE(doc.at("summary").contains("pmd_over_pte"));
  EXPECT_TRUE(doc.at("summary").at("verdict").is_string());
  EXPECT_TRUE(doc.at("taint").is_array());
  // Where the runs were, and on what: /var/tmp is a page-cache file system.
  const std::string location = doc.at("location");
  EXPECT_EQ(location.rfind(dir.path() + " (", 0), 0u) << location;
  EXPECT_NE(location.find(", page cache)"), std::string::npos) << location;
  std::ifstream svg(dir.File("cmp.svg"));
  std::string first;
  std::getline(svg, first);
  EXPECT_EQ(first.rfind("<svg", 0), 0u);
}

TEST(FaultbenchCli, CompareRepeatAutoSaysWhetherItDecidedAndWarmsUpUnmeasured) {
  TempDir dir;
  const std::string jobs = JobsDir(dir);
  Result r = Faultbench("compare --directory=" + jobs + " --size=8M --rw=randwrite --repeat=auto --repeat-budget=5s" +
                            " --output-format=json --plot=" + dir.File("cmp.svg"),
                        dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  const int rounds = doc.at("rounds");
  EXPECT_GE(rounds, 3);
  EXPECT_EQ(doc.at("runs").size(), static_cast<size_t>(2 * rounds)) << "the warm-up is not one of the runs";
  const std::string note = doc.at("repeat_note");
  EXPECT_TRUE(note.rfind("--repeat=auto: decided after", 0) == 0 || note.rfind("--repeat=auto: not decided", 0) == 0)
      << note;
  EXPECT_FALSE(doc.at("groups")[0].at("evidence").get<std::string>().empty());
  // Each variant has files of its own, so each run frees memory of its own kind.
  for (const auto& run : doc.at("runs")) {
    const std::string file = run.at("result").at("jobs")[0].at("faultbench").at("file");
    EXPECT_NE(file.find("-" + run.at("mode").get<std::string>() + "-mmap.0.0"), std::string::npos) << file;
  }
  for (const auto& entry : std::filesystem::directory_iterator(jobs)) {
    EXPECT_EQ(entry.path().filename().string().find("warmup"), std::string::npos) << entry.path();
  }
  // The plot draws every repeat as a dot.
  std::ifstream svg(dir.File("cmp.svg"));
  const std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  size_t dots = 0;
  for (size_t at = text.find("class=\"repeat\""); at != std::string::npos; at = text.find("class=\"repeat\"", at + 1)) {
    ++dots;
  }
  EXPECT_EQ(dots, static_cast<size_t>(2 * rounds));
}

TEST(FaultbenchCli, CompareRejectsABadRepeatOrBudget) {
  TempDir dir;
  ExpectOneLineUsageError(Faultbench("compare --directory=" + dir.path() + " --size=8M --repeat=often", dir),
                          "--repeat: 'often' is not a count >= 1 or auto");
  ExpectOneLineUsageError(Faultbench("compare --directory=" + dir.path() + " --size=8M --repeat=auto --repeat-budget=soon", dir),
                          "--repeat-budget: 'soon' is not a duration");
}

std::string FioSet(const std::string& set) { return std::string(FIO_DATA_DIR) + "/" + set; }

TEST(FaultbenchCli, DiffExitStatusIsGitBisectRuns) {
  TempDir dir;
  // 0: the same job twice; 1: a regression the workload under test explains; 125: not comparable.
  Result same = Faultbench("diff --base=" + FioSet("psync-4k-rate") + " --new=" + FioSet("psync-4k-rate-again"), dir);
  EXPECT_EQ(same.status, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("no regression: no significant difference in"), std::string::npos) << same.out;
  Result worse = Faultbench("diff --base=" + FioSet("psync-4k") + " --new=" + FioSet("psync-64k") + " --under-test=workload", dir);
  EXPECT_EQ(worse.status, 1) << worse.out << worse.err;
  EXPECT_NE(worse.out.find("REGRESSION: "), std::string::npos) << worse.out;
  Result apart = Faultbench("diff --base=" + FioSet("psync-4k") + " --new=" + FioSet("psync-64k"), dir);
  EXPECT_EQ(apart.status, 125) << apart.out << apart.err;
  EXPECT_NE(apart.out.find("not comparable because job t [psync]: bs: 4k (base) vs 64k (new)"), std::string::npos);
}

TEST(FaultbenchCli, DiffUsageErrorsAreTwoAndWithBisect125) {
  TempDir dir;
  ExpectOneLineUsageError(Faultbench("diff --base=" + FioSet("psync-4k") + " --new=" + dir.File("none"), dir),
                          "no such file or directory");
  ExpectOneLineUsageError(Faultbench("diff --base=" + FioSet("psync-4k"), dir), "--new=PATH");
  ExpectOneLineUsageError(Faultbench("diff --base=a --new=b --under-test=compiler", dir), "--under-test");
  // git bisect run takes 2 as "bad": --bisect makes every error "cannot test" (125).
  EXPECT_EQ(Faultbench("diff --bisect --base=" + FioSet("psync-4k") + " --new=" + dir.File("none"), dir).status, 125);
  EXPECT_EQ(Faultbench("diff --bisect --no-such-flag", dir).status, 125);
  EXPECT_EQ(Faultbench("diff --bisect --base=" + FioSet("psync-4k-rate") + " --new=" + FioSet("psync-4k-rate-again"), dir)
                .status,
            0);
}

TEST(FaultbenchCli, DiffWritesJsonAndAChartWithEveryRun) {
  TempDir dir;
  Result r = Faultbench("diff --base=" + FioSet("libaio-qd1") + " --new=" + FioSet("libaio-qd8") +
                            " --under-test=workload --output-format=json --plot=" + dir.File("diff.svg"),
                        dir);
  EXPECT_EQ(r.status, 1) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc.at("under_test"), "workload");
  EXPECT_EQ(doc.at("jobs")[0].at("variant"), "libaio");
  std::ifstream svg(dir.File("diff.svg"));
  const std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.rfind("<svg", 0), 0u);
  size_t circles = 0;
  for (size_t at = text.find("<circle"); at != std::string::npos; at = text.find("<circle", at + 1)) ++circles;
  EXPECT_GE(circles, 6u * 5) << "a dot for each of 3 + 3 runs of every figure shown";
}

TEST(FaultbenchCli, DiffReadsFaultbenchsOwnRunsAndCompares) {
  TempDir dir;
  const std::string jobs = JobsDir(dir);
  const std::string base = dir.File("base"), next = dir.File("new");
  std::filesystem::create_directory(base);
  std::filesystem::create_directory(next);
  ASSERT_EQ(Faultbench("compare --name=j --directory=" + jobs + " --size=8M --rw=randwrite --repeat=3 --nowarmup --unlink" +
                           " --save-json=" + base + "/compare.json",
                       dir)
                .status,
            0);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(Faultbench("run --name=j --directory=" + jobs + " --size=8M --rw=randwrite --mapping=pmd --fresh-file --unlink" +
                             " --output-format=json --output=" + next + "/run" + std::to_string(i) + ".json",
                         dir)
                  .status,
              0);
  }
  Result r = Faultbench("diff --base=" + base + " --new=" + next + " --output-format=json", dir);
  ASSERT_NE(r.status, 2) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  // The compare's pmd runs meet the plain runs of pmd/mmap; its pte runs have no partner.
  ASSERT_EQ(doc.at("jobs").size(), 1u) << r.out;
  EXPECT_EQ(doc["jobs"][0]["variant"], "pmd/mmap");
  EXPECT_EQ(doc["unmatched"][0], "job 'j' [pte/mmap] only in base");
  bool has_signature = false;
  for (const auto& f : doc["jobs"][0]["figures"]) has_signature = has_signature || f["figure"] == "vmstat.pgfault";
  EXPECT_TRUE(has_signature);
  EXPECT_TRUE(doc["base"]["taint"].is_array()) << "faultbench records its taint";
}

// group_reporting's entry is a result diff compares like a job's: the same
// job file three times a side, two stonewall stages (a group of three
// workers, then one job); the run's signature counts both stages.
TEST(FaultbenchCli, DiffMatchesGroupReportingEntries) {
  TempDir dir;
  const std::string jobs = JobsDir(dir);
  {
    std::ofstream job(dir.File("groups.fio"));
    job << "[global]\ndirectory=" << jobs << "\nsize=4M\nrw=randwrite\nmapping=pmd\nunlink=1\n"
        << "[grouped]\nnumjobs=3\ngroup_reporting\n[single]\nstonewall\n";
  }
  for (const char* side : {"base", "new"}) {
    std::filesystem::create_directory(dir.File(side));
    for (int i = 0; i < 3; ++i) {
      const std::string out = dir.File(side) + "/run" + std::to_string(i) + ".json";
      Result r = Faultbench("run --output-format=json --output=" + out + " " + dir.File("groups.fio"), dir);
      ASSERT_EQ(r.status, 0) << r.err;
      std::ifstream in(out);
      const nlohmann::json doc = nlohmann::json::parse(in);
      ASSERT_EQ(doc.at("jobs").size(), 2u) << "one group entry, one job entry";
      EXPECT_EQ(doc["jobs"][0]["faultbench"]["members"], 3);
      double own_faults = 0;
      for (const auto& entry : doc["jobs"]) own_faults += entry["minf"].get<double>() + entry["majf"].get<double>();
      // Machine-wide, so never below the workers' own faults in both stages.
      EXPECT_GE(doc["signature"]["vmstat"]["pgfault"].get<double>(), own_faults) << doc["signature"];
      EXPECT_GE(doc["signature"]["faults"].get<double>(), own_faults);
    }
  }
  Result r = Faultbench("diff --base=" + dir.File("base") + " --new=" + dir.File("new") + " --output-format=json", dir);
  ASSERT_NE(r.status, 2) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_TRUE(doc["unmatched"].empty()) << doc["unmatched"];
  std::map<std::string, std::set<std::string>> figures;  // "job [variant]" -> figure names
  for (const auto& job : doc.at("jobs")) {
    auto& names = figures[job["job"].get<std::string>() + " [" + job["variant"].get<std::string>() + "]"];
    for (const auto& f : job["figures"]) names.insert(f["figure"].get<std::string>());
  }
  ASSERT_TRUE(figures.count("grouped [pmd/mmap]")) << r.out;
  EXPECT_TRUE(figures["grouped [pmd/mmap]"].count("write.iops")) << r.out;
  EXPECT_TRUE(figures["grouped [pmd/mmap]"].count("faults_per_mib")) << "the group's range is its members' ranges";
  EXPECT_TRUE(figures.count("single [pmd/mmap]")) << r.out;
  EXPECT_TRUE(figures["all jobs [run]"].count("vmstat.pgfault")) << "the run's signature, a job of its own";
}

// fsdax and the page cache never map 1 GiB: a pud run is refused before
// anything is made, and a compare whose only mode is pud has nothing to run.
TEST(FaultbenchCli, PudWhereNothingMaps1GiBIsAOneLineError) {
  TempDir dir;
  const std::string jobs = JobsDir(dir);
  ExpectOneLineUsageError(Faultbench("run --directory=" + jobs + " --size=4M --mapping=pud", dir),
                          "--mapping=pud asks for 1 GiB entries");
  EXPECT_TRUE(std::filesystem::is_empty(jobs));
  ExpectOneLineUsageError(Faultbench("compare --directory=" + jobs + " --size=4M --modes=pud --repeat=1", dir),
                          "only hugetlbfs with pagesize=1G and device DAX with align=1G");
  ExpectOneLineUsageError(Faultbench("run --directory=" + jobs + " --size=4M --mapping=pgd", dir),
                          "use pte, pmd, pud, auto or a folio size");
}

// --anon's mistakes are one line each, before anything is mapped.
TEST(FaultbenchCli, AnonymousMemoryRefusesWhatItCannotBe) {
  TempDir dir;
  ExpectOneLineUsageError(Faultbench("run --anon --size=4M --filename=" + dir.File("f"), dir),
                          "--anon maps anonymous memory, not a file");
  ExpectOneLineUsageError(Faultbench("run --anon", dir), "--anon needs --size");
  ExpectOneLineUsageError(Faultbench("run --anon --size=4M --mapping=pud", dir),
                          "anonymous memory has no 1 GiB transparent huge pages");
  ExpectOneLineUsageError(Faultbench("run --anon=both --size=4M", dir), "use private");
  ExpectOneLineUsageError(Faultbench("run --anon --size=4M --engine=pmem2", dir), "need a file");
  ExpectOneLineUsageError(Faultbench("run --anon --size=4M --mapping=48K", dir), "a power of two from 8K to 1M");
  ExpectOneLineUsageError(Faultbench("compare --anon --size=4M --variants=pte --modes=pmd", dir),
                          "--modes is the older name of --variants");
}

// Without root a run that needs THP knobs set says which, and how to set them.
TEST(FaultbenchCli, AnonymousFolioSizeWithoutRootNamesTheKnobsToSet) {
  if (geteuid() != 0) GTEST_SKIP() << "runs the binary as nobody from root";
  if (access("/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled", F_OK) != 0) {
    GTEST_SKIP() << "this kernel has no 64K THP knob";
  }
  const Result nobody =
      RunCommand("setpriv --reuid=65534 --regid=65534 --clear-groups " + std::string(FAULTBENCH_BINARY) +
                 " run --anon --size=4M --rw=randwrite --mapping=64K");
  if (nobody.err.find("hugepages-64kB/enabled") == std::string::npos && nobody.status == 0) {
    GTEST_SKIP() << "the knobs are already as the run needs them: nothing to set";
  }
  ExpectOneLineUsageError(nobody, "run as root, or set them yourself: echo ");
  EXPECT_NE(nobody.err.find("echo madvise > /sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled"),
            std::string::npos) << nobody.err;
}

// Every node pair of this machine (one node here): the matrix, its
// placement, and the heatmap.
TEST(FaultbenchCli, NumaMatrixRunsEveryNodePairWithItsPlacement) {
  TempDir dir;
  const std::string jobs = JobsDir(dir);
  Result r = Faultbench("compare --directory=" + jobs + " --size=4M --rw=randwrite --modes=pmd --repeat=1 --numa-matrix "
                        "--unlink --output-format=json --plot=" + dir.File("matrix.svg"),
                        dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json matrix = nlohmann::json::parse(r.out).at("numa_matrix");
  const size_t cpu_nodes = matrix.at("cpu_nodes").size(), mem_nodes = matrix.at("mem_nodes").size();
  ASSERT_GE(cpu_nodes, 1u);
  const nlohmann::json& cells = matrix.at("matrices").at(0).at("cells");
  ASSERT_EQ(cells.size(), cpu_nodes * mem_nodes);
  for (const nlohmann::json& cell : cells) {
    EXPECT_TRUE(cell.at("exact").get<bool>()) << cell;
    EXPECT_EQ(cell.at("page_nodes").at(std::to_string(cell.at("mem_node").get<int>())), 1024) << cell;
  }
  EXPECT_TRUE(matrix.at("matrices").at(0).at("all_exact").get<bool>());
  EXPECT_TRUE(matrix.at("dax_device").is_null()) << "/var/tmp is page cache";
  std::ifstream svg(dir.File("matrix.svg"));
  std::stringstream text;
  text << svg.rdbuf();
  EXPECT_EQ(text.str().rfind("<svg", 0), 0u);
  EXPECT_NE(text.str().find("pmd/mmap: placement exact in every cell"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_empty(jobs));

  ExpectOneLineUsageError(Faultbench("compare --directory=" + jobs + " --size=4M --numa-matrix --membind=0", dir),
                          "--numa-matrix sets --cpunodebind and --membind for each cell");
  ExpectOneLineUsageError(
      Faultbench("compare --directory=" + jobs + " --size=4M --numa-matrix --numa-sets='membind=0'", dir),
      "--numa-matrix and --numa-sets");
}

// The matrix's cells are compare's variants: the same warm-up, per-variant
// files and --repeat=auto. With one mode no cell has a pte/pmd pair to
// judge, so auto stops at the 3 rounds a spread needs.
TEST(FaultbenchCli, NumaMatrixCellsRepeatAndWarmUpAsCompareVariantsDo) {
  TempDir dir;
  const std::string jobs = JobsDir(dir);
  Result r = Faultbench("compare --directory=" + jobs + " --size=4M --rw=randwrite --modes=pmd --repeat=auto --numa-matrix "
                        "--output-format=json --plot=" + dir.File("matrix.svg"),
                        dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  const size_t cells = doc.at("numa_matrix").at("matrices").at(0).at("cells").size();
  ASSERT_GE(cells, 1u);
  EXPECT_EQ(doc.at("rounds"), 3);
  EXPECT_EQ(doc.at("runs").size(), 3 * cells) << "the warm-up is not one of the runs";
  EXPECT_EQ(doc.at("repeat_note").get<std::string>().rfind("--repeat=auto: no pte/pmd pair to judge", 0), 0u)
      << doc.at("repeat_note");
  for (const auto& run : doc.at("runs")) {
    const std::string file = run.at("result").at("jobs")[0].at("faultbench").at("file");
    std::string cell = run.at("numa").get<std::string>();  // "cpu0/mem0" -> "cpu0-mem0"
    cell[cell.find('/')] = '-';
    EXPECT_NE(file.find("-pmd-mmap-" + cell + ".0.0"), std::string::npos) << file;
  }
  std::ifstream svg(dir.File("matrix.svg"));
  std::stringstream text;
  text << svg.rdbuf();
  EXPECT_NE(text.str().find("3 repeat(s) (--repeat=auto)"), std::string::npos) << "the heatmap's title counts the rounds run";
}

}  // namespace
