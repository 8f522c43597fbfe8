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
  w.mapping.dax_trace = DaxTraceTally{.pmd_nopage = 4};
  run.workers.push_back(w);
  run.machine.kernel_release = "6.1.0-57-amd64";
  run.machine.emulation = "qemu TCG";
  run.filesystem.fs_type = "xfs";
  run.filesystem.options = "rw,dax=always,sunit=4096,swidth=4096";
  run.signature.vmstat_deltas = {{"pgfault", 70}, {"thp_fault_fallback", 0}};
  run.signature.page_tables_kb = 388;
  run.signature.page_tables_delta_kb = 12;
  SetWorkerParts(run.workers, run.signature);
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

TEST(JsonReport, CarriesTheSignatureAndTheSystem) {
  const nlohmann::json doc = nlohmann::json::parse(RenderRun(FakeRun(), OutputFormat::kJson));
  const auto& sig = doc.at("signature");
  EXPECT_EQ(sig["vmstat"]["pgfault"], 70);
  EXPECT_EQ(sig["page_tables_kb"], 388);
  EXPECT_EQ(sig["page_tables_delta_kb"], 12);
  EXPECT_EQ(sig["dax_trace"]["nopage"], 4);
  EXPECT_EQ(sig["faults"], 4);
  EXPECT_DOUBLE_EQ(sig["faults_per_mib"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(sig["pmd_share"].get<double>(), 1.0);
  const auto& sys = doc.at("system");
  EXPECT_EQ(sys["kernel"], "6.1.0-57-amd64");
  EXPECT_EQ(sys["emulation"], "qemu TCG");
  EXPECT_EQ(sys["filesystem"]["type"], "xfs");
  EXPECT_EQ(sys["filesystem"]["options"], "rw,dax=always,sunit=4096,swidth=4096");
  for (const char* key : {"kernel_config", "kernel_debug_options", "hypervisor", "cpu_model", "online_cpus",
                          "cpu_governor", "thp"}) {
    EXPECT_TRUE(sys.contains(key)) << key;
  }
}

TEST(TextReport, ShowsTheSignature) {
  const std::string text = RenderRun(FakeRun(), OutputFormat::kNormal);
  EXPECT_NE(text.find("faults       : 4 (0.50 per MiB), verified PMD 100.0%, PUD 0.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("vmstat       : pgfault +70 thp_fault_fallback +0"), std::string::npos) << text;
  EXPECT_NE(text.find("PageTables   : 388 kB while mapped (+12 kB over the run)"), std::string::npos) << text;
  EXPECT_NE(text.find("fs_dax       : NOPAGE 4, NEEDDSYNC 0, FALLBACK 0"), std::string::npos) << text;
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

// Three workers of one job with group_reporting, and a fourth job after a
// stonewall without it.
RunResult GroupedRun() {
  RunResult run;
  for (int i = 0; i < 4; ++i) {
    WorkerResult w = FakeRun().workers[0];
    w.job.name = i < 3 ? "writers" : "reader";
    w.job.group_reporting = i < 3;
    w.worker_index = i < 3 ? i : 0;
    w.group_id = i < 3 ? 0 : 1;
    w.total.runtime_s = 0.5 + 0.25 * i;  // 0.5, 0.75, 1.0 s in the group
    w.total.rusage.minor_faults = 10 + i;
    w.total.rusage.user_s = 0.1;
    w.mapping.census.pmd_bytes = 2 << 20;
    w.mapping.census.pte_bytes = 1 << 20;
    run.workers.push_back(w);
  }
  return run;
}

// fio's group_reporting: one entry per group that sums its workers, the
// rate over the longest runtime, and faultbench's list of the workers.
TEST(JsonReport, GroupReportingAggregatesAGroupIntoOneEntry) {
  const nlohmann::json doc = RunToJson(GroupedRun());
  ASSERT_EQ(doc["jobs"].size(), 2u);
  const auto& group = doc["jobs"][0];
  EXPECT_EQ(group["jobname"], "writers");
  EXPECT_EQ(group["groupid"], 0);
  EXPECT_EQ(group["read"]["total_ios"], 3000);
  EXPECT_EQ(group["read"]["io_bytes"], 3000 * 4096);
  EXPECT_EQ(group["read"]["runtime"], 1000) << "the longest member's";
  EXPECT_DOUBLE_EQ(group["read"]["iops"].get<double>(), 3000.0);
  EXPECT_EQ(group["read"]["clat_ns"]["N"], 3000);
  EXPECT_EQ(group["job_runtime"], 2250) << "the members' runtimes added, as fio's job_runtime";
  EXPECT_NEAR(group["usr_cpu"].get<double>(), 0.3 / 2.25 * 100, 1e-6);
  EXPECT_EQ(group["minf"], 10 + 11 + 12);
  const auto& fb = group["faultbench"];
  EXPECT_TRUE(fb["group_reporting"].get<bool>());
  EXPECT_EQ(fb["members"], 3);
  ASSERT_EQ(fb["workers"].size(), 3u);
  EXPECT_EQ(fb["workers"][2]["worker"], 2);
  EXPECT_EQ(fb["workers"][2]["mapping"]["pmd_bytes"], 2 << 20);
  EXPECT_EQ(fb["mapping"]["pmd_bytes"], 3 * (2 << 20));
  EXPECT_EQ(fb["mapping"]["pte_bytes"], 3 * (1 << 20));
  EXPECT_EQ(fb["mapping"]["pud_bytes"], 0) << "no member had a 1 GiB page";
  EXPECT_NEAR(fb["mapping"]["pmd_share"].get<double>(), 2.0 / 3, 1e-9);
  const auto& reader = doc["jobs"][1];
  EXPECT_EQ(reader["jobname"], "reader");
  EXPECT_EQ(reader["groupid"], 1);
  EXPECT_EQ(reader["read"]["total_ios"], 1000);
  EXPECT_FALSE(reader["faultbench"].contains("members"));
}

TEST(JsonReport, WithoutGroupReportingEachWorkerIsAnEntry) {
  RunResult run = GroupedRun();
  for (WorkerResult& w : run.workers) w.job.group_reporting = false;
  const nlohmann::json doc = RunToJson(run);
  ASSERT_EQ(doc["jobs"].size(), 4u);
  EXPECT_EQ(doc["jobs"][2]["jobname"], "writers");
  EXPECT_EQ(doc["jobs"][2]["groupid"], 0);
}

TEST(TextReport, GroupEntryAndRunStatusGroupsAsFioPrintsThem) {
  const std::string text = RenderRun(GroupedRun(), OutputFormat::kNormal);
  EXPECT_NE(text.find("writers: (groupid=0, jobs=3): err= 0"), std::string::npos) << text;
  EXPECT_NE(text.find("reader: (groupid=1, jobs=1): err= 0: worker=0"), std::string::npos) << text;
  EXPECT_NE(text.find("pmd=6.0 MiB (66.7%) pud=0 B pte=3.0 MiB over 3 workers"), std::string::npos) << text;
  EXPECT_NE(text.find("\nRun status group 0 (all jobs):\n   READ: bw="), std::string::npos) << text;
  EXPECT_NE(text.find("run=1000-1000msec"), std::string::npos) << text;
  EXPECT_NE(text.find("\nRun status group 1 (all jobs):\n"), std::string::npos) << text;
}

// percentile_list replaces fio's default list; disable_clat and
// disable_lat leave fio's all-zero latency objects; lat_percentiles adds
// percentiles to lat_ns.
TEST(JsonReport, LatencyOptionsShapeTheLatencyObjects) {
  RunResult run = FakeRun();
  run.workers[0].job.percentile_list = {50, 99.9};
  nlohmann::json read = RunToJson(run)["jobs"][0]["read"];
  ASSERT_EQ(read["clat_ns"]["percentile"].size(), 2u);
  EXPECT_TRUE(read["clat_ns"]["percentile"].contains("99.900000"));
  EXPECT_FALSE(read["lat_ns"].contains("percentile"));

  run.workers[0].job.lat_percentiles = true;
  run.workers[0].job.clat_percentiles = false;
  read = RunToJson(run)["jobs"][0]["read"];
  EXPECT_FALSE(read["clat_ns"].contains("percentile"));
  EXPECT_TRUE(read["lat_ns"]["percentile"].contains("50.000000"));

  run.workers[0].job.disable_clat = true;
  read = RunToJson(run)["jobs"][0]["read"];
  EXPECT_EQ(read["clat_ns"]["N"], 0);
  EXPECT_EQ(read["lat_ns"]["N"], 1000);
  const std::string text = RenderRun(run, OutputFormat::kNormal);
  EXPECT_EQ(text.find("clat (nsec)"), std::string::npos) << text;
  EXPECT_NE(text.find(" lat percentiles (nsec)"), std::string::npos) << text;
}

TEST(JsonReport, FolioSizesByCountWithTheAskedSizeEvenAtZero) {
  RunResult run = FakeRun();
  WorkerResult& w = run.workers[0];
  w.mapping.requested = w.job.mapping = pmstore::mapping::PageIntent::Folio(64 << 10);
  w.mapping.folios = pmstore::mapping::FolioCensus{.folios = {{4096, 12}, {16 << 10, 3}},
                                                   .bytes = {{4096, 12 * 4096}, {16 << 10, 3 * 16384}}};
  const nlohmann::json fb = RunToJson(run)["jobs"][0]["faultbench"];
  EXPECT_EQ(fb["folio_sizes"], (nlohmann::json{{"4K", 12}, {"16K", 3}, {"64K", 0}}));
  EXPECT_EQ(fb["folio_sizes_source"], "pagemap+kpageflags");
  EXPECT_DOUBLE_EQ(fb["folio_share"].get<double>(), 0.0);
  EXPECT_TRUE(fb["mapping"]["differs_from_request"].get<bool>());
  const std::string text = RenderText(run);
  EXPECT_NE(text.find("folios       : 3 x 16K, 12 x 4K (pagemap+kpageflags; 0.0% of the bytes in 64K folios)"),
            std::string::npos) << text;
  w.mapping.folios.reset();
  w.mapping.folios_error = "folio sizes need root";
  const nlohmann::json unread = RunToJson(run)["jobs"][0]["faultbench"];
  EXPECT_TRUE(unread["folio_sizes"].is_null());
  EXPECT_EQ(unread["folio_sizes_source"], "unavailable: folio sizes need root");
}

TEST(OutputFormat, UnknownNameIsAnError) {
  EXPECT_FALSE(ParseOutputFormat("terse").ok());
  EXPECT_TRUE(ParseOutputFormat("json").ok());
}

}  // namespace
}  // namespace faultbench
