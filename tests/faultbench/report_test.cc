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

TEST(OutputFormat, UnknownNameIsAnError) {
  EXPECT_FALSE(ParseOutputFormat("terse").ok());
  EXPECT_TRUE(ParseOutputFormat("json").ok());
}

}  // namespace
}  // namespace faultbench
