// fio's JSON layout (json output of fio 3.x) for the fields both tools
// have, so scripts written for fio's output read faultbench's unchanged.
#include <ctime>

#include "absl/strings/str_format.h"
#include "faultbench/report/report.h"

#ifndef FAULTBENCH_VERSION
#define FAULTBENCH_VERSION "unknown"
#endif

namespace faultbench {
namespace {

using nlohmann::json;

json OptionalCount(const std::optional<uint64_t>& value) { return value ? json(*value) : json(nullptr); }

json LatencyJson(const LatencyHistogram::Summary& s, bool with_percentiles) {
  json out = {{"min", static_cast<uint64_t>(s.min)}, {"max", static_cast<uint64_t>(s.max)},
              {"mean", s.mean},                      {"stddev", s.stddev},
              {"N", s.count}};
  if (with_percentiles) {
    json percentiles = json::object();
    for (const auto& [percent, value] : s.percentiles) {
      percentiles[absl::StrFormat("%.6f", percent)] = static_cast<uint64_t>(value);
    }
    out["percentile"] = percentiles;
  }
  return out;
}

json DirectionJson(const DirectionFigures& f) {
  const json zero_lat = {{"min", 0}, {"max", 0}, {"mean", 0.0}, {"stddev", 0.0}, {"N", 0}};
  return {{"io_bytes", f.bytes},
          {"io_kbytes", f.bytes / 1024},
          {"bw_bytes", static_cast<uint64_t>(f.bw_bytes)},
          {"bw", static_cast<uint64_t>(f.bw_bytes / 1024)},
          {"iops", f.iops},
          {"runtime", static_cast<uint64_t>(f.runtime_s * 1000 + 0.5)},
          {"total_ios", f.ios},
          {"short_ios", 0},
          {"drop_ios", 0},
          // The mapping has no submission step: slat is zero, lat equals clat.
          {"slat_ns", zero_lat},
          {"clat_ns", LatencyJson(f.clat_ns, true)},
          {"lat_ns", LatencyJson(f.clat_ns, false)}};
}

double Percent(double seconds, double runtime_s) { return runtime_s > 0 ? seconds / runtime_s * 100 : 0; }

json TlbJson(const PerfSnapshot& perf) {
  return {{"dtlb_load_misses", OptionalCount(perf.dtlb_load_misses)},
          {"dtlb_store_misses", OptionalCount(perf.dtlb_store_misses)},
          {"page_faults", OptionalCount(perf.page_faults)}};
}

json PageSizeEvidenceJson(const PageSizeEvidence& e) {
  return {{"page_size", e.page_size},          {"backing", e.backing},
          {"presence", e.presence},            {"faults", e.faults},
          {"expected_faults", e.expected_faults}, {"faults_agree", e.FaultsAgree()}};
}

json MappingJson(const WorkerResult& w) {
  const MappingOutcome& m = w.mapping;
  json out = {{"requested", std::string(pmstore::mapping::PageIntentName(m.requested))},
              {"engine", std::string(pmstore::mapping::EngineName(m.engine))},
              {"granularity", m.granularity},
              {"map_sync", m.map_sync},
              {"dax", m.dax}};
  if (m.verified) {
    out["pud_bytes"] = m.census.pud_bytes;
    out["pmd_bytes"] = m.census.pmd_bytes;
    out["pte_bytes"] = m.census.pte_bytes;
    out["pmd_share"] = m.PmdShare();
    out["pud_share"] = m.PudShare();
    out["verify_method"] = std::string(pmstore::mapping::VerifyMethodName(m.census.method));
    if (m.dax_trace) {
      out["dax_trace"] = {{"nopage", m.dax_trace->pmd_nopage},     {"needdsync", m.dax_trace->pmd_needdsync},
                          {"fallback", m.dax_trace->pmd_fallback}, {"other", m.dax_trace->pmd_other},
                          {"pte", m.dax_trace->pte_faults},        {"lost", m.dax_trace->lost_events}};
    }
    if (m.page_size) out["page_size_evidence"] = PageSizeEvidenceJson(*m.page_size);
  } else {
    out["pud_bytes"] = nullptr;
    out["pmd_bytes"] = nullptr;
    out["pte_bytes"] = nullptr;
    out["verify_method"] = "unavailable";
    out["verify_error"] = m.verify_error;
  }
  out["differs_from_request"] = m.DiffersFromRequest();
  if (!w.doctor_reasons.empty()) out["doctor_reasons"] = w.doctor_reasons;
  return out;
}

json NumaJson(const NumaOutcome& numa) {
  json page_nodes = json::object();
  for (const auto& [node, pages] : numa.placement.pages_by_node) {
    page_nodes[node < 0 ? "absent" : std::to_string(node)] = pages;
  }
  return {{"cpus", numa.cpus},
          {"policy", std::string(MemPolicyName(numa.policy))},
          {"nodes", numa.nodes},
          {"page_nodes", page_nodes},
          {"page_nodes_sampled", numa.placement.sampled},
          {"page_nodes_source", numa.placement.source}};
}

json JobOptionsJson(const JobOptions& job) {
  json out = {{"name", job.name},
              {"size", std::to_string(job.size)},
              {"bs", std::to_string(job.bs)},
              {"rw", std::string(RwModeName(job.rw))},
              {"ioengine", job.engine == pmstore::mapping::Engine::kPmem2 ? "libpmem" : "mmap"},
              {"numjobs", std::to_string(job.numjobs)},
              {"mapping", std::string(pmstore::mapping::PageIntentName(job.mapping))}};
  if (!job.filename.empty()) out["filename"] = job.filename;
  if (!job.directory.empty()) out["directory"] = job.directory;
  if (job.rw == RwMode::kRandRw || job.rw == RwMode::kReadWrite) out["rwmixread"] = std::to_string(job.rwmixread);
  if (job.runtime_s > 0) out["runtime"] = absl::StrFormat("%g", job.runtime_s);
  if (job.time_based) out["time_based"] = "1";
  if (job.loops > 1) out["loops"] = std::to_string(job.loops);
  if (job.prefault) out["prefault"] = "1";
  if (job.shared_file) out["shared_file"] = "1";
  return out;
}

}  // namespace

json PhaseJson(const PhaseResult& phase, double ns_per_tick) {
  return {{"name", phase.name},
          {"runtime_ms", phase.runtime_s * 1000},
          {"read", DirectionJson(Figures(phase.read, phase.runtime_s, ns_per_tick))},
          {"write", DirectionJson(Figures(phase.write, phase.runtime_s, ns_per_tick))},
          {"usr_cpu", Percent(phase.rusage.user_s, phase.runtime_s)},
          {"sys_cpu", Percent(phase.rusage.system_s, phase.runtime_s)},
          {"ctx", phase.rusage.context_switches},
          {"majf", phase.rusage.major_faults},
          {"minf", phase.rusage.minor_faults},
          {"bytes_accessed", phase.bytes_accessed},
          {"faults_per_mib", phase.FaultsPerMib()},
          {"tlb", TlbJson(phase.perf)}};
}

json RunToJson(const RunResult& run) {
  const time_t seconds = static_cast<time_t>(run.timestamp_ms / 1000);
  char when[64] = "";
  std::strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", std::localtime(&seconds));
  json jobs = json::array();
  for (const WorkerResult& w : run.workers) {
    const PhaseResult& t = w.total;
    json job = {{"jobname", w.job.name},
                {"groupid", w.job_index},
                {"error", w.error.empty() ? 0 : 1},
                {"job options", JobOptionsJson(w.job)},
                {"read", DirectionJson(Figures(t.read, t.runtime_s, w.ns_per_tick))},
                {"write", DirectionJson(Figures(t.write, t.runtime_s, w.ns_per_tick))},
                {"job_runtime", static_cast<uint64_t>(t.runtime_s * 1000 + 0.5)},
                {"usr_cpu", Percent(t.rusage.user_s, t.runtime_s)},
                {"sys_cpu", Percent(t.rusage.system_s, t.runtime_s)},
                {"ctx", t.rusage.context_switches},
                {"majf", t.rusage.major_faults},
                {"minf", t.rusage.minor_faults}};
    json phases = json::array();
    for (const PhaseResult& phase : w.phases) phases.push_back(PhaseJson(phase, w.ns_per_tick));
    json tlb = TlbJson(t.perf);
    if (!w.perf_unavailable.empty()) tlb["unavailable"] = w.perf_unavailable;
    job["faultbench"] = {{"worker", w.worker_index},
                         {"file", w.file},
                         {"range_bytes", w.range_bytes},
                         {"mapping", MappingJson(w)},
                         {"faults_per_mib", t.FaultsPerMib()},
                         {"numa", NumaJson(w.numa)},
                         {"phases", phases},
                         {"tlb", tlb}};
    if (!w.error.empty()) job["faultbench"]["error"] = w.error;
    jobs.push_back(job);
  }
  return {{"fio version", "faultbench-" FAULTBENCH_VERSION},
          {"timestamp", run.timestamp_ms / 1000},
          {"timestamp_ms", run.timestamp_ms},
          {"time", when},
          {"jobs", jobs},
          {"taint", run.taint}};
}

}  // namespace faultbench
