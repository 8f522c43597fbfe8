#include "faultbench/report/signature_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "faultbench/report/report.h"

namespace faultbench {
namespace {

using nlohmann::json;

template <typename T>
json OrNull(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

std::string Signed(int64_t value) { return absl::StrFormat("%+d", value); }

json FolioChecksJson(const std::vector<FolioCheck>& checks) {
  json out = json::array();
  for (const FolioCheck& c : checks) {
    out.push_back({{"size", pmstore::mapping::SizeName(c.size)},
                   {"histogram", c.histogram},
                   {"allocated_minus_split", c.allocated},
                   {"agree", c.agree()}});
  }
  return out;
}

}  // namespace

json SignatureJson(const RunSignature& s) {
  json dax = nullptr;
  if (s.dax_trace) {
    const DaxTraceTally& t = *s.dax_trace;
    dax = {{"nopage", t.pmd_nopage}, {"needdsync", t.pmd_needdsync}, {"fallback", t.pmd_fallback},
           {"other", t.pmd_other},   {"pte", t.pte_faults},          {"lost", t.lost_events}};
  }
  return {{"vmstat", s.vmstat_deltas},
          {"page_tables_kb", OrNull(s.page_tables_kb)},
          {"page_tables_delta_kb", OrNull(s.page_tables_delta_kb)},
          {"dax_trace", dax},
          {"faults", s.faults},
          {"bytes_accessed", s.bytes_accessed},
          {"faults_per_mib", s.faults_per_mib},
          {"verified", s.verified},
          {"pmd_share", s.pmd_share},
          {"pud_share", s.pud_share},
          {"mthp", s.mthp_deltas},
          {"folio_sizes", s.folios.empty() ? json(nullptr) : FolioSizesJson(s.folios, pmstore::mapping::PageIntent::kAuto)},
          {"folio_checks", FolioChecksJson(s.folio_checks)}};
}

json SystemJson(const RunResult& run) {
  const MachineState& m = run.machine;
  const MountFacts& fs = run.filesystem;
  return {{"kernel", m.kernel_release},
          {"kernel_config", m.kernel_config_source},
          {"kernel_debug_options", m.kernel_debug_options},
          {"hypervisor", m.hypervisor},
          {"emulation", m.emulation},
          {"cpu_model", m.cpu_model},
          {"online_cpus", m.online_cpus},
          {"cpu_governor", m.cpu_governor},
          {"thp", {{"enabled", m.thp_enabled}, {"defrag", m.thp_defrag}, {"shmem_enabled", m.thp_shmem_enabled}}},
          {"free_page_reporting", m.free_page_reporting},
          {"filesystem",
           {{"type", fs.fs_type}, {"source", fs.source}, {"mount_point", fs.mount_point}, {"options", fs.options},
            {"dax", fs.dax_option}}}};
}

std::string SignatureText(const RunSignature& s) {
  std::string out = "\nSignature (counted over the workload; exact under emulation):\n";
  absl::StrAppendFormat(&out, "  faults       : %d (%.2f per MiB)", s.faults, s.faults_per_mib);
  if (s.verified) {
    absl::StrAppendFormat(&out, ", verified PMD %.1f%%, PUD %.1f%%", s.pmd_share * 100, s.pud_share * 100);
  }
  absl::StrAppend(&out, "\n  vmstat       :");
  if (s.vmstat_deltas.empty()) absl::StrAppend(&out, " not read");
  for (const auto& [name, delta] : s.vmstat_deltas) absl::StrAppend(&out, " ", name, " ", Signed(delta));
  absl::StrAppend(&out, "\n");
  if (s.page_tables_kb) {
    absl::StrAppendFormat(&out, "  PageTables   : %d kB while mapped", *s.page_tables_kb);
    if (s.page_tables_delta_kb) absl::StrAppend(&out, " (", Signed(*s.page_tables_delta_kb), " kB over the run)");
    absl::StrAppend(&out, "\n");
  }
  std::string mthp;
  for (const auto& [name, delta] : s.mthp_deltas) {
    if (delta != 0) absl::StrAppend(&mthp, " ", name, " ", Signed(delta));
  }
  if (!mthp.empty()) absl::StrAppend(&out, "  THP by size :", mthp, "\n");
  if (!s.folios.empty()) absl::StrAppend(&out, "  folios       : ", FolioSizesText(s.folios), "\n");
  for (const FolioCheck& c : s.folio_checks) {
    absl::StrAppendFormat(&out, "  folio check  : %s: %d in the histogram, %d allocated minus split: %s\n",
                          pmstore::mapping::SizeName(c.size), c.histogram, c.allocated,
                          c.agree() ? "agree" : "DISAGREE");
  }
  if (s.dax_trace) {
    const DaxTraceTally& t = *s.dax_trace;
    absl::StrAppendFormat(&out, "  fs_dax       : NOPAGE %d, NEEDDSYNC %d, FALLBACK %d, other %d, PTE %d%s\n",
                          t.pmd_nopage, t.pmd_needdsync, t.pmd_fallback, t.pmd_other, t.pte_faults,
                          t.lost_events ? absl::StrCat(" (", t.lost_events, " lost: lower bounds)") : "");
  }
  return out;
}

}  // namespace faultbench
