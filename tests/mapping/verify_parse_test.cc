#include <gtest/gtest.h>

#include "pmstore/base/units.h"
#include "pmstore/mapping/verify.h"

namespace pmstore::mapping {
namespace {

using base::kHugePageSize;

TEST(InferFromWriteFaultsTest, OneFaultPer2MiBIsAllPmd) {
  MappingCensus c = InferFromWriteFaults(128, 256 * (1u << 20));
  EXPECT_EQ(c.pmd_bytes, 256u << 20);
  EXPECT_EQ(c.pte_bytes, 0u);
  EXPECT_EQ(c.method, VerifyMethod::kFaults);
}

TEST(InferFromWriteFaultsTest, OneFaultPer4KiBIsAllPte) {
  MappingCensus c = InferFromWriteFaults(65536, 256u << 20);
  EXPECT_EQ(c.pmd_bytes, 0u);
  EXPECT_EQ(c.pte_bytes, 256u << 20);
}

TEST(InferFromWriteFaultsTest, MixedFaultsGiveAProportionalShare) {
  // Half the range PMD (64 faults), half PTE (32768 faults).
  MappingCensus c = InferFromWriteFaults(64 + 32768, 256u << 20);
  EXPECT_NEAR(static_cast<double>(c.pmd_bytes), 128.0 * (1 << 20), 2.0 * kHugePageSize);
}

}  // namespace
}  // namespace pmstore::mapping
