// Store::CopyTo while another thread of the same process goes on writing:
// the copy passes check, holds every key no writer touched, exactly, and
// holds for every other key a value that key really had at some point.
#include <atomic>
#include <map>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
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
  // Returns the last version written.
  uint64_t Stop() {
    stop_.store(true);
    thread_.join();
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

// Every entry of the copy at `path` is one the source had at some point
// while the writer wrote versions up to `last`.
void ExpectEveryEntryExisted(const std::string& path, uint64_t last) {
  auto report = Store::Check(path);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_TRUE(report->clean()) << report->problems.front();
  auto copy = OpenOrDie(path, {});
  ASSERT_NE(copy, nullptr);
  int stable = 0;
  auto it = copy->NewIterator({}, {});
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string key(it->key());
    if (key.rfind("stable", 0) == 0) {
      int i = 0;
      ASSERT_TRUE(absl::SimpleAtoi(key.substr(6), &i)) << key;
      ASSERT_EQ(it->value(), ValueFor(i, 100)) << key;
      ++stable;
      continue;
    }
    uint64_t version = 0;
    const std::string value(it->value());
    ASSERT_TRUE(absl::SimpleAtoi(value.substr(0, value.find(':')), &version)) << key;
    EXPECT_LE(version, last) << key << " holds a version never written";
    EXPECT_FALSE(DeletesAt(version)) << key << " holds a version that deleted it";
    EXPECT_EQ(key, ChurnKey(version)) << "version " << version << " under the wrong key";
    EXPECT_EQ(value, ChurnValue(version)) << key;
  }
  ASSERT_TRUE(it->status().ok()) << it->status();
  EXPECT_EQ(stable, kStableKeys) << "the copy lost keys no writer touched";
}

TEST(StoreCopyConcurrencyTest, CopyUnderConcurrentWritesHoldsOnlyStatesTheSourceHad) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("pool"), SmallPool(64ull << 20, 1ull << 30));
  ASSERT_NE(store, nullptr);
  Fill(*store);
  ChurnWriter writer(store.get());
  writer.Start();
  for (int copy = 0; copy < 3; ++copy) {
    // Wait for writes to be under way, so the copy overlaps them.
    const uint64_t before = writer.last();
    while (writer.last() < before + 500) std::this_thread::yield();
    const uint64_t at_start = writer.last();
    ASSERT_TRUE(store->CopyTo(dir.File(absl::StrCat("copy", copy))).ok());
    EXPECT_GT(writer.last(), at_start) << "no write overlapped the copy";
  }
  const uint64_t last = writer.Stop();
  for (int copy = 0; copy < 3; ++copy) ExpectEveryEntryExisted(dir.File(absl::StrCat("copy", copy)), last);
}

}  // namespace
}  // namespace pmstore
