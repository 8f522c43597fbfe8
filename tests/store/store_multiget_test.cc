// Store::MultiGet against Get, key by key: found and missing keys,
// duplicates, the empty key, large values, batches longer than a chunk,
// fingerprint collisions, pins, and a closed store.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pmstore/format/key.h"
#include "pmstore/format/layout.h"
#include "pmstore/index/leaf_index.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

using testing::OpenOrDie;
using testing::SmallPool;
using testing::ValueFor;

constexpr size_t kChunk = internal::LeafIndex::kMultiLookupChunk;

std::vector<std::string_view> Views(const std::vector<std::string>& keys) {
  return std::vector<std::string_view>(keys.begin(), keys.end());
}

// Both forms of MultiGet return, for every key, what Get returns.
void ExpectMultiGetEqualsGet(Store& store, const std::vector<std::string>& keys, size_t* found = nullptr) {
  const std::vector<std::string_view> views = Views(keys);
  std::vector<std::string> values = {"stale"};
  const std::vector<absl::Status> statuses = store.MultiGet(ReadOptions(), views, &values);
  ASSERT_EQ(statuses.size(), keys.size());
  ASSERT_EQ(values.size(), keys.size());
  std::vector<PinnedValue> pinned(keys.size());
  std::vector<absl::Status> pinned_statuses(keys.size());
  store.MultiGet(ReadOptions(), keys.size(), views.data(), pinned.data(), pinned_statuses.data());
  size_t hits = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    SCOPED_TRACE("key " + std::to_string(i) + " '" + keys[i].substr(0, 40) + "'");
    std::string expected;
    const absl::Status get = store.Get(keys[i], &expected);
    ASSERT_EQ(statuses[i].code(), get.code()) << statuses[i];
    ASSERT_EQ(pinned_statuses[i].code(), get.code()) << pinned_statuses[i];
    if (get.ok()) {
      ++hits;
      ASSERT_EQ(values[i], expected);
      ASSERT_TRUE(pinned[i].pinned());
      ASSERT_EQ(pinned[i].value(), expected);
    } else {
      ASSERT_TRUE(values[i].empty());
      ASSERT_FALSE(pinned[i].pinned());
    }
  }
  if (found != nullptr) *found = hits;
}

class StoreMultiGetTest : public ::testing::Test {
 protected:
  TempDir dir_{"/dev/shm"};
  std::string path_ = dir_.File("pool");
};

TEST_F(StoreMultiGetTest, EqualsGetForFoundDeletedAndNeverWrittenKeys) {
  auto store = OpenOrDie(path_, SmallPool(16ull << 20, 64ull << 20));
  std::mt19937_64 rng(13);
  std::vector<std::string> written;
  // Short keys, 16-byte keys, and long keys that tie on their first 16
  // bytes (compared in the record), over many leaves.
  for (int i = 0; i < 3000; ++i) {
    const std::string n = std::to_string(i);
    const std::string key = i % 3 == 0 ? n : (i % 3 == 1 ? "k" + std::string(15 - n.size(), '0') + n : "long/shared/prefix/" + n);
    ASSERT_TRUE(store->Put(key, ValueFor(i, rng() % 300)).ok());
    written.push_back(key);
  }
  for (int i = 0; i < 3000; i += 5) ASSERT_TRUE(store->Delete(written[i]).ok());
  std::vector<std::string> batch;
  for (int i = 0; i < 1200; ++i) {
    switch (rng() % 4) {
      case 0: batch.push_back(written[rng() % written.size()] + "."); break;  // never written, sorts beside one
      case 1: batch.push_back(batch.empty() ? "x" : batch[rng() % batch.size()]); break;  // a duplicate
      default: batch.push_back(written[rng() % written.size()]);
    }
  }
  size_t found = 0;
  ASSERT_NO_FATAL_FAILURE(ExpectMultiGetEqualsGet(*store, batch, &found));
  EXPECT_GT(found, batch.size() / 3);
  EXPECT_LT(found, batch.size());
  // Every length around the chunk size, the rest of a chunk included.
  for (size_t n : {size_t{0}, size_t{1}, kChunk - 1, kChunk, kChunk + 1, 3 * kChunk + 5}) {
    SCOPED_TRACE("batch of " + std::to_string(n));
    const std::vector<std::string> first_n(batch.begin(), batch.begin() + n);
    ASSERT_NO_FATAL_FAILURE(ExpectMultiGetEqualsGet(*store, first_n));
  }
}

TEST_F(StoreMultiGetTest, EmptyKeyAndDuplicatesAreLookedUpEachTime) {
  auto store = OpenOrDie(path_, SmallPool());
  ASSERT_TRUE(store->Put("a", "1").ok());
  const std::vector<std::string> batch = {"", "a", "", "a", "missing", "missing", "a"};
  std::vector<std::string> values;
  std::vector<absl::Status> statuses = store->MultiGet(ReadOptions(), Views(batch), &values);
  const std::vector<bool> expect_found = {false, true, false, true, false, false, true};
  for (size_t i = 0; i < batch.size(); ++i) {
    EXPECT_EQ(statuses[i].ok(), expect_found[i]) << i;
    EXPECT_EQ(absl::IsNotFound(statuses[i]), !expect_found[i]) << i;
    EXPECT_EQ(values[i], expect_found[i] ? "1" : "") << i;
  }
  ASSERT_TRUE(store->Put("", "empty key's value").ok());
  statuses = store->MultiGet(ReadOptions(), Views(batch), &values);
  EXPECT_TRUE(statuses[0].ok() && statuses[2].ok());
  EXPECT_EQ(values[0], "empty key's value");
  EXPECT_EQ(values[2], "empty key's value");
  ASSERT_NO_FATAL_FAILURE(ExpectMultiGetEqualsGet(*store, batch));
}

TEST_F(StoreMultiGetTest, LargeValuesInRunsComeBackWhole) {
  auto store = OpenOrDie(path_, SmallPool(64ull << 20, 128ull << 20));
  // 1 MiB and up go in 2 MiB aligned runs; one just below stays in a chunk.
  const std::vector<size_t> sizes = {1u << 20, (1u << 20) - 1, (3u << 20) / 2, (5u << 20) / 2, 100, 0};
  std::vector<std::string> batch;
  for (size_t i = 0; i < sizes.size(); ++i) {
    batch.push_back("big" + std::to_string(i));
    ASSERT_TRUE(store->Put(batch.back(), ValueFor(i + 7, sizes[i])).ok());
    batch.push_back("absent" + std::to_string(i));
  }
  std::vector<std::string> values;
  const std::vector<absl::Status> statuses = store->MultiGet(ReadOptions(), Views(batch), &values);
  for (size_t i = 0; i < sizes.size(); ++i) {
    ASSERT_TRUE(statuses[2 * i].ok()) << statuses[2 * i];
    EXPECT_EQ(values[2 * i].size(), sizes[i]);
    EXPECT_TRUE(values[2 * i] == ValueFor(i + 7, sizes[i])) << "value " << i << " differs";
    EXPECT_TRUE(absl::IsNotFound(statuses[2 * i + 1]));
  }
  ASSERT_NO_FATAL_FAILURE(ExpectMultiGetEqualsGet(*store, batch));
  // With verification on, the checksums of the runs are read too.
  const ReadOptions verify{.verify_checksums = true};
  const std::vector<absl::Status> verified = store->MultiGet(verify, Views(batch), &values);
  for (size_t i = 0; i < sizes.size(); ++i) EXPECT_TRUE(verified[2 * i].ok()) << verified[2 * i];
}

// Keys whose first 16 bytes and fingerprint byte are the same are told
// apart only by the record's key: a lookup tries the next candidate slot.
TEST_F(StoreMultiGetTest, KeysThatShareFingerprintAndPrefixAreToldApart) {
  auto store = OpenOrDie(path_, SmallPool());
  const std::string prefix = "sixteen-byte-pre";
  std::vector<std::string> same;  // fingerprint of the first key
  for (int i = 0; same.size() < 4 && i < 100000; ++i) {
    const std::string key = prefix + std::to_string(i);
    if (same.empty() || internal::KeyFingerprint(key) == internal::KeyFingerprint(same[0])) same.push_back(key);
  }
  ASSERT_EQ(same.size(), 4u);
  // Three in one leaf (a pool this small has one), the fourth missing.
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(store->Put(same[i], "value of " + same[i]).ok());
  std::vector<std::string> values;
  const std::vector<absl::Status> statuses = store->MultiGet(ReadOptions(), Views(same), &values);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(statuses[i].ok()) << same[i];
    EXPECT_EQ(values[i], "value of " + same[i]);
  }
  EXPECT_TRUE(absl::IsNotFound(statuses[3]));
  // After a delete the freed slot still holds the deleted entry.
  ASSERT_TRUE(store->Delete(same[0]).ok());
  ASSERT_NO_FATAL_FAILURE(ExpectMultiGetEqualsGet(*store, same));
}

TEST_F(StoreMultiGetTest, PinnedValuesStayWholeWhileTheirKeysChange) {
  auto store = OpenOrDie(path_, SmallPool());
  std::vector<std::string> keys;
  for (int i = 0; i < 40; ++i) {
    keys.push_back("pin" + std::to_string(i));
    ASSERT_TRUE(store->Put(keys.back(), ValueFor(i, 500)).ok());
  }
  const std::vector<std::string_view> views = Views(keys);
  std::vector<PinnedValue> pinned(keys.size());
  std::vector<absl::Status> statuses(keys.size());
  store->MultiGet(ReadOptions(), keys.size(), views.data(), pinned.data(), statuses.data());
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i % 2 == 0) {
      ASSERT_TRUE(store->Delete(keys[i]).ok());
    } else {
      ASSERT_TRUE(store->Put(keys[i], ValueFor(i + 1000, 500)).ok());
    }
  }
  for (int round = 0; round < 3; ++round) {  // new writes would reuse freed space
    for (int i = 0; i < 40; ++i) ASSERT_TRUE(store->Put("filler" + std::to_string(i), ValueFor(i, 500)).ok());
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(statuses[i].ok());
    EXPECT_EQ(pinned[i].value(), ValueFor(i, 500)) << keys[i];
  }
  // A second call resets what the array held before.
  store->MultiGet(ReadOptions(), keys.size(), views.data(), pinned.data(), statuses.data());
  EXPECT_TRUE(absl::IsNotFound(statuses[0]));
  EXPECT_FALSE(pinned[0].pinned());
  EXPECT_EQ(pinned[1].value(), ValueFor(1001, 500));
}

TEST_F(StoreMultiGetTest, DamagedRecordIsDataLossForThatKeyAlone) {
  const std::string marker = "a record that nothing else in the pool holds, 0123456789";
  {
    auto store = OpenOrDie(path_, SmallPool());
    ASSERT_TRUE(store->Put("victim", marker).ok());
    ASSERT_TRUE(store->Put("bystander", "fine").ok());
  }
  {
    std::fstream file(path_, std::ios::in | std::ios::out | std::ios::binary);
    const std::string image((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    file.seekp(static_cast<std::streamoff>(image.find(marker)));
    file.put('X');
  }
  auto store = OpenOrDie(path_, Options());
  const std::vector<std::string> batch = {"bystander", "victim", "nope", "victim"};
  std::vector<std::string> values;
  const ReadOptions verify{.verify_checksums = true};
  const std::vector<absl::Status> statuses = store->MultiGet(verify, Views(batch), &values);
  EXPECT_TRUE(statuses[0].ok());
  EXPECT_EQ(values[0], "fine");
  EXPECT_EQ(statuses[1].code(), absl::StatusCode::kDataLoss) << statuses[1];
  EXPECT_TRUE(absl::IsNotFound(statuses[2]));
  EXPECT_EQ(statuses[3].code(), absl::StatusCode::kDataLoss);
  std::string value;
  EXPECT_EQ(store->Get(ReadOptions{.verify_checksums = true}, "victim", &value), statuses[1]);
  // Unverified, the damaged bytes come back as Get returns them.
  ASSERT_NO_FATAL_FAILURE(ExpectMultiGetEqualsGet(*store, batch));
}

TEST_F(StoreMultiGetTest, AfterCloseEveryKeyIsFailedPrecondition) {
  auto store = OpenOrDie(path_, SmallPool());
  ASSERT_TRUE(store->Put("a", "1").ok());
  ASSERT_TRUE(store->Close().ok());
  const std::vector<std::string> batch(2 * kChunk + 1, "a");
  std::vector<std::string> values;
  for (const absl::Status& status : store->MultiGet(ReadOptions(), Views(batch), &values)) {
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  }
}

}  // namespace
}  // namespace pmstore
