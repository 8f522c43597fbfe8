#include "faultbench/diff/diff_report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "faultbench/plot/range_chart.h"

namespace faultbench::diff {
namespace {

using nlohmann::json;

// LKP prints about five significant digits in ten columns.
std::string Value(double v) {
  if (v != 0 && (std::fabs(v) >= 1e8 || std::fabs(v) < 1e-3)) return absl::StrFormat("%.4g", v);
  if (std::fabs(v) >= 1000 || v == std::floor(v)) return absl::StrFormat("%.0f", v);
  return absl::StrFormat("%.4g", v);
}

std::string Percent(double pct) {
  if (std::isinf(pct)) return pct > 0 ? "+inf%" : "-inf%";
  return absl::StrFormat("%+.1f%%", pct);
}

std::string Range(const stats::Summary& s) {
  return absl::StrCat("[", Value(s.min), " ", Value(s.median), " ", Value(s.max), "]");
}

// A figure that stayed 0 in every run of both sides (a NUMA counter on one
// node, a fallback that never happened): listed by name, not as a row.
bool AllZero(const FigureDiff& f) {
  for (const auto* values : {&f.base.sorted, &f.next.sorted}) {
    for (double v : *values) {
      if (v != 0) return false;
    }
  }
  return true;
}

std::string VerdictColumn(const FigureDiff& f) {
  std::string out = FigureVerdictName(f.verdict);
  if (f.verdict == FigureVerdict::kNoChange && f.change.ranges_separate) {
    absl::StrAppend(&out, ": below the noise floor");
  } else if (f.verdict == FigureVerdict::kNoChange) {
    absl::StrAppend(&out, ": overlap [", Value(std::max(f.change.base_low, f.change.next_low)), ", ",
                    Value(std::min(f.change.base_high, f.change.next_high)), "]");
  } else if (f.verdict == FigureVerdict::kNoSpread) {
    absl::StrAppendFormat(&out, ": %d and %d runs", f.base.n(), f.next.n());
  }
  return out;
}

std::string SideLine(const SideSummary& side, const char* name) {
  return absl::StrFormat("%-4s %d run(s) (%s)", name, side.runs, absl::StrJoin(side.tools, ", "));
}

void AppendTaint(std::string& out, const SideSummary& side, const char* name) {
  if (!side.taint_known) {
    absl::StrAppend(&out, "Taint, ", name, ": unknown (", absl::StrJoin(side.tools, ", "), " records none)\n");
    return;
  }
  absl::StrAppend(&out, "Taint, ", name, side.taint.empty() ? ": none\n" : ":\n");
  for (const std::string& line : side.taint) absl::StrAppend(&out, "  - ", line, "\n");
}

json SummaryJson(const stats::Summary& s) {
  return {{"runs", s.n()},   {"min", s.min},   {"median", s.median},
          {"max", s.max},    {"mean", s.mean}, {"stddev_percent", s.StddevPercent()},
          {"values", s.sorted}};
}

json SideJson(const SideSummary& side) {
  return {{"runs", side.runs},
          {"tools", side.tools},
          {"taint", side.taint_known ? json(side.taint) : json("unknown")},
          {"facts", side.facts},
          {"inconsistent", side.inconsistent},
          {"emulation", side.emulation},
          {"cpu_saturated_runs", side.cpu_saturated_runs},
          {"failed", side.failed},
          {"skipped", side.skipped}};
}

json DifferencesJson(const std::vector<FactDifference>& differences) {
  json out = json::array();
  for (const FactDifference& d : differences) out.push_back({{"fact", d.fact}, {"base", d.base}, {"new", d.next}});
  return out;
}

std::string VerdictName(DiffVerdict v) {
  switch (v) {
    case DiffVerdict::kNoRegression: return "no regression";
    case DiffVerdict::kRegression: return "regression";
    case DiffVerdict::kNoChange: return "no change";
    case DiffVerdict::kChange: return "change";
    case DiffVerdict::kCannotJudge: return "cannot judge";
  }
  return "";
}

}  // namespace

std::string DiffText(const DiffOutcome& o) {
  std::string out = absl::StrCat("faultbench diff, under test: ", UnderTestName(o.under_test), "\n  ",
                                 SideLine(o.base, "base"), "\n  ", SideLine(o.next, "new"), "\n");
  for (const FactDifference& d : o.comparability.under_test) {
    absl::StrAppend(&out, "  under test: ", DescribeDifference(d), "\n");
  }
  if (!o.emulation.empty()) {
    absl::StrAppend(&out, "Under emulation (", o.emulation,
                    "): timings are shown but not judged; only the timing-free signature decides.\n");
  }
  for (const JobDiff& job : o.jobs) {
    absl::StrAppendFormat(&out, "\njob '%s' [%s]: %d base run(s), %d new run(s)\n", job.name, job.variant,
                          job.base_runs, job.next_runs);
    absl::StrAppendFormat(&out, "%12s %8s %10s %12s %8s  %-30s %-26s %-26s %s\n", "base", "%stddev", "%change", "new",
                          "%stddev", "figure", "base [min median max]", "new [min median max]", "verdict");
    std::vector<std::string> zero;
    for (const FigureDiff& f : job.figures) {
      if (AllZero(f)) {
        zero.push_back(f.metric->name);
        continue;
      }
      absl::StrAppendFormat(&out, "%12s %s%5.1f%% %10s %12s %s%5.1f%%  %-30s %-26s %-26s %s\n", Value(f.base.mean),
                            "\xc2\xb1", f.base.StddevPercent(), Percent(f.change.change_pct), Value(f.next.mean),
                            "\xc2\xb1", f.next.StddevPercent(), f.metric->name, Range(f.base), Range(f.next),
                            VerdictColumn(f));
    }
    if (!zero.empty()) absl::StrAppend(&out, "  0 in every run of both sides: ", absl::StrJoin(zero, ", "), "\n");
    if (!job.only_base.empty()) absl::StrAppend(&out, "  only the base runs have: ", absl::StrJoin(job.only_base, ", "), "\n");
    if (!job.only_next.empty()) absl::StrAppend(&out, "  only the new runs have: ", absl::StrJoin(job.only_next, ", "), "\n");
  }
  for (const std::string& u : o.unmatched) absl::StrAppend(&out, "\nnot compared: ", u, "\n");
  absl::StrAppend(&out, "\n", o.verdict_text, "\n");
  for (const std::string& c : o.causes) absl::StrAppend(&out, "  cause: ", c, "\n");
  for (const std::string& n : o.notes) absl::StrAppend(&out, "  note: ", n, "\n");
  absl::StrAppend(&out, "rule: a change is called when the sides' ranges separate and the difference of the means "
                        "clears the figure's noise floor, with 3 runs a side at least (LKP)\n\n");
  AppendTaint(out, o.base, "base");
  AppendTaint(out, o.next, "new");
  return out;
}

json DiffJson(const DiffOutcome& o) {
  json jobs = json::array();
  for (const JobDiff& job : o.jobs) {
    json figures = json::array();
    for (const FigureDiff& f : job.figures) {
      figures.push_back({{"figure", f.metric->name},
                         {"unit", f.metric->unit},
                         {"worse", f.metric->worse == Worse::kUp ? "up" : "down"},
                         {"signature", f.metric->signature},
                         {"base", SummaryJson(f.base)},
                         {"new", SummaryJson(f.next)},
                         {"change_percent", std::isinf(f.change.change_pct) ? json(Percent(f.change.change_pct))
                                                                              : json(f.change.change_pct)},
                         {"verdict", FigureVerdictName(f.verdict)},
                         {"evidence", f.change.Evidence()}});
    }
    jobs.push_back({{"job", job.name},
                    {"variant", job.variant},
                    {"base_runs", job.base_runs},
                    {"new_runs", job.next_runs},
                    {"figures", figures},
                    {"only_base", job.only_base},
                    {"only_new", job.only_next},
                    {"new_doctor_reasons", job.next_doctor_reasons}});
  }
  return {{"under_test", std::string(UnderTestName(o.under_test))},
          {"counts", o.rule == VerdictRule::kAnyChange ? "any change" : "regressions"},
          {"emulation", o.emulation},
          {"judged", o.emulation.empty() ? "all" : "signature"},
          {"base", SideJson(o.base)},
          {"new", SideJson(o.next)},
          {"differences",
           {{"under_test", DifferencesJson(o.comparability.under_test)},
            {"not_comparable", DifferencesJson(o.comparability.not_comparable)}}},
          {"jobs", jobs},
          {"unmatched", o.unmatched},
          {"verdict", VerdictName(o.verdict)},
          {"verdict_text", o.verdict_text},
          {"headline", o.headline},
          {"causes", o.causes},
          {"notes", o.notes},
          {"exit_status", o.ExitStatus()}};
}

std::string DiffPlotSvg(const DiffOutcome& o) {
  RangeChart chart;
  chart.title = absl::StrCat("faultbench diff, under test: ", UnderTestName(o.under_test), " (", o.base.runs,
                             " base runs, ", o.next.runs, " new runs)");
  for (const FactDifference& d : o.comparability.under_test) chart.subtitles.push_back(DescribeDifference(d));
  if (!o.emulation.empty()) chart.subtitles.push_back("under emulation (" + o.emulation + "): timings not judged");
  chart.subtitles.push_back(o.headline);
  for (const JobDiff& job : o.jobs) {
    for (const FigureDiff& f : job.figures) {
      if (AllZero(f)) continue;
      RangeRow row;
      row.label = absl::StrCat(f.metric->name, o.jobs.size() > 1 ? absl::StrCat(" [", job.name, " ", job.variant, "]")
                                                                  : absl::StrCat(" [", job.variant, "]"));
      row.highlight = f.verdict == FigureVerdict::kRegression || f.verdict == FigureVerdict::kImprovement;
      row.note = absl::StrCat(FigureVerdictName(f.verdict), " ", Percent(f.change.change_pct));
      row.first = f.base.sorted;
      row.second = f.next.sorted;
      chart.rows.push_back(std::move(row));
    }
  }
  return RenderRangeChartSvg(chart);
}

}  // namespace faultbench::diff
