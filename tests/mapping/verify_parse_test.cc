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

// A backing with one page size: its size decides the column, nothing else.
TEST(CensusAtPageSizeTest, ThePageSizeSaysWhichEntriesMapThePresentBytes) {
  const MappingCensus pud = CensusAtPageSize(64u << 20, base::kGiantPageSize);
  EXPECT_EQ(pud.pud_bytes, 64u << 20);
  EXPECT_EQ(pud.pmd_bytes + pud.pte_bytes, 0u);
  EXPECT_EQ(pud.method, VerifyMethod::kPageSize);
  EXPECT_EQ(VerifyMethodName(pud.method), "page_size");
  const MappingCensus pmd = CensusAtPageSize(16u << 20, kHugePageSize);
  EXPECT_EQ(pmd.pmd_bytes, 16u << 20);
  EXPECT_EQ(pmd.pud_bytes + pmd.pte_bytes, 0u);
  const MappingCensus pte = CensusAtPageSize(8192, base::kPageSize);
  EXPECT_EQ(pte.pte_bytes, 8192u);
  EXPECT_EQ(pte.pud_bytes + pte.pmd_bytes, 0u);
}

}  // namespace
}  // namespace pmstore::mapping
