// Which facts may differ between two sides, by what is under test.
#include "faultbench/taint/comparability.h"

#include <gtest/gtest.h>

namespace faultbench {
namespace {

SideFacts Facts(const std::string& kernel, const std::string& hypervisor, const std::string& mount_options) {
  return {{kFactKernel, kernel}, {kFactHypervisor, hypervisor}, {kFactFileSystem, "xfs"},
          {kFactMountOptions, mount_options}};
}

TEST(Comparability, UnderTestNamesParseAndUnknownOnesAreAnError) {
  for (const char* name : {"kernel", "fs", "build", "machine", "workload", "package"}) {
    auto parsed = ParseUnderTest(name);
    ASSERT_TRUE(parsed.ok()) << name;
    EXPECT_EQ(UnderTestName(*parsed), name);
  }
  EXPECT_FALSE(ParseUnderTest("compiler").ok());
}

TEST(Comparability, TheKernelMayDifferUnderKernelAndNothingElse) {
  const Comparability c = JudgeComparability(Facts("6.1.0-57-amd64", "QEMU", "rw,dax=always"),
                                             Facts("6.12.95+deb12-amd64", "KVM", "rw,dax=always"), UnderTest::kKernel);
  ASSERT_EQ(c.under_test.size(), 1u);
  EXPECT_EQ(c.under_test[0].fact, kFactKernel);
  EXPECT_EQ(c.under_test[0].next, "6.12.95+deb12-amd64");
  ASSERT_EQ(c.not_comparable.size(), 1u);
  EXPECT_EQ(c.not_comparable[0].fact, kFactHypervisor);
}

TEST(Comparability, MountOptionsMayDifferUnderFsButTheKernelMayNot) {
  const Comparability c = JudgeComparability(Facts("a", "QEMU", "rw,dax=always,sunit=4096,swidth=4096"),
                                             Facts("b", "QEMU", "rw,dax=always"), UnderTest::kFs);
  ASSERT_EQ(c.under_test.size(), 1u);
  EXPECT_EQ(c.under_test[0].fact, kFactMountOptions);
  ASSERT_EQ(c.not_comparable.size(), 1u);
  EXPECT_EQ(c.not_comparable[0].fact, kFactKernel);
}

TEST(Comparability, TwoKernelPackagesMayDifferInHowTheyShowAMountButNotInTheMachine) {
  // xfs stopped listing attr2 in 6.18: the same mkfs and mount, shown otherwise.
  SideFacts base = Facts("6.17.13+deb13-amd64", "QEMU", "rw,attr2,dax=always,inode64");
  SideFacts next = Facts("6.18.15+deb13-amd64", "QEMU", "rw,dax=always,inode64");
  base[kFactDebugOptions] = "none";
  next[kFactDebugOptions] = "CONFIG_PAGE_POISONING";
  base[kFactThpShmem] = "never";
  next[kFactThpShmem] = "advise";
  const Comparability package = JudgeComparability(base, next, UnderTest::kPackage);
  EXPECT_EQ(package.under_test.size(), 4u);
  EXPECT_TRUE(package.not_comparable.empty());
  const Comparability kernel = JudgeComparability(base, next, UnderTest::kKernel);
  EXPECT_EQ(kernel.not_comparable.size(), 3u) << "debug options, THP and mount options are no release's";
  next[kFactHypervisor] = "KVM";
  next[kFactFileSystem] = "ext4";
  const Comparability machine = JudgeComparability(base, next, UnderTest::kPackage);
  ASSERT_EQ(machine.not_comparable.size(), 2u) << "another machine or file system is no package's doing";
}

TEST(Comparability, EachExperimentOwnsItsFacts) {
  EXPECT_TRUE(MayDiffer(kFactDebugOptions, UnderTest::kBuild));
  EXPECT_FALSE(MayDiffer(kFactDebugOptions, UnderTest::kKernel)) << "a debug config made one baseline 30x slower";
  EXPECT_TRUE(MayDiffer(kFactCpuModel, UnderTest::kMachine));
  EXPECT_TRUE(MayDiffer(kFactThpEnabled, UnderTest::kMachine));
  EXPECT_FALSE(MayDiffer(kFactThpEnabled, UnderTest::kFs));
  EXPECT_TRUE(MayDiffer("job t [psync]: bs", UnderTest::kWorkload));
  EXPECT_FALSE(MayDiffer("job t [psync]: bs", UnderTest::kKernel));
}

TEST(Comparability, AFactOneSideDoesNotKnowIsNotJudged) {
  SideFacts fio_side = {{"job t [psync]: bs", "4k"}};  // fio records no system facts
  const Comparability c = JudgeComparability(Facts("a", "KVM", "rw"), fio_side, UnderTest::kKernel);
  EXPECT_TRUE(c.under_test.empty());
  EXPECT_TRUE(c.not_comparable.empty());
}

}  // namespace
}  // namespace faultbench
