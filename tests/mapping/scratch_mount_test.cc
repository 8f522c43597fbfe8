// The tests' own mounts (support/scratch_mount.h): under CI a mount that
// fails fails the test, elsewhere it skips it with the reason.
#include <cstdlib>

#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"
#include "support/hugetlbfs_mount.h"
#include "support/tmpfs_mount.h"

namespace {

// A tmpfs mount no kernel accepts.
void MountThatFails() {
  TmpfsMount mount("size=not-a-size");
  SKIP_UNLESS_MOUNTED(mount);
}

class ScratchMountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* ci = std::getenv("CI");
    if (ci != nullptr) saved_ = ci;
    had_ = ci != nullptr;
  }
  void TearDown() override {
    if (had_) {
      setenv("CI", saved_.c_str(), 1);
    } else {
      unsetenv("CI");
    }
  }
  std::string saved_;
  bool had_ = false;
};

TEST_F(ScratchMountTest, TheCiVariableDecidesWhetherAFailedMountFails) {
  unsetenv("CI");
  EXPECT_FALSE(MountFailureFailsTests());
  setenv("CI", "", 1);
  EXPECT_FALSE(MountFailureFailsTests());
  setenv("CI", "0", 1);
  EXPECT_FALSE(MountFailureFailsTests());
  setenv("CI", "false", 1);
  EXPECT_FALSE(MountFailureFailsTests());
  setenv("CI", "1", 1);
  EXPECT_TRUE(MountFailureFailsTests());
  setenv("CI", "true", 1);
  EXPECT_TRUE(MountFailureFailsTests());
}

TEST_F(ScratchMountTest, UnderCiAFailedMountFailsTheTest) {
  setenv("CI", "1", 1);
  EXPECT_FATAL_FAILURE(MountThatFails(), "CI is set: a mount must work");
}

// SKIP_UNLESS_OK skips such a test under CI too: the machine lacks the
// pages, the mount did not break.
TEST_F(ScratchMountTest, APageSizeTheKernelDoesNotOfferIsNoFailedMount) {
  HugetlbfsMount mount(uint64_t{3} << 10);
  EXPECT_FALSE(mount.ok());
  EXPECT_FALSE(mount.mount_failed()) << mount.why();
  EXPECT_NE(mount.why().find("offers no huge pages of 3 kB"), std::string::npos) << mount.why();
}

}  // namespace
