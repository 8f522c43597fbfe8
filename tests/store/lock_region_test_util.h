// For the tests of the lock region's parts (share/): a file standing for
// the pool, whose region is named for its inode, and this process's slot
// in that region (a forked child attaches for its own).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "pmstore/env/env.h"
#include "pmstore/share/lock_region.h"
#include "support/temp_dir.h"

namespace pmstore::testing {

class LockRegionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pool_ = dir_.path() + "/pool";
    const int fd = open(pool_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    close(fd);
  }

  // A writable open's slot in the pool's region; nullptr when it cannot
  // be taken.
  std::unique_ptr<internal::ReaderSlot> Attach() const {
    const int fd = open(pool_.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return nullptr;
    auto slot = internal::ReaderSlot::Attach(env::Env::Default(), fd, /*writable=*/true);
    close(fd);
    return slot.ok() ? std::move(*slot) : nullptr;
  }

  TempDir dir_;
  std::string pool_;
};

}  // namespace pmstore::testing
