// Store::CopyTo while another thread of the same process goes on writing:
// the copy passes check and equals, key by key, the snapshot it copied:
// one taken before (read through it for the expected state), or the one
// CopyTo takes itself (then the state after some version of the writer's,
// which the copy's newest value names).
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "pmstore/snapshot.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"
#include "support/temp_dir.h"

namespace pmstore {
namespace {

using testing::OpenOrDie;
using testing::SmallPool;
using testing::ValueFor;

constexpr int kStableKeys = 20000;
constexpr int kChurnKeys = 2000;

std::string StableKey(int i) { return absl::StrCat("stable", i); }
std::string ChurnKey(uint64_t version) { return absl::StrCat("churn", version % kChurnKeys); }
// Version v writes ChurnKey(v), except that every 7th version deletes it.
bool DeletesAt(uint64_t version) { return version % 7 == 0; }
std::string ChurnValue(uint64_t version) { return absl::StrCat(version, ":", ValueFor(version, version % 200)); }

// The writer: one version after another, until told to stop.
class ChurnWriter {
 public:
  explicit ChurnWriter(Store* store) : store_(store) {}
  void Start() {
    thread_ = std::thread([this] {
      for (uint64_t v = kChurnKeys; !stop_.load(); ++v) {
        const absl::Status s = DeletesAt(v) ? store_->Delete(ChurnKey(v)) : store_->Put(ChurnKey(v), ChurnValue(v));
        ASSERT_TRUE(s.ok()) << s;
        last_.store(v);
      }
    });
  }
  // Returns the last version written. Stopping twice is fine.
  uint64_t Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    return last_.load();
  }
  uint64_t last() const { return last_.load(); }

 private:
  Store* store_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> last_{0};
};

void Fill(Store& store) {
  WriteBatch batch;
  for (int i = 0; i < kStableKeys; ++i) {
    batch.Put(StableKey(i), ValueFor(i, 100));
    if (batch.Count() == 1000) {
      ASSERT_TRUE(store.Write(batch).ok());
      batch.Clear();
    }
  }
  for (uint64_t v = 1; v < kChurnKeys; ++v) {
    if (!DeletesAt(v)) batch.Put(ChurnKey(v), ChurnValue(v));
  }
  ASSERT_TRUE(store.Write(batch).ok());
}

using Contents = std::map<std::string, std::string>;

Contents Read(Store& store, const ReadOptions& options) {
  Contents contents;
  auto it = store.NewIterator(options, {});
  for (it->SeekToFirst(); it->Valid(); it->Next()) contents.emplace(std::string(it->key()), std::string(it->value()));
  EXPECT_TRUE(it->status().ok()) << it->status();
  return contents;
}

// The copy at `path`, after checking it.
Contents CheckedCopy(const std::string& path) {
  auto report = Store::Check(path);
  EXPECT_TRUE(report.ok()) << report.status();
  if (report.ok()) {
    EXPECT_TRUE(report->clean()) << report->problems.front();
  }
  auto copy = OpenOrDie(path, {});
  return copy == nullptr ? Contents{} : Read(*copy, {});
}

// The store's contents right after the writer wrote `version`.
Contents StateAfter(uint64_t version) {
  Contents state;
  for (int i = 0; i < kStableKeys; ++i) state.emplace(StableKey(i), ValueFor(i, 100));
  // Key `index` holds versions index, index + kChurnKeys, ... (there is
  // no version 0): the newest at most `version` decides it.
  for (uint64_t index = 0; index < kChurnKeys; ++index) {
    if (version < index) continue;
    const uint64_t last = index + (version - index) / kChurnKeys * kChurnKeys;
    if (last != 0 && !DeletesAt(last)) state.emplace(ChurnKey(last), ChurnValue(last));
  }
  return state;
}

// The newest version any churn value of `contents` holds.
uint64_t NewestVersion(const Contents& contents) {
  uint64_t newest = 0;
  for (const auto& [key, value] : contents) {
    uint64_t version = 0;
    if (key.rfind("churn", 0) == 0 && absl::SimpleAtoi(value.substr(0, value.find(':')), &version)) {
      newest = std::max(newest, version);
    }
  }
  return newest;
}

// Whether `contents` is the state right after some version of the
// writer's: the one its newest value names, or, when the next version
// deleted a key, the one after that (a delete leaves no value to name it).
bool IsOneStateOfTheWriter(const Contents& contents) {
  const uint64_t newest = NewestVersion(contents);
  return contents == StateAfter(newest) || (DeletesAt(newest + 1) && contents == StateAfter(newest + 1));
}

// A filled store with the writer under way.
class StoreCopyConcurrencyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenOrDie(dir_.File("pool"), SmallPool(64ull << 20, 1ull << 30));
    ASSERT_NE(store_, nullptr);
    Fill(*store_);
    writer_ = std::make_unique<ChurnWriter>(store_.get());
    writer_->Start();
    while (writer_->last() < kChurnKeys + 200) std::this_thread::yield();
  }
  void TearDown() override {
    if (writer_ != nullptr) writer_->Stop();
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<ChurnWriter> writer_;
};

TEST_F(StoreCopyConcurrencyTest, CopyOfASnapshotTakenBeforeEqualsItKeyByKey) {
  std::unique_ptr<Snapshot> snapshot = store_->GetSnapshot();
  ReadOptions at_snapshot;
  at_snapshot.snapshot = snapshot.get();
  const Contents expected = Read(*store_, at_snapshot);
  const uint64_t at_start = writer_->last();
  ASSERT_TRUE(store_->CopyTo(at_snapshot, dir_.File("copy")).ok());
  EXPECT_GT(writer_->last(), at_start) << "no write overlapped the copy";
  writer_->Stop();
  EXPECT_EQ(CheckedCopy(dir_.File("copy")), expected);
  EXPECT_TRUE(IsOneStateOfTheWriter(expected)) << "the snapshot itself is no single state of the writer's";
}

TEST_F(StoreCopyConcurrencyTest, CopyWithoutASnapshotEqualsOneStateOfTheSource) {
  const uint64_t at_start = writer_->last();
  ASSERT_TRUE(store_->CopyTo(dir_.File("copy")).ok());
  const uint64_t at_end = writer_->last();
  EXPECT_GT(at_end, at_start) << "no write overlapped the copy";
  writer_->Stop();
  const Contents copy = CheckedCopy(dir_.File("copy"));
  // The copy is the state after some version v of the writer's, taken
  // while CopyTo ran: its newest value is v, or v - 1 when v deleted.
  const uint64_t newest = NewestVersion(copy);
  ASSERT_GE(newest + 1, at_start);
  ASSERT_LE(newest, at_end);
  EXPECT_TRUE(IsOneStateOfTheWriter(copy)) << "the copy is no single state of the source (newest value " << newest
                                           << ")";
}

}  // namespace
}  // namespace pmstore
