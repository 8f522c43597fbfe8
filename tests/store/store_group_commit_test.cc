// Group commit: where a commit costs an msync (page granularity), durable
// writes that wait behind one share the next (store_impl.h WriteInGroup).
// Each is acknowledged only when its own commit is durable, and one
// write's failure is not the others'.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pmstore/db/store_impl.h"
#include "store/store_test_util.h"
#include "support/fault_injection_env.h"
#include "support/temp_dir.h"

namespace pmstore {
namespace {

using testing::FaultInjectionEnv;

size_t Msyncs(const FaultInjectionEnv& env) {
  size_t n = 0;
  for (const auto& record : env.trace()) n += record.call == FaultInjectionEnv::Call::kMsync;
  return n;
}

TEST(StoreGroupCommitTest, DurablePutsFromSeveralThreadsShareMsyncsAndAllLand) {
  if (getenv("PMEM2_FORCE_GRANULARITY") != nullptr) GTEST_SKIP() << "granularity forced: no msync to share";
  TempDir dir("/var/tmp");  // a page-cache file system: every commit is an msync
  const std::string path = dir.File("pool");
  FaultInjectionEnv env;
  auto store = StoreImpl::OpenWith(path, testing::SmallPool(), &internal::MakeMappingPersister, &env);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_EQ((*store)->GetStats().granularity, Granularity::kPage);
  env.Reset();
  constexpr int kThreads = 4;
  constexpr int kPuts = 60;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPuts; ++i) {
        if (!(*store)->Put(absl::StrCat("t", t, "-", i), std::string(100, static_cast<char>('a' + t))).ok()) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  const size_t msyncs = Msyncs(env);
  std::printf("%d durable puts from %d threads took %zu msyncs\n", kThreads * kPuts, kThreads, msyncs);
  EXPECT_LT(msyncs, static_cast<size_t>(kThreads * kPuts)) << "no two puts shared an msync";
  ASSERT_TRUE((*store)->Close().ok());
  store->reset();
  auto reopened = Store::Open(path, Options());
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPuts; ++i) {
      std::string value;
      ASSERT_TRUE((*reopened)->Get(absl::StrCat("t", t, "-", i), &value).ok()) << t << " " << i;
      EXPECT_EQ(value, std::string(100, static_cast<char>('a' + t)));
    }
  }
  EXPECT_TRUE((*reopened)->CheckNow().clean());
}

TEST(StoreGroupCommitTest, OneWritesFailureIsNotTheOthers) {
  if (getenv("PMEM2_FORCE_GRANULARITY") != nullptr) GTEST_SKIP() << "granularity forced: no groups";
  TempDir dir("/var/tmp");
  const std::string path = dir.File("pool");
  // No growth: a value larger than the pool fails, whoever it is grouped with.
  auto store = Store::Open(path, testing::SmallPool(8ull << 20, 8ull << 20));
  ASSERT_TRUE(store.ok()) << store.status();
  constexpr int kRounds = 40;
  std::atomic<int> small_failures{0}, large_successes{0};
  std::thread large([&] {
    const std::string too_big(16u << 20, 'x');
    for (int i = 0; i < kRounds; ++i) large_successes += (*store)->Put(absl::StrCat("big", i), too_big).ok();
  });
  std::vector<std::thread> small;
  for (int t = 0; t < 3; ++t) {
    small.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) small_failures += !(*store)->Put(absl::StrCat("s", t, "-", i), "v").ok();
    });
  }
  large.join();
  for (std::thread& thread : small) thread.join();
  EXPECT_EQ(large_successes.load(), 0);
  EXPECT_EQ(small_failures.load(), 0) << "a small put failed with the large one it was grouped with";
  std::string value;
  EXPECT_TRUE((*store)->Get("s2-39", &value).ok());
  EXPECT_TRUE((*store)->CheckNow().clean());
}

}  // namespace
}  // namespace pmstore
