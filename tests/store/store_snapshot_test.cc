// Snapshots from the API: every read form sees the state as of the
// snapshot while writes go on; several snapshots at once, released in any
// order; space freed after a snapshot stays put until it is released; an
// iterator without a snapshot reads one state; errors.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pmstore/snapshot.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

using Model = std::map<std::string, std::string>;
using testing::OpenOrDie;
using testing::SmallPool;

class StoreSnapshotTest : public ::testing::Test {
 protected:
  TempDir dir_{"/dev/shm"};
  std::string path_ = dir_.File("pool");
};

ReadOptions At(const Snapshot* snapshot) {
  ReadOptions options;
  options.snapshot = snapshot;
  return options;
}

Model Scan(Store& store, const ReadOptions& options, const IterateOptions& range = {}) {
  Model seen;
  auto it = store.NewIterator(options, range);
  for (it->SeekToFirst(); it->Valid(); it->Next()) seen.emplace(it->key(), it->value());
  EXPECT_TRUE(it->status().ok()) << it->status();
  return seen;
}

// Every read form through `snapshot` against `model`, for `keys` (present
// and absent alike).
void ExpectViewIs(Store& store, const Snapshot* snapshot, const Model& model, const std::vector<std::string>& keys) {
  const ReadOptions options = At(snapshot);
  for (const std::string& key : keys) {
    const auto expected = model.find(key);
    std::string value;
    PinnedValue pinned;
    const absl::Status copied = store.Get(options, key, &value);
    const absl::Status in_place = store.Get(options, key, &pinned);
    if (expected == model.end()) {
      EXPECT_TRUE(absl::IsNotFound(copied)) << key << ": " << copied;
      EXPECT_TRUE(absl::IsNotFound(in_place)) << key << ": " << in_place;
    } else {
      EXPECT_TRUE(copied.ok()) << key << ": " << copied;
      EXPECT_EQ(value, expected->second) << key;
      EXPECT_TRUE(in_place.ok()) << key << ": " << in_place;
      EXPECT_EQ(pinned.value(), expected->second) << key;
    }
  }
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<std::string> values;
  const std::vector<absl::Status> statuses = store.MultiGet(options, views, &values);
  std::vector<PinnedValue> pinned(keys.size());
  std::vector<absl::Status> pinned_statuses(keys.size());
  store.MultiGet(options, keys.size(), views.data(), pinned.data(), pinned_statuses.data());
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto expected = model.find(keys[i]);
    EXPECT_EQ(statuses[i].ok(), expected != model.end()) << keys[i] << ": " << statuses[i];
    EXPECT_EQ(pinned_statuses[i].ok(), expected != model.end()) << keys[i] << ": " << pinned_statuses[i];
    if (expected == model.end()) continue;
    EXPECT_EQ(values[i], expected->second) << keys[i];
    EXPECT_EQ(pinned[i].value(), expected->second) << keys[i];
  }
  EXPECT_EQ(Scan(store, options), model);
}

TEST_F(StoreSnapshotTest, ReadsThroughASnapshotSeeTheStateWhenItWasTaken) {
  auto store = OpenOrDie(path_, SmallPool());
  Model then = {{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}};
  for (const auto& [key, value] : then) ASSERT_TRUE(store->Put(key, value).ok());
  auto snapshot = store->GetSnapshot();
  // Overwrite, delete (the last key too, so that the snapshot's view ends
  // after the index's), add before and between the old keys, and change
  // one key several times in one batch.
  ASSERT_TRUE(store->Put("a", "one").ok());
  ASSERT_TRUE(store->Delete("b").ok());
  ASSERT_TRUE(store->Delete("d").ok());
  ASSERT_TRUE(store->Put("0", "new").ok());
  ASSERT_TRUE(store->Put("bb", "new").ok());
  WriteBatch batch;
  batch.Put("c", "x");
  batch.Delete("c");
  batch.Put("c", "three");
  ASSERT_TRUE(store->Write(batch).ok());
  const Model now = {{"0", "new"}, {"a", "one"}, {"bb", "new"}, {"c", "three"}};
  const std::vector<std::string> keys = {"0", "a", "b", "bb", "c", "d", "z", "missing"};
  ExpectViewIs(*store, snapshot.get(), then, keys);
  ExpectViewIs(*store, nullptr, now, keys);
  snapshot.reset();
  ExpectViewIs(*store, nullptr, now, keys);
}

TEST_F(StoreSnapshotTest, IteratorThroughASnapshotHonoursPrefixAndBounds) {
  auto store = OpenOrDie(path_, SmallPool());
  for (int i = 0; i < 3000; ++i) ASSERT_TRUE(store->Put("k" + std::to_string(i), "old" + std::to_string(i)).ok());
  Model then = Scan(*store, ReadOptions());
  auto snapshot = store->GetSnapshot();
  // More than an iterator's refill of 1024 entries changes on each side
  // of the prefix and the bounds.
  for (int i = 0; i < 3000; i += 2) ASSERT_TRUE(store->Delete("k" + std::to_string(i)).ok());
  for (int i = 1; i < 3000; i += 4) ASSERT_TRUE(store->Put("k" + std::to_string(i), "new").ok());
  for (int i = 0; i < 3000; i += 3) ASSERT_TRUE(store->Put("k" + std::to_string(i) + "+", "added").ok());
  const auto select = [&](const IterateOptions& range) {
    Model selected;
    for (const auto& [key, value] : then) {
      if (key.compare(0, range.prefix.size(), range.prefix) != 0) continue;
      if (!range.lower_bound.empty() && key < range.lower_bound) continue;
      if (!range.upper_bound.empty() && key >= range.upper_bound) continue;
      selected.emplace(key, value);
    }
    return selected;
  };
  for (const IterateOptions& range : {IterateOptions{}, IterateOptions{.prefix = "k1"},
                                      IterateOptions{.lower_bound = "k15", .upper_bound = "k2"},
                                      IterateOptions{.prefix = "k2", .lower_bound = "k25"}}) {
    SCOPED_TRACE(range.prefix + " [" + range.lower_bound + ", " + range.upper_bound + ")");
    EXPECT_EQ(Scan(*store, At(snapshot.get()), range), select(range));
  }
  auto it = store->NewIterator(At(snapshot.get()), {});
  it->Seek("k2999");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "k2999");
  EXPECT_EQ(it->value(), "old2999");
}

TEST_F(StoreSnapshotTest, SeveralSnapshotsEachKeepTheirStateWhateverOrderTheyGoIn) {
  for (int order = 0; order < 6; ++order) {
    SCOPED_TRACE("release order " + std::to_string(order));
    TempDir dir("/dev/shm");
    auto store = OpenOrDie(dir.File("pool"), SmallPool());
    std::vector<std::unique_ptr<Snapshot>> snapshots;
    std::vector<Model> states;
    Model model;
    std::vector<std::string> keys;
    for (int i = 0; i < 40; ++i) keys.push_back("key" + std::to_string(i));
    for (int round = 0; round < 3; ++round) {
      for (int i = 0; i < 40; ++i) {
        const std::string& key = keys[i];
        if ((i + round) % 3 == 0) {
          ASSERT_TRUE(store->Delete(key).ok());
          model.erase(key);
        } else if ((i * 7 + round) % 4 != 0) {
          const std::string value = key + "@" + std::to_string(round);
          ASSERT_TRUE(store->Put(key, value).ok());
          model[key] = value;
        }
      }
      snapshots.push_back(store->GetSnapshot());
      states.push_back(model);
    }
    ASSERT_TRUE(store->Put("key5", "last").ok());
    // Release one, check the rest, release the next: the six orders of three.
    std::vector<int> release = {0, 1, 2};
    for (int n = 0; n < order; ++n) std::next_permutation(release.begin(), release.end());
    for (int gone : release) {
      snapshots[gone].reset();
      for (size_t s = 0; s < snapshots.size(); ++s) {
        if (snapshots[s] != nullptr) ExpectViewIs(*store, snapshots[s].get(), states[s], keys);
      }
    }
  }
}

TEST_F(StoreSnapshotTest, SequenceIsTheLastCommitSeen) {
  auto store = OpenOrDie(path_, SmallPool());
  const uint64_t first = store->GetSnapshot()->sequence();
  ASSERT_TRUE(store->Put("a", "1").ok());
  ASSERT_TRUE(store->Put("b", "2").ok());
  EXPECT_EQ(store->GetSnapshot()->sequence(), first + 2);
  ASSERT_TRUE(store->Put({.sync = false}, "c", "3").ok());
  EXPECT_EQ(store->GetSnapshot()->sequence(), first + 3);
}

// Records of a snapshot's state that later writes free must keep their
// space: churn that would reuse it overwrites them otherwise, and the
// snapshot would read foreign or damaged data.
TEST_F(StoreSnapshotTest, SpaceFreedAfterASnapshotIsNotReusedUntilItIsReleased) {
  // Room for the churn: while the snapshot lives, nothing freed is reused,
  // not even the churn's own records.
  auto store = OpenOrDie(path_, SmallPool(8ull << 20, 256ull << 20));
  Model then;
  std::vector<std::string> keys;
  for (int i = 0; i < 100; ++i) {
    keys.push_back("k" + std::to_string(i));
    then[keys.back()] = testing::ValueFor(i, 100 + i);
    ASSERT_TRUE(store->Put(keys.back(), then[keys.back()]).ok());
  }
  const std::string large = testing::ValueFor(7, 3u << 20);
  ASSERT_TRUE(store->Put("large", large).ok());
  then["large"] = large;
  keys.push_back("large");
  auto snapshot = store->GetSnapshot();
  for (const std::string& key : keys) ASSERT_TRUE(store->Delete(key).ok());
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(store->Put("churn" + std::to_string(i), std::string(150, 'X')).ok());
    ASSERT_TRUE(store->Put("churn-large", std::string(3u << 20, 'Y')).ok());
  }
  ReadOptions checked = At(snapshot.get());
  checked.verify_checksums = true;
  for (const std::string& key : keys) {
    std::string value;
    ASSERT_TRUE(store->Get(checked, key, &value).ok()) << key;
    EXPECT_EQ(value, then[key]) << key;
  }
  EXPECT_TRUE(store->CheckNow().clean());
  // Released, the space is reused: the pool stops growing under the same churn.
  snapshot.reset();
  const uint64_t pool_bytes = store->GetStats().pool_bytes;
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(store->Put("churn" + std::to_string(i), std::string(150, 'Z')).ok());
    ASSERT_TRUE(store->Put("churn-large", std::string(3u << 20, 'W')).ok());
  }
  EXPECT_EQ(store->GetStats().pool_bytes, pool_bytes);
}

TEST_F(StoreSnapshotTest, PinnedValueReadThroughASnapshotOutlivesIt) {
  auto store = OpenOrDie(path_, SmallPool());
  ASSERT_TRUE(store->Put("k", "original").ok());
  auto snapshot = store->GetSnapshot();
  ASSERT_TRUE(store->Put("k", "replaced").ok());
  PinnedValue pinned;
  ASSERT_TRUE(store->Get(At(snapshot.get()), "k", &pinned).ok());
  snapshot.reset();
  // Churn that would reuse the old record's space if the pin were at the
  // latest commit rather than the snapshot's.
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(store->Put("x" + std::to_string(i), "XXXXXXXX").ok());
  EXPECT_EQ(pinned.value(), "original");
}

// Before snapshots, an iterator re-seeked under each refill and saw writes
// made between refills (1024 entries each).
TEST_F(StoreSnapshotTest, IteratorWithoutASnapshotReadsOneState) {
  auto store = OpenOrDie(path_, SmallPool());
  for (int i = 0; i < 5000; ++i) ASSERT_TRUE(store->Put(absl::StrCat("k", 10000 + i), "old").ok());
  const Model then = Scan(*store, ReadOptions());
  auto it = store->NewIterator(ReadOptions(), {});
  it->SeekToFirst();
  Model seen;
  for (int n = 0; it->Valid(); it->Next(), ++n) {
    seen.emplace(it->key(), it->value());
    if (n == 10) {
      for (int i = 0; i < 5000; i += 2) ASSERT_TRUE(store->Delete(absl::StrCat("k", 10000 + i)).ok());
      for (int i = 1; i < 5000; i += 2) ASSERT_TRUE(store->Put(absl::StrCat("k", 10000 + i), "new").ok());
      ASSERT_TRUE(store->Put("k2", "added").ok());
    }
  }
  EXPECT_TRUE(it->status().ok());
  EXPECT_EQ(seen, then);
}

// An iterator's entries are views into the pool: the entry it stands on,
// and the rest of its batch, stay whole while their keys are rewritten
// and deleted and the churn would reuse their space, both ways.
TEST_F(StoreSnapshotTest, AnIteratorsEntriesStayWholeWhileTheirKeysChange) {
  auto store = OpenOrDie(path_, SmallPool());
  for (int i = 0; i < 2000; ++i) ASSERT_TRUE(store->Put(absl::StrCat("k", 10000 + i), testing::ValueFor(i, 100)).ok());
  const Model then = Scan(*store, ReadOptions());
  for (const bool forward : {true, false}) {
    auto it = store->NewIterator(ReadOptions(), {});
    forward ? it->SeekToFirst() : it->SeekToLast();
    Model seen;
    for (int n = 0; it->Valid(); forward ? it->Next() : it->Prev(), ++n) {
      if (n == 5) {
        for (int round = 0; round < 3; ++round) {
          for (int i = 0; i < 2000; ++i) ASSERT_TRUE(store->Put(absl::StrCat("k", 10000 + i), std::string(100, 'X')).ok());
        }
        for (int i = 0; i < 2000; i += 3) ASSERT_TRUE(store->Delete(absl::StrCat("k", 10000 + i)).ok());
      }
      seen.emplace(it->key(), it->value());
    }
    EXPECT_TRUE(it->status().ok()) << it->status();
    EXPECT_EQ(seen, then) << (forward ? "forward" : "backward");
    it.reset();
    for (int i = 0; i < 2000; ++i) ASSERT_TRUE(store->Put(absl::StrCat("k", 10000 + i), then.at(absl::StrCat("k", 10000 + i))).ok());
  }
}

TEST_F(StoreSnapshotTest, AnotherStoresSnapshotIsInvalidArgument) {
  auto store = OpenOrDie(path_, SmallPool());
  auto other = OpenOrDie(dir_.File("other"), SmallPool());
  ASSERT_TRUE(store->Put("k", "v").ok());
  auto foreign = other->GetSnapshot();
  const ReadOptions options = At(foreign.get());
  std::string value;
  PinnedValue pinned;
  EXPECT_TRUE(absl::IsInvalidArgument(store->Get(options, "k", &value)));
  EXPECT_TRUE(absl::IsInvalidArgument(store->Get(options, "k", &pinned)));
  const std::vector<std::string_view> keys = {"k"};
  std::vector<std::string> values;
  EXPECT_TRUE(absl::IsInvalidArgument(store->MultiGet(options, keys, &values)[0]));
  auto it = store->NewIterator(options, {});
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(absl::IsInvalidArgument(it->status())) << it->status();
}

TEST_F(StoreSnapshotTest, AfterCloseReadsThroughASnapshotFailAndReleasingIsFine) {
  auto store = OpenOrDie(path_, SmallPool());
  ASSERT_TRUE(store->Put("k", "v").ok());
  auto before = store->GetSnapshot();
  ASSERT_TRUE(store->Close().ok());
  auto after = store->GetSnapshot();
  std::string value;
  EXPECT_TRUE(absl::IsFailedPrecondition(store->Get(At(before.get()), "k", &value)));
  EXPECT_TRUE(absl::IsFailedPrecondition(store->Get(At(after.get()), "k", &value)));
  auto it = store->NewIterator(At(before.get()), {});
  it->SeekToFirst();
  EXPECT_TRUE(absl::IsFailedPrecondition(it->status()));
  before.reset();
  after.reset();
}

// A write that fails (a batch whose last value does not fit the pool)
// staged its first entries before it failed; neither the snapshot's view
// nor the current state shows them.
TEST_F(StoreSnapshotTest, AFailedWriteChangesNoSnapshot) {
  auto store = OpenOrDie(path_, SmallPool(8ull << 20, 8ull << 20));
  ASSERT_TRUE(store->Put("k", "v").ok());
  auto snapshot = store->GetSnapshot();
  WriteBatch batch;
  batch.Put("k", "in the failed batch");
  batch.Put("n", "in the failed batch");
  batch.Put("large", std::string(16u << 20, 'L'));
  const absl::Status failed = store->Write(batch);
  ASSERT_TRUE(absl::IsResourceExhausted(failed)) << failed;
  ExpectViewIs(*store, snapshot.get(), {{"k", "v"}}, {"k", "n", "large"});
  ExpectViewIs(*store, nullptr, {{"k", "v"}}, {"k", "n", "large"});
  ASSERT_TRUE(store->Put("k", "after").ok());
  ExpectViewIs(*store, snapshot.get(), {{"k", "v"}}, {"k", "n", "large"});
  ExpectViewIs(*store, nullptr, {{"k", "after"}}, {"k", "n", "large"});
}

}  // namespace
}  // namespace pmstore
