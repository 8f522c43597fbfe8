// fio's JSON layout (json output of fio 3.33) for the fields both tools
// have, so scripts written for fio's output read faultbench's unchanged:
// one "jobs" entry per worker, or per reporting group with group_reporting,
// with fio's jobname and groupid.
#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "faultbench/report/report.h"
#include "faultbench/report/signature_report.h"

#ifndef FAULTBENCH_VERSION
#define FAULTBENCH_VERSION "unknown"
#endif

namespace faultbench {
namespace {

using nlohmann::json;

json OptionalCount(const std::optional<uint64_t>& value) { return value ? json(*value) : json(nullptr); }

// fio's latency object; `measured` false gives fio's all-zero object of a
// latency it did not collect (disable_clat, disable_lat).
json LatencyJson(const LatencyHistogram::Summary& s, bool measured, bool with_percentiles) {
  if (!measured || s.count == 0) return {{"min", 0}, {"max", 0}, {"mean", 0.0}, {"stddev", 0.0}, {"N", 0}};
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

// A mapping has no submission step: one measurement is both fio's clat and
// its lat, each reported where the job did not disable it, with the
// percentiles the job asked for; slat is always empty.
json DirectionJson(const DirectionFigures& f, const JobOptions& job) {
  return {{"io_bytes", f.bytes},
          {"io_kbytes", f.bytes / 1024},
          {"bw_bytes", static_cast<uint64_t>(f.bw_bytes)},
          {"bw", static_cast<uint64_t>(f.bw_bytes / 1024)},
          {"iops", f.iops},
          {"runtime", static_cast<uint64_t>(f.runtime_s * 1000 + 0.5)},
          {"total_ios", f.ios},
          {"short_ios", 0},
          {"drop_ios", 0},
          {"slat_ns", LatencyJson(f.clat_ns, false, false)},
          {"clat_ns", LatencyJson(f.clat_ns, !job.disable_clat, job.clat_percentiles)},
          {"lat_ns", LatencyJson(f.clat_ns, !job.disable_lat, job.lat_percentiles)}};
}

json Directions(const PhaseResult& phase, double runtime_s, double ns_per_tick, const JobOptions& job) {
  const std::vector<double>& percents = Percentiles(job);
  return {{"read", DirectionJson(Figures(phase.read, runtime_s, ns_per_tick, percents), job)},
          {"write", DirectionJson(Figures(phase.write, runtime_s, ns_per_tick, percents), job)}};
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
              {"memory", m.memory},
              {"engine", std::string(pmstore::mapping::EngineName(m.engine))},
              {"granularity", m.granularity},
              {"writes", m.writes},
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

// The folios behind a worker's range (jobs[].faultbench.folio_sizes) and
// where they came from; null with the reason where they could not be read.
void AddFolios(const MappingOutcome& m, json& out) {
  if (!m.folios) {
    out["folio_sizes"] = nullptr;
    out["folio_sizes_source"] = m.folios_error.empty() ? "not read" : "unavailable: " + m.folios_error;
    return;
  }
  const pmstore::mapping::FolioCensus& f = *m.folios;
  out["folio_sizes"] = FolioSizesJson(f.folios, m.requested);
  out["folio_sizes_source"] = std::string(pmstore::mapping::kFolioCensusSource);
  json bytes = json::object();
  for (const auto& [size, n] : f.bytes) bytes[pmstore::mapping::SizeName(size)] = n;
  out["folio_bytes"] = bytes;
  out["zero_page_bytes"] = f.zero_page_bytes;
  if (m.requested.is_folio()) out["folio_share"] = m.FolioShare();
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

json PageCacheJson(const PageCacheOutcome& p) {
  return {{"invalidate", p.invalidate},
          {"invalidate_source", p.invalidate_source},
          {"action", p.action},
          {"fadvise", p.fadvise},
          {"fadvise_source", p.fadvise_source},
          {"resident_bytes", OptionalCount(p.resident_bytes)}};
}

json JobOptionsJson(const JobOptions& job) {
  json out = {{"name", job.name},
              {"size", job.size_percent > 0 ? absl::StrCat(job.size_percent, "%") : std::to_string(job.size)},
              {"bs", std::to_string(job.bs)},
              {"rw", std::string(RwModeName(job.rw))},
              {"ioengine", std::string(JobEngineName(job.ioengine))},
              {"numjobs", std::to_string(job.numjobs)},
              {"mapping", std::string(pmstore::mapping::PageIntentName(job.mapping))}};
  if (job.anonymous()) out["anon"] = std::string(AnonMemoryName(job.anon));
  if (job.private_mapping) out["private"] = "1";
  if (!job.filename.empty()) out["filename"] = job.filename;
  if (!job.directory.empty()) out["directory"] = job.directory;
  if (job.rw == RwMode::kRandRw || job.rw == RwMode::kReadWrite) out["rwmixread"] = std::to_string(job.rwmixread);
  if (job.runtime_s > 0) out["runtime"] = absl::StrFormat("%g", job.runtime_s);
  if (job.time_based) out["time_based"] = "1";
  if (job.loops > 1) out["loops"] = std::to_string(job.loops);
  if (job.prefault) out["prefault"] = "1";
  if (job.shared_file) out["shared_file"] = "1";
  if (job.filesize > 0) out["filesize"] = std::to_string(job.filesize);
  if (job.fallocate != Fallocate::kNative) out["fallocate"] = std::string(FallocateName(job.fallocate));
  if (job.offset > 0 || job.offset_percent > 0) {
    out["offset"] = job.offset_percent > 0 ? absl::StrCat(job.offset_percent, "%") : std::to_string(job.offset);
  }
  if (job.random_distribution.kind != RandomDistribution::kRandom) {
    const Distribution& d = job.random_distribution;
    out["random_distribution"] = absl::StrFormat("%s:%g", RandomDistributionName(d.kind), d.parameter);
  }
  if (job.stonewall) out["stonewall"] = "1";
  if (job.new_group) out["new_group"] = "1";
  if (job.group_reporting) out["group_reporting"] = "1";
  if (job.norandommap) out["norandommap"] = "1";
  if (!job.cpus_allowed.empty()) out["cpus_allowed"] = job.cpus_allowed;
  if (job.ioengine == JobEngine::kLibpmem) {
    out["direct"] = job.direct ? "1" : "0";
    out["sync"] = job.sync ? "1" : "0";
  }
  return out;
}

// What fio reports for an entry: its I/O by direction, CPU and faults.
json FioFields(const ReportEntry& e, const JobOptions& job) {
  const PhaseResult& t = e.total;
  json out = {{"jobname", e.name}, {"groupid", e.group_id}, {"error", e.errors == 0 ? 0 : 1},
              {"job options", JobOptionsJson(job)}};
  out.update(Directions(t, t.runtime_s, e.ns_per_tick, job));
  out.update(json{{"job_runtime", static_cast<uint64_t>(e.job_runtime_s * 1000 + 0.5)},
                  {"usr_cpu", Percent(t.rusage.user_s, e.job_runtime_s)},
                  {"sys_cpu", Percent(t.rusage.system_s, e.job_runtime_s)},
                  {"ctx", t.rusage.context_switches},
                  {"majf", t.rusage.major_faults},
                  {"minf", t.rusage.minor_faults}});
  return out;
}

// When the worker's measured I/O ran, in ms since the run began.
json IntervalMs(const RunResult& run, const WorkerResult& w) {
  auto ms = [&](uint64_t ns) { return ns >= run.start_ns ? static_cast<double>(ns - run.start_ns) / 1e6 : 0.0; };
  return json::array({ms(w.start_ns), ms(w.end_ns)});
}

json WorkerJson(const RunResult& run, const WorkerResult& w) {
  const PhaseResult& t = w.total;
  json phases = json::array();
  for (const PhaseResult& phase : w.phases) phases.push_back(PhaseJson(phase, w.ns_per_tick, w.job));
  json tlb = TlbJson(t.perf);
  if (!w.perf_unavailable.empty()) tlb["unavailable"] = w.perf_unavailable;
  json out = {{"worker", w.worker_index},
              {"stage", w.stage},
              {"interval_ms", IntervalMs(run, w)},
              {"file", w.file},
              {"range_bytes", w.range_bytes},
              {"seed", w.seed},
              {"mapping", MappingJson(w)},
              {"faults_per_mib", t.FaultsPerMib()},
              {"page_cache", PageCacheJson(w.page_cache)},
              {"numa", NumaJson(w.numa)},
              {"phases", phases},
              {"tlb", tlb},
              {"notes", w.notes}};
  AddFolios(w.mapping, out);
  if (!w.error.empty()) out["error"] = w.error;
  return out;
}

// group_reporting: the sums, and every worker of the group with its own
// file, mapping and placement.
json GroupJson(const RunResult& run, const ReportEntry& e) {
  const WorkerResult& first = run.workers[e.members.front()];
  json workers = json::array();
  for (size_t i : e.members) {
    const WorkerResult& w = run.workers[i];
    json member = {{"job", w.job.name},          {"worker", w.worker_index},
                   {"stage", w.stage},           {"interval_ms", IntervalMs(run, w)},
                   {"file", w.file},
                   {"range_bytes", w.range_bytes}, {"mapping", MappingJson(w)},
                   {"faults_per_mib", w.total.FaultsPerMib()}, {"numa", NumaJson(w.numa)}};
    if (!w.error.empty()) member["error"] = w.error;
    workers.push_back(member);
  }
  json out = {{"group_reporting", true},
              {"members", e.members.size()},
              {"mapping", {{"pmd_bytes", e.mapping.pmd_bytes},
                           {"pud_bytes", e.mapping.pud_bytes},
                           {"pte_bytes", e.mapping.pte_bytes},
                           {"pmd_share", e.mapping.PmdShare()},
                           {"unverified_workers", e.mapping.unverified}}},
              {"folio_sizes", e.mapping.folios.empty() ? json(nullptr)
                                                       : FolioSizesJson(e.mapping.folios, first.mapping.requested)},
              {"faults_per_mib", e.total.FaultsPerMib()},
              {"page_cache", PageCacheJson(first.page_cache)},
              {"tlb", TlbJson(e.total.perf)},
              {"notes", first.notes},
              {"workers", workers}};
  if (e.errors > 0) out["error"] = e.first_error;
  return out;
}

}  // namespace

json PhaseJson(const PhaseResult& phase, double ns_per_tick, const JobOptions& job) {
  json out = {{"name", phase.name}, {"runtime_ms", phase.runtime_s * 1000}};
  out.update(Directions(phase, phase.runtime_s, ns_per_tick, job));
  out.update(json{{"usr_cpu", Percent(phase.rusage.user_s, phase.runtime_s)},
                  {"sys_cpu", Percent(phase.rusage.system_s, phase.runtime_s)},
                  {"ctx", phase.rusage.context_switches},
                  {"majf", phase.rusage.major_faults},
                  {"minf", phase.rusage.minor_faults},
                  {"bytes_accessed", phase.bytes_accessed},
                  {"faults_per_mib", phase.FaultsPerMib()},
                  {"tlb", TlbJson(phase.perf)}});
  return out;
}

json RunToJson(const RunResult& run) {
  const time_t seconds = static_cast<time_t>(run.timestamp_ms / 1000);
  char when[64] = "";
  std::strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", std::localtime(&seconds));
  json jobs = json::array();
  for (const ReportEntry& e : ReportEntries(run)) {
    const WorkerResult& first = run.workers[e.members.front()];
    json job = FioFields(e, first.job);
    job["faultbench"] = e.aggregated ? GroupJson(run, e) : WorkerJson(run, first);
    jobs.push_back(job);
  }
  json knobs = json::array();
  for (const ThpKnobChange& k : run.thp_knobs) knobs.push_back({{"knob", k.path}, {"value", k.value}, {"was", k.was}});
  return {{"fio version", "faultbench-" FAULTBENCH_VERSION},
          {"timestamp", run.timestamp_ms / 1000},
          {"timestamp_ms", run.timestamp_ms},
          {"time", when},
          {"jobs", jobs},
          {"signature", SignatureJson(run.signature)},
          {"system", SystemJson(run)},
          {"thp_knobs_set", knobs},
          {"taint", run.taint}};
}

}  // namespace faultbench
