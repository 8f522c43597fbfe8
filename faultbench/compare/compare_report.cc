#include "faultbench/compare/compare_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "faultbench/plot/svg_plot.h"
#include "pmstore/base/units.h"

namespace faultbench {
namespace {

using nlohmann::json;

bool JudgedOnTimings(const Verdict& v) { return v.judged_on == "timings"; }

json GroupJson(const GroupVerdict& g) {
  const bool ratio = g.verdict.available && JudgedOnTimings(g.verdict);
  return {{"group", g.group},
          {"pmd_over_pte", ratio ? json(g.verdict.pmd_over_pte) : json(nullptr)},
          {"verdict", g.verdict.text},
          {"called", g.verdict.called},
          {"judged_on", g.verdict.judged_on},
          {"evidence", g.verdict.evidence},
          {"causes", g.verdict.causes}};
}

std::string Repeats(const CompareConfig& config, const CompareOutcome& outcome) {
  return absl::StrFormat("%d repeat(s)%s", outcome.rounds, config.repeat_auto ? " (--repeat=auto)" : "");
}

// "PMD/PTE (mmap): 2.50 -> PMD faster x2.50", as the text and the plot show it.
std::string VerdictLine(const GroupVerdict& g) {
  const bool ratio = g.verdict.available && JudgedOnTimings(g.verdict);
  return absl::StrFormat("PMD/PTE (%s): %s%s", g.group, ratio ? absl::StrFormat("%.2f -> ", g.verdict.pmd_over_pte) : "",
                         g.verdict.text);
}

// A PUD column only where 1 GiB entries are in play (hugetlbfs 1G, device DAX align=1G).
bool AnyPud(const CompareOutcome& outcome) {
  for (const VariantSummary& v : outcome.variants) {
    if (v.mode == pmstore::mapping::PageIntent::kPud || v.pud_share.max > 0) return true;
  }
  return false;
}

}  // namespace

json SpreadJson(const Spread& s) { return {{"median", s.median}, {"min", s.min}, {"max", s.max}}; }

std::string Workload(const CompareConfig& config) {
  return absl::StrFormat("%s bs=%d size=%s numjobs=%d", RwModeName(config.job.rw), config.job.bs,
                         pmstore::base::FormatBytes(config.job.size), config.job.numjobs);
}

std::string WorkloadAndRepeats(const CompareConfig& config, const CompareOutcome& outcome) {
  return absl::StrCat(Workload(config), ", ", Repeats(config, outcome));
}

std::string CompareText(const CompareConfig& config, const CompareOutcome& outcome) {
  std::string out = absl::StrFormat("faultbench compare: %s, %s files\nin %s\n\n", WorkloadAndRepeats(config, outcome),
                                    config.reuse_file ? "reused" : "fresh", outcome.location);
  const bool pud = AnyPud(outcome);
  absl::StrAppendFormat(&out, "%-22s %22s %10s %10s %10s %11s %7s%s\n", "variant", "IOPS median [min-max]",
                        "MiB/s", "p50 ns", "p99 ns", "faults/MiB", "PMD %", pud ? "   PUD %" : "");
  for (const VariantSummary& v : outcome.variants) {
    absl::StrAppendFormat(&out, "%-22s %8.0f [%5.0fk-%5.0fk] %10.1f %10.0f %10.0f %11.3f %6.1f%%%s\n", v.label,
                          v.iops.median, v.iops.min / 1e3, v.iops.max / 1e3, v.bw_bytes.median / (1 << 20),
                          v.p50_ns.median, v.p99_ns.median, v.faults_per_mib.median, v.pmd_share.median * 100,
                          pud ? absl::StrFormat(" %6.1f%%", v.pud_share.median * 100) : "");
  }
  for (const std::string& line : outcome.skipped) absl::StrAppend(&out, "not run: ", line, "\n");
  absl::StrAppend(&out, "\n");
  if (!outcome.emulation.empty()) {
    absl::StrAppend(&out, "Under emulation (", outcome.emulation,
                    "): timings are shown but not judged; the verdict is the signature's (faults per MiB, PMD "
                    "share).\n");
  }
  for (const GroupVerdict& g : outcome.groups) {
    absl::StrAppend(&out, VerdictLine(g), "\n");
    if (!g.verdict.evidence.empty()) absl::StrAppend(&out, "  evidence: ", g.verdict.evidence, "\n");
    for (const auto& cause : g.verdict.causes) absl::StrAppend(&out, "  cause: ", cause, "\n");
  }
  if (!outcome.repeat_note.empty()) absl::StrAppend(&out, outcome.repeat_note, "\n");
  if (!outcome.taint.empty()) {
    absl::StrAppend(&out, "\nTaint (numbers may not compare with a clean bare-metal run):\n");
    for (const auto& line : outcome.taint) absl::StrAppend(&out, "  - ", line, "\n");
  }
  return out;
}

json CompareJson(const CompareOutcome& outcome) {
  json variants = json::array();
  for (const VariantSummary& v : outcome.variants) {
    variants.push_back({{"variant", v.label},
                        {"mode", std::string(pmstore::mapping::PageIntentName(v.mode))},
                        {"engine", std::string(pmstore::mapping::EngineName(v.engine))},
                        {"numa", v.numa_label},
                        {"iops", SpreadJson(v.iops)},
                        {"bw_bytes", SpreadJson(v.bw_bytes)},
                        {"clat_p50_ns", SpreadJson(v.p50_ns)},
                        {"clat_p99_ns", SpreadJson(v.p99_ns)},
                        {"faults_per_mib", SpreadJson(v.faults_per_mib)},
                        {"pmd_share", SpreadJson(v.pmd_share)},
                        {"pud_share", SpreadJson(v.pud_share)}});
  }
  json groups = json::array();
  for (const GroupVerdict& g : outcome.groups) groups.push_back(GroupJson(g));
  json summary = outcome.groups.empty()
                     ? json{{"pmd_over_pte", nullptr}, {"verdict", "no verdict: needs both pte and pmd runs"}}
                     : GroupJson(outcome.groups.front());
  return {{"location", outcome.location},
          {"emulation", outcome.emulation},
          {"rounds", outcome.rounds},
          {"repeat_note", outcome.repeat_note},
          {"runs", outcome.runs},
          {"variants", variants},
          {"skipped", outcome.skipped},
          {"groups", groups},
          {"taint", outcome.taint},
          {"summary", summary}};
}

std::string ComparePlotSvg(const CompareConfig& config, const CompareOutcome& outcome) {
  BarChart chart;
  chart.title = "faultbench compare: " + WorkloadAndRepeats(config, outcome);
  chart.subtitles.push_back("in " + outcome.location);
  for (const GroupVerdict& g : outcome.groups) chart.subtitles.push_back(VerdictLine(g));
  chart.unit = "IOPS";
  for (const VariantSummary& v : outcome.variants) {
    // The PMD (for pud, the PUD) share says whether a bar is what its label claims.
    const bool pud = v.mode == pmstore::mapping::PageIntent::kPud;
    chart.bars.push_back({v.label,
                          absl::StrFormat("%s %.1f%%", pud ? "PUD" : "PMD", (pud ? v.pud_share : v.pmd_share).median * 100),
                          v.iops.median, v.iops.min, v.iops.max, v.iops.sorted});
  }
  return RenderBarChartSvg(chart);
}

}  // namespace faultbench
