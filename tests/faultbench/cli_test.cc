// The faultbench binary as users call it: exit status, one-line errors,
// parsable output, job files, compare's summary and plot.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nlohmann/json.hpp"
#include "support/temp_dir.h"
#include "support/tmpfs_mount.h"

namespace {

struct Result {
  int status = -1;
  std::string out;
  std::string err;
};

// Runs the binary with `args` (a shell word list), capturing both streams.
Result Faultbench(const std::string& args, const TempDir& scratch) {
  const std::string err_path = scratch.File("stderr.txt");
  const std::string command = std::string(FAULTBENCH_BINARY) + " " + args + " 2>" + err_path;
  Result r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> chunk;
  size_t n;
  while ((n = fread(chunk.data(), 1, chunk.size(), pipe)) > 0) r.out.append(chunk.data(), n);
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  std::ifstream in(err_path);
  std::stringstream err;
  err << in.rdbuf();
  r.err = err.str();
  return r;
}

// A directory of its own for a run's files, apart from the captured stderr.
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
  EXPECT_EQ(relaxed.status, 0) << relaxed.err;
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
                          "use pmd, pte, pud or auto");
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

}  // namespace
