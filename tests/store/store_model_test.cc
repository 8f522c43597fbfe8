// Long random operation sequences checked against a std::map model:
// puts, overwrites, deletes, batches, large values, growth, reopen; Get
// and MultiGet read. Snapshots taken along the way keep a copy of the
// model as it was then, and reads through them (Get, MultiGet, iterators
// with prefix and bounds) must match that copy while writes go on. A
// transaction open along the way reads its own model (the model when it
// began, with its writes over it), and its commit must abort exactly when
// a write since it began changed a key it read or wrote.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

using Model = std::map<std::string, std::string>;

struct ModelParam {
  const char* dir;
  bool sync;
  int ops;
};

class StoreModelTest : public ::testing::TestWithParam<ModelParam> {};

std::string RandomKey(std::mt19937_64& rng) {
  // A small key space so overwrites and deletes hit; some long keys.
  std::string key = "key" + std::to_string(rng() % 3000);
  if (rng() % 50 == 0) key += std::string(rng() % 5000, 'x');
  return key;
}

std::string RandomValue(std::mt19937_64& rng) {
  const uint64_t dice = rng() % 1000;
  size_t size = rng() % 200;
  if (dice < 3) size = (1u << 20) + rng() % (3u << 20);  // large: 2 MiB aligned runs
  else if (dice < 30) size = 1000 + rng() % 60000;
  return pmstore::testing::ValueFor(rng(), size);
}

void ExpectMatches(Store& store, const Model& model) {
  auto it = store.NewIterator(ReadOptions(), {});
  auto expected = model.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++expected) {
    ASSERT_NE(expected, model.end()) << "store has extra key " << it->key().substr(0, 40);
    ASSERT_EQ(it->key(), expected->first);
    ASSERT_EQ(it->value(), expected->second) << expected->first.substr(0, 40);
  }
  ASSERT_TRUE(it->status().ok()) << it->status();
  ASSERT_EQ(expected, model.end()) << "store lacks key " << expected->first.substr(0, 40);
  EXPECT_EQ(store.GetStats().keys, model.size());
}

// A batch of random keys (duplicates and misses among them, now and then
// longer than MultiGet's chunk), in either form, against the model.
void ExpectMultiGetMatches(Store& store, const Model& model, std::mt19937_64& rng) {
  std::vector<std::string> names;
  for (int i = 0, n = static_cast<int>(rng() % 50); i < n; ++i) names.push_back(RandomKey(rng));
  const std::vector<std::string_view> keys(names.begin(), names.end());
  std::vector<std::string> values;
  std::vector<absl::Status> statuses(keys.size());
  std::vector<PinnedValue> pinned(keys.size());
  const bool pin = rng() % 2 == 0;
  if (pin) {
    store.MultiGet(ReadOptions(), keys.size(), keys.data(), pinned.data(), statuses.data());
  } else {
    statuses = store.MultiGet(ReadOptions(), keys, &values);
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    auto found = model.find(names[i]);
    if (found == model.end()) {
      ASSERT_TRUE(absl::IsNotFound(statuses[i])) << statuses[i] << " for " << names[i].substr(0, 40);
    } else {
      ASSERT_TRUE(statuses[i].ok()) << statuses[i] << " for " << names[i].substr(0, 40);
      ASSERT_TRUE((pin ? pinned[i].value() : std::string_view(values[i])) == found->second) << names[i].substr(0, 40);
    }
  }
}

// A walk both ways through `range` as of `options`: it starts at the
// first or last key, or seeks to either side of a random key, then moves
// Next and Prev at random (runs of up to 2000 one way, past the
// iterator's batches of 1024), against the model's keys in range.
void ExpectWalkMatches(Store& store, const ReadOptions& options, const IterateOptions& range, const Model& model,
                       std::mt19937_64& rng) {
  std::vector<const std::pair<const std::string, std::string>*> in_range;
  for (const auto& entry : model) {
    const std::string& key = entry.first;
    if (key.compare(0, range.prefix.size(), range.prefix) != 0 || key < range.lower_bound) continue;
    if (!range.upper_bound.empty() && key >= range.upper_bound) continue;
    in_range.push_back(&entry);
  }
  const auto at_or_after = [&](const std::string& target) {
    return static_cast<int64_t>(std::lower_bound(in_range.begin(), in_range.end(), target,
                                                 [](const auto* e, const std::string& t) { return e->first < t; }) -
                                in_range.begin());
  };
  auto it = store.NewIterator(options, range);
  int64_t pos;  // the model's place; outside [0, size): not valid
  const std::string target = RandomKey(rng);
  switch (rng() % 4) {
    case 0: it->SeekToFirst(); pos = 0; break;
    case 1: it->SeekToLast(); pos = static_cast<int64_t>(in_range.size()) - 1; break;
    case 2: it->Seek(target); pos = at_or_after(target); break;
    default: {
      it->SeekForPrev(target);
      pos = at_or_after(target);
      if (pos >= static_cast<int64_t>(in_range.size()) || in_range[pos]->first != target) --pos;
    }
  }
  std::string trail;  // the moves so far, for a failure's message
  for (int moves = 0; moves < 6; ++moves) {
    const bool forward = rng() % 2 == 0;
    const int run = static_cast<int>(rng() % 2000) + 1;
    for (int step = 0; step < run; ++step) {
      const bool valid = pos >= 0 && pos < static_cast<int64_t>(in_range.size());
      ASSERT_EQ(it->Valid(), valid) << "after " << trail << " at model place " << pos << " of " << in_range.size();
      if (!valid) break;
      ASSERT_EQ(it->key(), in_range[pos]->first) << "after " << trail;
      ASSERT_TRUE(it->value() == in_range[pos]->second) << in_range[pos]->first.substr(0, 40);
      if (forward) {
        it->Next();
        ++pos;
      } else {
        it->Prev();
        --pos;
      }
    }
    trail += forward ? "N" : "P";
    if (!it->Valid()) break;
  }
  ASSERT_TRUE(it->status().ok()) << it->status();
}

// A live snapshot and the model as it was when it was taken.
struct SnapshotAndModel {
  std::unique_ptr<Snapshot> snapshot;
  Model then;
};

// Reads through `at.snapshot`, of random keys and a random range, against
// `at.then`.
void ExpectSnapshotMatches(Store& store, const SnapshotAndModel& at, std::mt19937_64& rng) {
  ReadOptions options;
  options.snapshot = at.snapshot.get();
  std::vector<std::string> names;
  for (int i = 0; i < 20; ++i) names.push_back(RandomKey(rng));
  const std::vector<std::string_view> keys(names.begin(), names.end());
  std::vector<std::string> values;
  const std::vector<absl::Status> statuses = store.MultiGet(options, keys, &values);
  for (size_t i = 0; i < names.size(); ++i) {
    const auto found = at.then.find(names[i]);
    std::string value;
    PinnedValue pinned;
    const absl::Status got = rng() % 2 ? store.Get(options, names[i], &value) : store.Get(options, names[i], &pinned);
    if (pinned.pinned()) value = pinned.value();
    if (found == at.then.end()) {
      ASSERT_TRUE(absl::IsNotFound(got)) << got << " for " << names[i].substr(0, 40);
      ASSERT_TRUE(absl::IsNotFound(statuses[i])) << statuses[i] << " for " << names[i].substr(0, 40);
    } else {
      ASSERT_TRUE(got.ok() && statuses[i].ok()) << got << ", " << statuses[i] << " for " << names[i].substr(0, 40);
      ASSERT_TRUE(value == found->second && values[i] == found->second) << names[i].substr(0, 40);
    }
  }
  // A prefix of one or two digits after "key", or bounds between two
  // random keys (lower > upper now and then: an empty range).
  IterateOptions range;
  if (rng() % 2) {
    range.prefix = "key" + std::to_string(rng() % 30);
  } else {
    range.lower_bound = RandomKey(rng);
    range.upper_bound = RandomKey(rng);
  }
  auto it = store.NewIterator(options, range);
  auto expected = at.then.lower_bound(std::max(range.lower_bound, range.prefix));
  const auto in_range = [&](const std::string& key) {
    return key.compare(0, range.prefix.size(), range.prefix) == 0 &&
           (range.upper_bound.empty() || key < range.upper_bound);
  };
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++expected) {
    ASSERT_TRUE(expected != at.then.end() && in_range(expected->first)) << "extra key " << it->key().substr(0, 40);
    ASSERT_EQ(it->key(), expected->first);
    ASSERT_TRUE(it->value() == expected->second) << expected->first.substr(0, 40);
  }
  ASSERT_TRUE(it->status().ok()) << it->status();
  ASSERT_TRUE(expected == at.then.end() || !in_range(expected->first)) << "lacks " << expected->first.substr(0, 40);
  ExpectWalkMatches(store, options, range, at.then, rng);
}

// A transaction open in the model test: what it sees, what it touched,
// and which keys the store's writes changed since it began.
struct OpenTransaction {
  std::unique_ptr<Transaction> transaction;
  Model view;
  std::set<std::string> touched;
  std::set<std::string> changed;
  bool wrote = false;  // a transaction without writes commits whatever changed
};

// One step of `open`: a read, a write, a scan both ways, or the commit
// (then *model takes its writes, unless it must abort).
void StepTransaction(std::unique_ptr<OpenTransaction>& open, Model* model, std::mt19937_64& rng) {
  Transaction& t = *open->transaction;
  const std::string key = RandomKey(rng);
  const uint64_t dice = rng() % 100;
  if (dice < 35) {
    std::string value;
    const absl::Status s = t.Get(key, &value);
    const auto found = open->view.find(key);
    if (found == open->view.end()) {
      ASSERT_TRUE(absl::IsNotFound(s)) << s;
    } else {
      ASSERT_TRUE(s.ok()) << s;
      ASSERT_EQ(value, found->second);
    }
    open->touched.insert(key);
  } else if (dice < 60) {
    const std::string value = pmstore::testing::ValueFor(rng(), rng() % 300);
    ASSERT_TRUE(t.Put(key, value).ok());
    open->view[key] = value;
    open->touched.insert(key);
    open->wrote = true;
  } else if (dice < 75) {
    ASSERT_TRUE(t.Delete(key).ok());
    open->view.erase(key);
    open->touched.insert(key);
    open->wrote = true;
  } else if (dice < 85) {
    const std::string prefix = "key" + std::to_string(rng() % 30);
    auto it = t.NewIterator({.prefix = prefix});
    auto expected = open->view.lower_bound(prefix);
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++expected) {
      ASSERT_TRUE(expected != open->view.end() && expected->first.starts_with(prefix)) << it->key().substr(0, 40);
      ASSERT_EQ(it->key(), expected->first);
      ASSERT_EQ(it->value(), expected->second);
      open->touched.insert(expected->first);
    }
    ASSERT_TRUE(expected == open->view.end() || !expected->first.starts_with(prefix));
    size_t backward = 0;
    for (it->SeekToLast(); it->Valid(); it->Prev()) ++backward;
    ASSERT_EQ(backward, static_cast<size_t>(std::distance(open->view.lower_bound(prefix), expected)));
  } else {
    bool conflict = false;
    for (const std::string& k : open->touched) conflict = conflict || open->changed.contains(k);
    const absl::Status s = t.Commit();
    if (conflict && open->wrote) {
      ASSERT_TRUE(absl::IsAborted(s)) << s;
    } else {
      ASSERT_TRUE(s.ok()) << s;
      // The model takes the transaction's writes (its view where it
      // touched keys, none of which changed since it began; a transaction
      // that only read applies nothing).
      if (open->wrote) {
        for (const std::string& k : open->touched) {
          const auto in_view = open->view.find(k);
          if (in_view != open->view.end()) {
            (*model)[k] = in_view->second;
          } else {
            model->erase(k);
          }
        }
      }
    }
    open.reset();
  }
}

// Random operations on the pool at `path`, created by `options`, checked
// against a map across reopens.
void RunModel(const std::string& path, const Options& options, const ModelParam& param) {
  // PMSTORE_TEST_SEED replays a failure's seed (the trace prints it).
  const char* replay = std::getenv("PMSTORE_TEST_SEED");
  const uint64_t seed = replay != nullptr ? std::strtoull(replay, nullptr, 10) : std::random_device()();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  Model model;
  const WriteOptions write{.sync = param.sync};
  auto store = pmstore::testing::OpenOrDie(path, options);
  ASSERT_NE(store, nullptr);
  std::vector<SnapshotAndModel> snapshots;  // at most three at once
  std::unique_ptr<OpenTransaction> open;     // at most one
  // What a write of the store changes, for the open transaction's conflicts.
  const auto changes = [&](const std::string& key, bool is_delete) {
    if (open != nullptr && (!is_delete || model.contains(key))) open->changed.insert(key);
  };
  for (int op = 0; op < param.ops; ++op) {
    const uint64_t transaction_dice = rng() % 100;
    if (open == nullptr && transaction_dice < 2) {
      open = std::make_unique<OpenTransaction>(OpenTransaction{store->BeginTransaction(), model, {}, {}});
    } else if (open != nullptr && transaction_dice < 30) {
      ASSERT_NO_FATAL_FAILURE(StepTransaction(open, &model, rng));
    }
    const uint64_t snapshot_dice = rng() % 1000;
    if (snapshot_dice < 10 && snapshots.size() < 3) {
      snapshots.push_back({store->GetSnapshot(), model});
    } else if (snapshot_dice < 15 && !snapshots.empty()) {
      snapshots.erase(snapshots.begin() + rng() % snapshots.size());
    } else if (snapshot_dice < 40 && !snapshots.empty()) {
      ASSERT_NO_FATAL_FAILURE(ExpectSnapshotMatches(*store, snapshots[rng() % snapshots.size()], rng));
    }
    const uint64_t dice = rng() % 100;
    if (dice < 55) {
      const std::string key = RandomKey(rng);
      const std::string value = RandomValue(rng);
      ASSERT_TRUE(store->Put(write, key, value).ok());
      changes(key, false);
      model[key] = value;
    } else if (dice < 80) {
      const std::string key = RandomKey(rng);
      ASSERT_TRUE(store->Delete(write, key).ok());
      changes(key, true);
      model.erase(key);
    } else if (dice < 88) {
      WriteBatch batch;
      for (int i = 0, n = static_cast<int>(rng() % 40); i < n; ++i) {
        const std::string key = RandomKey(rng);
        if (rng() % 3 == 0) {
          batch.Delete(key);
        } else {
          batch.Put(key, pmstore::testing::ValueFor(rng(), rng() % 300));
        }
      }
      ASSERT_TRUE(store->Write(write, batch).ok());
      for (const WriteBatch::Op& batched : batch.ops()) {
        changes(batched.key, batched.kind == WriteBatch::OpKind::kDelete);
        if (batched.kind == WriteBatch::OpKind::kDelete) {
          model.erase(batched.key);
        } else {
          model[batched.key] = batched.value;
        }
      }
    } else if (dice < 93) {
      ASSERT_NO_FATAL_FAILURE(ExpectMultiGetMatches(*store, model, rng));
    } else if (dice < 99) {
      const std::string key = RandomKey(rng);
      std::string value;
      const absl::Status s = store->Get(key, &value);
      auto found = model.find(key);
      if (found == model.end()) {
        ASSERT_TRUE(absl::IsNotFound(s)) << s;
      } else {
        ASSERT_TRUE(s.ok()) << s;
        ASSERT_EQ(value, found->second);
      }
    } else {
      if (!param.sync) {
        ASSERT_TRUE(store->Sync().ok());
      }
      for (const SnapshotAndModel& at : snapshots) ASSERT_NO_FATAL_FAILURE(ExpectSnapshotMatches(*store, at, rng));
      snapshots.clear();  // they must go before the store, as a transaction must
      open.reset();
      store.reset();
      store = pmstore::testing::OpenOrDie(path, Options());
      ASSERT_NE(store, nullptr);
      // Opened from the separator image: the walks backward go through it.
      ASSERT_NO_FATAL_FAILURE(ExpectWalkMatches(*store, ReadOptions(), IterateOptions(), model, rng));
      ASSERT_NO_FATAL_FAILURE(ExpectMatches(*store, model));
    }
  }
  for (const SnapshotAndModel& at : snapshots) ASSERT_NO_FATAL_FAILURE(ExpectSnapshotMatches(*store, at, rng));
  snapshots.clear();
  open.reset();
  ASSERT_NO_FATAL_FAILURE(ExpectMatches(*store, model));
  ASSERT_NO_FATAL_FAILURE(ExpectWalkMatches(*store, ReadOptions(), IterateOptions(), model, rng));
  const CheckReport report = store->CheckNow();
  EXPECT_TRUE(report.clean()) << report.problems.front();
  EXPECT_EQ(report.keys, model.size());
}

TEST_P(StoreModelTest, RandomOperationsMatchAMapAcrossReopens) {
  const ModelParam param = GetParam();
  TempDir dir(param.dir);
  RunModel(dir.File("pool"), pmstore::testing::SmallPool(8ull << 20, 256ull << 20), param);
}

// A pool on device DAX: PMSTORE_TEST_DEVICE names the device (the VM's
// /dev/daxX.Y, tests/dax/pmstore_on_devdax.sh), whose pool is destroyed
// first; skipped without one.
TEST(StoreModelOnDeviceDaxTest, RandomOperationsMatchAMapAcrossReopens) {
  const char* device = std::getenv("PMSTORE_TEST_DEVICE");
  if (device == nullptr) GTEST_SKIP() << "PMSTORE_TEST_DEVICE names no device DAX device";
  const absl::Status destroyed = Store::Destroy(device);
  ASSERT_TRUE(destroyed.ok() || absl::IsNotFound(destroyed)) << destroyed;
  RunModel(device, Options{.create_if_missing = true}, ModelParam{"", true, 3000});
  const auto stats = pmstore::testing::OpenOrDie(device, Options())->GetStats();
  EXPECT_GT(stats.device_dax_align, 0u);
  EXPECT_TRUE(stats.dax);
}

std::string ParamName(const ::testing::TestParamInfo<ModelParam>& info) {
  return std::string(info.param.sync ? "Durable" : "Unsynced") + std::to_string(info.param.ops) + "Ops";
}

INSTANTIATE_TEST_SUITE_P(Tmpfs, StoreModelTest, ::testing::Values(ModelParam{"/dev/shm", true, 10000}), ParamName);
// ext4: durable commits cost a disk flush each, so most run with sync=false
// (reopen after Sync), and a short run keeps sync=true.
INSTANTIATE_TEST_SUITE_P(Ext4, StoreModelTest,
                         ::testing::Values(ModelParam{"/var/tmp", false, 6000}, ModelParam{"/var/tmp", true, 300}),
                         ParamName);

}  // namespace
}  // namespace pmstore
