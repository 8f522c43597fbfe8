#include "faultbench/compare/compare.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "faultbench/compare/repeat_plan.h"
#include "faultbench/compare/signature_verdict.h"
#include "faultbench/doctor/doctor.h"
#include "faultbench/run/page_size_check.h"
#include "faultbench/run/runner.h"
#include "faultbench/stats/change.h"
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
  double folio_share = 0;  // of the bytes whose folios were read back, those in folios of the size asked for
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
  double at_size = 0, folio_seen = 0;
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
    if (const auto& folios = w.mapping.folios) {
      const double seen = static_cast<double>(folios->folio_bytes() + folios->zero_page_bytes + folios->no_page_bytes);
      folio_seen += seen;
      at_size += w.mapping.FolioShare() * seen;
    }
    for (const auto& [node, pages] : w.numa.placement.pages_by_node) s.page_nodes[node] += pages;
    s.placement_source = w.numa.placement.source;
    s.cpus.insert(w.numa.cpus.begin(), w.numa.cpus.end());
  }
  s.p50_ns = static_cast<double>(merged.Percentile(50)) * ns_per_tick;
  s.p99_ns = static_cast<double>(merged.Percentile(99)) * ns_per_tick;
  s.faults_per_mib = bytes ? static_cast<double>(faults) / (static_cast<double>(bytes) / (1 << 20)) : 0;
  s.pmd_share = present ? static_cast<double>(pmd) / static_cast<double>(present) : 0;
  s.pud_share = present ? static_cast<double>(pud) / static_cast<double>(present) : 0;
  s.folio_share = folio_seen > 0 ? at_size / folio_seen : 0;
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

double ShareAtRequestedSize(const VariantSummary& variant) {
  switch (variant.mode.kind()) {
    case PageIntent::Kind::kPmd: return variant.pmd_share.median;
    case PageIntent::Kind::kPud: return variant.pud_share.median;
    case PageIntent::Kind::kFolio: return variant.folio_share.median;
    case PageIntent::Kind::kPte:
    case PageIntent::Kind::kAuto: return 1;
  }
  return 1;
}

Verdict JudgeOnTimings(const VariantSummary* base, const VariantSummary* variant) {
  Verdict v;
  if (base == nullptr || variant == nullptr || base->iops.median <= 0) return v;
  v.base = base->mode;
  v.variant = variant->mode;
  v.ratio = variant->iops.median / base->iops.median;
  v.base_runs = static_cast<int>(base->iops.n());
  v.variant_runs = static_cast<int>(variant->iops.n());
  v.variant_share = ShareAtRequestedSize(*variant);
  v.change = stats::JudgeChange(base->iops, variant->iops, {.relative = kMinEffect});
  switch (v.change.change) {
    case stats::Change::kUp: v.kind = VerdictKind::kFaster; break;
    case stats::Change::kDown: v.kind = VerdictKind::kSlower; break;
    case stats::Change::kTooFewRuns: v.kind = VerdictKind::kTooFewRuns; break;
    case stats::Change::kNone: v.kind = VerdictKind::kNoDifference; break;
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

// Doctor-checkable causes of a regression, for the files of the larger
// size's runs (for anonymous memory, the runs' own reasons).
std::vector<std::string> RegressionCauses(const VariantSummary& pmd, bool reuse_file,
                                          const std::vector<std::string>& run_reasons) {
  std::vector<std::string> causes;
  const std::string size = absl::AsciiStrToUpper(std::string(PageIntentName(pmd.mode)));
  if (ShareAtRequestedSize(pmd) < 0.95) {
    causes.push_back(absl::StrFormat("not %s-mapped after all: %.1f%% of the %s runs' bytes were %s", size,
                                     ShareAtRequestedSize(pmd) * 100, std::string(PageIntentName(pmd.mode)), size));
  }
  causes.insert(causes.end(), run_reasons.begin(), run_reasons.end());
  absl::StatusOr<doctor::DoctorReport> report = absl::NotFoundError("no file");
  if (!pmd.files.empty() && !pmd.files.front().empty()) report = doctor::Examine(pmd.files.front());
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
    return stats::Summarize(values);
  };
  v.iops = collect(&Sample::iops);
  v.bw_bytes = collect(&Sample::bw_bytes);
  v.p50_ns = collect(&Sample::p50_ns);
  v.p99_ns = collect(&Sample::p99_ns);
  v.faults_per_mib = collect(&Sample::faults_per_mib);
  v.pmd_share = collect(&Sample::pmd_share);
  v.pud_share = collect(&Sample::pud_share);
  v.folio_share = collect(&Sample::folio_share);
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

// Orders the page sizes of --modes: pte, the folio sizes, pmd, pud; auto,
// which asks for none, after them (it is judged against nothing).
uint64_t SizeOrder(PageIntent mode) {
  return mode == PageIntent::kAuto ? UINT64_MAX : pmstore::mapping::IntentPageSize(mode);
}

// One verdict per (engine, NUMA set) and larger size: each size of the
// group against the smallest the group ran (pte,pmd: PMD/PTE; pte,64K,pmd:
// 64K/PTE and PMD/PTE), on IOPS or, under emulation, on the signature.
// `with_causes`: ask the doctor about the files (the final verdict), not
// while --repeat=auto is still deciding. `run_reasons`: each variant's
// runs' own reasons for a mapping that differed (anonymous memory).
std::vector<GroupVerdict> JudgeGroups(const std::vector<VariantSummary>& variants, bool reuse_file,
                                      const std::string& emulation, bool with_causes,
                                      const std::map<std::string, std::vector<std::string>>& run_reasons = {}) {
  std::vector<GroupVerdict> groups;
  for (const VariantSummary& larger : variants) {
    if (larger.mode == PageIntent::kAuto) continue;
    const VariantSummary* base = nullptr;
    for (const VariantSummary& s : variants) {
      if (s.engine != larger.engine || s.numa_label != larger.numa_label || s.mode == PageIntent::kAuto) continue;
      if (base == nullptr || SizeOrder(s.mode) < SizeOrder(base->mode)) base = &s;
    }
    // The smallest size is the base of the others; a group of pmd alone
    // still says it has no pte to judge against, as before.
    if (base == &larger && !(larger.mode == PageIntent::kPmd)) continue;
    if (base == &larger) base = nullptr;
    GroupVerdict g;
    g.group = absl::StrCat(std::string(EngineName(larger.engine)),
                           larger.numa_label == "default" ? "" : "/" + larger.numa_label);
    const bool timings = emulation.empty();
    g.verdict = timings ? JudgeOnTimings(base, &larger) : JudgeOnSignature(base, &larger, emulation);
    g.verdict.base = base != nullptr ? base->mode : PageIntent::kPte;
    g.verdict.variant = larger.mode;
    // A regression needs its causes; so does any result whose larger size
    // was not mapped at that size, because then it is not a result about it.
    const bool regression = g.verdict.regression() ||
                            (timings && g.verdict.available() && g.verdict.ratio < 1 - kMinEffect);
    if (with_causes && (regression || ShareAtRequestedSize(larger) < 0.95)) {
      const auto reasons = run_reasons.find(larger.label);
      g.verdict.causes = RegressionCauses(larger, reuse_file,
                                          reasons == run_reasons.end() ? std::vector<std::string>{} : reasons->second);
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

// "./data (ext4, page cache)", "/mnt/t (tmpfs huge=always, shmem)": a
// comparison means little without the file system it ran on.
std::string Location(const JobOptions& job, const absl::StatusOr<doctor::DoctorReport>& report) {
  const std::string path = job.Location();
  if (job.anonymous()) return path;
  if (!report.ok()) return path;
  if (report->fixed.devdax) {
    return absl::StrCat(path, " (device dax, align ", pmstore::base::FormatBytes(report->fixed.page_size), ")");
  }
  std::string fs = report->mount.fs_type;
  if (!report->mount.tmpfs_huge.empty()) absl::StrAppend(&fs, " huge=", report->mount.tmpfs_huge);
  return absl::StrCat(path, " (", fs, ", ", report->page_source, ")");
}

// "pte-mmap-membind-1": a variant's label as part of a file name.
std::string FileLabel(const Variant& variant) {
  std::string label = variant.Label();
  for (char& c : label) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) c = '-';
  }
  return label;
}

// `fixed`: what backs the files, as the doctor found it for the location
// (read once per comparison).
JobOptions VariantJob(const CompareConfig& config, const Variant& variant, const FixedPageSize& fixed) {
  JobOptions job = config.job;
  job.mapping = variant.mode;
  if (variant.engine != job.engine()) {
    job.ioengine = variant.engine == Engine::kPmem2 ? JobEngine::kPmem2 : JobEngine::kMmap;
  }
  job.numa = variant.numa.options;
  job.fresh_file = !config.reuse_file;
  // Fresh files are each variant's own (DIR/NAME-pmd-mmap.0.0), so a run
  // frees memory of its own kind just before it allocates. With one file
  // for all, a pmd run right after a pte run found only the 4 KiB pages the
  // page cache had just freed and took its 2 MiB folios from memory the
  // host had taken back: measured on ./data (ext4, 1 GiB, free page
  // reporting, load average 8), pmd after pte 33-97 k IOPS, pmd after pmd
  // 300-425 k, over 17 rounds; PTE 72-126 k throughout.
  // hugetlbfs has one kind of memory, its pool, and files kept to the end
  // would each hold their pages there: one file for every variant.
  if (!config.reuse_file && job.filename.empty() && !fixed.hugetlbfs) {
    job.file_stem = absl::StrCat(job.name, "-", FileLabel(variant));
  }
  job.unlink = false;  // RunComparison deletes them after the last run: the verdict's causes examine them
  return job;
}

// The unmeasured warm-up: the first variant's workload once, on a file of
// its own (deleted after), so the memory it will use has been touched. A
// device DAX device is its own memory: the warm-up runs on it.
absl::Status WarmUp(const CompareConfig& config, const Variant& first, const FixedPageSize& fixed) {
  JobOptions job = VariantJob(config, first, fixed);
  if (job.filename.empty()) {
    job.file_stem = absl::StrCat(job.file_stem.empty() ? job.name : job.file_stem, "-warmup");
  } else if (!fixed.devdax) {
    job.filename += ".warmup";
  }
  job.fresh_file = true;
  job.unlink = true;
  RunSettings settings;
  settings.progress = config.progress;
  auto run = ExecuteJobs({job}, settings);
  if (!run.ok()) return absl::Status(run.status().code(), absl::StrCat("warm-up: ", run.status().message()));
  return absl::OkStatus();
}

// --repeat=auto stops once every group with a pair calls a difference (at
// its fewest rounds when there is no pair to judge).
bool Decided(const std::vector<GroupVerdict>& groups) {
  return std::all_of(groups.begin(), groups.end(),
                     [](const GroupVerdict& g) { return !g.verdict.available() || g.verdict.called(); });
}

// The variants whose mode the backing can give; the others are named in
// `skipped` (device DAX and hugetlbfs have one page size each).
absl::StatusOr<std::vector<Variant>> VariantsTheBackingAllows(const CompareConfig& config, const FixedPageSize& fixed,
                                                              std::vector<std::string>& skipped) {
  std::vector<Variant> allowed;
  absl::Status first_refusal;
  for (const Variant& variant : Variants(config)) {
    absl::Status fits = CheckMappingFits(VariantJob(config, variant, fixed), fixed);
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

absl::StatusOr<CompareOutcome> RunComparison(const CompareConfig& config) {
  if (config.repeat < 1) return absl::InvalidArgumentError("--repeat must be >= 1");
  if (config.modes.empty()) return absl::InvalidArgumentError("--modes names no mode");
  CompareOutcome outcome;
  outcome.workload = config.job;
  outcome.reuse_file = config.reuse_file;
  const absl::StatusOr<doctor::DoctorReport> location =
      config.job.anonymous() ? absl::NotFoundError("anonymous memory") : ExamineLocation(config.job);
  const FixedPageSize fixed = location.ok() ? location->fixed : FixedPageSize{};
  PMSTORE_ASSIGN_OR_RETURN(const std::vector<Variant> variants,
                           VariantsTheBackingAllows(config, fixed, outcome.skipped));
  // Every variant is resolved once, before the first run, so a bad flag or
  // an unknown node in one NUMA set costs no run; its plan then serves
  // every repeat.
  std::vector<RunPlan> plans;
  for (const Variant& variant : variants) {
    PMSTORE_ASSIGN_OR_RETURN(RunPlan plan, PlanRun({VariantJob(config, variant, fixed)}));
    plans.push_back(std::move(plan));
  }

  outcome.location = Location(config.job, location);
  if (config.warmup) {
    if (config.on_run) config.on_run({.warmup = true, .variant = variants.front().Label()});
    PMSTORE_RETURN_IF_ERROR(WarmUp(config, variants.front(), fixed));
  }
  std::vector<std::vector<Sample>> samples(variants.size());
  std::vector<std::vector<std::string>> files(variants.size());
  std::vector<std::vector<std::string>> runs_taint;
  std::map<std::string, std::vector<std::string>> run_reasons;  // variant -> its anonymous runs' reasons
  RepeatPlan plan = config.repeat_auto ? RepeatPlan::Auto(config.repeat_budget_s) : RepeatPlan::Fixed(config.repeat);
  for (int r = 0; plan.StartRound(); ++r) {
    for (size_t k = 0; k < variants.size(); ++k) {
      const size_t i = r % 2 == 0 ? k : variants.size() - 1 - k;  // alternate the order every repeat
      if (config.on_run) {
        const RepeatOutcome so_far = plan.Outcome();
        config.on_run({.variant = variants[i].Label(), .round = r + 1, .rounds = plan.is_auto() ? 0 : config.repeat,
                       .elapsed_s = so_far.elapsed_s, .budget_s = so_far.budget_s});
      }
      RunSettings settings;
      settings.progress = config.progress;
      auto run = ExecutePlan(plans[i], settings);
      if (!run.ok()) {
        return absl::Status(run.status().code(), absl::StrCat(variants[i].Label(), ": ", run.status().message()));
      }
      Sample sample = SampleOf(*run);
      if (!sample.error.empty()) outcome.failures.push_back({variants[i].Label(), sample.error});
      samples[i].push_back(sample);
      for (const WorkerResult& w : run->workers) {
        files[i].push_back(w.file);
        std::vector<std::string>& reasons = run_reasons[variants[i].Label()];
        for (const std::string& reason : w.job.anonymous() ? w.doctor_reasons : std::vector<std::string>{}) {
          if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) reasons.push_back(reason);
        }
      }
      runs_taint.push_back(run->taint);
      if (outcome.emulation.empty()) outcome.emulation = run->machine.emulation;
      outcome.runs.push_back({.variant = variants[i].Label(),
                              .mode = variants[i].mode,
                              .engine = variants[i].engine,
                              .numa = variants[i].numa.label,
                              .repeat = r,
                              .result = *std::move(run)});
    }
    outcome.variants.clear();
    for (size_t i = 0; i < variants.size(); ++i) {
      outcome.variants.push_back(Summarize(variants[i], samples[i], files[i]));
    }
    if (plan.is_auto()) {
      plan.EndRound(Decided(JudgeGroups(outcome.variants, config.reuse_file, outcome.emulation, false)));
    } else {
      plan.EndRound(false);
    }
  }
  outcome.repeats = plan.Outcome();
  outcome.groups = JudgeGroups(outcome.variants, config.reuse_file, outcome.emulation, true, run_reasons);
  outcome.taint = MergeTaint(runs_taint);
  if (config.job.unlink) {
    for (const std::vector<std::string>& variant_files : files) {
      for (const std::string& file : variant_files) {
        if (file.empty()) continue;  // anonymous memory
        if (absl::Status s = UnlinkJobFile(file, "--unlink"); !s.ok()) {
          outcome.failures.push_back({"--unlink", std::string(s.message())});
        }
      }
    }
  }
  return outcome;
}

}  // namespace faultbench
