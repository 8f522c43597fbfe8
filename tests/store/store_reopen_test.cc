// A long-running program that opens and closes a pool many times keeps
// its address space: each open reserves the largest size the pool may
// grow to (16 GiB by default), and a close that lost any of it would make
// the program run out after a few thousand reopens (libpmem2 1.12.1 lost
// about 2 GiB a cycle; mapping/mapping.cc keeps its reservations).
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

uint64_t VmSizeBytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
  }
  return 0;
}

TEST(StoreReopenTest, TenThousandOpensAndClosesKeepTheAddressSpace) {
  TempDir dir("/dev/shm");
  const std::string path = dir.File("pool");
  Options options;  // the default maximum: a 16 GiB reservation per open
  options.create_if_missing = true;
  constexpr int kCycles = 10000;
  uint64_t after_first = 0;
  for (int i = 0; i < kCycles; ++i) {
    auto store = Store::Open(path, options);
    ASSERT_TRUE(store.ok()) << "open " << i << ": " << store.status();
    if (i == 0) {
      ASSERT_TRUE((*store)->Put("k", "v").ok());
    }
    ASSERT_TRUE((*store)->Close().ok());
    store->reset();
    if (i == 0) after_first = VmSizeBytes();
  }
  const uint64_t after_last = VmSizeBytes();
  ASSERT_GT(after_first, 0u);
  EXPECT_LE(after_last, after_first + (64ull << 20))
      << "VmSize grew from " << after_first << " to " << after_last << " bytes over " << kCycles << " reopens";
  auto store = Store::Open(path, options);
  ASSERT_TRUE(store.ok()) << store.status();
  std::string value;
  EXPECT_TRUE((*store)->Get("k", &value).ok());
}

}  // namespace
}  // namespace pmstore
