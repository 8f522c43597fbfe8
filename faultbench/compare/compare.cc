#include "faultbench/compare/compare.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "faultbench/doctor/doctor.h"
#include "faultbench/run/page_size_check.h"
#include "faultbench/run/runner.h"
#include "faultbench/sysfacts/fixed_page_size.h"
#include "faultbench/taint/taint.h"
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
  double iops = 0, bw_bytes = 0, p50_ns = 0, p99_ns = 0, faults_per_mib = 0, pmd_share = 0, pud_share = 0;
  std::map<int, uint64_t> page_nodes;  // sampled pages by node, over the workers
  std::string placement_source;
  std::set<int> cpus;
  std::string error;
};

Sample SampleOf(const RunResult& run) {
  Sample s;
  LatencyHistogram merged;
  double ns_per_tick = 1;
  uint64_t faults = 0, bytes = 0, pmd = 0, pud = 0, present = 0;
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
    pud += w.mapping.census.pud_bytes;
    present += w.mapping.PresentBytes();
    for (const auto& [node, pages] : w.numa.placement.pages_by_node) s.page_nodes[node] += pages;
    s.placement_source = w.numa.placement.source;
    s.cpus.insert(w.numa.cpus.begin(), w.numa.cpus.end());
  }
  s.p50_ns = static_cast<double>(merged.Percentile(50)) * ns_per_tick;
  s.p99_ns = static_cast<double>(merged.Percentile(99)) * ns_per_tick;
  s.faults_per_mib = bytes ? static_cast<double>(faults) / (static_cast<double>(bytes) / (1 << 20)) : 0;
  s.pmd_share = present ? static_cast<double>(pmd) / static_cast<double>(present) : 0;
  s.pud_share = present ? static_cast<double>(pud) / static_cast<double>(present) : 0;
  return s;
}

std::vector<Variant> Variants(const CompareConfig& config) {
  std::vector<Engine> engines = config.engines.empty() ? std::vector<Engine>{config.job.engine()} : config.engines;
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

absl::StatusOr<doctor::DoctorReport> ExamineLocation(const JobOptions& job) {
  const std::string path = job.directory.empty() ? job.filename : job.directory;
  auto report = doctor::Examine(path);
  if (!report.ok() && job.directory.empty()) {  // the file is created by the first run
    const std::string parent = std::filesystem::path(job.filename).parent_path().string();
    report = doctor::Examine(parent.empty() ? "." : parent);
  }
  return report;
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

namespace {

// What an earlier PTE pass over a reused file leaves behind, by what backs
// the mapping (measured: ext4, 256 MiB, a pte pass then a pmd pass over the
// same file, 0% PMD; after dropping the page cache, 99%).
std::string CarryoverCause(const std::string& page_source) {
  if (page_source == "dax") {
    return "--reuse-file: 4 KiB entries left by an earlier PTE pass over the same file can keep later "
           "mappings at PTE (DAX carryover)";
  }
  const std::string cache = page_source.empty() ? "page cache" : page_source;
  return "--reuse-file: " + cache + " carryover: the " + cache +
         " still holds the file in the 4 KiB folios an earlier PTE pass faulted in, and a PMD entry needs a "
         "2 MiB folio (drop them: sync; echo 1 > /proc/sys/vm/drop_caches, or compare on fresh files)";
}

// Doctor-checkable causes of a PMD regression, for the file of a pmd run.
std::vector<std::string> RegressionCauses(const VariantSummary& pmd, bool reuse_file) {
  std::vector<std::string> causes;
  if (pmd.pmd_share.median < 0.95) {
    causes.push_back(absl::StrFormat("not PMD-mapped after all: %.1f%% of the pmd runs' bytes were PMD",
                                     pmd.pmd_share.median * 100));
  }
  absl::StatusOr<doctor::DoctorReport> report = absl::NotFoundError("no file");
  if (!pmd.files.empty()) report = doctor::Examine(pmd.files.front());
  if (reuse_file) causes.push_back(CarryoverCause(report.ok() ? report->page_source : ""));
  if (!report.ok()) return causes;
  for (const auto& b : report->blockers) causes.push_back(b.reason + " (fix: " + b.fix + ")");
  for (const auto& w : report->warnings) causes.push_back(w);
  if (!report->pat_memtype.empty() && report->pat_memtype != "write-back") {
    causes.push_back("PAT memtype of the pmem range is " + report->pat_memtype +
                     " (an uncached PMD mapping is the 2016 regression)");
  }
  return causes;
}

VariantSummary Summarize(const Variant& variant, const std::vector<Sample>& samples,
                         std::vector<std::string> files) {
  VariantSummary v;
  v.label = variant.Label();
  v.mode = variant.mode;
  v.engine = variant.engine;
  v.numa_label = variant.numa.label;
  v.cpu_node = variant.numa.cpu_node;
  v.mem_node = variant.numa.mem_node;
  auto collect = [&](double Sample::*field) {
    std::vector<double> values;
    for (const Sample& s : samples) values.push_back(s.*field);
    return SpreadOf(values);
  };
  v.iops = collect(&Sample::iops);
  v.bw_bytes = collect(&Sample::bw_bytes);
  v.p50_ns = collect(&Sample::p50_ns);
  v.p99_ns = collect(&Sample::p99_ns);
  v.faults_per_mib = collect(&Sample::faults_per_mib);
  v.pmd_share = collect(&Sample::pmd_share);
  v.pud_share = collect(&Sample::pud_share);
  v.files = std::move(files);
  std::set<int> cpus;
  for (const Sample& s : samples) {
    for (const auto& [node, pages] : s.page_nodes) v.page_nodes[node] += pages;
    if (v.placement_source.empty()) v.placement_source = s.placement_source;
    cpus.insert(s.cpus.begin(), s.cpus.end());
  }
  v.cpus.assign(cpus.begin(), cpus.end());
  return v;
}

// One verdict per (engine, NUMA set) that has a pmd variant.
std::vector<GroupVerdict> JudgeGroups(const std::vector<VariantSummary>& variants, bool reuse_file) {
  std::vector<GroupVerdict> groups;
  for (const VariantSummary& pmd : variants) {
    if (pmd.mode != PageIntent::kPmd) continue;
    const VariantSummary* pte = nullptr;
    for (const VariantSummary& s : variants) {
      if (s.mode == PageIntent::kPte && s.engine == pmd.engine && s.numa_label == pmd.numa_label) pte = &s;
    }
    GroupVerdict g;
    g.group = absl::StrCat(std::string(EngineName(pmd.engine)), pmd.numa_label == "default" ? "" : "/" + pmd.numa_label);
    g.verdict = JudgePmdOverPte(pte, &pmd);
    // A regression needs its causes; so does any result whose pmd runs were
    // not PMD-mapped, because then it is not a PTE-versus-PMD result at all.
    const bool regression = g.verdict.available && g.verdict.pmd_over_pte < 1 - kMinEffect;
    if (regression || pmd.pmd_share.median < 0.95) g.verdict.causes = RegressionCauses(pmd, reuse_file);
    if (g.verdict.available && pmd.pmd_share.median < 0.95) {
      g.verdict.text += absl::StrFormat(" (but the pmd runs were %.1f%% PMD-mapped: not a PMD result)",
                                        pmd.pmd_share.median * 100);
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

// "./data (ext4, page cache)", "/mnt/t (tmpfs huge=always, shmem)": a
// comparison means little without the file system it ran on.
std::string Location(const JobOptions& job) {
  const std::string path = job.directory.empty() ? job.filename : job.directory;
  auto report = ExamineLocation(job);
  if (!report.ok()) return path;
  if (report->fixed.devdax) {
    return absl::StrCat(path, " (device dax, align ", pmstore::base::FormatBytes(report->fixed.page_size), ")");
  }
  std::string fs = report->mount.fs_type;
  if (!report->mount.tmpfs_huge.empty()) absl::StrAppend(&fs, " huge=", report->mount.tmpfs_huge);
  return absl::StrCat(path, " (", fs, ", ", report->page_source, ")");
}

JobOptions VariantJob(const CompareConfig& config, const Variant& variant) {
  JobOptions job = config.job;
  job.mapping = variant.mode;
  if (variant.engine != job.engine()) {
    job.ioengine = variant.engine == Engine::kPmem2 ? JobEngine::kPmem2 : JobEngine::kMmap;
  }
  job.numa = variant.numa.options;
  job.fresh_file = !config.reuse_file;
  job.unlink = false;  // RunComparison deletes them after the last run: the verdict's causes examine them
  return job;
}

// The variants whose mode the backing can give; the others are named in
// `skipped` (device DAX and hugetlbfs have one page size each).
absl::StatusOr<std::vector<Variant>> VariantsTheBackingAllows(const CompareConfig& config,
                                                              std::vector<std::string>& skipped) {
  const FixedPageSize fixed = ReadFixedPageSize(WorkerFilePath(config.job, 0));
  std::vector<Variant> allowed;
  absl::Status first_refusal;
  for (const Variant& variant : Variants(config)) {
    absl::Status fits = CheckMappingFits(VariantJob(config, variant), fixed);
    if (fits.ok()) {
      allowed.push_back(variant);
      continue;
    }
    if (first_refusal.ok()) first_refusal = fits;
    const std::string line = absl::StrCat(std::string(PageIntentName(variant.mode)), ": ", fits.message());
    if (std::find(skipped.begin(), skipped.end(), line) == skipped.end()) skipped.push_back(line);
  }
  if (allowed.empty()) return first_refusal;
  return allowed;
}

}  // namespace

absl::StatusOr<CompareOutcome> RunComparison(const CompareConfig& config, int& exit_code) {
  if (config.repeat < 1) return absl::InvalidArgumentError("--repeat must be >= 1");
  if (config.modes.empty()) return absl::InvalidArgumentError("--modes names no mode");
  CompareOutcome outcome;
  PMSTORE_ASSIGN_OR_RETURN(const std::vector<Variant> variants, VariantsTheBackingAllows(config, outcome.skipped));
  // Every variant is checked before the first run, so a bad flag or an
  // unknown node in one NUMA set costs no run.
  for (const Variant& variant : variants) PMSTORE_RETURN_IF_ERROR(PreflightJobs({VariantJob(config, variant)}));

  outcome.location = Location(config.job);
  std::vector<std::vector<Sample>> samples(variants.size());
  std::vector<std::vector<std::string>> files(variants.size());
  std::vector<std::vector<std::string>> runs_taint;
  for (int r = 0; r < config.repeat; ++r) {
    for (size_t k = 0; k < variants.size(); ++k) {
      const size_t i = r % 2 == 0 ? k : variants.size() - 1 - k;  // alternate the order every repeat
      RunSettings settings;
      settings.progress = config.progress;
      if (config.progress && isatty(STDERR_FILENO)) {
        std::fprintf(stderr, "faultbench: repeat %d/%d: %s\n", r + 1, config.repeat, variants[i].Label().c_str());
      }
      auto run = ExecuteJobs({VariantJob(config, variants[i])}, settings);
      if (!run.ok()) {
        return absl::Status(run.status().code(), absl::StrCat(variants[i].Label(), ": ", run.status().message()));
      }
      Sample sample = SampleOf(*run);
      if (!sample.error.empty()) {
        std::fprintf(stderr, "faultbench: %s: %s\n", variants[i].Label().c_str(), sample.error.c_str());
        exit_code = 1;
      }
      samples[i].push_back(sample);
      for (const WorkerResult& w : run->workers) files[i].push_back(w.file);
      runs_taint.push_back(run->taint);
      outcome.runs.push_back({{"variant", variants[i].Label()},
                              {"mode", std::string(PageIntentName(variants[i].mode))},
                              {"engine", std::string(EngineName(variants[i].engine))},
                              {"numa", variants[i].numa.label},
                              {"repeat", r},
                              {"result", RunToJson(*run)}});
    }
  }
  for (size_t i = 0; i < variants.size(); ++i) {
    outcome.variants.push_back(Summarize(variants[i], samples[i], files[i]));
  }
  outcome.groups = JudgeGroups(outcome.variants, config.reuse_file);
  outcome.taint = MergeTaint(runs_taint);
  if (config.job.unlink) {
    for (const std::vector<std::string>& variant_files : files) {
      for (const std::string& file : variant_files) {
        if (absl::Status s = UnlinkJobFile(file, "--unlink"); !s.ok()) {
          std::fprintf(stderr, "faultbench: %s\n", std::string(s.message()).c_str());
          exit_code = 1;
        }
      }
    }
  }
  return outcome;
}

}  // namespace faultbench
