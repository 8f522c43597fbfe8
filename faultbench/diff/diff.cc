#include "faultbench/diff/diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "faultbench/taint/taint.h"
#include "pmstore/base/status_macros.h"

namespace faultbench::diff {
namespace {

constexpr double kSaturatedCpuPercent = 95;

// A run whose CPU was the limit: faultbench's own taint line (its workers
// used >= 95% of all CPUs), or for fio, a job entry at usr+sys >= 95%.
bool CpuSaturated(const RunSample& run) {
  if (run.knows_system) {
    return std::any_of(run.taint.begin(), run.taint.end(),
                       [](const std::string& line) { return absl::StartsWith(line, "cpu saturation:"); });
  }
  return std::any_of(run.jobs.begin(), run.jobs.end(),
                     [](const JobSample& j) { return j.busiest_cpu_percent >= kSaturatedCpuPercent; });
}

SideSummary SummarizeSide(const std::vector<RunSample>& runs) {
  SideSummary side;
  side.runs = static_cast<int>(runs.size());
  side.taint_known = !runs.empty();
  std::vector<std::vector<std::string>> taints;
  std::map<std::string, std::set<std::string>> values;
  for (const RunSample& run : runs) {
    if (std::find(side.tools.begin(), side.tools.end(), run.tool) == side.tools.end()) side.tools.push_back(run.tool);
    side.taint_known = side.taint_known && run.knows_system;
    if (run.knows_system) taints.push_back(run.taint);
    for (const auto& [fact, value] : run.facts) values[fact].insert(value);
    if (!run.error.empty()) side.failed.push_back(absl::StrCat(run.source, ": ", run.error));
    if (CpuSaturated(run)) ++side.cpu_saturated_runs;
  }
  side.taint = MergeTaint(taints);
  for (const auto& [fact, seen] : values) {
    if (seen.size() == 1) {
      side.facts[fact] = *seen.begin();
    } else {
      side.inconsistent.push_back(absl::StrCat(fact, ": ", absl::StrJoin(seen, " / ")));
    }
  }
  const auto emulation = side.facts.find(kFactEmulation);
  if (emulation != side.facts.end() && emulation->second != "none") side.emulation = emulation->second;
  return side;
}

struct JobKey {
  std::string name, variant;
  bool operator<(const JobKey& o) const { return std::tie(name, variant) < std::tie(o.name, o.variant); }
};
std::string Label(const JobKey& key) { return absl::StrCat("job '", key.name, "' [", key.variant, "]"); }

using JobRuns = std::map<JobKey, std::vector<const JobSample*>>;

JobRuns ByJob(const std::vector<RunSample>& runs) {
  JobRuns jobs;
  for (const RunSample& run : runs) {
    for (const JobSample& job : run.jobs) jobs[{job.name, job.variant}].push_back(&job);
  }
  return jobs;
}

// The workload of every job both sides ran, as facts ("job 't' [psync]:
// bs"): an option one side sets and the other leaves at its default differs.
void AddWorkloadFacts(const JobKey& key, const std::vector<const JobSample*>& base,
                      const std::vector<const JobSample*>& next, SideFacts& base_facts, SideFacts& next_facts,
                      std::vector<std::string>& base_inconsistent, std::vector<std::string>& next_inconsistent) {
  std::set<std::string> keys;
  for (const auto* side : {&base, &next}) {
    for (const JobSample* j : *side) {
      for (const auto& [option, value] : j->options) keys.insert(option);
    }
  }
  const auto put = [&](const std::vector<const JobSample*>& runs, SideFacts& facts, std::vector<std::string>& bad) {
    for (const std::string& option : keys) {
      std::set<std::string> seen;
      for (const JobSample* j : runs) {
        const auto it = j->options.find(option);
        seen.insert(it == j->options.end() ? "(default)" : it->second);
      }
      const std::string fact = absl::StrCat(kFactJobPrefix, key.name, " [", key.variant, "]: ", option);
      if (seen.size() == 1) {
        facts[fact] = *seen.begin();
      } else {
        bad.push_back(absl::StrCat(fact, ": ", absl::StrJoin(seen, " / ")));
      }
    }
  };
  put(base, base_facts, base_inconsistent);
  put(next, next_facts, next_inconsistent);
}

FigureVerdict VerdictOf(const MetricInfo& metric, const stats::ChangeJudgement& change, bool signature_only) {
  if (signature_only && !metric.signature) return FigureVerdict::kNotJudged;
  switch (change.change) {
    case stats::Change::kTooFewRuns: return FigureVerdict::kNoSpread;
    case stats::Change::kNone: return FigureVerdict::kNoChange;
    case stats::Change::kUp: return metric.worse == Worse::kUp ? FigureVerdict::kRegression : FigureVerdict::kImprovement;
    case stats::Change::kDown:
      return metric.worse == Worse::kDown ? FigureVerdict::kRegression : FigureVerdict::kImprovement;
  }
  return FigureVerdict::kNoSpread;
}

JobDiff DiffJob(const JobKey& key, const std::vector<const JobSample*>& base, const std::vector<const JobSample*>& next,
                bool signature_only) {
  JobDiff job;
  job.name = key.name;
  job.variant = key.variant;
  job.base_runs = static_cast<int>(base.size());
  job.next_runs = static_cast<int>(next.size());
  std::set<std::string> names, next_names;
  for (const JobSample* j : base) {
    for (const auto& [name, value] : j->figures) names.insert(name);
  }
  for (const JobSample* j : next) {
    for (const auto& [name, value] : j->figures) next_names.insert(name);
  }
  for (const std::string& name : names) {
    if (FindMetric(name) != nullptr && !next_names.count(name)) job.only_base.push_back(name);
  }
  for (const std::string& name : next_names) {
    if (FindMetric(name) != nullptr && !names.count(name)) job.only_next.push_back(name);
  }
  const auto values = [](const std::vector<const JobSample*>& runs, const std::string& name) {
    std::vector<double> out;
    for (const JobSample* j : runs) {
      if (const auto it = j->figures.find(name); it != j->figures.end()) out.push_back(it->second);
    }
    return out;
  };
  for (const std::string& name : names) {
    const MetricInfo* metric = FindMetric(name);
    if (metric == nullptr) continue;
    std::vector<double> next_values = values(next, name);
    if (next_values.empty()) continue;
    FigureDiff f;
    f.metric = metric;
    f.base = stats::Summarize(values(base, name));
    f.next = stats::Summarize(std::move(next_values));
    f.change = stats::JudgeChange(f.base, f.next, metric->floor);
    f.verdict = VerdictOf(*metric, f.change, signature_only);
    job.figures.push_back(std::move(f));
  }
  std::sort(job.figures.begin(), job.figures.end(), [](const FigureDiff& a, const FigureDiff& b) {
    return MetricOrder(a.metric->name) < MetricOrder(b.metric->name);
  });
  for (const JobSample* j : next) {
    for (const std::string& r : j->doctor_reasons) {
      if (std::find(job.next_doctor_reasons.begin(), job.next_doctor_reasons.end(), r) == job.next_doctor_reasons.end()) {
        job.next_doctor_reasons.push_back(r);
      }
    }
  }
  return job;
}

std::string Figure(double v) {
  if (std::fabs(v) >= 100 || v == std::floor(v)) return absl::StrFormat("%.0f", v);
  return absl::StrFormat("%.3g", v);
}

// "faults_per_mib 0.5 -> 256 (+51100%)".
std::string ChangeLine(const JobDiff& job, const FigureDiff& f, bool name_job) {
  const std::string pct =
      std::isinf(f.change.change_pct) ? "new" : absl::StrFormat("%+.1f%%", f.change.change_pct);
  return absl::StrCat(f.metric->name, " ", Figure(f.base.mean), " -> ", Figure(f.next.mean), " (", pct, ")",
                      name_job ? absl::StrCat(" in job '", job.name, "' [", job.variant, "]") : "");
}

// "sunit=4096,swidth=4096 only in base": what differs between two option lists.
std::string OptionsDifference(const std::string& base, const std::string& next) {
  const std::vector<std::string> a = absl::StrSplit(base, ','), b = absl::StrSplit(next, ',');
  std::vector<std::string> only_base, only_next;
  for (const std::string& o : a) {
    if (std::find(b.begin(), b.end(), o) == b.end()) only_base.push_back(o);
  }
  for (const std::string& o : b) {
    if (std::find(a.begin(), a.end(), o) == a.end()) only_next.push_back(o);
  }
  std::string out;
  if (!only_base.empty()) absl::StrAppend(&out, absl::StrJoin(only_base, ","), " only in base");
  if (!only_next.empty()) absl::StrAppend(&out, out.empty() ? "" : "; ", absl::StrJoin(only_next, ","), " only in new");
  return out;
}

// Whether `f` is what the verdict counts under `rule`.
bool Counts(const FigureDiff& f, VerdictRule rule) {
  return f.verdict == FigureVerdict::kRegression ||
         (rule == VerdictRule::kAnyChange && f.verdict == FigureVerdict::kImprovement);
}

// The causes of a regression (or a change): what the experiment changed,
// what the new side's doctor found for the jobs that changed, and what the
// signature says happened (a fallback only when it got worse).
std::vector<std::string> Causes(const DiffOutcome& o) {
  std::vector<std::string> causes;
  for (const FactDifference& d : o.comparability.under_test) {
    causes.push_back(absl::StrCat("under test (", UnderTestName(o.under_test), "): ", DescribeDifference(d)));
  }
  bool fell_back = false;
  std::vector<std::string> fallbacks;
  for (const JobDiff& job : o.jobs) {
    bool regressed = false;
    for (const FigureDiff& f : job.figures) {
      if (!Counts(f, o.rule)) continue;
      regressed = true;
      if (f.verdict != FigureVerdict::kRegression) continue;
      const std::string& n = f.metric->name;
      if (n == "vmstat.thp_fault_fallback" || n == "dax.fallback" || n == "pmd_share") {
        fell_back = true;
        fallbacks.push_back(ChangeLine(job, f, false));
      }
    }
    if (!regressed) continue;
    for (const std::string& r : job.next_doctor_reasons) {
      causes.push_back(absl::StrCat("the new runs' doctor (job '", job.name, "'): ", r));
    }
  }
  if (fell_back) {
    causes.push_back(absl::StrCat("PMD faults fell back to 4 KiB PTEs on the new side: ", absl::StrJoin(fallbacks, ", ")));
  }
  return causes;
}

// " (--under-test=fs would allow it)": the experiment the first
// difference belongs to, when it is not the one under test.
std::string WhatWouldAllow(const DiffOutcome& o) {
  if (o.comparability.not_comparable.empty()) return "";
  const std::string& fact = o.comparability.not_comparable.front().fact;
  for (UnderTest u : {UnderTest::kKernel, UnderTest::kBuild, UnderTest::kPackage, UnderTest::kFs, UnderTest::kMachine,
                      UnderTest::kWorkload}) {
    if (MayDiffer(fact, u)) {
      return absl::StrCat(" (--under-test=", UnderTestName(o.under_test), "; --under-test=", UnderTestName(u),
                          " would allow the ", fact.rfind(kFactJobPrefix, 0) == 0 ? "job options" : fact, " to differ)");
    }
  }
  return "";
}

// --any-change: every significant change counts, whichever its direction;
// the verdict still says which were worse and which better.
void DecideAnyChange(DiffOutcome& o, const std::vector<std::string>& worse, const std::vector<std::string>& better,
                     int judged) {
  if (worse.empty() && better.empty()) {
    o.verdict = DiffVerdict::kNoChange;
    o.verdict_text = absl::StrFormat("no change: no significant difference in %d figures", judged);
    return;
  }
  std::vector<std::string> lists;
  if (!worse.empty()) lists.push_back(absl::StrCat("worse: ", absl::StrJoin(worse, ", ")));
  if (!better.empty()) lists.push_back(absl::StrCat("better: ", absl::StrJoin(better, ", ")));
  o.verdict = DiffVerdict::kChange;
  o.verdict_text = absl::StrFormat("CHANGE: %d of %d figures changed (%d worse, %d better): %s",
                                   worse.size() + better.size(), judged, worse.size(), better.size(),
                                   absl::StrJoin(lists, "; "));
  o.causes = Causes(o);
}

void Decide(DiffOutcome& o) {
  const auto cannot = [&](const std::string& why) {
    o.verdict = DiffVerdict::kCannotJudge;
    o.verdict_text = "cannot judge: " + why;
  };
  if (o.base.runs == 0 || o.next.runs == 0) {
    return cannot(absl::StrCat("the ", o.base.runs == 0 ? "base" : "new", " side has no runs"));
  }
  if (!o.base.failed.empty() || !o.next.failed.empty()) {
    return cannot(absl::StrCat("a run failed: ", o.base.failed.empty() ? o.next.failed.front() : o.base.failed.front()));
  }
  std::vector<std::string> why_not;
  for (const std::string& f : o.base.inconsistent) why_not.push_back("the base runs differ among themselves in " + f);
  for (const std::string& f : o.next.inconsistent) why_not.push_back("the new runs differ among themselves in " + f);
  for (const FactDifference& d : o.comparability.not_comparable) why_not.push_back(DescribeDifference(d));
  if (!why_not.empty()) {
    o.verdict = DiffVerdict::kCannotJudge;
    o.verdict_text = absl::StrCat("not comparable because ", absl::StrJoin(why_not, "; "), WhatWouldAllow(o));
    return;
  }
  if (o.jobs.empty()) return cannot("no job (name and variant) ran on both sides");
  std::vector<std::string> worse, better;
  bool any_spread = false;
  int judged = 0;
  const bool many_jobs = o.jobs.size() > 1;
  for (const JobDiff& job : o.jobs) {
    for (const FigureDiff& f : job.figures) {
      if (f.verdict == FigureVerdict::kNotJudged) continue;
      if (f.verdict != FigureVerdict::kNoSpread) any_spread = true;
      ++judged;
      if (f.verdict == FigureVerdict::kRegression) worse.push_back(ChangeLine(job, f, many_jobs));
      if (f.verdict == FigureVerdict::kImprovement) better.push_back(ChangeLine(job, f, many_jobs));
    }
  }
  if (!any_spread) {
    return cannot(absl::StrFormat("fewer than 3 runs a side (base %d, new %d): no spread is known, nothing is called",
                                  o.base.runs, o.next.runs));
  }
  if (o.rule == VerdictRule::kAnyChange) return DecideAnyChange(o, worse, better, judged);
  if (!better.empty()) o.notes.push_back(absl::StrCat("better: ", absl::StrJoin(better, ", ")));
  if (!worse.empty()) {
    o.verdict = DiffVerdict::kRegression;
    o.verdict_text = absl::StrFormat("REGRESSION: %d of %d figures worse: %s", worse.size(), judged,
                                     absl::StrJoin(worse, ", "));
    o.causes = Causes(o);
    return;
  }
  o.verdict = DiffVerdict::kNoRegression;
  o.verdict_text = better.empty() ? absl::StrFormat("no regression: no significant difference in %d figures", judged)
                                  : absl::StrFormat("no regression: %d of %d figures better", better.size(), judged);
}

void AddSideNotes(const SideSummary& side, const char* name, bool timings_judged, std::vector<std::string>& notes) {
  if (!side.taint_known && side.runs > 0) {
    notes.push_back(absl::StrCat(name, ": taint unknown (", absl::StrJoin(side.tools, ", "),
                                 " records no system facts): judged on what it has"));
  }
  if (timings_judged && side.cpu_saturated_runs > 0) {
    notes.push_back(absl::StrFormat(
        "%s: CPU saturated in %d of %d runs (usr+sys >= 95%%): its timings measured the CPU cost per I/O, not the "
        "device",
        name, side.cpu_saturated_runs, side.runs));
  }
}

void AddSkippedNote(const SideSummary& side, const char* name, std::vector<std::string>& notes) {
  if (side.skipped.empty()) return;
  notes.push_back(absl::StrFormat("%s: %d file(s) without runs left out (%s)", name, side.skipped.size(),
                                  side.skipped.front()));
}

}  // namespace

std::string DescribeDifference(const FactDifference& d) {
  if (d.fact == kFactMountOptions) return absl::StrCat(d.fact, ": ", OptionsDifference(d.base, d.next));
  return absl::StrCat(d.fact, ": ", d.base, " (base) vs ", d.next, " (new)");
}

std::string FigureVerdictName(FigureVerdict verdict) {
  switch (verdict) {
    case FigureVerdict::kRegression: return "REGRESSION";
    case FigureVerdict::kImprovement: return "improvement";
    case FigureVerdict::kNoChange: return "no significant difference";
    case FigureVerdict::kNoSpread: return "no spread known";
    case FigureVerdict::kNotJudged: return "not judged (emulation)";
  }
  return "";
}

int DiffOutcome::ExitStatus() const {
  switch (verdict) {
    case DiffVerdict::kNoRegression:
    case DiffVerdict::kNoChange: return 0;
    case DiffVerdict::kRegression:
    case DiffVerdict::kChange: return 1;
    case DiffVerdict::kCannotJudge: return 125;
  }
  return 125;
}

DiffOutcome JudgeSides(const std::vector<RunSample>& base, const std::vector<RunSample>& next, UnderTest under_test,
                       VerdictRule rule) {
  DiffOutcome o;
  o.under_test = under_test;
  o.rule = rule;
  o.base = SummarizeSide(base);
  o.next = SummarizeSide(next);
  o.emulation = !o.base.emulation.empty() ? o.base.emulation : o.next.emulation;
  const JobRuns base_jobs = ByJob(base), next_jobs = ByJob(next);
  SideFacts base_facts = o.base.facts, next_facts = o.next.facts;
  for (const auto& [key, runs] : base_jobs) {
    const auto other = next_jobs.find(key);
    if (other == next_jobs.end()) {
      o.unmatched.push_back(Label(key) + " only in base");
      continue;
    }
    AddWorkloadFacts(key, runs, other->second, base_facts, next_facts, o.base.inconsistent, o.next.inconsistent);
    o.jobs.push_back(DiffJob(key, runs, other->second, !o.emulation.empty()));
  }
  for (const auto& [key, runs] : next_jobs) {
    if (base_jobs.find(key) == base_jobs.end()) o.unmatched.push_back(Label(key) + " only in new");
  }
  o.comparability = JudgeComparability(base_facts, next_facts, under_test);
  AddSideNotes(o.base, "base", o.emulation.empty(), o.notes);
  AddSideNotes(o.next, "new", o.emulation.empty(), o.notes);
  Decide(o);
  const size_t second_colon = o.verdict_text.find(':', o.verdict_text.find(':') + 1);
  const bool listed = o.verdict == DiffVerdict::kRegression || o.verdict == DiffVerdict::kChange;
  o.headline = listed ? o.verdict_text.substr(0, second_colon) : o.verdict_text;
  return o;
}

absl::StatusOr<DiffOutcome> RunDiff(const DiffConfig& config) {
  if (config.base_paths.empty() || config.new_paths.empty()) {
    return absl::InvalidArgumentError("diff needs --base=PATH[,PATH...] and --new=PATH[,PATH...]");
  }
  std::vector<std::string> base_skipped, next_skipped;
  PMSTORE_ASSIGN_OR_RETURN(std::vector<RunSample> base, ReadRuns(config.base_paths, &base_skipped));
  PMSTORE_ASSIGN_OR_RETURN(std::vector<RunSample> next, ReadRuns(config.new_paths, &next_skipped));
  DiffOutcome outcome = JudgeSides(base, next, config.under_test, config.rule);
  outcome.base.skipped = std::move(base_skipped);
  outcome.next.skipped = std::move(next_skipped);
  AddSkippedNote(outcome.base, "base", outcome.notes);
  AddSkippedNote(outcome.next, "new", outcome.notes);
  return outcome;
}

}  // namespace faultbench::diff
