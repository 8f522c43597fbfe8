// A device that fails to persist, injected through the persistence seam:
// the real persister, except that from a chosen call on its drains (msync
// at page granularity) or its length syncs (fdatasync) fail with EIO, the
// way a device that stops taking writes makes them fail. The write that
// needed it fails with that error, the store is poisoned (writes refused,
// reads go on), and a reopen finds every acknowledged write.
#include <cerrno>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pmstore/base/errno_status.h"
#include "pmstore/persist/persister.h"
#include "pmstore/db/store_impl.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

using testing::OpenOrDie;
using testing::SmallPool;
using testing::ValueFor;

// What the next store opened with FailingPersister::Make does.
struct Failure {
  bool drains = false;        // Drain fails (as msync does)
  bool length_syncs = false;  // SyncLength fails (as fdatasync does)
  bool armed = false;         // off until a test arms it
};
Failure g_failure;

class FailingPersister final : public internal::Persister {
 public:
  FailingPersister(std::unique_ptr<internal::Persister> real, const mapping::PoolFile& file)
      : real_(std::move(real)), file_(file) {}

  static std::unique_ptr<internal::Persister> Make(const mapping::Mapping& mapping, const mapping::PoolFile& file) {
    return std::make_unique<FailingPersister>(internal::MakeMappingPersister(mapping, file), file);
  }

  absl::Status Flush(const void* addr, size_t size) override { return real_->Flush(addr, size); }
  absl::Status Drain() override {
    if (g_failure.armed && g_failure.drains) return base::ErrnoStatus(EIO, "msync", absl::StrCat(file_.path(), ", 4096 bytes at offset 8192"));
    return real_->Drain();
  }
  absl::Status SyncLength() override {
    if (g_failure.armed && g_failure.length_syncs) return base::ErrnoStatus(EIO, "fdatasync", file_.path());
    return real_->SyncLength();
  }

 private:
  std::unique_ptr<internal::Persister> real_;
  const mapping::PoolFile& file_;  // its path changes when a new pool is published
};

class StorePersistFailureTest : public ::testing::Test {
 protected:
  void SetUp() override { g_failure = Failure(); }
  void TearDown() override { g_failure = Failure(); }

  std::unique_ptr<StoreImpl> OpenFailing(const Options& options) {
    auto store = StoreImpl::OpenWith(path_, options, &FailingPersister::Make);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }
  void PutAcknowledged(Store& store, int from, int to) {
    for (int i = from; i < to; ++i) ASSERT_TRUE(store.Put(Key(i), ValueFor(i, 100)).ok()) << i;
  }
  static std::string Key(int i) { return absl::StrCat("key", i); }

  // After a reopen with a working device: keys [0, acknowledged) with
  // their values, `failed` absent or whole, the pool clean, writes taken.
  void ExpectRecovered(int acknowledged, const std::string& failed, const std::string& failed_value) {
    auto store = OpenOrDie(path_, Options());
    ASSERT_NE(store, nullptr);
    for (int i = 0; i < acknowledged; ++i) {
      std::string got;
      ASSERT_TRUE(store->Get(Key(i), &got).ok()) << "acknowledged " << Key(i) << " lost";
      ASSERT_EQ(got, ValueFor(i, 100)) << Key(i);
    }
    std::string got;
    const absl::Status status = store->Get(failed, &got);
    if (status.ok()) {
      EXPECT_EQ(got, failed_value) << "the failed write, when present, is whole";
    } else {
      EXPECT_TRUE(absl::IsNotFound(status)) << status;
    }
    EXPECT_TRUE(store->CheckNow().clean());
    EXPECT_TRUE(store->Put("after-reopen", "x").ok());
    EXPECT_TRUE(store->Close().ok());
  }

  // Every write is refused with the first failure's code and message.
  void ExpectPoisoned(Store& store, const absl::Status& first) {
    for (const absl::Status& refused :
         {store.Put("k", "v"), store.Delete(Key(0)), store.Write(WriteBatch()), store.Sync()}) {
      EXPECT_EQ(refused.code(), first.code()) << refused;
      EXPECT_NE(refused.message().find(first.message()), std::string::npos) << refused;
      EXPECT_NE(refused.message().find("reopened"), std::string::npos) << refused;
    }
  }

  TempDir dir_{"/dev/shm"};
  std::string path_ = dir_.File("pool");
};

TEST_F(StorePersistFailureTest, FailedMsyncFailsThePutNamesFileAndCallAndPoisonsTheStore) {
  auto store = OpenFailing(SmallPool());
  ASSERT_NE(store, nullptr);
  PutAcknowledged(*store, 0, 50);
  g_failure = {.drains = true, .armed = true};
  const absl::Status failed = store->Put("failed", "value");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.code(), absl::StatusCode::kUnknown) << failed;  // errno EIO
  EXPECT_NE(failed.message().find(path_), std::string::npos) << failed;
  EXPECT_NE(failed.message().find("msync"), std::string::npos) << failed;
  EXPECT_NE(failed.message().find("Input/output error"), std::string::npos) << failed;

  g_failure.armed = false;  // the device works again: the store stays poisoned
  ExpectPoisoned(*store, failed);
  // Reads go on, and never see the write that failed.
  std::string got;
  ASSERT_TRUE(store->Get(Key(7), &got).ok());
  EXPECT_EQ(got, ValueFor(7, 100));
  EXPECT_TRUE(absl::IsNotFound(store->Get("failed", &got)));
  int listed = 0;
  auto it = store->NewIterator({}, {});
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++listed;
  EXPECT_EQ(listed, 50);
  EXPECT_EQ(store->Close(), failed);
  store.reset();
  ExpectRecovered(50, "failed", "value");
}

TEST_F(StorePersistFailureTest, FailedFdatasyncWhileGrowingFailsThePutAndPoisonsTheStore) {
  auto store = OpenFailing(SmallPool(4ull << 20, 64ull << 20));
  ASSERT_NE(store, nullptr);
  PutAcknowledged(*store, 0, 20);
  g_failure = {.length_syncs = true, .armed = true};
  const std::string large(8u << 20, 'L');  // needs the pool to grow
  const absl::Status failed = store->Put("large", large);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find(path_), std::string::npos) << failed;
  EXPECT_NE(failed.message().find("fdatasync"), std::string::npos) << failed;
  g_failure.armed = false;
  ExpectPoisoned(*store, failed);
  std::string got;
  EXPECT_TRUE(store->Get(Key(3), &got).ok());
  EXPECT_EQ(store->Close(), failed) << "Close returns the first failure";
  store.reset();
  ExpectRecovered(20, "large", large);
}

TEST_F(StorePersistFailureTest, FailedSyncOfUnsyncedWritesIsReportedAndPoisons) {
  auto store = OpenFailing(SmallPool());
  ASSERT_NE(store, nullptr);
  PutAcknowledged(*store, 0, 10);
  for (int i = 10; i < 20; ++i) ASSERT_TRUE(store->Put(WriteOptions{.sync = false}, Key(i), ValueFor(i, 100)).ok());
  g_failure = {.drains = true, .armed = true};
  const absl::Status failed = store->Sync();
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("msync"), std::string::npos) << failed;
  ExpectPoisoned(*store, failed);
  EXPECT_EQ(store->Close(), failed);
  store.reset();
  g_failure.armed = false;
  ExpectRecovered(10, "key15", ValueFor(15, 100));
}

TEST_F(StorePersistFailureTest, DestructorOfAnUnclosedStorePrintsTheFailureItCannotReturn) {
  auto store = OpenFailing(SmallPool());
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put(WriteOptions{.sync = false}, "unsynced", "value").ok());
  g_failure = {.drains = true, .armed = true};
  ::testing::internal::CaptureStderr();
  store.reset();
  const std::string printed = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(printed.find("pmstore: msync(" + path_ + ", "), std::string::npos) << printed;
  EXPECT_NE(printed.find("Store::Close()"), std::string::npos) << printed;
}

TEST_F(StorePersistFailureTest, CloseReleasesThePoolAndLaterCallsFailCleanly) {
  auto store = OpenOrDie(path_, SmallPool());
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put(WriteOptions{.sync = false}, "k", "v").ok());
  ASSERT_TRUE(store->Close().ok());
  EXPECT_TRUE(store->Close().ok()) << "a second Close returns the first one's status";
  // The file is unlocked and everything durable: another open sees it.
  auto other = OpenOrDie(path_, Options());
  ASSERT_NE(other, nullptr);
  std::string got;
  ASSERT_TRUE(other->Get("k", &got).ok());
  EXPECT_EQ(got, "v");
  for (const absl::Status& status : {store->Put("k", "w"), store->Get("k", &got), store->Sync()}) {
    EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  }
  auto it = store->NewIterator({}, {});
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(absl::IsFailedPrecondition(it->status())) << it->status();
  EXPECT_FALSE(store->CheckNow().clean());
}

}  // namespace
}  // namespace pmstore
