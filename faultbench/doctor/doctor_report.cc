// Text and JSON renderings of a DoctorReport. Field names of the JSON are
// part of the tool's interface: scripts read them.
#include <functional>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "faultbench/doctor/doctor.h"
#include "pmstore/base/units.h"

namespace faultbench::doctor {
namespace {

using pmstore::base::FormatBytes;

std::string OrUnknown(const std::string& s) { return s.empty() ? "unknown" : s; }

std::string ExtentLine(const ExtentFacts& e) {
  if (!e.examined) return absl::StrCat("not examined (", e.why_not, ")");
  if (e.file_bytes == 0) return absl::StrCat(e.extents, " extents; file smaller than 2 MiB");
  return absl::StrFormat("%.1f%% of bytes in 2 MiB aligned extents (%s of %s, %d extents)",
                         100.0 * static_cast<double>(e.aligned_bytes) / static_cast<double>(e.file_bytes),
                         pmstore::base::FormatBytes(e.aligned_bytes), pmstore::base::FormatBytes(e.file_bytes),
                         e.extents);
}

std::string BlockLine(const BlockFacts& b) {
  if (b.device.empty()) return absl::StrCat("none (device ", b.dev_id, ")");
  return absl::StrCat(b.device, " (", b.dev_id, "), NUMA node ", b.numa_node < 0 ? "unknown" : absl::StrCat(b.numa_node),
                      b.pmem ? ", pmem" : "");
}

// statx sets STATX_ATTR_DAX on regular files only, so a directory on a
// dax=always mount is described by its mount option.
std::string DaxLine(const DoctorReport& r) {
  const std::string mount = r.mount.dax_option.empty() ? "not set" : r.mount.dax_option;
  if (!r.is_file && r.mount.dax_option == "always") return "yes for every file (mount dax=always)";
  return absl::StrCat(r.statx_dax ? "yes" : "no", " (statx STATX_ATTR_DAX), mount dax=", mount);
}

std::string NodeLine(int node, int target_node) {
  return absl::StrCat(node < 0 ? "unknown" : absl::StrCat(node), " (target_node ",
                      target_node < 0 ? "unknown" : absl::StrCat(target_node), ")");
}

std::string PoolLine(const HugetlbfsFacts& fs) {
  if (!fs.pool) return absl::StrCat("none of ", FormatBytes(fs.page_size), " pages in this kernel");
  const HugetlbPool& p = *fs.pool;
  return absl::StrCat("nr_hugepages=", p.nr, " free=", p.free, " reserved=", p.reserved, " surplus=", p.surplus,
                      " (", p.Available(), " available to a new file; ", p.sysfs_dir, ")");
}

using Row = std::function<void(std::string_view, const std::string&)>;

// A device DAX device has no file system, mount or extents: its own rows.
void DeviceRows(const DevDaxFacts& d, const Row& row) {
  row("kind", absl::StrCat("device DAX ", d.name, " (character device ", d.dev_id, "), ", FormatBytes(d.size)));
  row("align", absl::StrCat(FormatBytes(d.align), ": the page size of every mapping of it"));
  row("namespace", d.namespace_name.empty()
                       ? "none (not from an nvdimm namespace)"
                       : absl::StrCat(d.namespace_name, " in ", d.region, ", mode ", OrUnknown(d.namespace_mode),
                                      ", struct pages in ", OrUnknown(d.struct_pages)));
  row("NUMA node", NodeLine(d.numa_node, d.target_node));
  row("physical start", absl::StrFormat("0x%x", d.resource));
  row("backed by", "device dax (no page cache, no file system)");
}

void PatRow(const DoctorReport& r, const Row& row) {
  row("PAT memtype", r.pat_memtype.empty() ? absl::StrCat("unknown (", r.pat_memtype_unknown, ")") : r.pat_memtype);
}

void FileRows(const DoctorReport& r, const Row& row) {
  row("kind", r.is_file ? absl::StrCat("file, ", FormatBytes(r.file_size)) : "directory");
  row("file system", absl::StrCat(r.mount.fs_type, " on ", r.mount.mount_point, " from ", r.mount.source));
  row("mount options", r.mount.options);
  row("DAX", DaxLine(r));
  row("backed by", r.page_source);
  if (r.fixed.hugetlbfs) {
    row("hugetlbfs pagesize", FormatBytes(r.fixed.hugetlbfs->page_size));
    row("huge page pool", PoolLine(*r.fixed.hugetlbfs));
    if (r.fixed.hugetlbfs->pool) {
      row("reserve pages", absl::StrCat("echo N > ", r.fixed.hugetlbfs->pool->sysfs_dir,
                                        "/nr_hugepages   (as root; N: the pool's new size)"));
    }
    if (r.fixed.hugetlbfs->limit_pages) {
      row("mount size=", absl::StrCat(*r.fixed.hugetlbfs->limit_pages, " pages, ",
                                      r.fixed.hugetlbfs->mount_free_pages.value_or(0), " free"));
    }
  } else {
    row("extent alignment", ExtentLine(r.extents));
  }
  row("THP", absl::StrCat("enabled=", OrUnknown(r.thp.enabled), " shmem_enabled=", OrUnknown(r.thp.shmem_enabled),
                          " defrag=", OrUnknown(r.thp.defrag)));
  if (r.mount.fs_type == "tmpfs") row("tmpfs huge=", r.mount.tmpfs_huge.empty() ? "not set (never)" : r.mount.tmpfs_huge);
  row("block device", BlockLine(r.block));
  if (r.block.pmem) PatRow(r, row);
}

}  // namespace

std::string RenderText(const DoctorReport& r) {
  std::string out;
  const Row row = [&](std::string_view key, const std::string& value) {
    absl::StrAppend(&out, absl::StrFormat("  %-20s %s\n", key, value));
  };
  absl::StrAppend(&out, "faultbench doctor: ", r.path, r.real_path != r.path ? absl::StrCat(" (", r.real_path, ")") : "", "\n");
  if (r.fixed.devdax) {
    DeviceRows(*r.fixed.devdax, row);
    PatRow(r, row);
  } else {
    FileRows(r, row);
  }
  row("kernel", r.kernel);
  row("PAGEMAP_SCAN", r.pagemap_scan ? "available (pagemap_scan verification)" : "unavailable (smaps verification)");
  row("fs_dax tracepoints", r.dax_tracepoints);
  absl::StrAppend(&out, "\nPMD mappings possible here: ", r.pmd_possible ? "yes" : "no", "\n");
  if (r.fixed.fixed()) absl::StrAppend(&out, "One page size here: ", FormatBytes(r.fixed.page_size), "\n");
  for (const Blocker& b : r.blockers) {
    absl::StrAppend(&out, "  blocker: ", b.reason, "\n      fix: ", b.fix, "\n");
  }
  for (const std::string& w : r.warnings) absl::StrAppend(&out, "  note: ", w, "\n");
  return out;
}

std::string RenderJson(const DoctorReport& r) {
  nlohmann::json j;
  j["path"] = r.path;
  j["real_path"] = r.real_path;
  j["kind"] = r.is_file ? "file" : "directory";
  j["file_size"] = r.file_size;
  j["mount"] = {{"mount_point", r.mount.mount_point}, {"fs_type", r.mount.fs_type}, {"source", r.mount.source},
                {"options", r.mount.options}, {"dax_option", r.mount.dax_option}, {"tmpfs_huge", r.mount.tmpfs_huge}};
  j["dax"] = r.statx_dax;
  j["backed_by"] = r.page_source;
  j["extents"] = {{"examined", r.extents.examined}, {"why_not", r.extents.why_not}, {"count", r.extents.extents},
                  {"file_bytes", r.extents.file_bytes}, {"aligned_bytes", r.extents.aligned_bytes}};
  j["thp"] = {{"enabled", r.thp.enabled}, {"shmem_enabled", r.thp.shmem_enabled}, {"defrag", r.thp.defrag}};
  j["block_device"] = {{"name", r.block.device}, {"dev", r.block.dev_id}, {"pmem", r.block.pmem},
                       {"numa_node", r.block.numa_node < 0 ? nlohmann::json() : nlohmann::json(r.block.numa_node)}};
  j["pat_memtype"] = r.pat_memtype.empty() ? nlohmann::json() : nlohmann::json(r.pat_memtype);
  if ((r.block.pmem || r.fixed.devdax) && r.pat_memtype.empty()) j["pat_memtype_unknown"] = r.pat_memtype_unknown;
  j["kernel"] = r.kernel;
  j["pagemap_scan"] = r.pagemap_scan;
  j["dax_tracepoints"] = r.dax_tracepoints;
  j["pmd_possible"] = r.pmd_possible;
  j["page_size"] = r.fixed.fixed() ? nlohmann::json(r.fixed.page_size) : nlohmann::json();
  if (r.fixed.devdax) {
    const DevDaxFacts& d = *r.fixed.devdax;
    j["kind"] = "device dax";
    j["device_dax"] = {{"name", d.name},           {"dev", d.dev_id},
                       {"size", d.size},           {"align", d.align},
                       {"numa_node", d.numa_node}, {"target_node", d.target_node},
                       {"resource", d.resource},   {"namespace", d.namespace_name},
                       {"mode", d.namespace_mode}, {"struct_pages", d.struct_pages},
                       {"region", d.region}};
  }
  if (r.fixed.hugetlbfs) {
    const HugetlbfsFacts& h = *r.fixed.hugetlbfs;
    nlohmann::json pool;
    if (h.pool) {
      pool = {{"nr_hugepages", h.pool->nr},        {"free_hugepages", h.pool->free},
              {"resv_hugepages", h.pool->reserved}, {"surplus_hugepages", h.pool->surplus},
              {"available", h.pool->Available()},  {"sysfs", h.pool->sysfs_dir},
              {"reserve_command", absl::StrCat("echo N > ", h.pool->sysfs_dir, "/nr_hugepages")}};
    }
    j["hugetlbfs"] = {{"mount_point", h.mount_point},
                      {"pagesize", h.page_size},
                      {"limit_pages", h.limit_pages ? nlohmann::json(*h.limit_pages) : nlohmann::json()},
                      {"pool", pool}};
  }
  j["blockers"] = nlohmann::json::array();
  for (const Blocker& b : r.blockers) j["blockers"].push_back({{"reason", b.reason}, {"fix", b.fix}});
  j["warnings"] = r.warnings;
  return j.dump(2) + "\n";
}

}  // namespace faultbench::doctor
