#include "faultbench/result/report_groups.h"

#include <algorithm>
#include <map>

namespace faultbench {
namespace {

void AddMember(ReportEntry& entry, const WorkerResult& w, size_t index) {
  const bool first = entry.members.empty();
  entry.members.push_back(index);
  AddCounters(entry.total, w.total, first);
  entry.total.runtime_s = std::max(entry.total.runtime_s, w.total.runtime_s);
  entry.total.bytes_accessed += w.total.bytes_accessed;
  entry.job_runtime_s += w.total.runtime_s;
  entry.ns_per_tick += (w.ns_per_tick - entry.ns_per_tick) / static_cast<double>(entry.members.size());
  if (w.mapping.verified) {
    entry.mapping.pmd_bytes += w.mapping.census.pmd_bytes;
    entry.mapping.pud_bytes += w.mapping.census.pud_bytes;
    if (w.mapping.folios) {
      for (const auto& [size, n] : w.mapping.folios->folios) entry.mapping.folios[size] += n;
    }
    entry.mapping.pte_bytes += w.mapping.census.pte_bytes;
  } else {
    ++entry.mapping.unverified;
  }
  if (!w.error.empty()) {
    if (entry.errors++ == 0) entry.first_error = w.error;
  }
}

void AddDirection(GroupRunStatus::Direction& d, const DirectionStats& stats, double runtime_s, bool first) {
  if (stats.ios == 0 || runtime_s <= 0) return;
  const double bw = static_cast<double>(stats.bytes) / runtime_s;
  const bool none_yet = first || d.max_runtime_s == 0;
  d.bytes += stats.bytes;
  d.min_runtime_s = none_yet ? runtime_s : std::min(d.min_runtime_s, runtime_s);
  d.max_runtime_s = std::max(d.max_runtime_s, runtime_s);
  d.min_bw = none_yet ? bw : std::min(d.min_bw, bw);
  d.max_bw = std::max(d.max_bw, bw);
  d.aggregate_bw = static_cast<double>(d.bytes) / d.max_runtime_s;
}

}  // namespace

double MappingTotals::PmdShare() const {
  const uint64_t present = pmd_bytes + pud_bytes + pte_bytes;
  return present == 0 ? 0.0 : static_cast<double>(pmd_bytes) / static_cast<double>(present);
}

std::vector<ReportEntry> ReportEntries(const RunResult& run) {
  std::vector<ReportEntry> entries;
  for (size_t i = 0; i < run.workers.size(); ++i) {
    const WorkerResult& w = run.workers[i];
    // fio: a new entry unless this job reports by group and the worker
    // before it was of the same group (stat.c, __show_run_stats).
    const bool joins = i > 0 && w.job.group_reporting && run.workers[i - 1].group_id == w.group_id;
    if (!joins) {
      entries.emplace_back();
      entries.back().name = w.job.name;
      entries.back().group_id = w.group_id;
      entries.back().ns_per_tick = 0;
    }
    entries.back().aggregated |= w.job.group_reporting;
    AddMember(entries.back(), w, i);
  }
  return entries;
}

std::vector<GroupRunStatus> RunStatusGroups(const std::vector<ReportEntry>& entries) {
  std::map<int, GroupRunStatus> groups;
  for (const ReportEntry& e : entries) {
    auto [it, inserted] = groups.try_emplace(e.group_id);
    it->second.group_id = e.group_id;
    AddDirection(it->second.read, e.total.read, e.total.runtime_s, inserted);
    AddDirection(it->second.write, e.total.write, e.total.runtime_s, inserted);
  }
  std::vector<GroupRunStatus> out;
  for (auto& [id, group] : groups) out.push_back(group);
  return out;
}

}  // namespace faultbench
