// fio's skewed random_distribution kinds against fio itself: fio-genzipf
// (Debian's fio package) draws fio 3.33's zipf, pareto and normal
// distributions, one draw per block, and prints the share of the draws that
// land on the hottest 5% of the blocks drawn at least once (its "Top 5.00%"
// row: rows divide the distinct blocks hit, t/genzipf.c). faultbench's
// draws, counted the same way, must put the same share there.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "faultbench/workload/block_order.h"

namespace faultbench {
namespace {

constexpr uint64_t kBlocks = 262144;  // 1 GiB of 4 KiB blocks: fio-genzipf -g 1 -b 4096

bool HaveFioGenzipf() { return std::system("command -v fio-genzipf >/dev/null 2>&1") == 0; }

// fio-genzipf's "Top 5.00%" hits share, in percent; -1 when its output has none.
double FioTopFivePercent(const std::string& type, const std::string& input) {
  const std::string command = "fio-genzipf -t " + type + " -i " + input + " -b 4096 -g 1 -o 20 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  std::array<char, 512> line;
  double share = -1;
  while (fgets(line.data(), line.size(), pipe) != nullptr) {
    std::string text(line.data());
    if (text.rfind("Top", 0) != 0) continue;
    const size_t tab = text.find('\t');
    const size_t percent = text.find('%', tab);
    if (tab == std::string::npos || percent == std::string::npos ||
        !absl::SimpleAtod(text.substr(tab + 1, percent - tab - 1), &share)) {
      share = -1;
    }
  }
  pclose(pipe);
  return share;
}

double OurTopFivePercent(const Distribution& distribution) {
  BlockOrder order = BlockOrder::Skewed(kBlocks, 0x89, distribution);
  std::vector<uint32_t> hits(kBlocks, 0);
  for (uint64_t i = 0; i < kBlocks; ++i) ++hits[order.Next()];
  std::sort(hits.rbegin(), hits.rend());
  const uint64_t distinct =
      static_cast<uint64_t>(std::count_if(hits.begin(), hits.end(), [](uint32_t h) { return h > 0; }));
  const uint64_t row = (distinct - 1) / 20 + 1;  // genzipf's interval_step for 20 rows
  uint64_t top = 0;
  for (uint64_t i = 0; i < row; ++i) top += hits[i];
  return 100.0 * static_cast<double>(top) / kBlocks;
}

struct Case {
  const char* type;
  const char* input;
  Distribution distribution;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.type << ":" << c.input; }

class DistributionPeer : public ::testing::TestWithParam<Case> {};

TEST_P(DistributionPeer, HottestFivePercentGetTheShareFioGives) {
  const Case& c = GetParam();
  if (!HaveFioGenzipf()) GTEST_SKIP() << "fio-genzipf (Debian package fio, in scripts/setup) is not installed";
  const double fio = FioTopFivePercent(c.type, c.input);
  ASSERT_GE(fio, 0) << "no 'Top' row in fio-genzipf's output";
  const double ours = OurTopFivePercent(c.distribution);
  std::printf("%s:%s: hottest 5%% of the blocks hit get %.2f%% of the draws (fio-genzipf %.2f%%)\n", c.type,
              c.input, ours, fio);
  EXPECT_NEAR(ours, fio, 0.5) << c.type << ":" << c.input << ": fio-genzipf " << fio << "%, faultbench " << ours << "%";
}

INSTANTIATE_TEST_SUITE_P(Fio, DistributionPeer,
                         ::testing::Values(Case{"zipf", "1.2", {RandomDistribution::kZipf, 1.2, -1}},
                                           Case{"zipf", "0.8", {RandomDistribution::kZipf, 0.8, -1}},
                                           Case{"pareto", "0.2", {RandomDistribution::kPareto, 0.2, -1}},
                                           Case{"pareto", "0.4", {RandomDistribution::kPareto, 0.4, -1}},
                                           Case{"normal", "0", {RandomDistribution::kNormal, 0, -1}},
                                           Case{"normal", "5", {RandomDistribution::kNormal, 5, -1}}),
                         [](const auto& param_info) {
                           std::string name = std::string(param_info.param.type) + "_" + param_info.param.input;
                           std::replace(name.begin(), name.end(), '.', '_');
                           return name;
                         });

}  // namespace
}  // namespace faultbench
