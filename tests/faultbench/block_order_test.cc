#include "faultbench/workload/block_order.h"

#include <gtest/gtest.h>

#include <vector>

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

}  // namespace
}  // namespace faultbench
