#include "faultbench/report/compare_report.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "faultbench/plot/svg_plot.h"
#include "faultbench/report/report.h"
#include "pmstore/base/units.h"

namespace faultbench {
namespace {

using nlohmann::json;
using pmstore::mapping::PageIntent;
using pmstore::mapping::PageIntentName;

std::string Lower(PageIntent intent) { return std::string(PageIntentName(intent)); }
std::string Upper(PageIntent intent) { return absl::AsciiStrToUpper(Lower(intent)); }

// "pmd 0.50 faults/MiB, 100.0% PMD; pte 256.00 faults/MiB": the figures a
// signature verdict rests on.
std::string SignatureFigures(const Verdict& v) {
  return absl::StrFormat("%s %.2f faults/MiB, %.1f%% %s; %s %.2f faults/MiB", Lower(v.variant),
                         v.variant_faults_per_mib, v.variant_share * 100, Upper(v.variant), Lower(v.base),
                         v.base_faults_per_mib);
}

std::string TooFewRuns(const Verdict& v) {
  return absl::StrFormat("nothing called: %d %s and %d %s repeats, 3 a mode are needed to know the spread",
                         v.base_runs, Lower(v.base), v.variant_runs, Lower(v.variant));
}

// The ratio goes into the JSON only where timings were judged.
json Ratio(const Verdict& v) { return v.available() && v.judged_on_timings() ? json(v.ratio) : json(nullptr); }

json GroupJson(const GroupVerdict& g) {
  const Verdict& v = g.verdict;
  const bool pmd_pte = v.base == PageIntent::kPte && v.variant == PageIntent::kPmd;
  return {{"group", g.group},
          {"base", Lower(v.base)},
          {"variant", Lower(v.variant)},
          {"ratio", Ratio(v)},
          {"pmd_over_pte", pmd_pte ? Ratio(v) : json(nullptr)},
          {"verdict", VerdictText(g.verdict)},
          {"called", g.verdict.called()},
          {"judged_on", JudgedOn(g.verdict)},
          {"evidence", VerdictEvidence(g.verdict)},
          {"causes", g.verdict.causes}};
}

std::string Repeats(const CompareOutcome& outcome) {
  return absl::StrFormat("%d repeat(s)%s", outcome.repeats.rounds, outcome.repeats.is_auto ? " (--repeat=auto)" : "");
}

// "PMD/PTE (mmap): 2.50 -> PMD faster x2.50", as the text and the plot show it.
std::string VerdictLine(const GroupVerdict& g) {
  const Verdict& v = g.verdict;
  const bool ratio = v.available() && v.judged_on_timings();
  return absl::StrFormat("%s/%s (%s): %s%s", Upper(v.variant), Upper(v.base), g.group,
                         ratio ? absl::StrFormat("%.2f -> ", v.ratio) : "", VerdictText(v));
}

// A PUD column only where 1 GiB entries are in play (hugetlbfs 1G, device DAX align=1G).
bool AnyPud(const CompareOutcome& outcome) {
  for (const VariantSummary& v : outcome.variants) {
    if (v.mode == PageIntent::kPud || v.pud_share.max > 0) return true;
  }
  return false;
}

// A folio column only where a variant asked for a folio size.
bool AnyFolio(const CompareOutcome& outcome) {
  return std::any_of(outcome.variants.begin(), outcome.variants.end(),
                     [](const VariantSummary& v) { return v.mode.is_folio(); });
}

std::string Workload(const JobOptions& job) {
  return absl::StrFormat("%s bs=%d size=%s numjobs=%d", RwModeName(job.rw), job.bs,
                         pmstore::base::FormatBytes(job.size), job.numjobs);
}

}  // namespace

std::string JudgedOn(const Verdict& v) {
  return v.judged_on_timings() ? "timings" : absl::StrCat("signature (emulation: ", v.emulation, ")");
}

std::string VerdictEvidence(const Verdict& v) {
  if (!v.available()) return "";
  return absl::StrCat(v.judged_on_timings() ? "IOPS " : "faults/MiB ", Lower(v.base), " vs ", Lower(v.variant), ": ",
                      v.change.Evidence());
}

std::string VerdictText(const Verdict& v) {
  const std::string base = Upper(v.base), variant = Upper(v.variant);
  std::string text;
  switch (v.kind) {
    case VerdictKind::kNoPair:
      return absl::StrCat("no verdict: needs both ", Lower(v.base), " and ", Lower(v.variant), " runs");
    case VerdictKind::kTooFewRuns:
      text = v.judged_on_timings() ? TooFewRuns(v) : absl::StrCat(TooFewRuns(v), " (", SignatureFigures(v), ")");
      break;
    case VerdictKind::kFaster: text = absl::StrFormat("%s faster x%.2f", variant, v.ratio); break;
    case VerdictKind::kSlower:
      text = absl::StrFormat("REGRESSION: %s slower than %s x%.2f", variant, base, 1 / v.ratio);
      break;
    case VerdictKind::kNoDifference: text = "no significant difference"; break;
    case VerdictKind::kMappedAsAsked:
      return absl::StrFormat("%s mapped as asked, x%.1f fewer faults per MiB than %s (%s)", variant, v.faults_factor,
                             base, SignatureFigures(v));
    case VerdictKind::kNotMapped:
      return absl::StrFormat("REGRESSION: %s not mapped: the %s runs were %.1f%% %s-mapped (%s)", variant,
                             Lower(v.variant), v.variant_share * 100, variant, SignatureFigures(v));
    case VerdictKind::kMoreFaults:
      return absl::StrFormat("REGRESSION: the %s runs took more faults per MiB than the %s runs (%s)",
                             Lower(v.variant), Lower(v.base), SignatureFigures(v));
    case VerdictKind::kSameFaults:
      return absl::StrCat("no significant difference in faults per MiB (", SignatureFigures(v), ")");
  }
  // On timings a variant that was not mapped at its size did not measure that size.
  if (v.judged_on_timings() && v.variant_share < 0.95) {
    absl::StrAppendFormat(&text, " (but the %s runs were %.1f%% %s-mapped: not a %s result)", Lower(v.variant),
                          v.variant_share * 100, variant, variant);
  }
  return text;
}

std::string RepeatNote(const CompareOutcome& outcome) {
  const RepeatOutcome& r = outcome.repeats;
  if (!r.is_auto) return "";
  const bool any_pair = std::any_of(outcome.groups.begin(), outcome.groups.end(),
                                    [](const GroupVerdict& g) { return g.verdict.available(); });
  if (!any_pair) {
    return absl::StrFormat("--repeat=auto: no pte/pmd pair to judge, so the %d rounds a spread needs", r.rounds);
  }
  if (r.decided) return absl::StrFormat("--repeat=auto: decided after %d rounds (%.1f s)", r.rounds, r.elapsed_s);
  std::string evidence;
  for (const GroupVerdict& g : outcome.groups) {
    if (!g.verdict.available() || g.verdict.called()) continue;
    absl::StrAppend(&evidence, evidence.empty() ? "" : "; ", g.group, ": ", VerdictEvidence(g.verdict));
  }
  return absl::StrFormat(
      "--repeat=auto: not decided %s (%d rounds, %.1f s of --repeat-budget=%.0fs): %s; a longer budget or a "
      "quieter machine (see the taint) may decide it",
      r.most_rounds ? "in the most rounds auto runs" : "within the budget", r.rounds, r.elapsed_s, r.budget_s,
      evidence);
}

json SpreadJson(const Spread& s) { return {{"median", s.median}, {"min", s.min}, {"max", s.max}}; }

std::string WorkloadAndRepeats(const CompareOutcome& outcome) {
  return absl::StrCat(Workload(outcome.workload), ", ", Repeats(outcome));
}

std::string CompareText(const CompareOutcome& outcome) {
  std::string out = absl::StrFormat(
      "faultbench compare: %s, %s\nin %s\n\n", WorkloadAndRepeats(outcome),
      outcome.workload.anonymous() ? "fresh memory" : outcome.reuse_file ? "reused files" : "fresh files",
      outcome.location);
  const bool pud = AnyPud(outcome);
  const bool folio = AnyFolio(outcome);
  absl::StrAppendFormat(&out, "%-22s %22s %10s %10s %10s %11s %7s%s%s\n", "variant", "IOPS median [min-max]",
                        "MiB/s", "p50 ns", "p99 ns", "faults/MiB", "PMD %", pud ? "   PUD %" : "",
                        folio ? " folio %" : "");
  for (const VariantSummary& v : outcome.variants) {
    absl::StrAppendFormat(&out, "%-22s %8.0f [%5.0fk-%5.0fk] %10.1f %10.0f %10.0f %11.3f %6.1f%%%s%s\n", v.label,
                          v.iops.median, v.iops.min / 1e3, v.iops.max / 1e3, v.bw_bytes.median / (1 << 20),
                          v.p50_ns.median, v.p99_ns.median, v.faults_per_mib.median, v.pmd_share.median * 100,
                          pud ? absl::StrFormat(" %6.1f%%", v.pud_share.median * 100) : "",
                          folio ? (v.mode.is_folio() ? absl::StrFormat(" %6.1f%%", v.folio_share.median * 100)
                                                     : std::string("       -"))
                                : "");
  }
  if (folio) absl::StrAppend(&out, "(folio %: of the bytes, those in folios of the size the variant asked for)\n");
  for (const std::string& line : outcome.skipped) absl::StrAppend(&out, "not run: ", line, "\n");
  absl::StrAppend(&out, "\n");
  if (!outcome.emulation.empty()) {
    absl::StrAppend(&out, "Under emulation (", outcome.emulation,
                    "): timings are shown but not judged; the verdict is the signature's (faults per MiB, PMD "
                    "share).\n");
  }
  for (const GroupVerdict& g : outcome.groups) {
    absl::StrAppend(&out, VerdictLine(g), "\n");
    if (const std::string evidence = VerdictEvidence(g.verdict); !evidence.empty()) {
      absl::StrAppend(&out, "  evidence: ", evidence, "\n");
    }
    for (const auto& cause : g.verdict.causes) absl::StrAppend(&out, "  cause: ", cause, "\n");
  }
  if (const std::string note = RepeatNote(outcome); !note.empty()) absl::StrAppend(&out, note, "\n");
  if (!outcome.taint.empty()) {
    absl::StrAppend(&out, "\nTaint (numbers may not compare with a clean bare-metal run):\n");
    for (const auto& line : outcome.taint) absl::StrAppend(&out, "  - ", line, "\n");
  }
  return out;
}

json CompareJson(const CompareOutcome& outcome) {
  json runs = json::array();
  for (const CompareRun& run : outcome.runs) {
    runs.push_back({{"variant", run.variant},
                    {"mode", Lower(run.mode)},
                    {"engine", std::string(pmstore::mapping::EngineName(run.engine))},
                    {"numa", run.numa},
                    {"repeat", run.repeat},
                    {"result", RunToJson(run.result)}});
  }
  json variants = json::array();
  for (const VariantSummary& v : outcome.variants) {
    variants.push_back({{"variant", v.label},
                        {"mode", Lower(v.mode)},
                        {"engine", std::string(pmstore::mapping::EngineName(v.engine))},
                        {"numa", v.numa_label},
                        {"iops", SpreadJson(v.iops)},
                        {"bw_bytes", SpreadJson(v.bw_bytes)},
                        {"clat_p50_ns", SpreadJson(v.p50_ns)},
                        {"clat_p99_ns", SpreadJson(v.p99_ns)},
                        {"faults_per_mib", SpreadJson(v.faults_per_mib)},
                        {"pmd_share", SpreadJson(v.pmd_share)},
                        {"pud_share", SpreadJson(v.pud_share)},
                        {"folio_share", v.mode.is_folio() ? SpreadJson(v.folio_share) : json(nullptr)}});
  }
  json groups = json::array();
  for (const GroupVerdict& g : outcome.groups) groups.push_back(GroupJson(g));
  json summary = outcome.groups.empty()
                     ? json{{"pmd_over_pte", nullptr}, {"verdict", "no verdict: needs both pte and pmd runs"}}
                     : GroupJson(outcome.groups.front());
  return {{"location", outcome.location},
          {"emulation", outcome.emulation},
          {"rounds", outcome.repeats.rounds},
          {"repeat_note", RepeatNote(outcome)},
          {"runs", runs},
          {"variants", variants},
          {"skipped", outcome.skipped},
          {"groups", groups},
          {"taint", outcome.taint},
          {"summary", summary}};
}

std::string ComparePlotSvg(const CompareOutcome& outcome) {
  BarChart chart;
  chart.title = "faultbench compare: " + WorkloadAndRepeats(outcome);
  chart.subtitles.push_back("in " + outcome.location);
  for (const GroupVerdict& g : outcome.groups) chart.subtitles.push_back(VerdictLine(g));
  chart.unit = "IOPS";
  for (const VariantSummary& v : outcome.variants) {
    // The PMD (for pud, the PUD; for a folio size, its folios') share says
    // whether a bar is what its label claims.
    const bool pud = v.mode == PageIntent::kPud;
    const std::string share =
        v.mode.is_folio()
            ? absl::StrFormat("%s %.1f%%", Lower(v.mode), v.folio_share.median * 100)
            : absl::StrFormat("%s %.1f%%", pud ? "PUD" : "PMD", (pud ? v.pud_share : v.pmd_share).median * 100);
    chart.bars.push_back({v.label, share, v.iops.median, v.iops.min, v.iops.max, v.iops.sorted});
  }
  return RenderBarChartSvg(chart);
}

}  // namespace faultbench
