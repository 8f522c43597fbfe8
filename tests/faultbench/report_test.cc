#include "faultbench/report/report.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace faultbench {
namespace {

RunResult FakeRun() {
  RunResult run;
  run.timestamp_ms = 1700000000000;
  run.taint = {"hypervisor: KVM"};
  WorkerResult w;
  w.job.name = "randrw";
  w.job.directory = "/mnt/t";
  w.job.size = 8 << 20;
  w.job.rw = RwMode::kRandRw;
  w.job.mapping = pmstore::mapping::PageIntent::kPmd;
  w.file = "/mnt/t/randrw.0.0";
  w.ns_per_tick = 0.5;
  w.total.runtime_s = 0.5;
  for (uint64_t i = 1; i <= 1000; ++i) w.total.read.latency.Record(i * 2);  // 1..1000 ns
  w.total.read.ios = 1000;
  w.total.read.bytes = 1000 * 4096;
  w.total.rusage.minor_faults = 4;
  w.total.bytes_accessed = 8 << 20;
  w.mapping.requested = pmstore::mapping::PageIntent::kPmd;
  w.mapping.verified = true;
  w.mapping.census.pmd_bytes = 8 << 20;
  w.mapping.granularity = "page";
  w.numa.placement.pages_by_node[0] = 2048;
  w.numa.placement.sampled = 1024;
  run.workers.push_back(w);
  return run;
}

TEST(JsonReport, CarriesFioFieldsAndTheFaultbenchObject) {
  const nlohmann::json doc = nlohmann::json::parse(RenderRun(FakeRun(), OutputFormat::kJson));
  ASSERT_TRUE(doc.contains("fio version"));
  const auto& job = doc["jobs"][0];
  EXPECT_EQ(job["jobname"], "randrw");
  for (const char* key : {"usr_cpu", "sys_cpu", "ctx", "majf", "minf"}) EXPECT_TRUE(job.contains(key)) << key;
  const auto& read = job["read"];
  for (const char* key : {"io_bytes", "bw", "bw_bytes", "iops", "runtime", "total_ios", "clat_ns", "lat_ns"}) {
    EXPECT_TRUE(read.contains(key)) << key;
  }
  EXPECT_EQ(read["total_ios"], 1000);
  EXPECT_EQ(read["runtime"], 500);
  EXPECT_DOUBLE_EQ(read["iops"].get<double>(), 2000.0);
  EXPECT_EQ(read["bw"], 1000 * 4096 / 1024 * 2);  // KiB/s over 0.5 s
  const auto& clat = read["clat_ns"];
  EXPECT_EQ(clat["N"], 1000);
  EXPECT_EQ(clat["min"], 1);
  EXPECT_EQ(clat["max"], 1000);
  EXPECT_NEAR(clat["percentile"]["50.000000"].get<double>(), 500, 500.0 / 128);
  EXPECT_TRUE(clat["percentile"].contains("99.990000"));
  const auto& fb = job["faultbench"];
  EXPECT_EQ(fb["mapping"]["requested"], "pmd");
  EXPECT_EQ(fb["mapping"]["pmd_bytes"], 8 << 20);
  EXPECT_DOUBLE_EQ(fb["faults_per_mib"].get<double>(), 0.5);
  EXPECT_EQ(fb["numa"]["policy"], "default");
  EXPECT_EQ(fb["numa"]["page_nodes"]["0"], 2048);
  EXPECT_TRUE(fb["tlb"]["dtlb_load_misses"].is_null());  // never a made-up number
  EXPECT_EQ(doc["taint"][0], "hypervisor: KVM");
}

TEST(CsvReport, HeaderAndRowsHaveTheSameColumns) {
  const std::string csv = RenderRun(FakeRun(), OutputFormat::kCsv);
  const size_t newline = csv.find('\n');
  const std::string header = csv.substr(0, newline);
  const std::string row = csv.substr(newline + 1, csv.find('\n', newline + 1) - newline - 1);
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), std::count(row.begin(), row.end(), ','));
  EXPECT_EQ(row.rfind("randrw,0,", 0), 0u);
}

TEST(TextReport, ShowsFioLinesAndTheVerifiedMapping) {
  const std::string text = RenderRun(FakeRun(), OutputFormat::kNormal);
  EXPECT_NE(text.find("read: IOPS=2000"), std::string::npos) << text;
  EXPECT_NE(text.find("clat percentiles (nsec)"), std::string::npos);
  EXPECT_NE(text.find("pmd=8.0 MiB (100.0%)"), std::string::npos) << text;
  EXPECT_NE(text.find("hypervisor: KVM"), std::string::npos);
}

// A hugetlbfs 1 GiB run: the census is the page size's, and says why.
RunResult PudRun() {
  RunResult run = FakeRun();
  WorkerResult& w = run.workers[0];
  w.mapping.requested = pmstore::mapping::PageIntent::kPud;
  w.mapping.census = pmstore::mapping::CensusAtPageSize(8 << 20, 1 << 30);
  w.mapping.page_size = PageSizeEvidence{.page_size = 1 << 30, .backing = "hugetlbfs /mnt/h (pagesize 1.0 GiB)",
                                         .presence = "pagemap_scan", .faults = 1, .expected_faults = 1};
  return run;
}

TEST(JsonReport, PudBytesAndThePageSizeEvidence) {
  const nlohmann::json doc = nlohmann::json::parse(RenderRun(PudRun(), OutputFormat::kJson));
  const auto& m = doc["jobs"][0]["faultbench"]["mapping"];
  EXPECT_EQ(m["pud_bytes"], 8 << 20);
  EXPECT_EQ(m["pmd_bytes"], 0);
  EXPECT_DOUBLE_EQ(m["pud_share"].get<double>(), 1.0);
  EXPECT_EQ(m["verify_method"], "page_size");
  EXPECT_EQ(m["differs_from_request"], false);
  EXPECT_EQ(m["page_size_evidence"]["page_size"], 1 << 30);
  EXPECT_EQ(m["page_size_evidence"]["presence"], "pagemap_scan");
  EXPECT_EQ(m["page_size_evidence"]["faults_agree"], true);
  // pud_bytes is there for every verified run, zero where no 1 GiB entry was.
  EXPECT_EQ(nlohmann::json::parse(RenderRun(FakeRun(), OutputFormat::kJson))["jobs"][0]["faultbench"]["mapping"]["pud_bytes"], 0);
}

TEST(TextReport, PudAndTheEvidenceLine) {
  const std::string text = RenderRun(PudRun(), OutputFormat::kNormal);
  EXPECT_NE(text.find("verified     : pud=8.0 MiB (100.0%) pmd=0 B (0.0%) pte=0 B [page_size]"), std::string::npos) << text;
  EXPECT_NE(text.find("evidence     : hugetlbfs /mnt/h (pagesize 1.0 GiB) maps only 1.0 GiB pages; present bytes "
                      "from pagemap_scan; 1 fault(s) for 1 page(s)\n"),
            std::string::npos)
      << text;
  RunResult too_many = PudRun();
  too_many.workers[0].mapping.page_size->faults = 600;  // NUMA hinting faults, say
  EXPECT_NE(RenderRun(too_many, OutputFormat::kNormal).find("more than the page size explains"), std::string::npos);
}

TEST(CsvReport, PudBytesIsTheLastColumn) {
  const std::string csv = RenderRun(PudRun(), OutputFormat::kCsv);
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_TRUE(header.ends_with(",pud_bytes")) << header;
  EXPECT_NE(csv.find(",8388608\n"), std::string::npos) << csv;
}

TEST(MappingOutcomeTest, APudRequestDiffersUnlessPudMapped) {
  MappingOutcome m;
  m.verified = true;
  m.requested = pmstore::mapping::PageIntent::kPud;
  m.census.pmd_bytes = 8 << 20;
  EXPECT_TRUE(m.DiffersFromRequest()) << "2 MiB entries are not what a pud run asked for";
  m.census = pmstore::mapping::CensusAtPageSize(8 << 20, 1 << 30);
  EXPECT_FALSE(m.DiffersFromRequest());
  m.requested = pmstore::mapping::PageIntent::kPmd;
  EXPECT_TRUE(m.DiffersFromRequest()) << "PmdShare counts PUD bytes as present, not as PMD";
  m.requested = pmstore::mapping::PageIntent::kPte;
  EXPECT_TRUE(m.DiffersFromRequest());
}

TEST(OutputFormat, UnknownNameIsAnError) {
  EXPECT_FALSE(ParseOutputFormat("terse").ok());
  EXPECT_TRUE(ParseOutputFormat("json").ok());
}

}  // namespace
}  // namespace faultbench
