// The human summary: fio's layout for what fio prints (an entry per worker
// or per reporting group, then the "Run status group" lines), with
// faultbench's own lines (mapping, page cache, numa, phases, tlb, notes)
// in each entry, and the taint list.
#include <unistd.h>

#include <algorithm>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "faultbench/report/report.h"
#include "faultbench/report/signature_report.h"
#include "pmstore/base/units.h"

namespace faultbench {
namespace {

using pmstore::base::FormatBytes;

// fio's compact numbers: 447k, 1234, 1.2M.
std::string Compact(double value) {
  if (value >= 1e9) return absl::StrFormat("%.1fG", value / 1e9);
  if (value >= 1e6) return absl::StrFormat("%.1fM", value / 1e6);
  if (value >= 1e4) return absl::StrFormat("%.0fk", value / 1e3);
  return absl::StrFormat("%.0f", value);
}

std::string Bandwidth(double bytes_per_s) {
  if (bytes_per_s >= 1024.0 * 1024 * 1024 * 10) return absl::StrFormat("%.1fGiB/s", bytes_per_s / (1 << 30));
  if (bytes_per_s >= 1024.0 * 1024) return absl::StrFormat("%.0fMiB/s", bytes_per_s / (1 << 20));
  return absl::StrFormat("%.0fKiB/s", bytes_per_s / 1024);
}

std::string CpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    absl::StrAppend(&out, out.empty() ? "" : ",", cpus[i]);
    if (j > i) absl::StrAppend(&out, "-", cpus[j]);
    i = j + 1;
  }
  return out.empty() ? "-" : out;
}

void AppendPercentiles(std::string& out, const char* kind, const LatencyHistogram::Summary& c) {
  absl::StrAppend(&out, "     ", kind, " percentiles (nsec):\n");
  for (size_t i = 0; i < c.percentiles.size(); ++i) {
    if (i % 4 == 0) absl::StrAppend(&out, "     |");
    absl::StrAppendFormat(&out, " %6.2fth=[%7.0f]%s", c.percentiles[i].first, c.percentiles[i].second,
                          i + 1 == c.percentiles.size() ? "\n" : (i % 4 == 3 ? ",\n" : ","));
  }
}

// What a page_size census rests on, in one line.
void AppendPageSizeEvidence(std::string& out, const PageSizeEvidence& e) {
  absl::StrAppendFormat(&out, "  evidence     : %s maps only %s pages; present bytes from %s; %d fault(s) for %d page(s)%s\n",
                        e.backing, FormatBytes(e.page_size), e.presence, e.faults, e.expected_faults,
                        e.FaultsAgree() ? "" : " (more than the page size explains: faults elsewhere in the process?)");
}

// fio's lines of one direction; the latency lines only for what the job
// measured (disable_clat, disable_lat) and asked percentiles of.
void AppendDirection(std::string& out, const char* name, const DirectionFigures& f, const JobOptions& job) {
  if (f.ios == 0) return;
  absl::StrAppendFormat(&out, "  %s: IOPS=%s, BW=%s (%.0fMB/s)(%s/%.0fmsec)\n", name, Compact(f.iops),
                        Bandwidth(f.bw_bytes), f.bw_bytes / 1e6, FormatBytes(f.bytes), f.runtime_s * 1000);
  const auto& c = f.clat_ns;
  if (c.count == 0) return;
  for (const auto& [kind, shown] : {std::pair{"clat", !job.disable_clat}, std::pair{" lat", !job.disable_lat}}) {
    if (!shown) continue;
    absl::StrAppendFormat(&out, "    %s (nsec): min=%.0f, max=%.0f, avg=%.2f, stdev=%.2f\n", kind, c.min, c.max,
                          c.mean, c.stddev);
  }
  if (!job.disable_clat && job.clat_percentiles) AppendPercentiles(out, "clat", c);
  if (!job.disable_lat && job.lat_percentiles) AppendPercentiles(out, " lat", c);
}

void AppendDirections(std::string& out, const PhaseResult& t, double ns_per_tick, const JobOptions& job) {
  const std::vector<double>& percents = Percentiles(job);
  AppendDirection(out, " read", Figures(t.read, t.runtime_s, ns_per_tick, percents), job);
  AppendDirection(out, "write", Figures(t.write, t.runtime_s, ns_per_tick, percents), job);
}

void AppendCpu(std::string& out, const PhaseResult& t, double runtime_s) {
  const double run = runtime_s > 0 ? runtime_s : 1;
  absl::StrAppendFormat(&out, "  cpu          : usr=%.2f%%, sys=%.2f%%, ctx=%d, majf=%d, minf=%d\n",
                        t.rusage.user_s / run * 100, t.rusage.system_s / run * 100, t.rusage.context_switches,
                        t.rusage.major_faults, t.rusage.minor_faults);
}

void AppendPageCacheAndNotes(std::string& out, const WorkerResult& w) {
  const PageCacheOutcome& p = w.page_cache;
  if (!p.action.empty()) {
    absl::StrAppendFormat(&out, "  page cache   : invalidate=%d (%s): %s; fadvise=%s (%s)%s\n", p.invalidate ? 1 : 0,
                          p.invalidate_source, p.action, p.fadvise, p.fadvise_source,
                          p.resident_bytes ? absl::StrCat("; ", FormatBytes(*p.resident_bytes), " of ",
                                                          FormatBytes(w.range_bytes), " cached at the first I/O")
                                           : "");
  }
  for (const std::string& note : w.notes) absl::StrAppend(&out, "  note         : ", note, "\n");
}

std::string Optional(const std::optional<uint64_t>& v) { return v ? absl::StrCat(*v) : "unavailable"; }

// "folios       : 4090 x 64K, 12 x 4K (pagemap+kpageflags; 99.7% of the bytes in 64K folios)".
void AppendFolios(std::string& out, const MappingOutcome& m) {
  if (!m.folios) {
    if (!m.folios_error.empty()) absl::StrAppend(&out, "  folios       : unavailable (", m.folios_error, ")\n");
    return;
  }
  std::string detail(pmstore::mapping::kFolioCensusSource);
  if (m.requested.is_folio()) {
    absl::StrAppendFormat(&detail, "; %.1f%% of the bytes in %s folios", m.FolioShare() * 100,
                          pmstore::mapping::PageIntentName(m.requested));
  }
  if (m.folios->zero_page_bytes > 0) {
    absl::StrAppend(&detail, "; ", FormatBytes(m.folios->zero_page_bytes), " read from the zero page");
  }
  absl::StrAppend(&out, "  folios       : ", FolioSizesText(m.folios->folios), " (", detail, ")\n");
}

void AppendWorker(std::string& out, const WorkerResult& w) {
  const PhaseResult& t = w.total;
  absl::StrAppendFormat(&out, "%s: (groupid=%d, jobs=1): err=%2d: worker=%d: %s\n", w.job.name, w.group_id,
                        w.error.empty() ? 0 : 1, w.worker_index,
                        w.job.anonymous() ? "memory=" + w.job.MemoryName() : "file=" + w.file);
  if (!w.error.empty()) {
    absl::StrAppend(&out, "  error        : ", w.error, "\n");
    return;
  }
  AppendDirections(out, t, w.ns_per_tick, w.job);
  AppendCpu(out, t, t.runtime_s);
  const MappingOutcome& m = w.mapping;
  absl::StrAppendFormat(&out, "  mapping      : requested=%s memory=%s engine=%s granularity=%s map_sync=%s dax=%s writes=%s\n",
                        pmstore::mapping::PageIntentName(m.requested), m.memory, pmstore::mapping::EngineName(m.engine),
                        m.granularity, m.map_sync ? "yes" : "no", m.dax ? "yes" : "no", m.writes);
  if (m.verified) {
    absl::StrAppendFormat(&out, "  verified     : %spmd=%s (%.1f%%) pte=%s [%s], %.2f faults/MiB\n",
                          m.census.pud_bytes > 0 || m.page_size
                              ? absl::StrFormat("pud=%s (%.1f%%) ", FormatBytes(m.census.pud_bytes), m.PudShare() * 100)
                              : "",
                          FormatBytes(m.census.pmd_bytes), m.PmdShare() * 100, FormatBytes(m.census.pte_bytes),
                          pmstore::mapping::VerifyMethodName(m.census.method), t.FaultsPerMib());
    if (m.page_size) AppendPageSizeEvidence(out, *m.page_size);
  } else {
    absl::StrAppendFormat(&out, "  verified     : unavailable (%s), %.2f faults/MiB\n", m.verify_error,
                          t.FaultsPerMib());
  }
  AppendFolios(out, m);
  std::string nodes;
  for (const auto& [node, pages] : w.numa.placement.pages_by_node) {
    absl::StrAppend(&nodes, nodes.empty() ? "" : " ", node < 0 ? std::string("absent") : absl::StrCat(node), "=",
                    pages);
  }
  absl::StrAppendFormat(&out, "  numa         : cpus=%s policy=%s%s pages by node: %s (%d sampled, %s)\n",
                        CpuList(w.numa.cpus), MemPolicyName(w.numa.policy),
                        w.numa.nodes.empty() ? "" : absl::StrCat(":", absl::StrJoin(w.numa.nodes, ",")),
                        nodes.empty() ? "-" : nodes, w.numa.placement.sampled, w.numa.placement.source);
  AppendPageCacheAndNotes(out, w);
  for (const PhaseResult& p : w.phases) {
    const DirectionFigures r = Figures(p.read, p.runtime_s, w.ns_per_tick, {99});
    const DirectionFigures wr = Figures(p.write, p.runtime_s, w.ns_per_tick, {99});
    absl::StrAppendFormat(&out,
                          "  phase %-7s: %.3fs, read IOPS=%s p99=%.0fns, write IOPS=%s p99=%.0fns, minf=%d, "
                          "%.2f faults/MiB\n",
                          p.name, p.runtime_s, Compact(r.iops),
                          r.clat_ns.percentiles[0].second, Compact(wr.iops), wr.clat_ns.percentiles[0].second,
                          p.rusage.minor_faults, p.FaultsPerMib());
  }
  absl::StrAppendFormat(&out, "  tlb          : dTLB-load-misses=%s dTLB-store-misses=%s page-faults=%s\n",
                        Optional(t.perf.dtlb_load_misses), Optional(t.perf.dtlb_store_misses),
                        Optional(t.perf.page_faults));
  if (m.DiffersFromRequest() && m.requested.is_folio()) {
    absl::StrAppendFormat(&out, "  WARNING      : asked for %s folios but %.1f%% of the bytes are in them, %.1f%% PMD-mapped\n",
                          pmstore::mapping::PageIntentName(m.requested), m.FolioShare() * 100, m.PmdShare() * 100);
    for (const auto& reason : w.doctor_reasons) absl::StrAppend(&out, "                 why: ", reason, "\n");
  } else if (m.DiffersFromRequest()) {
    absl::StrAppendFormat(&out, "  WARNING      : asked for %s mappings but the kernel mapped %.1f%% with PMD\n",
                          pmstore::mapping::PageIntentName(m.requested), m.PmdShare() * 100);
    for (const auto& reason : w.doctor_reasons) absl::StrAppend(&out, "                 doctor: ", reason, "\n");
  }
}

// group_reporting: fio's lines for the group's sums, then what faultbench
// adds up over its workers.
void AppendGroup(std::string& out, const RunResult& run, const ReportEntry& e) {
  const WorkerResult& first = run.workers[e.members.front()];
  std::vector<std::string> files;
  for (size_t i : e.members) {
    if (std::find(files.begin(), files.end(), run.workers[i].file) == files.end()) files.push_back(run.workers[i].file);
  }
  absl::StrAppendFormat(&out, "%s: (groupid=%d, jobs=%d): err=%2d: files=%s\n", e.name, e.group_id, e.members.size(),
                        e.errors == 0 ? 0 : 1,
                        files.size() <= 2 ? absl::StrJoin(files, ",") : absl::StrCat(files.front(), " and ",
                                                                                     files.size() - 1, " more"));
  if (e.errors > 0) absl::StrAppend(&out, "  error        : ", e.errors, " of ", e.members.size(), " workers, first: ",
                                    e.first_error, "\n");
  AppendDirections(out, e.total, e.ns_per_tick, first.job);
  AppendCpu(out, e.total, e.job_runtime_s);
  const MappingOutcome& requested = first.mapping;
  absl::StrAppendFormat(&out, "  mapping      : requested=%s engine=%s granularity=%s map_sync=%s dax=%s writes=%s\n",
                        pmstore::mapping::PageIntentName(requested.requested),
                        pmstore::mapping::EngineName(requested.engine), requested.granularity,
                        requested.map_sync ? "yes" : "no", requested.dax ? "yes" : "no", requested.writes);
  const MappingTotals& m = e.mapping;
  absl::StrAppendFormat(&out, "  verified     : pmd=%s (%.1f%%) pud=%s pte=%s over %d worker%s%s, %.2f faults/MiB\n",
                        FormatBytes(m.pmd_bytes), m.PmdShare() * 100, FormatBytes(m.pud_bytes),
                        FormatBytes(m.pte_bytes), e.members.size(), e.members.size() == 1 ? "" : "s",
                        m.unverified > 0 ? absl::StrCat(" (", m.unverified, " unverified)") : "",
                        e.total.FaultsPerMib());
  if (!m.folios.empty()) absl::StrAppend(&out, "  folios       : ", FolioSizesText(m.folios), "\n");
  AppendPageCacheAndNotes(out, first);
  absl::StrAppendFormat(&out, "  tlb          : dTLB-load-misses=%s dTLB-store-misses=%s page-faults=%s\n",
                        Optional(e.total.perf.dtlb_load_misses), Optional(e.total.perf.dtlb_store_misses),
                        Optional(e.total.perf.page_faults));
}

// fio's "Run status group N (all jobs)" block.
void AppendRunStatus(std::string& out, const GroupRunStatus& g) {
  absl::StrAppendFormat(&out, "\nRun status group %d (all jobs):\n", g.group_id);
  for (const auto& [name, d] : {std::pair{"READ", &g.read}, std::pair{"WRITE", &g.write}}) {
    if (d->bytes == 0) continue;
    absl::StrAppendFormat(&out,
                          "  %5s: bw=%s (%.0fMB/s), %s-%s (%.0fMB/s-%.0fMB/s), io=%s (%.0fMB), run=%.0f-%.0fmsec\n",
                          name, Bandwidth(d->aggregate_bw), d->aggregate_bw / 1e6, Bandwidth(d->min_bw),
                          Bandwidth(d->max_bw), d->min_bw / 1e6, d->max_bw / 1e6, FormatBytes(d->bytes),
                          static_cast<double>(d->bytes) / 1e6, d->min_runtime_s * 1000, d->max_runtime_s * 1000);
  }
}

}  // namespace

std::string RenderText(const RunResult& run) {
  std::string out;
  const std::vector<ReportEntry> entries = ReportEntries(run);
  for (const ReportEntry& e : entries) {
    if (e.aggregated) {
      AppendGroup(out, run, e);
    } else {
      AppendWorker(out, run.workers[e.members.front()]);
    }
  }
  for (const GroupRunStatus& g : RunStatusGroups(entries)) AppendRunStatus(out, g);
  absl::StrAppend(&out, SignatureText(run.signature));
  for (const ThpKnobChange& k : run.thp_knobs) {
    absl::StrAppend(&out, "THP knob set for the run: ", k.path, " = ", k.value, " (was ", k.was, ", put back)\n");
  }
  if (!run.taint.empty()) {
    absl::StrAppend(&out, "\nTaint (numbers may not compare with a clean bare-metal run):\n");
    for (const auto& line : run.taint) absl::StrAppend(&out, "  - ", line, "\n");
  }
  return out;
}

}  // namespace faultbench
