#include "faultbench/taint/comparability.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace faultbench {
namespace {

struct NamedUnderTest {
  UnderTest value;
  std::string_view name;
};
constexpr NamedUnderTest kNames[] = {{UnderTest::kKernel, "kernel"},
                                     {UnderTest::kFs, "fs"},
                                     {UnderTest::kBuild, "build"},
                                     {UnderTest::kMachine, "machine"},
                                     {UnderTest::kWorkload, "workload"},
                                     {UnderTest::kPackage, "package"}};

bool OneOf(std::string_view fact, std::initializer_list<std::string_view> facts) {
  return std::find(facts.begin(), facts.end(), fact) != facts.end();
}

}  // namespace

absl::StatusOr<UnderTest> ParseUnderTest(std::string_view name) {
  for (const auto& entry : kNames) {
    if (entry.name == name) return entry.value;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--under-test: unknown '", std::string(name), "': use kernel, fs, build, machine, workload or package"));
}

std::string UnderTestName(UnderTest under_test) {
  for (const auto& entry : kNames) {
    if (entry.value == under_test) return std::string(entry.name);
  }
  return "kernel";
}

bool MayDiffer(std::string_view fact, UnderTest under_test) {
  switch (under_test) {
    case UnderTest::kKernel: return fact == kFactKernel;
    case UnderTest::kBuild: return OneOf(fact, {kFactKernel, kFactDebugOptions});
    case UnderTest::kFs: return OneOf(fact, {kFactFileSystem, kFactMountOptions});
    case UnderTest::kMachine:
      return OneOf(fact, {kFactHypervisor, kFactEmulation, kFactCpuModel, kFactCpus, kFactGovernor, kFactThpEnabled,
                          kFactThpDefrag, kFactThpShmem});
    case UnderTest::kPackage:
      return OneOf(fact, {kFactKernel, kFactDebugOptions, kFactThpEnabled, kFactThpDefrag, kFactThpShmem,
                          kFactMountOptions});
    case UnderTest::kWorkload:
      return absl::StartsWith(absl::string_view(fact.data(), fact.size()), kFactJobPrefix);
  }
  return false;
}

Comparability JudgeComparability(const SideFacts& base, const SideFacts& next, UnderTest under_test) {
  Comparability result;
  for (const auto& [fact, value] : base) {
    const auto other = next.find(fact);
    if (other == next.end() || other->second == value) continue;
    FactDifference difference{fact, value, other->second};
    (MayDiffer(fact, under_test) ? result.under_test : result.not_comparable).push_back(std::move(difference));
  }
  return result;
}

}  // namespace faultbench
