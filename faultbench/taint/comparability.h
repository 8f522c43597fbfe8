// Whether runs from two sides (two kernels, builds, file systems, machines
// or workloads) can be compared at all. The rules that judge two sides at
// once, beside taint.h's rules that judge one run.
//
// An experiment changes one thing, the one `--under-test` names; every
// other fact the runs recorded must be the same on both sides, or the
// difference cannot be told apart from its cause (a debug config made one
// baseline 30x slower; a VM inverted the 2016 PMD result). A fact one side
// does not know (fio's JSON records no system facts) is not judged.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace faultbench {

// kPackage: two distribution kernel packages studied by one script (the
// kernel matrix, bisection by package): the release, its debug options,
// its THP defaults, and how the kernel reports the same mount (xfs stopped
// listing attr2 in 6.18) come with the package; the hardware does not.
enum class UnderTest { kKernel, kFs, kBuild, kMachine, kWorkload, kPackage };

// "kernel", "fs", "build", "machine", "workload", "package"; InvalidArgument otherwise.
absl::StatusOr<UnderTest> ParseUnderTest(std::string_view name);
std::string UnderTestName(UnderTest under_test);

// What a side's runs recorded, by fact name (kFact* below, or "job NAME:
// OPTION" for a workload option); a fact a side does not know is absent.
using SideFacts = std::map<std::string, std::string>;

inline constexpr const char* kFactKernel = "kernel";
inline constexpr const char* kFactDebugOptions = "kernel debug options";
inline constexpr const char* kFactHypervisor = "hypervisor";
inline constexpr const char* kFactEmulation = "emulation";
inline constexpr const char* kFactCpuModel = "CPU model";
inline constexpr const char* kFactCpus = "CPUs";
inline constexpr const char* kFactGovernor = "CPU governor";
inline constexpr const char* kFactThpEnabled = "THP enabled";
inline constexpr const char* kFactThpDefrag = "THP defrag";
inline constexpr const char* kFactThpShmem = "THP shmem_enabled";
inline constexpr const char* kFactFileSystem = "file system";
inline constexpr const char* kFactMountOptions = "mount options";
inline constexpr const char* kFactJobPrefix = "job ";  // "job NAME: OPTION"

// Which --under-test lets `fact` differ:
//   kernel:   the kernel release
//   build:    the kernel release and its debug options (a config or patch)
//   fs:       the file system and its mount options (mkfs options show there: xfs sunit=)
//   machine:  hypervisor, emulation, CPU model, CPUs, governor, THP settings
//   workload: the job options
bool MayDiffer(std::string_view fact, UnderTest under_test);

struct FactDifference {
  std::string fact;
  std::string base, next;
};

struct Comparability {
  std::vector<FactDifference> under_test;      // differ, as the experiment allows
  std::vector<FactDifference> not_comparable;  // differ, and the experiment does not allow it
};

// Every fact both sides know and that differs, sorted into the two lists.
Comparability JudgeComparability(const SideFacts& base, const SideFacts& next, UnderTest under_test);

}  // namespace faultbench
