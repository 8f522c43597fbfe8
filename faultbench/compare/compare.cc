#include "faultbench/compare/compare.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "faultbench/compare/svg_plot.h"
#include "faultbench/doctor/doctor.h"
#include "faultbench/run/runner.h"
#include "faultbench/workload/job_file.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/base/units.h"

namespace faultbench {
namespace {

using pmstore::mapping::Engine;
using pmstore::mapping::EngineName;
using pmstore::mapping::PageIntent;
using pmstore::mapping::PageIntentName;

// Differences below this are noise on any machine, whatever the spread says.
constexpr double kMinEffect = 0.03;

struct Variant {
  PageIntent mode;
  Engine engine;
  NumaSet numa;
  std::string Label() const {
    return absl::StrCat(std::string(PageIntentName(mode)), "/", std::string(EngineName(engine)), numa.label == "default" ? "" : "/" + numa.label);
  }
};

// One run's figures, summed over the run's workers and both directions.
struct Sample {
  double iops = 0, bw_bytes = 0, p50_ns = 0, p99_ns = 0, faults_per_mib = 0, pmd_share = 0;
  std::string error;
};

Sample SampleOf(const RunResult& run) {
  Sample s;
  LatencyHistogram merged;
  double ns_per_tick = 1;
  uint64_t faults = 0, bytes = 0, pmd = 0, present = 0;
  for (const WorkerResult& w : run.workers) {
    if (!w.error.empty()) s.error = w.error;
    const PhaseResult& t = w.total;
    if (t.runtime_s > 0) {
      s.iops += static_cast<double>(t.read.ios + t.write.ios) / t.runtime_s;
      s.bw_bytes += static_cast<double>(t.read.bytes + t.write.bytes) / t.runtime_s;
    }
    merged.Merge(t.read.latency);
    merged.Merge(t.write.latency);
    ns_per_tick = w.ns_per_tick;
    faults += t.rusage.minor_faults + t.rusage.major_faults;
    bytes += t.bytes_accessed;
    pmd += w.mapping.census.pmd_bytes;
    present += w.mapping.census.pmd_bytes + w.mapping.census.pte_bytes;
  }
  s.p50_ns = static_cast<double>(merged.Percentile(50)) * ns_per_tick;
  s.p99_ns = static_cast<double>(merged.Percentile(99)) * ns_per_tick;
  s.faults_per_mib = bytes ? static_cast<double>(faults) / (static_cast<double>(bytes) / (1 << 20)) : 0;
  s.pmd_share = present ? static_cast<double>(pmd) / static_cast<double>(present) : 0;
  return s;
}

std::vector<Variant> Variants(const CompareConfig& config) {
  std::vector<Engine> engines = config.engines.empty() ? std::vector<Engine>{config.job.engine} : config.engines;
  std::vector<NumaSet> sets =
      config.numa_sets.empty() ? std::vector<NumaSet>{{"default", config.job.numa}} : config.numa_sets;
  std::vector<Variant> out;
  for (const NumaSet& set : sets) {
    for (Engine engine : engines) {
      for (PageIntent mode : config.modes) out.push_back({mode, engine, set});
    }
  }
  return out;
}

std::string Table(const std::vector<VariantSummary>& summaries) {
  std::string out = absl::StrFormat("%-22s %22s %16s %10s %10s %11s %7s\n", "variant", "IOPS median [min-max]",
                                    "BW MiB/s", "p50 ns", "p99 ns", "faults/MiB", "PMD %");
  for (const VariantSummary& v : summaries) {
    const std::string label = absl::StrCat(std::string(PageIntentName(v.mode)), "/", std::string(EngineName(v.engine)),
                                           v.numa_label == "default" ? "" : "/" + v.numa_label);
    absl::StrAppendFormat(&out, "%-22s %8.0f [%5.0fk-%5.0fk] %16.1f %10.0f %10.0f %11.3f %6.1f%%\n", label,
                          v.iops.median, v.iops.min / 1e3, v.iops.max / 1e3, v.bw_bytes.median / (1 << 20),
                          v.p50_ns.median, v.p99_ns.median, v.faults_per_mib.median, v.pmd_share.median * 100);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<NumaSet>> ParseNumaSets(const std::string& text) {
  std::vector<NumaSet> sets;
  for (absl::string_view raw : absl::StrSplit(text, ';', absl::SkipWhitespace())) {
    NumaSet set;
    set.label = std::string(absl::StripAsciiWhitespace(raw));
    for (absl::string_view item : absl::StrSplit(raw, ' ', absl::SkipWhitespace())) {
      const size_t eq = item.find('=');
      if (eq == absl::string_view::npos) {
        return absl::InvalidArgumentError(absl::StrCat("--numa-sets: '", std::string(item),
                                                       "' is not option=nodes (e.g. cpunodebind=0 membind=1)"));
      }
      const std::string key(item.substr(0, eq));
      if (key != "cpunodebind" && key != "membind" && key != "preferred" && key != "interleave") {
        return absl::InvalidArgumentError(absl::StrCat("--numa-sets: unknown option '", key,
                                                       "': use cpunodebind, membind, preferred or interleave"));
      }
      JobOptions scratch;
      PMSTORE_RETURN_IF_ERROR(ApplyJobOption(scratch, key, std::string(item.substr(eq + 1))));
      if (key == "cpunodebind") set.options.cpunodebind = scratch.numa.cpunodebind;
      if (key == "membind") set.options.membind = scratch.numa.membind;
      if (key == "preferred") set.options.preferred = scratch.numa.preferred;
      if (key == "interleave") set.options.interleave = scratch.numa.interleave;
    }
    sets.push_back(set);
  }
  if (sets.empty()) return absl::InvalidArgumentError("--numa-sets: no set given");
  return sets;
}

Spread SpreadOf(std::vector<double> values) {
  Spread s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  s.min = values.front();
  s.max = values.back();
  return s;
}

Verdict JudgePmdOverPte(const VariantSummary* pte, const VariantSummary* pmd) {
  Verdict v;
  if (pte == nullptr || pmd == nullptr || pte->iops.median <= 0) {
    v.text = "no verdict: needs both pte and pmd runs";
    return v;
  }
  v.available = true;
  v.pmd_over_pte = pmd->iops.median / pte->iops.median;
  const bool faster = pmd->iops.min > pte->iops.max && v.pmd_over_pte > 1 + kMinEffect;
  const bool slower = pmd->iops.max < pte->iops.min && v.pmd_over_pte < 1 - kMinEffect;
  if (faster) {
    v.text = absl::StrFormat("PMD faster x%.2f", v.pmd_over_pte);
  } else if (slower) {
    v.text = absl::StrFormat("REGRESSION: PMD slower than PTE x%.2f", 1 / v.pmd_over_pte);
  } else {
    v.text = "no significant difference";
  }
  return v;
}

int CompareCommand(const CompareConfig& config) {
  if (config.repeat < 1) {
    std::fprintf(stderr, "faultbench: --repeat must be >= 1\n");
    return 2;
  }
  if (config.modes.empty()) {
    std::fprintf(stderr, "faultbench: --modes names no mode\n");
    return 2;
  }
  const std::vector<Variant> variants = Variants(config);
  // Check once before the first run, so a bad flag costs nothing.
  std::vector<JobOptions> probe = {config.job};
  if (absl::Status s = PreflightJobs(probe); !s.ok()) {
    std::fprintf(stderr, "faultbench: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  std::FILE* out = stdout;
  if (!config.output_path.empty() && (out = std::fopen(config.output_path.c_str(), "w")) == nullptr) {
    std::fprintf(stderr, "faultbench: --output: cannot write %s\n", config.output_path.c_str());
    return 2;
  }

  std::vector<std::vector<Sample>> samples(variants.size());
  std::vector<std::vector<std::string>> files(variants.size());
  nlohmann::json runs = nlohmann::json::array();
  int exit_code = 0;
  for (int r = 0; r < config.repeat; ++r) {
    for (size_t k = 0; k < variants.size(); ++k) {
      const size_t i = r % 2 == 0 ? k : variants.size() - 1 - k;  // alternate the order every repeat
      JobOptions job = config.job;
      job.mapping = variants[i].mode;
      job.engine = variants[i].engine;
      job.numa = variants[i].numa.options;
      job.fresh_file = !config.reuse_file;
      RunSettings settings;
      settings.progress = config.progress;
      if (config.progress && isatty(STDERR_FILENO)) {
        std::fprintf(stderr, "faultbench: repeat %d/%d: %s\n", r + 1, config.repeat, variants[i].Label().c_str());
      }
      auto run = ExecuteJobs({job}, settings);
      if (!run.ok()) {
        std::fprintf(stderr, "faultbench: %s: %s\n", variants[i].Label().c_str(),
                     std::string(run.status().message()).c_str());
        if (out != stdout) std::fclose(out);
        return 2;
      }
      Sample sample = SampleOf(*run);
      if (!sample.error.empty()) {
        std::fprintf(stderr, "faultbench: %s: %s\n", variants[i].Label().c_str(), sample.error.c_str());
        exit_code = 1;
      }
      samples[i].push_back(sample);
      for (const WorkerResult& w : run->workers) files[i].push_back(w.file);
      runs.push_back({{"variant", variants[i].Label()},
                      {"mode", std::string(PageIntentName(variants[i].mode))},
                      {"engine", std::string(EngineName(variants[i].engine))},
                      {"numa", variants[i].numa.label},
                      {"repeat", r},
                      {"result", RunToJson(*run)}});
    }
  }

  std::vector<VariantSummary> summaries;
  for (size_t i = 0; i < variants.size(); ++i) {
    VariantSummary v;
    v.mode = variants[i].mode;
    v.engine = variants[i].engine;
    v.numa_label = variants[i].numa.label;
    auto collect = [&](double Sample::*field) {
      std::vector<double> values;
      for (const Sample& s : samples[i]) values.push_back(s.*field);
      return SpreadOf(values);
    };
    v.iops = collect(&Sample::iops);
    v.bw_bytes = collect(&Sample::bw_bytes);
    v.p50_ns = collect(&Sample::p50_ns);
    v.p99_ns = collect(&Sample::p99_ns);
    v.faults_per_mib = collect(&Sample::faults_per_mib);
    v.pmd_share = collect(&Sample::pmd_share);
    v.files = files[i];
    summaries.push_back(v);
  }

  // One verdict per (engine, numa set) group.
  nlohmann::json groups = nlohmann::json::array();
  std::string verdict_text;
  nlohmann::json first_summary;
  for (size_t i = 0; i < summaries.size(); ++i) {
    if (summaries[i].mode != PageIntent::kPmd) continue;
    const VariantSummary* pmd = &summaries[i];
    const VariantSummary* pte = nullptr;
    for (const VariantSummary& s : summaries) {
      if (s.mode == PageIntent::kPte && s.engine == pmd->engine && s.numa_label == pmd->numa_label) pte = &s;
    }
    Verdict verdict = JudgePmdOverPte(pte, pmd);
    if (verdict.available && verdict.pmd_over_pte < 1 - kMinEffect) {
      if (pmd->pmd_share.median < 0.95) {
        verdict.causes.push_back(absl::StrFormat("not PMD-mapped after all: %.1f%% of the pmd runs' bytes were PMD",
                                                 pmd->pmd_share.median * 100));
      }
      if (config.reuse_file) {
        verdict.causes.push_back(
            "--reuse-file: 4 KiB entries left by an earlier PTE pass over the same file can keep later "
            "mappings at PTE (DAX carryover)");
      }
      if (!pmd->files.empty()) {
        auto report = doctor::Examine(pmd->files.front());
        if (report.ok()) {
          for (const auto& b : report->blockers) verdict.causes.push_back(b.reason + " (fix: " + b.fix + ")");
          for (const auto& w : report->warnings) verdict.causes.push_back(w);
          if (!report->pat_memtype.empty() && report->pat_memtype != "write-back") {
            verdict.causes.push_back("PAT memtype of the pmem range is " + report->pat_memtype +
                                     " (an uncached PMD mapping is the 2016 regression)");
          }
        }
      }
    }
    const std::string group = absl::StrCat(std::string(EngineName(pmd->engine)),
                                           pmd->numa_label == "default" ? "" : "/" + pmd->numa_label);
    absl::StrAppendFormat(&verdict_text, "%sPMD/PTE (%s): %s%s\n", verdict_text.empty() ? "" : "",
                          group, verdict.available ? absl::StrFormat("%.2f -> ", verdict.pmd_over_pte) : "",
                          verdict.text);
    for (const auto& c : verdict.causes) absl::StrAppend(&verdict_text, "  cause: ", c, "\n");
    nlohmann::json g = {{"group", group},
                        {"pmd_over_pte", verdict.available ? nlohmann::json(verdict.pmd_over_pte) : nlohmann::json(nullptr)},
                        {"verdict", verdict.text},
                        {"causes", verdict.causes}};
    if (first_summary.is_null()) first_summary = g;
    groups.push_back(g);
  }
  if (first_summary.is_null()) first_summary = {{"pmd_over_pte", nullptr}, {"verdict", "no verdict: needs both pte and pmd runs"}};

  if (!config.plot_path.empty()) {
    std::vector<PlotBar> bars;
    for (size_t i = 0; i < summaries.size(); ++i) {
      bars.push_back({variants[i].Label(), summaries[i].iops.median, summaries[i].iops.min, summaries[i].iops.max});
    }
    const std::string title = absl::StrFormat("faultbench compare: %s bs=%d size=%s, %d repeat(s)",
                                              RwModeName(config.job.rw), config.job.bs,
                                              pmstore::base::FormatBytes(config.job.size), config.repeat);
    if (absl::Status s = WriteTextFile(config.plot_path, RenderBarChartSvg(title, "IOPS", bars)); !s.ok()) {
      std::fprintf(stderr, "faultbench: --plot: %s\n", std::string(s.message()).c_str());
      exit_code = exit_code ? exit_code : 1;
    }
  }

  if (config.format == OutputFormat::kJson) {
    nlohmann::json variants_json = nlohmann::json::array();
    for (const VariantSummary& v : summaries) {
      auto spread = [](const Spread& s) { return nlohmann::json{{"median", s.median}, {"min", s.min}, {"max", s.max}}; };
      variants_json.push_back({{"mode", std::string(PageIntentName(v.mode))},
                               {"engine", std::string(EngineName(v.engine))},
                               {"numa", v.numa_label},
                               {"iops", spread(v.iops)},
                               {"bw_bytes", spread(v.bw_bytes)},
                               {"clat_p50_ns", spread(v.p50_ns)},
                               {"clat_p99_ns", spread(v.p99_ns)},
                               {"faults_per_mib", spread(v.faults_per_mib)},
                               {"pmd_share", spread(v.pmd_share)}});
    }
    nlohmann::json doc = {{"runs", runs}, {"variants", variants_json}, {"groups", groups}, {"summary", first_summary}};
    std::fputs((doc.dump(2) + "\n").c_str(), out);
  } else {
    std::string text = absl::StrFormat("faultbench compare: %s bs=%d size=%s numjobs=%d, %d repeat(s), %s files\n\n",
                                       RwModeName(config.job.rw), config.job.bs,
                                       pmstore::base::FormatBytes(config.job.size), config.job.numjobs,
                                       config.repeat, config.reuse_file ? "reused" : "fresh");
    absl::StrAppend(&text, Table(summaries), "\n", verdict_text);
    std::fputs(text.c_str(), out);
  }
  if (out != stdout) std::fclose(out);
  return exit_code;
}

}  // namespace faultbench
