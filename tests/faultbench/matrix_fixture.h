// A kernel matrix directory as scripts/kernel-matrix leaves it, built from
// small compare documents in report/'s layout (the same fields
// diff_test.cc's faultbench runs carry), for matrix_test.cc and the CLI
// test of `faultbench matrix` and `diff --any-change`.
//
// The study (4 kernels x 3 backings, 3 runs a cell and mode):
//   pagecache-ext4  6.1 and 6.9: pte/mmap pmd_share 0, faults/MiB 250-262;
//                   6.16: pte/mmap pmd_share 0.93-0.95 (an improvement
//                   against 6.9), faults/MiB 255-265 (overlaps: no change);
//                   pmd/mmap the same in all three; 7.3: status "hang: ...".
//   tmpfs-huge      6.1: pmd/mmap no fallback; 6.9: status "skipped: ...";
//                   6.16: thp_fault_fallback 64 (a regression against 6.1,
//                   the nearest earlier kernel with results); 7.3: not run.
//   devdax-2M       6.1: status "failed: ..."; the others not run.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace matrix_fixture {

using nlohmann::json;

inline const std::vector<std::string> kKernels = {"linux-image-6.1.0-57-amd64", "linux-image-6.9.7+bpo-amd64",
                                                  "linux-image-6.16.12+deb13-amd64", "linux-image-7.3.4+deb13-amd64"};
inline const std::vector<std::string> kBackings = {"pagecache-ext4", "tmpfs-huge", "devdax-2M"};
inline const std::string kHang = "hang: soft lockup - CPU#1 stuck for 22s! [faultbench:164]";
inline const std::string kSkipped = "skipped: the kernel has no tmpfs huge=within_size";
inline const std::string kFailed = "failed: no /dev/dax0.0 in the VM";

// One run of one job in `mode` on kernel `release`, as report/json_report.cc writes it.
inline json Run(const std::string& release, const std::string& mode, double pmd_share, double faults_per_mib,
                double fallback) {
  const double range = 128 << 20;
  json job = {{"jobname", "study"},
              {"error", 0},
              {"job options", {{"name", "study"}, {"size", "134217728"}, {"bs", "4096"}, {"rw", "write"},
                               {"ioengine", "mmap"}, {"mapping", mode}}},
              {"write", {{"total_ios", 32768}, {"iops", 10000.0}, {"bw", 40000.0}, {"clat_ns", {{"mean", 900.0}}}}},
              {"minf", faults_per_mib * 128},
              {"majf", 0},
              {"faultbench",
               {{"range_bytes", range},
                {"faults_per_mib", faults_per_mib},
                {"mapping", {{"requested", mode}, {"engine", "mmap"}, {"pmd_bytes", pmd_share * range},
                             {"pte_bytes", (1 - pmd_share) * range}, {"pud_bytes", 0}}}}}};
  return {{"fio version", "faultbench-0.1.0"},
          {"jobs", json::array({job})},
          {"signature", {{"vmstat", {{"thp_fault_fallback", fallback}, {"thp_fault_alloc", 0}}},
                         {"page_tables_delta_kb", 8}}},
          {"system", {{"kernel", release}, {"hypervisor", "KVM"}, {"emulation", ""}, {"cpu_model", "QEMU Virtual CPU"},
                      {"online_cpus", 2}, {"cpu_governor", ""},
                      {"thp", {{"enabled", "always"}, {"defrag", "madvise"}, {"shmem_enabled", "never"}}},
                      {"filesystem", {{"type", "ext4"}, {"options", "rw,relatime"}}}}},
          {"taint", json::array({"hypervisor: KVM"})}};
}

// A compare --save-json document of one mode: run i has the i-th value of each list.
inline json Compare(const std::string& package, const std::string& mode, std::vector<double> shares,
                    std::vector<double> faults, std::vector<double> fallbacks) {
  const std::string release = package.substr(std::string("linux-image-").size());
  json runs = json::array();
  for (size_t i = 0; i < shares.size(); ++i) {
    runs.push_back({{"variant", mode + "/mmap"}, {"mode", mode}, {"engine", "mmap"}, {"numa", "default"},
                    {"repeat", i}, {"result", Run(release, mode, shares[i], faults[i], fallbacks[i])}});
  }
  return {{"runs", runs}};
}

inline void WriteText(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

inline std::string Lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

inline std::filesystem::path CellDir(const std::string& dir, size_t kernel, const std::string& backing) {
  return std::filesystem::path(dir) / "cells" / kKernels[kernel] / backing;
}

// Writes the study above into `dir`.
inline void WriteStudy(const std::string& dir) {
  WriteText(std::filesystem::path(dir) / "kernels.txt", Lines(kKernels));
  WriteText(std::filesystem::path(dir) / "backings.txt", Lines(kBackings));
  const auto put = [&](size_t k, const std::string& backing, const std::string& mode, const json& doc) {
    WriteText(CellDir(dir, k, backing) / (mode + ".json"), doc.dump(1));
  };
  const std::vector<double> none = {0, 0, 0}, all = {1, 1, 1}, pmd_faults = {0.5, 0.5, 0.5};
  for (size_t k : {0, 1}) {
    put(k, "pagecache-ext4", "pte", Compare(kKernels[k], "pte", none, {250, 256, 262}, none));
    put(k, "pagecache-ext4", "pmd", Compare(kKernels[k], "pmd", all, pmd_faults, none));
  }
  put(2, "pagecache-ext4", "pte", Compare(kKernels[2], "pte", {0.93, 0.94, 0.95}, {255, 260, 265}, none));
  put(2, "pagecache-ext4", "pmd", Compare(kKernels[2], "pmd", all, pmd_faults, none));
  WriteText(CellDir(dir, 3, "pagecache-ext4") / "status", kHang + "\n");

  put(0, "tmpfs-huge", "pmd", Compare(kKernels[0], "pmd", all, pmd_faults, none));
  WriteText(CellDir(dir, 1, "tmpfs-huge") / "status", kSkipped + "\n");
  put(2, "tmpfs-huge", "pmd", Compare(kKernels[2], "pmd", all, pmd_faults, {64, 64, 64}));

  WriteText(CellDir(dir, 0, "devdax-2M") / "status", kFailed + "\n");
}

}  // namespace matrix_fixture
