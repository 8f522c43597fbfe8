#include "faultbench/report/scale_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "faultbench/plot/line_chart.h"
#include "faultbench/report/compare_report.h"
#include "faultbench/report/signature_report.h"
#include "pmstore/base/units.h"

namespace faultbench {
namespace {

using nlohmann::json;

// "write bs=4096 size=128.0 MiB per task, anon private, mapping pte, 3 repeat(s)".
std::string Headline(const ScaleOutcome& o) {
  const JobOptions& job = o.workload;
  return absl::StrFormat("%s bs=%d size=%s per task, %s, mapping %s, %d repeat(s)", RwModeName(job.rw), job.bs,
                         pmstore::base::FormatBytes(job.size), job.MemoryName(),
                         pmstore::mapping::PageIntentName(job.mapping), o.repeats);
}

std::string EmulationNote(const ScaleOutcome& o) {
  if (o.emulation.empty()) return "";
  return absl::StrCat("Under emulation (", o.emulation,
                      "): faults per second are the emulator's, not figures; the counts (faults, signature) are "
                      "exact.");
}

// The median run of a point, by total: the one whose signature the table shows.
const ScaleRun* MedianRun(const ScalePoint& p) {
  const ScaleRun* best = nullptr;
  for (const ScaleRun& r : p.runs) {
    if (best == nullptr || std::abs(r.TotalFaultsPerSecond() - p.total.median) <
                               std::abs(best->TotalFaultsPerSecond() - p.total.median)) {
      best = &r;
    }
  }
  return best;
}

}  // namespace

std::string ScaleText(const ScaleOutcome& o) {
  std::string out = absl::StrFormat("faultbench scale: %s\nin %s\n\n", Headline(o), o.location);
  absl::StrAppendFormat(&out, "%-10s %5s %30s %30s %12s %11s\n", "mode", "tasks", "faults/s total median [min-max]",
                        "faults/s per task median", "faults/MiB", "PMD %");
  for (const ScalePoint& p : o.points) {
    const ScaleRun* median = MedianRun(p);
    absl::StrAppendFormat(&out, "%-10s %5d %12.0f [%7.0fk-%7.0fk] %24.0f %12.3f %10.1f%%\n", ScaleModeName(p.mode),
                          p.tasks, p.total.median, p.total.min / 1e3, p.total.max / 1e3, p.per_task.median,
                          median ? median->signature.faults_per_mib : 0, median ? median->signature.pmd_share * 100 : 0);
  }
  if (const std::string note = EmulationNote(o); !note.empty()) absl::StrAppend(&out, "\n", note, "\n");
  for (const ScalePoint& p : o.points) {
    const ScaleRun* median = MedianRun(p);
    if (median == nullptr) continue;
    absl::StrAppendFormat(&out, "\n== %s x%d (the run of median total):", ScaleModeName(p.mode), p.tasks);
    std::string signature = SignatureText(median->signature);
    absl::StrAppend(&out, signature.substr(signature.find('\n', 1)));  // its lines, without its own heading
  }
  for (const CompareFailure& f : o.failures) absl::StrAppend(&out, "\nfailed: ", f.what, ": ", f.error);
  if (!o.failures.empty()) absl::StrAppend(&out, "\n");
  if (!o.taint.empty()) {
    absl::StrAppend(&out, "\nTaint (numbers may not compare with a clean bare-metal run):\n");
    for (const auto& line : o.taint) absl::StrAppend(&out, "  - ", line, "\n");
  }
  return out;
}

json ScaleJson(const ScaleOutcome& o) {
  json points = json::array();
  for (const ScalePoint& p : o.points) {
    json runs = json::array();
    for (const ScaleRun& r : p.runs) {
      json tasks = json::array();
      for (const ScaleTask& t : r.tasks) {
        json task = {{"faults", t.faults}, {"seconds", t.seconds}, {"faults_per_s", t.FaultsPerSecond()}};
        if (!t.error.empty()) task["error"] = t.error;
        tasks.push_back(task);
      }
      runs.push_back({{"repeat", r.repeat},
                      {"tasks", tasks},
                      {"total_faults_per_s", r.TotalFaultsPerSecond()},
                      {"faults_per_s_per_task", r.FaultsPerSecondPerTask()},
                      {"signature", SignatureJson(r.signature)}});
    }
    points.push_back({{"mode", std::string(ScaleModeName(p.mode))},
                      {"tasks", p.tasks},
                      {"total_faults_per_s", SpreadJson(p.total)},
                      {"faults_per_s_per_task", SpreadJson(p.per_task)},
                      {"runs", runs}});
  }
  json failures = json::array();
  for (const CompareFailure& f : o.failures) failures.push_back({{"point", f.what}, {"error", f.error}});
  return {{"workload", Headline(o)},
          {"memory", o.workload.MemoryName()},
          {"mapping", std::string(pmstore::mapping::PageIntentName(o.workload.mapping))},
          {"location", o.location},
          {"emulation", o.emulation},
          {"repeats", o.repeats},
          {"points", points},
          {"taint", o.taint},
          {"failures", failures}};
}

std::string ScaleSvg(const ScaleOutcome& o) {
  LineChart chart;
  chart.title = "faultbench scale: " + Headline(o);
  chart.subtitles.push_back("in " + o.location);
  if (!o.emulation.empty()) chart.subtitles.push_back(EmulationNote(o));
  for (const std::string& line : o.taint) {
    if (line.starts_with("hypervisor")) chart.subtitles.push_back(line.substr(0, line.find(" (")));
  }
  chart.x_label = "tasks";
  chart.y_label = "faults/s, all tasks";
  chart.footer = "line: median of the repeats; dots: each repeat; whisker: min-max";
  for (ScaleMode mode : {ScaleMode::kThreads, ScaleMode::kProcesses}) {
    LineSeries series{std::string(ScaleModeName(mode)), {}};
    for (const ScalePoint& p : o.points) {
      if (p.mode != mode) continue;
      LinePoint point{static_cast<double>(p.tasks), p.total.median, {}};
      for (const ScaleRun& r : p.runs) point.values.push_back(r.TotalFaultsPerSecond());
      series.points.push_back(std::move(point));
    }
    if (!series.points.empty()) chart.series.push_back(std::move(series));
  }
  return RenderLineChartSvg(chart);
}

}  // namespace faultbench
