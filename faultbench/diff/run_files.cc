#include "faultbench/diff/run_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pmstore/base/status_macros.h"

namespace faultbench::diff {
namespace {

using nlohmann::json;

double Number(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string Text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "";
  return value.dump();
}

// The p99 of a direction: fio puts the percentiles under clat_ns, or under
// lat_ns with lat_percentiles=1; 0 when neither has them.
double P99(const json& direction) {
  for (const char* kind : {"clat_ns", "lat_ns"}) {
    const json* lat = direction.contains(kind) ? &direction[kind] : nullptr;
    if (lat != nullptr && lat->contains("percentile") && (*lat)["percentile"].contains("99.000000")) {
      return (*lat)["percentile"]["99.000000"].get<double>();
    }
  }
  return 0;
}

// The workers behind the "faultbench" block of an entry: the block itself
// (one worker), or with group_reporting the members it sums, each with its
// own range and mapping.
json WorkersOf(const json& fb) {
  if (fb.value("group_reporting", false) && fb.contains("workers") && fb["workers"].is_array()) return fb["workers"];
  return json::array({fb});
}

// A job's entries added up (one entry: a fio clone or a faultbench worker).
struct JobTotals {
  JobSample sample;
  struct Direction {
    uint64_t ios = 0;
    double iops = 0, bw_kib = 0, clat_weighted = 0, p99 = 0;
  } read, write;
  double minf = 0, majf = 0;
  double fault_weighted = 0, range_bytes = 0;     // faultbench: faults/MiB weighted by range
  double pmd = 0, pud = 0, present = 0;           // faultbench: verified bytes
  bool verified = true, faultbench = false;

  void AddDirection(Direction& d, const json& entry) {
    const uint64_t ios = static_cast<uint64_t>(Number(entry, "total_ios"));
    if (ios == 0) return;
    d.ios += ios;
    d.iops += Number(entry, "iops");
    d.bw_kib += Number(entry, "bw");
    d.clat_weighted += (entry.contains("clat_ns") ? Number(entry["clat_ns"], "mean") : 0) * static_cast<double>(ios);
    d.p99 = std::max(d.p99, P99(entry));
  }

  void Add(const json& entry) {
    if (entry.contains("read")) AddDirection(read, entry["read"]);
    if (entry.contains("write")) AddDirection(write, entry["write"]);
    minf += Number(entry, "minf");
    majf += Number(entry, "majf");
    sample.busiest_cpu_percent = std::max(sample.busiest_cpu_percent, Number(entry, "usr_cpu") + Number(entry, "sys_cpu"));
    if (!entry.contains("faultbench")) return;
    faultbench = true;
    const json& fb = entry["faultbench"];
    double range = 0;
    for (const json& worker : WorkersOf(fb)) range += Number(worker, "range_bytes");
    fault_weighted += Number(fb, "faults_per_mib") * range;
    range_bytes += range;
    // A group's mapping is its members' sums, with the members it could not read back.
    const json& mapping = fb.value("mapping", json::object());
    if (!mapping.contains("pmd_bytes") || mapping["pmd_bytes"].is_null() || Number(mapping, "unverified_workers") > 0) {
      verified = false;
    } else {
      pmd += Number(mapping, "pmd_bytes");
      pud += Number(mapping, "pud_bytes");  // 1 GiB mappings; absent: none
      present += Number(mapping, "pmd_bytes") + Number(mapping, "pte_bytes") + Number(mapping, "pud_bytes");
    }
    for (const json& worker : WorkersOf(fb)) {
      for (const json& reason : worker.value("mapping", json::object()).value("doctor_reasons", json::array())) {
        const std::string r = Text(reason);
        if (std::find(sample.doctor_reasons.begin(), sample.doctor_reasons.end(), r) == sample.doctor_reasons.end()) {
          sample.doctor_reasons.push_back(r);
        }
      }
    }
  }

  JobSample Finish() {
    auto& f = sample.figures;
    for (auto [prefix, d] : {std::pair<const char*, Direction*>{"read", &read}, {"write", &write}}) {
      if (d->ios == 0) continue;
      const std::string p = prefix;
      f[p + ".iops"] = d->iops;
      f[p + ".bw_mib"] = d->bw_kib / 1024;
      f[p + ".clat_mean_ns"] = d->clat_weighted / static_cast<double>(d->ios);
      if (d->p99 > 0) f[p + ".clat_p99_ns"] = d->p99;
    }
    f["minf"] = minf;
    f["majf"] = majf;
    if (faultbench) {
      if (range_bytes > 0) f["faults_per_mib"] = fault_weighted / range_bytes;
      if (verified && present > 0) {
        f["pmd_share"] = pmd / present;
        f["pud_share"] = pud / present;
      }
    }
    return std::move(sample);
  }
};

// The job options of one entry: fio's "global options" under its own.
std::map<std::string, std::string> OptionsOf(const json& entry, const json& global) {
  std::map<std::string, std::string> options;
  for (const json* source : {&global, entry.contains("job options") ? &entry["job options"] : nullptr}) {
    if (source == nullptr || !source->is_object()) continue;
    for (const auto& [key, value] : source->items()) options[key] = Text(value);
  }
  // Where the files went says nothing about the workload.
  for (const char* key : {"name", "filename", "directory"}) options.erase(key);
  return options;
}

std::string VariantOf(const json& entry, const std::map<std::string, std::string>& options) {
  if (entry.contains("faultbench")) {
    const json workers = WorkersOf(entry["faultbench"]);
    const json m = workers.empty() ? json::object() : workers[0].value("mapping", json::object());
    return absl::StrCat(m.value("requested", "auto"), "/", m.value("engine", "mmap"));
  }
  const auto engine = options.find("ioengine");
  return engine == options.end() ? "default" : engine->second;
}

// The system facts of a faultbench run document (comparability.h).
SideFacts FactsOf(const json& system) {
  SideFacts facts;
  const auto put = [&](const char* fact, const std::string& value) { facts[fact] = value; };
  put(kFactKernel, system.value("kernel", ""));
  if (!system.value("kernel_config", "").empty()) {
    const auto options = system.value("kernel_debug_options", std::vector<std::string>{});
    put(kFactDebugOptions, options.empty() ? "none" : absl::StrJoin(options, ","));
  }
  put(kFactHypervisor, system.value("hypervisor", "").empty() ? "none" : system.value("hypervisor", ""));
  put(kFactEmulation, system.value("emulation", "").empty() ? "none" : system.value("emulation", ""));
  put(kFactCpuModel, system.value("cpu_model", ""));
  put(kFactCpus, Text(system.value("online_cpus", json())));
  put(kFactGovernor, system.value("cpu_governor", "").empty() ? "not exposed" : system.value("cpu_governor", ""));
  const json& thp = system.value("thp", json::object());
  put(kFactThpEnabled, thp.value("enabled", ""));
  put(kFactThpDefrag, thp.value("defrag", ""));
  put(kFactThpShmem, thp.value("shmem_enabled", ""));
  const json& fs = system.value("filesystem", json::object());
  const std::string fs_type = fs.value("type", "");
  put(kFactFileSystem, fs_type);
  // A device DAX node lives on devtmpfs, whose size= and nr_inodes= follow
  // the RAM the booted kernel left free: facts of the boot, not of the
  // device mapped, and they differ between any two kernels.
  if (fs_type != "devtmpfs") put(kFactMountOptions, fs.value("options", ""));
  for (auto it = facts.begin(); it != facts.end();) it = it->second.empty() ? facts.erase(it) : std::next(it);
  return facts;
}

// The run-level signature of a faultbench run, as figures.
std::map<std::string, double> SignatureFigures(const json& signature) {
  std::map<std::string, double> f;
  const json vmstat = signature.value("vmstat", json::object());
  for (const auto& [name, delta] : vmstat.items()) {
    if (delta.is_number()) f["vmstat." + name] = delta.get<double>();
  }
  const json mthp = signature.value("mthp", json::object());
  for (const auto& [name, delta] : mthp.items()) {
    if (delta.is_number()) f["mthp." + name] = delta.get<double>();
  }
  if (signature.contains("page_tables_delta_kb") && signature["page_tables_delta_kb"].is_number()) {
    f["page_tables_delta_kb"] = signature["page_tables_delta_kb"].get<double>();
  }
  if (const json& dax = signature.value("dax_trace", json()); dax.is_object()) {
    f["dax.pmd_installed"] = Number(dax, "nopage") + Number(dax, "needdsync");
    f["dax.fallback"] = Number(dax, "fallback");
    f["dax.pte"] = Number(dax, "pte");
  }
  return f;
}

// One run document (faultbench's run JSON or fio's): its jobs, by name and variant.
RunSample RunOfDocument(const json& doc, const std::string& source, const std::string& variant_override) {
  RunSample run;
  run.source = source;
  run.tool = doc.value("fio version", "unknown");
  const json& global = doc.value("global options", json::object());
  std::vector<JobTotals> totals;
  for (const json& entry : doc["jobs"]) {
    const std::map<std::string, std::string> options = OptionsOf(entry, global);
    const std::string name = entry.value("jobname", "");
    const std::string variant = variant_override.empty() ? VariantOf(entry, options) : variant_override;
    auto it = std::find_if(totals.begin(), totals.end(),
                           [&](const JobTotals& t) { return t.sample.name == name && t.sample.variant == variant; });
    if (it == totals.end()) {
      totals.emplace_back();
      it = std::prev(totals.end());
      it->sample.name = name;
      it->sample.variant = variant;
      it->sample.options = options;
    }
    it->Add(entry);
    if (Number(entry, "error") != 0 && run.error.empty()) {
      const std::string detail = entry.contains("faultbench") ? entry["faultbench"].value("error", "") : "";
      run.error = absl::StrCat("job '", name, "' failed", detail.empty() ? absl::StrCat(" (error ", Text(entry["error"]), ")")
                                                                          : ": " + detail);
    }
  }
  for (JobTotals& t : totals) run.jobs.push_back(t.Finish());
  if (doc.contains("signature") && doc["signature"].is_object() && !run.jobs.empty()) {
    std::map<std::string, double> signature = SignatureFigures(doc["signature"]);
    if (run.jobs.size() > 1) {  // one signature for the run: a job of its own
      run.jobs.push_back({.name = "all jobs", .variant = "run"});
    }
    run.jobs.back().figures.merge(signature);
  }
  if (doc.contains("system") && doc["system"].is_object()) {
    run.knows_system = true;
    run.facts = FactsOf(doc["system"]);
    for (const json& line : doc.value("taint", json::array())) run.taint.push_back(Text(line));
  }
  return run;
}

absl::StatusOr<json> ParseFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot be read"));
  std::stringstream text;
  text << in.rdbuf();
  std::string content = text.str();
  // fio may print notes before its JSON when stderr went to the same file.
  const size_t start = content.find('{');
  if (start == std::string::npos) return absl::InvalidArgumentError(absl::StrCat(path, ": no JSON document in it"));
  json doc = json::parse(content.begin() + static_cast<std::ptrdiff_t>(start), content.end(), nullptr, false);
  if (doc.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(path, ": not valid JSON"));
  return doc;
}

}  // namespace

absl::StatusOr<std::vector<RunSample>> RunsOfDocument(const json& doc, const std::string& source) {
  std::vector<RunSample> runs;
  if (doc.is_object() && doc.contains("runs") && doc["runs"].is_array()) {  // faultbench compare
    for (size_t i = 0; i < doc["runs"].size(); ++i) {
      const json& r = doc["runs"][i];
      if (!r.contains("result") || !r["result"].contains("jobs")) continue;
      runs.push_back(RunOfDocument(r["result"], absl::StrCat(source, ": runs[", i, "]"), r.value("variant", "")));
    }
  } else if (doc.is_object() && doc.contains("jobs") && doc["jobs"].is_array()) {  // faultbench run or fio
    runs.push_back(RunOfDocument(doc, source, ""));
  }
  if (runs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": not a faultbench run or compare document, nor fio JSON"));
  }
  return runs;
}

absl::StatusOr<std::vector<RunSample>> ReadRuns(const std::vector<std::string>& paths,
                                               std::vector<std::string>* skipped) {
  std::vector<RunSample> runs;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return absl::NotFoundError(absl::StrCat(path, ": no such file or directory"));
    std::vector<std::string> files;
    const bool directory = std::filesystem::is_directory(path, ec);
    if (directory) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(path, ec)) {
        if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path().string());
      }
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(path);
    }
    for (const std::string& file : files) {
      auto doc = ParseFile(file);
      auto found = doc.ok() ? RunsOfDocument(*doc, file) : absl::StatusOr<std::vector<RunSample>>(doc.status());
      if (!found.ok()) {
        if (!directory) return found.status();
        if (skipped != nullptr) skipped->push_back(std::string(found.status().message()));
        continue;
      }
      for (RunSample& run : *found) runs.push_back(std::move(run));
    }
  }
  return runs;
}

}  // namespace faultbench::diff
