#include "faultbench/report/report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace faultbench {
namespace {

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

double P(const DirectionFigures& f, size_t i) {
  return i < f.clat_ns.percentiles.size() ? f.clat_ns.percentiles[i].second : 0.0;
}

// The CSV's columns are p50 and p99, whatever the job's percentile_list.
const std::vector<double> kCsvPercentiles = {50, 99};

}  // namespace

absl::StatusOr<OutputFormat> ParseOutputFormat(std::string_view name) {
  if (name == "normal") return OutputFormat::kNormal;
  if (name == "json") return OutputFormat::kJson;
  if (name == "csv") return OutputFormat::kCsv;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown --output-format '", std::string(name), "': use normal, json or csv"));
}

const std::vector<double>& Percentiles(const JobOptions& job) {
  return job.percentile_list.empty() ? FioPercentiles() : job.percentile_list;
}

DirectionFigures Figures(const DirectionStats& stats, double runtime_s, double ns_per_tick,
                         const std::vector<double>& percents) {
  DirectionFigures f;
  f.ios = stats.ios;
  f.bytes = stats.bytes;
  f.runtime_s = runtime_s;
  if (runtime_s > 0) {
    f.iops = static_cast<double>(stats.ios) / runtime_s;
    f.bw_bytes = static_cast<double>(stats.bytes) / runtime_s;
  }
  f.clat_ns = stats.latency.Summarize(ns_per_tick, percents);
  return f;
}

std::string RenderCsv(const RunResult& run) {
  std::string out =
      "jobname,worker,file,rw,bs,mapping,engine,read_iops,read_bw_kib,read_p50_ns,read_p99_ns,write_iops,"
      "write_bw_kib,write_p50_ns,write_p99_ns,runtime_ms,usr_cpu,sys_cpu,ctx,majf,minf,faults_per_mib,"
      "pmd_bytes,pte_bytes,verify_method,error,pud_bytes\n";
  for (const WorkerResult& w : run.workers) {
    const PhaseResult& t = w.total;
    const DirectionFigures r = Figures(t.read, t.runtime_s, w.ns_per_tick, kCsvPercentiles);
    const DirectionFigures wr = Figures(t.write, t.runtime_s, w.ns_per_tick, kCsvPercentiles);
    const double run_s = t.runtime_s > 0 ? t.runtime_s : 1;
    absl::StrAppendFormat(
        &out, "%s,%d,%s,%s,%d,%s,%s,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.2f,%.2f,%d,%d,%d,%.4f,%s,%s,%s,%s,%s\n",
        CsvField(w.job.name), w.worker_index, CsvField(w.file), RwModeName(w.job.rw), w.job.bs,
        pmstore::mapping::PageIntentName(w.job.mapping), JobEngineName(w.job.ioengine), r.iops,
        r.bw_bytes / 1024, P(r, 0), P(r, 1), wr.iops, wr.bw_bytes / 1024, P(wr, 0), P(wr, 1), t.runtime_s * 1000,
        t.rusage.user_s / run_s * 100, t.rusage.system_s / run_s * 100, t.rusage.context_switches,
        t.rusage.major_faults, t.rusage.minor_faults, t.FaultsPerMib(),
        w.mapping.verified ? absl::StrCat(w.mapping.census.pmd_bytes) : "",
        w.mapping.verified ? absl::StrCat(w.mapping.census.pte_bytes) : "",
        w.mapping.verified ? std::string(pmstore::mapping::VerifyMethodName(w.mapping.census.method)) : "unavailable",
        CsvField(w.error), w.mapping.verified ? absl::StrCat(w.mapping.census.pud_bytes) : "");
  }
  return out;
}

nlohmann::json FolioSizesJson(const std::map<uint64_t, uint64_t>& folios, pmstore::mapping::PageIntent requested) {
  std::map<uint64_t, uint64_t> shown = folios;
  const uint64_t asked = pmstore::mapping::IntentPageSize(requested);
  if (requested.is_folio() || requested == pmstore::mapping::PageIntent::kPmd) shown.try_emplace(asked, 0);
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [size, count] : shown) out[pmstore::mapping::SizeName(size)] = count;
  return out;
}

std::string FolioSizesText(const std::map<uint64_t, uint64_t>& folios) {
  std::vector<std::string> parts;
  for (auto it = folios.rbegin(); it != folios.rend(); ++it) {
    parts.push_back(absl::StrCat(it->second, " x ", pmstore::mapping::SizeName(it->first)));
  }
  return parts.empty() ? "none" : absl::StrJoin(parts, ", ");
}

std::string RenderRun(const RunResult& run, OutputFormat format) {
  switch (format) {
    case OutputFormat::kNormal: return RenderText(run);
    case OutputFormat::kJson: return RunToJson(run).dump(2) + "\n";
    case OutputFormat::kCsv: return RenderCsv(run);
  }
  return RenderText(run);
}

}  // namespace faultbench
