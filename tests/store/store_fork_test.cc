// A store used across fork: in the child every call fails with
// FailedPrecondition and changes nothing, destroying the store there
// persists nothing, and the parent goes on as if the child had never been.
// Without the guard a child's write, or its close (which writes the
// separator image), would change the pool under the parent.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "pmstore/share/region_layout.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
#endif
#else
constexpr bool kThreadSanitizer = false;
#endif

using testing::OpenOrDie;
using testing::SmallPool;

// The reader table's region, mapped MADV_DONTFORK.
constexpr size_t kRegionBytes = internal::region::kBytes;

bool IsForkError(const absl::Status& status) {
  return status.code() == absl::StatusCode::kFailedPrecondition &&
         status.message().find("must not be used across fork") != std::string::npos;
}

// What the child checks; its exit status is the first check that failed
// (0: all passed).
int UseInChild(std::unique_ptr<Store> store, const Snapshot* parents_snapshot) {
  std::string value;
  if (!IsForkError(store->Get(ReadOptions(), "k", &value))) return 1;
  PinnedValue pinned;
  if (!IsForkError(store->Get(ReadOptions(), "k", &pinned))) return 2;
  if (!IsForkError(store->Contains("k").status())) return 3;
  if (!IsForkError(store->Put("k", "child"))) return 4;
  if (!IsForkError(store->Delete("k"))) return 5;
  WriteBatch batch;
  batch.Put("b", "child");
  if (!IsForkError(store->Write(batch))) return 6;
  if (!IsForkError(store->Sync())) return 7;
  std::vector<std::string> values;
  const std::string_view keys[] = {"k", "m"};
  for (const absl::Status& status : store->MultiGet(ReadOptions(), keys, &values)) {
    if (!IsForkError(status)) return 8;
  }
  auto it = store->NewIterator(ReadOptions(), {});
  it->SeekToFirst();
  if (it->Valid() || !IsForkError(it->status())) return 9;
  it.reset();
  ReadOptions at_parents;
  at_parents.snapshot = parents_snapshot;
  if (!IsForkError(store->Get(at_parents, "k", &value))) return 10;
  auto snapshot = store->GetSnapshot();
  ReadOptions at_childs;
  at_childs.snapshot = snapshot.get();
  if (!IsForkError(store->Get(at_childs, "k", &value))) return 11;
  snapshot.reset();
  auto transaction = store->BeginTransaction();
  if (!IsForkError(transaction->Get("k", &value))) return 12;
  if (!transaction->Put("k", "child").ok() || !IsForkError(transaction->Commit())) return 13;
  transaction.reset();
  if (store->CheckNow().problems.empty()) return 14;
  if (!IsForkError(store->CopyTo(ReadOptions(), "/nonexistent-dir/copy", nullptr))) return 15;
  if (!IsForkError(store->Close())) return 16;
  // The reader table's region is not mapped in a child (MADV_DONTFORK), so
  // the child's own mappings may take its range: blocks of its size fill
  // that hole, and must survive the store's destruction.
  std::vector<char*> blocks;
  for (int i = 0; i < 8; ++i) {
    void* block = mmap(nullptr, kRegionBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED) return 17;
    blocks.push_back(static_cast<char*>(block));
    std::memset(block, 'c', kRegionBytes);
  }
  store.reset();  // frees the child's copy, persisting nothing
  for (char* block : blocks) {
    if (block[0] != 'c' || block[kRegionBytes - 1] != 'c') return 18;  // (a SIGSEGV when it was unmapped)
  }
  return 0;
}

TEST(StoreForkTest, AForkedChildCannotUseTheStoreAndTheParentGoesOn) {
  TempDir dir("/dev/shm");
  const std::string path = dir.File("pool");
  auto store = OpenOrDie(path, SmallPool());
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put("k", "parent").ok());
  // Unsynced, so the child's close, were it allowed, would have work to do.
  ASSERT_TRUE(store->Put({.sync = false}, "m", "unsynced").ok());
  auto snapshot = store->GetSnapshot();

  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) _exit(UseInChild(std::move(store), snapshot.get()));
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "check " << WEXITSTATUS(status) << " of the child failed";

  std::string value;
  ReadOptions at_snapshot;
  at_snapshot.snapshot = snapshot.get();
  ASSERT_TRUE(store->Get(at_snapshot, "k", &value).ok());
  EXPECT_EQ(value, "parent");
  snapshot.reset();
  ASSERT_TRUE(store->Put("k", "parent again").ok());
  ASSERT_TRUE(store->Get(ReadOptions(), "m", &value).ok());
  EXPECT_EQ(value, "unsynced");
  EXPECT_FALSE(store->GetStats().opened_from_separator_image);
  EXPECT_TRUE(store->CheckNow().clean());
  ASSERT_TRUE(store->Close().ok());
  auto report = Store::Check(path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->clean());
  EXPECT_EQ(report->keys, 2u);
}

// A PinnedValue the parent held at the fork, dropped in the child while a
// parent thread was pinning and unpinning: the child must not wait on the
// pin registry's lock, which that thread may have held at the fork (and
// which then stays locked in the child for ever). Each child has 10 s.
TEST(StoreForkTest, APinHeldAtTheForkIsDroppedInTheChildWithoutWaitingOnTheParentsThreads) {
  if (kThreadSanitizer) GTEST_SKIP() << "ThreadSanitizer's own locks across a fork beside running threads";
  TempDir dir("/dev/shm");
  auto store = OpenOrDie(dir.File("pool"), SmallPool());
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put("k", "parent").ok());
  PinnedValue held;
  ASSERT_TRUE(store->Get(ReadOptions(), "k", &held).ok());

  std::atomic<bool> stop{false};
  std::thread pinner([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      PinnedValue pinned;
      if (!store->Get(ReadOptions(), "k", &pinned).ok()) return;
    }
  });
  constexpr int kForks = 200;
  int hung = 0;
  for (int i = 0; i < kForks; ++i) {
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      alarm(10);
      held.Reset();
      _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) ++hung;
    ASSERT_TRUE(WIFEXITED(status) || WTERMSIG(status) == SIGALRM) << "signal " << WTERMSIG(status);
  }
  stop = true;
  pinner.join();
  EXPECT_EQ(hung, 0) << hung << " of " << kForks << " children hung dropping the parent's pin";
  EXPECT_EQ(held.value(), "parent") << "the parent's pin is the parent's still";
}

}  // namespace
}  // namespace pmstore
