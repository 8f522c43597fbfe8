#include "faultbench/workload/block_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "faultbench/workload/block_coverage.h"

namespace faultbench {
namespace {

// Every block of one pass exactly once, for sizes around powers of two
// where cycle walking and the k-bit generator change.
TEST(BlockOrder, RandomPassVisitsEveryBlockExactlyOnce) {
  for (uint64_t n : {1ull, 2ull, 3ull, 4ull, 5ull, 7ull, 8ull, 9ull, 1000ull, 1023ull, 1024ull, 1025ull, 65537ull}) {
    BlockOrder order = BlockOrder::Random(n, 0x89);
    std::vector<int> seen(n, 0);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t block = order.Next();
      ASSERT_LT(block, n);
      ++seen[block];
    }
    for (uint64_t b = 0; b < n; ++b) ASSERT_EQ(seen[b], 1) << "n=" << n << " block " << b;
  }
}

TEST(BlockOrder, SecondPassIsAnotherFullPermutation) {
  const uint64_t n = 4096;
  BlockOrder order = BlockOrder::Random(n, 7);
  std::vector<uint64_t> first, second;
  for (uint64_t i = 0; i < n; ++i) first.push_back(order.Next());
  EXPECT_EQ(order.pass(), 0u);
  std::vector<int> seen(n, 0);
  for (uint64_t i = 0; i < n; ++i) {
    second.push_back(order.Next());
    ++seen[second.back()];
  }
  EXPECT_EQ(order.pass(), 1u);
  for (int count : seen) ASSERT_EQ(count, 1);
  EXPECT_NE(first, second);
}

TEST(BlockOrder, SameSeedSameOrderOtherSeedOtherOrder) {
  auto take = [](uint64_t seed) {
    BlockOrder order = BlockOrder::Random(10000, seed);
    std::vector<uint64_t> out;
    for (int i = 0; i < 10000; ++i) out.push_back(order.Next());
    return out;
  };
  EXPECT_EQ(take(1), take(1));
  EXPECT_NE(take(1), take(2));
}

// A permutation that walks mostly forward would hide TLB and fault costs.
TEST(BlockOrder, RandomOrderIsNotNearlySequential) {
  BlockOrder order = BlockOrder::Random(65536, 0x89);
  uint64_t previous = order.Next(), ascending = 0, near = 0;
  for (int i = 1; i < 65536; ++i) {
    const uint64_t block = order.Next();
    if (block > previous) ++ascending;
    if ((block > previous ? block - previous : previous - block) < 16) ++near;
    previous = block;
  }
  EXPECT_GT(ascending, 65536 * 0.45);
  EXPECT_LT(ascending, 65536 * 0.55);
  EXPECT_LT(near, 65536 / 100);
}

TEST(BlockOrder, SequentialCountsUpAndWraps) {
  BlockOrder order = BlockOrder::Sequential(3);
  EXPECT_EQ(order.Next(), 0u);
  EXPECT_EQ(order.Next(), 1u);
  EXPECT_EQ(order.Next(), 2u);
  EXPECT_EQ(order.Next(), 0u);
  EXPECT_EQ(order.pass(), 1u);
}

// Share of `draws` that fall on the hottest 10% of the blocks.
double HottestTenthShare(BlockOrder order, uint64_t n, uint64_t draws) {
  std::vector<uint64_t> hits(n, 0);
  for (uint64_t i = 0; i < draws; ++i) {
    const uint64_t block = order.Next();
    EXPECT_LT(block, n);
    if (block < n) ++hits[block];
  }
  std::sort(hits.rbegin(), hits.rend());
  uint64_t hot = 0;
  for (uint64_t i = 0; i < n / 10; ++i) hot += hits[i];
  return static_cast<double>(hot) / static_cast<double>(draws);
}

// fio's norandommap: a pass of n uniform draws with replacement touches
// 1 - 1/e of the blocks (63.2%), the rest twice or more or never.
TEST(BlockOrder, NorandommapDrawsWithReplacement) {
  const uint64_t n = 65536;
  BlockOrder order = BlockOrder::Uniform(n, 0x89);
  EXPECT_FALSE(order.each_block_once());
  std::set<uint64_t> seen;
  for (uint64_t i = 0; i < n; ++i) seen.insert(order.Next());
  EXPECT_NEAR(static_cast<double>(seen.size()) / n, 1 - 1 / 2.718281828, 0.01);
  EXPECT_LT(*seen.rbegin(), n);
  // Uniform: the hottest tenth is not much hotter than a tenth.
  EXPECT_LT(HottestTenthShare(BlockOrder::Uniform(n, 1), n, 4 * n), 0.25);  // Poisson(4): 0.196
}

// fio's skewed distributions put most draws on few blocks, scattered over
// the range rather than at its start; a permutation spreads them evenly.
TEST(BlockOrder, SkewedDistributionsConcentrateTheDraws) {
  const uint64_t n = 65536;
  EXPECT_NEAR(HottestTenthShare(BlockOrder::Random(n, 1), n, n), 0.1, 1e-3);
  const double zipf = HottestTenthShare(BlockOrder::Skewed(n, 1, {RandomDistribution::kZipf, 1.2, -1}), n, 4 * n);
  const double pareto = HottestTenthShare(BlockOrder::Skewed(n, 1, {RandomDistribution::kPareto, 0.2, -1}), n, 4 * n);
  const double normal = HottestTenthShare(BlockOrder::Skewed(n, 1, {RandomDistribution::kNormal, 0, -1}), n, 4 * n);
  EXPECT_GT(zipf, 0.7) << "zipf:1.2";
  EXPECT_GT(pareto, 0.7) << "pareto:0.2 (fio's 80/20 default)";
  EXPECT_GT(normal, 0.3) << "normal";
  // The hottest zipf block is not simply block 0: fio hashes the ranks.
  BlockOrder order = BlockOrder::Skewed(n, 1, {RandomDistribution::kZipf, 1.2, -1});
  uint64_t zeros = 0;
  for (int i = 0; i < 10000; ++i) zeros += order.Next() == 0;
  EXPECT_LT(zeros, 1000u);
}

TEST(BlockOrder, SkewedCenterMovesTheHotBlocks) {
  const uint64_t n = 1000;
  auto hottest = [&](double center) {
    BlockOrder order = BlockOrder::Skewed(n, 5, {RandomDistribution::kZipf, 1.5, center});
    std::vector<uint64_t> hits(n, 0);
    for (int i = 0; i < 20000; ++i) ++hits[order.Next()];
    return std::max_element(hits.begin(), hits.end()) - hits.begin();
  };
  // fio adds n * center to the hashed rank: the hottest block moves by n/2.
  EXPECT_EQ((hottest(0.5) - hottest(0.0) + static_cast<int64_t>(n)) % static_cast<int64_t>(n), 500);
}

// A pass is the job's per-loop I/O (size= or io_size=): shorter than the
// range it is part of one permutation; longer, a new permutation every n.
TEST(BlockOrder, PassLengthDecidesWhenAPassEnds) {
  const uint64_t n = 1024;
  BlockOrder half = BlockOrder::Random(n, 3);
  half.SetPassLength(n / 2);
  std::set<uint64_t> first;
  for (uint64_t i = 0; i < n / 2; ++i) first.insert(half.Next());
  EXPECT_EQ(first.size(), n / 2);
  EXPECT_EQ(half.pass(), 0u);
  half.Next();
  EXPECT_EQ(half.pass(), 1u);

  BlockOrder twice = BlockOrder::Random(n, 3);
  twice.SetPassLength(2 * n);
  std::vector<int> seen(n, 0);
  for (uint64_t i = 0; i < 2 * n; ++i) ++seen[twice.Next()];
  for (int count : seen) ASSERT_EQ(count, 2);
  EXPECT_EQ(twice.pass(), 0u);
}

TEST(BlockOrder, ForJobFollowsRwNorandommapAndDistribution) {
  JobOptions job;
  job.rw = RwMode::kRead;
  EXPECT_EQ(BlockOrder::ForJob(job, 8, 1).Next(), 0u);
  job.rw = RwMode::kRandRead;
  EXPECT_TRUE(BlockOrder::ForJob(job, 8, 1).each_block_once());
  job.norandommap = true;
  EXPECT_FALSE(BlockOrder::ForJob(job, 8, 1).each_block_once());
  job.norandommap = false;
  job.random_distribution = {RandomDistribution::kPareto, 0.3, -1};
  EXPECT_FALSE(BlockOrder::ForJob(job, 8, 1).each_block_once());
}

TEST(BlockCoverage, CountsDistinctBlocksInTotalAndPerPhase) {
  BlockCoverage coverage(200);
  for (uint64_t b : {1, 2, 2, 199, 1}) coverage.Mark(b);
  EXPECT_EQ(coverage.touched_in_phase(), 3u);
  EXPECT_EQ(coverage.first_touched_in_phase(), 3u);
  coverage.StartPhase();
  for (uint64_t b : {2, 3, 3}) coverage.Mark(b);
  EXPECT_EQ(coverage.touched_in_phase(), 2u);
  EXPECT_EQ(coverage.first_touched_in_phase(), 1u);
}

}  // namespace
}  // namespace faultbench
