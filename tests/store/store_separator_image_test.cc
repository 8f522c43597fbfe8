// The separator image (doc/FORMAT.md "Separator image"): a clean close
// writes it, the next open finds the leaves through it instead of walking
// the chain, and any image that is damaged, stale or absent (a kill, a
// pool without one) sends open back to the walk with every read right.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "pmstore/format/image_layout.h"
#include "pmstore/format/layout.h"
#include "pmstore/format/leaf.h"
#include "pmstore/format/record.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

using testing::OpenOrDie;
using testing::SmallPool;
using testing::ValueFor;

// Keys of 24 bytes whose first 16 are shared by runs of 40: separators
// then tie on the 16 bytes the image's fences hold.
std::string KeyFor(uint64_t i) {
  char key[32];
  std::snprintf(key, sizeof(key), "shared-prefix-%02llu/%08llu", static_cast<unsigned long long>(i / 40 % 100),
                static_cast<unsigned long long>(i));
  return key;
}

class StoreSeparatorImageTest : public ::testing::Test {
 protected:
  void Fill(Store& store, uint64_t from, uint64_t to) {
    for (uint64_t i = from; i < to; ++i) {
      ASSERT_TRUE(store.Put(KeyFor(i), ValueFor(i, 20 + i % 50)).ok());
      model_[KeyFor(i)] = ValueFor(i, 20 + i % 50);
    }
  }
  // Every key of the model with its value, keys between them absent, and
  // a scan in the model's order.
  void ExpectModel(Store& store) {
    ExpectPointReads(store);
    auto it = store.NewIterator(ReadOptions(), {});
    auto want = model_.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++want) {
      ASSERT_NE(want, model_.end());
      ASSERT_EQ(it->key(), want->first);
    }
    EXPECT_EQ(want, model_.end());
    EXPECT_TRUE(it->status().ok());
  }
  void ExpectPointReads(Store& store) {
    std::string value;
    for (const auto& [key, want] : model_) {
      ASSERT_TRUE(store.Get(key, &value).ok()) << key;
      ASSERT_EQ(value, want) << key;
      EXPECT_TRUE(absl::IsNotFound(store.Get(key + "~", &value))) << key;
    }
    EXPECT_TRUE(absl::IsNotFound(store.Get("", &value)));
    EXPECT_TRUE(absl::IsNotFound(store.Get("zzz", &value)));
  }
  // A scan from the first key stops with DataLoss at a damaged leaf.
  void ExpectScanStopsAtTheDamage(Store& store) {
    auto it = store.NewIterator(ReadOptions(), {});
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
    EXPECT_TRUE(absl::IsDataLoss(it->status())) << it->status();
  }
  uint64_t ImageOffset() {
    uint64_t offset = 0;
    const int fd = open(path_.c_str(), O_RDONLY);
    EXPECT_EQ(pread(fd, &offset, 8, internal::kRootOffset + offsetof(internal::Root, separator_image)), 8);
    close(fd);
    return offset;
  }
  void Patch(uint64_t offset, const void* bytes, size_t size) {
    const int fd = open(path_.c_str(), O_RDWR);
    ASSERT_EQ(pwrite(fd, bytes, size, static_cast<off_t>(offset)), static_cast<ssize_t>(size));
    close(fd);
  }
  // The key of the record at `offset` in the pool file.
  std::string RecordKeyOf(uint64_t offset) {
    internal::RecordHeader header;
    const int fd = open(path_.c_str(), O_RDONLY);
    EXPECT_EQ(pread(fd, &header, sizeof(header), static_cast<off_t>(offset)), static_cast<ssize_t>(sizeof(header)));
    std::string key(header.key_len, '\0');
    EXPECT_EQ(pread(fd, key.data(), key.size(), static_cast<off_t>(offset + sizeof(header))),
              static_cast<ssize_t>(key.size()));
    close(fd);
    return key;
  }
  // Flips the checksum word of image entry 5's leaf, after a clean close;
  // returns the key of that leaf's first entry.
  std::string DamageFifthLeaf() {
    internal::Leaf leaf;
    const uint64_t offset = ImageLeaf(5, &leaf);
    leaf.header.checksum ^= 1;
    Patch(offset + offsetof(internal::LeafHeader, checksum), &leaf.header.checksum, 8);
    return RecordKeyOf(leaf.slots[leaf.header.perm[0]].record);
  }
  // Image entry i's leaf, read from the file into *leaf; its offset.
  uint64_t ImageLeaf(int i, internal::Leaf* leaf) {
    internal::SeparatorImageEntry entry;
    const int fd = open(path_.c_str(), O_RDONLY);
    EXPECT_EQ(pread(fd, &entry, sizeof(entry),
                    static_cast<off_t>(ImageOffset() + sizeof(internal::SeparatorImageHeader) + i * sizeof(entry))),
              static_cast<ssize_t>(sizeof(entry)));
    EXPECT_EQ(pread(fd, leaf, sizeof(*leaf), static_cast<off_t>(entry.leaf)), static_cast<ssize_t>(sizeof(*leaf)));
    close(fd);
    return entry.leaf;
  }
  // A pool of `keys` keys closed cleanly: it holds an image.
  void MakeClosedPool(uint64_t keys) {
    auto store = OpenOrDie(path_, SmallPool());
    Fill(*store, 0, keys);
    ASSERT_TRUE(store->Close().ok());
    ASSERT_NE(ImageOffset(), 0u);
  }

  TempDir dir_{"/dev/shm"};
  std::string path_ = dir_.File("pool");
  std::map<std::string, std::string> model_;
};

TEST_F(StoreSeparatorImageTest, CleanCloseThenReopenFindsTheLeavesThroughTheImage) {
  MakeClosedPool(6000);
  auto store = OpenOrDie(path_, Options());
  EXPECT_TRUE(store->GetStats().opened_from_separator_image);
  ExpectModel(*store);
  const CheckReport report = store->CheckNow();
  EXPECT_TRUE(report.clean()) << report.problems.front();
  EXPECT_GT(report.leaves, 100u);  // enough strides of the fence array
}

TEST_F(StoreSeparatorImageTest, ReopenWithoutWritesKeepsTheImage) {
  MakeClosedPool(3000);
  const uint64_t image = ImageOffset();
  ASSERT_TRUE(OpenOrDie(path_, Options())->Close().ok());
  EXPECT_EQ(ImageOffset(), image);
  auto store = OpenOrDie(path_, Options());
  EXPECT_TRUE(store->GetStats().opened_from_separator_image);
  ExpectModel(*store);
}

TEST_F(StoreSeparatorImageTest, WritesAfterAnImageOpenSplitAndDelete) {
  MakeClosedPool(3000);
  {
    auto store = OpenOrDie(path_, Options());
    ASSERT_TRUE(store->GetStats().opened_from_separator_image);
    Fill(*store, 3000, 9000);  // new leaves between and after the old ones
    for (uint64_t i = 0; i < 3000; i += 2) {  // whole leaves empty out, the first among them
      ASSERT_TRUE(store->Delete(KeyFor(i)).ok());
      model_.erase(KeyFor(i));
    }
    for (uint64_t i = 0; i < 600; ++i) {
      ASSERT_TRUE(store->Delete(KeyFor(i)).ok());
      model_.erase(KeyFor(i));
    }
    ExpectModel(*store);
    const CheckReport report = store->CheckNow();
    EXPECT_TRUE(report.clean()) << report.problems.front();
    EXPECT_EQ(ImageOffset(), 0u) << "the first write frees the image";
  }
  auto store = OpenOrDie(path_, Options());  // the destructor closed it cleanly
  EXPECT_TRUE(store->GetStats().opened_from_separator_image);
  ExpectModel(*store);
  EXPECT_TRUE(store->CheckNow().clean());
}

TEST_F(StoreSeparatorImageTest, AKilledWriterLeavesNoImageAndOpenWalks) {
  MakeClosedPool(2000);
  const pid_t child = fork();
  if (child == 0) {
    auto store = Store::Open(path_, Options());
    bool ok = store.ok();
    for (uint64_t i = 2000; ok && i < 4000; ++i) ok = (*store)->Put(KeyFor(i), ValueFor(i, 20 + i % 50)).ok();
    _exit(ok ? 0 : 1);  // no close
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (uint64_t i = 2000; i < 4000; ++i) model_[KeyFor(i)] = ValueFor(i, 20 + i % 50);
  EXPECT_EQ(ImageOffset(), 0u);
  auto checked = Store::Check(path_);
  ASSERT_TRUE(checked.ok() && checked->clean());
  EXPECT_EQ(ImageOffset(), 0u) << "a check leaves the pool as it found it";
  auto store = OpenOrDie(path_, Options());
  EXPECT_FALSE(store->GetStats().opened_from_separator_image);
  ExpectModel(*store);
  EXPECT_TRUE(store->CheckNow().clean());
}

TEST_F(StoreSeparatorImageTest, ADamagedImageSendsOpenToTheWalkAndCheckNamesIt) {
  MakeClosedPool(4000);
  // One entry's leaf offset, deep in the body: only the body checksum sees it.
  const uint64_t entry = ImageOffset() + sizeof(internal::SeparatorImageHeader) + 7 * sizeof(internal::SeparatorImageEntry);
  const uint64_t wrong_leaf = 4096;
  Patch(entry + offsetof(internal::SeparatorImageEntry, leaf), &wrong_leaf, 8);
  {
    auto store = OpenOrDie(path_, Options());
    EXPECT_FALSE(store->GetStats().opened_from_separator_image);
    ExpectModel(*store);
    const CheckReport report = store->CheckNow();
    ASSERT_FALSE(report.clean());
    EXPECT_NE(report.problems.front().find("checksum failure in the separator image"), std::string::npos)
        << report.problems.front();
    ASSERT_TRUE(store->Put(KeyFor(5000), "v").ok());  // frees it
    model_[KeyFor(5000)] = "v";
    EXPECT_TRUE(store->CheckNow().clean());
  }
  auto store = OpenOrDie(path_, Options());
  EXPECT_TRUE(store->GetStats().opened_from_separator_image);
  ExpectModel(*store);
}

TEST_F(StoreSeparatorImageTest, AStaleImageIsPassedOverAndFreedByTheNextWrite) {
  MakeClosedPool(4000);
  // Intact, but naming a commit other than the last: as if written before
  // writes that a build without images made.
  internal::SeparatorImageHeader header;
  const int fd = open(path_.c_str(), O_RDONLY);
  ASSERT_EQ(pread(fd, &header, sizeof(header), static_cast<off_t>(ImageOffset())), static_cast<ssize_t>(sizeof(header)));
  close(fd);
  header.seq -= 1;
  header.checksum = internal::SeparatorImageHeaderChecksum(header);
  Patch(ImageOffset(), &header, sizeof(header));
  auto store = OpenOrDie(path_, Options());
  EXPECT_FALSE(store->GetStats().opened_from_separator_image);
  ExpectModel(*store);
  EXPECT_TRUE(store->CheckNow().clean()) << "a stale image is no damage";
  ASSERT_TRUE(store->Delete(KeyFor(1)).ok());
  model_.erase(KeyFor(1));
  EXPECT_EQ(ImageOffset(), 0u);
  const CheckReport report = store->CheckNow();
  EXPECT_TRUE(report.clean()) << report.problems.front();  // its run is free again, not leaked
  ExpectModel(*store);
}

TEST_F(StoreSeparatorImageTest, CheckFindsAnImageThatDisagreesWithTheChain) {
  MakeClosedPool(4000);
  // Swap two entries' leaves and re-seal the checksums: intact, but wrong.
  const uint64_t image = ImageOffset();
  internal::SeparatorImageHeader header;
  const int fd = open(path_.c_str(), O_RDONLY);
  ASSERT_EQ(pread(fd, &header, sizeof(header), static_cast<off_t>(image)), static_cast<ssize_t>(sizeof(header)));
  std::string body(header.bytes - sizeof(header), '\0');
  ASSERT_EQ(pread(fd, body.data(), body.size(), static_cast<off_t>(image + sizeof(header))),
            static_cast<ssize_t>(body.size()));
  close(fd);
  auto* entries = reinterpret_cast<internal::SeparatorImageEntry*>(body.data());
  std::swap(entries[3].leaf, entries[4].leaf);
  header.body_checksum = internal::Checksum(body.data(), body.size());
  header.checksum = internal::SeparatorImageHeaderChecksum(header);
  Patch(image, &header, sizeof(header));
  Patch(image + sizeof(header), body.data(), body.size());
  auto report = Store::Check(path_);
  ASSERT_TRUE(report.ok());
  ASSERT_FALSE(report->clean());
  EXPECT_NE(report->problems.front().find("separator image entry 3 disagrees"), std::string::npos)
      << report->problems.front();
}

TEST_F(StoreSeparatorImageTest, ReadersGoOnWhileTheFirstWriteLeavesTheImage) {
  MakeClosedPool(4000);
  auto store = OpenOrDie(path_, Options());
  ASSERT_TRUE(store->GetStats().opened_from_separator_image);
  std::atomic<int> reading{0};
  std::atomic<bool> written{false};
  std::vector<uint64_t> wrong(2, 0);
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&, t] {
      std::string value;
      reading.fetch_add(1);
      // Until the writes are done, and one more round after them.
      for (bool last = false; !last;) {
        last = written.load();
        for (uint64_t i = t; i < 4000; i += 2) {
          if (!store->Get(KeyFor(i), &value).ok() || value != ValueFor(i, 20 + i % 50)) ++wrong[t];
        }
      }
    });
  }
  while (reading.load() < 2) std::this_thread::yield();
  // New keys after the old ones: the first of these builds the map from
  // the image while the readers search it.
  for (uint64_t i = 4000; i < 5000; ++i) ASSERT_TRUE(store->Put(KeyFor(i), ValueFor(i, 20 + i % 50)).ok());
  written.store(true);
  for (auto& reader : readers) reader.join();
  EXPECT_EQ(wrong[0] + wrong[1], 0u);
  for (uint64_t i = 4000; i < 5000; ++i) model_[KeyFor(i)] = ValueFor(i, 20 + i % 50);
  ExpectModel(*store);
}

TEST_F(StoreSeparatorImageTest, ALeafDamagedAfterTheCloseIsFoundWhenFirstUsed) {
  MakeClosedPool(4000);
  const std::string damaged_key = DamageFifthLeaf();
  auto store = OpenOrDie(path_, Options());
  ASSERT_TRUE(store->GetStats().opened_from_separator_image);
  std::string value;
  const absl::Status status = store->Get(damaged_key, &value);
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_TRUE(absl::IsDataLoss(store->Contains(damaged_key).status()));
  ASSERT_TRUE(store->Get(KeyFor(0), &value).ok());
  EXPECT_EQ(value, model_[KeyFor(0)]);
  // The first write leaves the image without checking every leaf: writes
  // through sound leaves go on, and only the damaged one refuses them.
  ASSERT_TRUE(store->Put(KeyFor(0), "new").ok());
  model_[KeyFor(0)] = "new";
  const absl::Status put = store->Put(damaged_key, "new");
  EXPECT_TRUE(absl::IsDataLoss(put)) << put;
  const absl::Status del = store->Delete(damaged_key);
  EXPECT_TRUE(absl::IsDataLoss(del)) << del;
  EXPECT_TRUE(absl::IsDataLoss(store->Get(damaged_key, &value)));
  ASSERT_TRUE(store->Get(KeyFor(0), &value).ok());
  EXPECT_EQ(value, "new");
  ExpectScanStopsAtTheDamage(*store);
  ASSERT_TRUE(store->Close().ok());
  auto report = Store::Check(path_);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_FALSE(report->clean());
  EXPECT_NE(report->problems.front().find("checksum"), std::string::npos) << report->problems.front();
}

TEST_F(StoreSeparatorImageTest, ABatchRefusedByADamagedLeafChangesNothing) {
  MakeClosedPool(4000);
  const std::string damaged_key = DamageFifthLeaf();
  auto store = OpenOrDie(path_, Options());
  ASSERT_TRUE(store->GetStats().opened_from_separator_image);
  // Enough new keys after the last one to split the last leaf and add
  // separators first, then a delete in the damaged leaf: the batch is
  // refused whole, and the index forgets the separators it had added
  // (LeafIndex::Abandoned).
  const auto late_key = [](uint64_t i) { return "zz/" + std::to_string(1000 + i); };
  WriteBatch batch;
  for (uint64_t i = 0; i < 300; ++i) batch.Put(late_key(i), ValueFor(i, 30));
  batch.Delete(KeyFor(0));
  batch.Delete(damaged_key);
  const absl::Status refused = store->Write(WriteOptions(), batch);
  EXPECT_TRUE(absl::IsDataLoss(refused)) << refused;
  std::string value;
  for (uint64_t i = 0; i < 300; ++i) ASSERT_TRUE(absl::IsNotFound(store->Get(late_key(i), &value))) << i;
  EXPECT_TRUE(absl::IsDataLoss(store->Get(damaged_key, &value)));
  // The damaged leaf's keys are unreadable; all others read back.
  for (auto it = model_.begin(); it != model_.end();) {
    std::string ignored;
    it = absl::IsDataLoss(store->Get(it->first, &ignored)) ? model_.erase(it) : std::next(it);
  }
  ExpectPointReads(*store);
  ExpectScanStopsAtTheDamage(*store);
  // Later writes build on the index as the last commit left it.
  for (uint64_t i = 0; i < 300; ++i) {
    ASSERT_TRUE(store->Put(late_key(i), ValueFor(i, 30)).ok());
    model_[late_key(i)] = ValueFor(i, 30);
  }
  ExpectPointReads(*store);
  ASSERT_TRUE(store->Close().ok());
  store = OpenOrDie(path_, Options());
  ExpectPointReads(*store);
  ExpectScanStopsAtTheDamage(*store);
}

TEST_F(StoreSeparatorImageTest, ASplitNextToADamagedLeafIsRefusedAndLeavesItDamaged) {
  MakeClosedPool(4000);
  internal::Leaf sixth;
  ImageLeaf(6, &sixth);
  const std::string sixth_key = RecordKeyOf(sixth.slots[sixth.header.perm[0]].record);
  const std::string damaged_key = DamageFifthLeaf();
  auto store = OpenOrDie(path_, Options());
  // Keys right after the sixth leaf's first fill it until it splits; the
  // split rewrites the fifth leaf's `next`, checksum and all, so it must
  // be refused rather than make the damaged leaf look sound.
  absl::Status refused;
  for (int i = 0; i < 100 && refused.ok(); ++i) {
    char suffix[8];
    std::snprintf(suffix, sizeof(suffix), "/%03d", i);
    refused = store->Put(sixth_key + suffix, "v");
  }
  EXPECT_TRUE(absl::IsDataLoss(refused)) << refused;
  std::string value;
  EXPECT_TRUE(absl::IsDataLoss(store->Get(damaged_key, &value)));
  ASSERT_TRUE(store->Close().ok());
  store = OpenOrDie(path_, Options());
  EXPECT_TRUE(absl::IsDataLoss(store->Get(damaged_key, &value)));
}

TEST_F(StoreSeparatorImageTest, EmptyingTheLeafAfterADamagedOneIsRefusedAndLeavesItDamaged) {
  MakeClosedPool(4000);
  internal::Leaf sixth;
  ImageLeaf(6, &sixth);
  std::vector<std::string> sixth_keys;
  for (int i = 0; i < sixth.header.count; ++i) {
    sixth_keys.push_back(RecordKeyOf(sixth.slots[sixth.header.perm[i]].record));
  }
  const std::string damaged_key = DamageFifthLeaf();
  auto store = OpenOrDie(path_, Options());
  // The last delete empties the sixth leaf, which leaves the chain: the
  // fifth leaf's `next` would be rewritten, so that delete is refused.
  for (size_t i = 0; i + 1 < sixth_keys.size(); ++i) ASSERT_TRUE(store->Delete(sixth_keys[i]).ok()) << i;
  const absl::Status refused = store->Delete(sixth_keys.back());
  EXPECT_TRUE(absl::IsDataLoss(refused)) << refused;
  std::string value;
  ASSERT_TRUE(store->Get(sixth_keys.back(), &value).ok());
  EXPECT_TRUE(absl::IsDataLoss(store->Get(damaged_key, &value)));
  ASSERT_TRUE(store->Close().ok());
  store = OpenOrDie(path_, Options());
  EXPECT_TRUE(absl::IsDataLoss(store->Get(damaged_key, &value)));
}

TEST_F(StoreSeparatorImageTest, APoolWithNoFreeChunkClosesWithoutAnImage) {
  {
    auto store = OpenOrDie(path_, SmallPool(8ull << 20, 8ull << 20));
    absl::Status status;
    for (uint64_t i = 0; status.ok(); ++i) {
      status = store->Put(KeyFor(i), ValueFor(i, 900));
      if (status.ok()) model_[KeyFor(i)] = ValueFor(i, 900);
    }
    ASSERT_TRUE(absl::IsResourceExhausted(status)) << status;
    ASSERT_TRUE(store->Close().ok());
  }
  EXPECT_EQ(ImageOffset(), 0u);
  auto store = OpenOrDie(path_, Options());
  EXPECT_FALSE(store->GetStats().opened_from_separator_image);
  ExpectModel(*store);
  EXPECT_TRUE(store->CheckNow().clean());
}

}  // namespace
}  // namespace pmstore
