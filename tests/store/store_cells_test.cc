// Format version 2's leaf cells (doc/FORMAT.md "Leaf cells"), seen from
// the API: small records take no space outside their leaf, and a cell
// whose record was replaced or removed is not written again while a pin,
// a snapshot or an unsynced run may still read it.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pmstore/snapshot.h"
#include "pmstore/format/key.h"
#include "pmstore/format/layout.h"
#include "pmstore/format/leaf.h"
#include "pmstore/format/redo_log.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

using testing::OpenOrDie;
using testing::SmallPool;
using testing::ValueFor;

class StoreCellsTest : public ::testing::Test {
 protected:
  TempDir dir_{"/dev/shm"};
  std::string path_ = dir_.File("pool");
};

TEST_F(StoreCellsTest, SmallRecordsLieInTheirLeaf) {
  auto store = OpenOrDie(path_, SmallPool());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->GetStats().format_version, 2u);
  const uint64_t empty = store->GetStats().live_bytes;
  // 16 B keys and 100 B values, fewer than a leaf's 47 slots: all in the
  // first leaf's cells.
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(store->Put(absl::StrCat("key-", 1000000000 + i), ValueFor(i, 100)).ok());
  }
  EXPECT_EQ(store->GetStats().live_bytes, empty);
  // A record too big for a cell lies out of line (24 + 3 + 400 bytes: 7 units).
  ASSERT_TRUE(store->Put("big", ValueFor(99, 400)).ok());
  EXPECT_EQ(store->GetStats().live_bytes, empty + 7 * 64);
  std::string value;
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(store->Get(absl::StrCat("key-", 1000000000 + i), &value).ok());
    EXPECT_EQ(value, ValueFor(i, 100));
  }
  const auto report = store->CheckNow();
  EXPECT_TRUE(report.clean()) << report.problems.front();
}

TEST_F(StoreCellsTest, PinnedValueInACellOutlivesOverwritesAndDelete) {
  auto store = OpenOrDie(path_, SmallPool());
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put("k", ValueFor(1, 100)).ok());
  PinnedValue pinned;
  ASSERT_TRUE(store->Get(ReadOptions(), "k", &pinned).ok());
  // Without the hold, the next overwrites would take the freed cell again.
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(store->Put("k", ValueFor(100 + i, 100)).ok());
  ASSERT_TRUE(store->Delete("k").ok());
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(store->Put("k", ValueFor(400 + i, 100)).ok());
  EXPECT_EQ(pinned.value(), ValueFor(1, 100));
  pinned.Reset();
  // Released (by the next commit): the cells are reused, and nothing
  // grows (the leaf does not split for one key). While every free slot's
  // cell was held, the record went out of line; the next put puts it back.
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(store->Put("k", ValueFor(600 + i, 100)).ok());
  const uint64_t leaves_bytes = store->GetStats().live_bytes;
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(store->Put("k", ValueFor(700 + i, 100)).ok());
  EXPECT_EQ(store->GetStats().live_bytes, leaves_bytes);
  std::string value;
  ASSERT_TRUE(store->Get("k", &value).ok());
  EXPECT_EQ(value, ValueFor(899, 100));
}

TEST_F(StoreCellsTest, SnapshotKeepsCellRecordsThroughOverwritesAndSplits) {
  auto store = OpenOrDie(path_, SmallPool());
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(store->Put(absl::StrCat("key-", i), ValueFor(i, 100)).ok());
  std::unique_ptr<Snapshot> snapshot = store->GetSnapshot();
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 30; ++i) ASSERT_TRUE(store->Put(absl::StrCat("key-", i), ValueFor(1000 + round, 100)).ok());
  }
  for (int i = 0; i < 30; i += 3) ASSERT_TRUE(store->Delete(absl::StrCat("key-", i)).ok());
  // Enough new keys to split the leaf several times: moved records are
  // copied to the new leaves' cells, the old leaf stays while the snapshot does.
  for (int i = 0; i < 500; ++i) ASSERT_TRUE(store->Put(absl::StrCat("new-", i), ValueFor(5000 + i, 120)).ok());
  ReadOptions at;
  at.snapshot = snapshot.get();
  std::string value;
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(store->Get(at, absl::StrCat("key-", i), &value).ok()) << i;
    EXPECT_EQ(value, ValueFor(i, 100)) << i;
  }
  EXPECT_TRUE(absl::IsNotFound(store->Get(at, "new-1", &value)));
  int seen = 0;
  auto it = store->NewIterator(at, {});
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    EXPECT_EQ(it->value(), ValueFor(std::stoi(std::string(it->key().substr(4))), 100)) << it->key();
    ++seen;
  }
  EXPECT_EQ(seen, 30);
  snapshot.reset();
  it.reset();
  for (int i = 1; i < 30; i += 3) {
    ASSERT_TRUE(store->Get(absl::StrCat("key-", i), &value).ok());
    EXPECT_EQ(value, ValueFor(1019, 100));
  }
  const auto report = store->CheckNow();
  EXPECT_TRUE(report.clean()) << report.problems.front();
}

TEST_F(StoreCellsTest, UnsyncedOverwritesInCellsReopen) {
  {
    Options options = SmallPool();
    options.sync = false;
    auto store = OpenOrDie(path_, options);
    ASSERT_NE(store, nullptr);
    for (int round = 0; round < 50; ++round) {
      for (int i = 0; i < 100; ++i) ASSERT_TRUE(store->Put(absl::StrCat("key-", i), ValueFor(round * 100 + i, 100)).ok());
    }
    ASSERT_TRUE(store->Close().ok());
  }
  auto report = Store::Check(path_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->clean()) << report->problems.front();
  auto store = OpenOrDie(path_, Options());
  std::string value;
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(store->Get(absl::StrCat("key-", i), &value).ok());
    EXPECT_EQ(value, ValueFor(4900 + i, 100));
  }
}

TEST_F(StoreCellsTest, CheckFindsASlotNamingAnotherSlotsCell) {
  {
    auto store = OpenOrDie(path_, SmallPool());
    ASSERT_TRUE(store->Put("k", ValueFor(1, 100)).ok());
  }
  // Move k's record to the cell of another (free) slot and point k's slot
  // there, with the leaf checksum made to match: only the cell rule is broken.
  const int fd = open(path_.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  internal::Superblock sb;
  ASSERT_EQ(pread(fd, &sb, sizeof(sb), 0), static_cast<ssize_t>(sizeof(sb)));
  ASSERT_EQ(sb.leaf_cell_bytes, internal::kLeafCellBytes);
  const uint64_t leaf = sb.heap_offset + internal::kBitmapUnits * internal::kUnitSize;
  const internal::LeafGeometry geometry = internal::LeafGeometry::Of(sb);
  std::string bytes(geometry.bytes(), '\0');
  ASSERT_EQ(pread(fd, bytes.data(), bytes.size(), static_cast<off_t>(leaf)), static_cast<ssize_t>(bytes.size()));
  auto* image = reinterpret_cast<internal::Leaf*>(bytes.data());
  ASSERT_EQ(image->header.count, 1);
  const int home = image->header.perm[0];
  ASSERT_EQ(home, internal::HomeSlot(internal::KeyHash("k")));
  ASSERT_EQ(image->slots[home].record, geometry.CellOffset(leaf, home));
  const int other = (home + 5) % internal::kLeafSlots;
  std::memcpy(bytes.data() + (geometry.CellOffset(leaf, other) - leaf),
              bytes.data() + (geometry.CellOffset(leaf, home) - leaf), geometry.cell_bytes);
  image->slots[home].record = geometry.CellOffset(leaf, other);
  image->header.checksum = internal::LeafChecksum(image->header, *image);
  ASSERT_EQ(pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(leaf)), static_cast<ssize_t>(bytes.size()));
  // No commit to replay (it would write the old header back): the closed
  // pool holds every commit applied.
  const char no_commit[sizeof(internal::LogHeader)] = {};
  for (uint64_t slot = 0; slot < 2; ++slot) {
    const off_t at = static_cast<off_t>(internal::kLogOffset + slot * internal::kLogSlotSize);
    ASSERT_EQ(pwrite(fd, no_commit, sizeof(no_commit), at), static_cast<ssize_t>(sizeof(no_commit)));
  }
  close(fd);

  auto report = Store::Check(path_);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_FALSE(report->clean());
  EXPECT_NE(report->problems.front().find("inside the leaf but not its own cell"), std::string::npos)
      << report->problems.front();
}

}  // namespace
}  // namespace pmstore
