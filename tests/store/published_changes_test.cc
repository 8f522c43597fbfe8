// What a store publishes of its commits for the other processes that have
// the pool open (index/separator_change.h over share/change_ring.h): every
// commit, and for each a change per separator it touched, so that a
// process that built its separator map from the pool at some commit turns
// it, by the changes alone, into the map a walk of the chain builds at the
// newest. Through splits of every kind, leaves that empty (the first
// among them), deletes of a leaf's least key, durable and unsynced
// commits, batches, transactions, a reopen from the separator image, and
// writes that fail (which publish nothing).
//
// The follower here is the test itself, with mappings of its own of the
// pool file and of the lock region in /dev/shm, and a slot of its own in
// the reader table, as another process has.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "pmstore/env/env.h"
#include "pmstore/format/layout.h"
#include "pmstore/format/leaf.h"
#include "pmstore/format/record.h"
#include "pmstore/index/separator_change.h"
#include "pmstore/index/separator_map.h"
#include "pmstore/share/lock_region.h"
#include "pmstore/store.h"
#include "pmstore/transaction.h"
#include "store/store_test_util.h"
#include "support/temp_dir.h"

namespace pmstore {
namespace {

using internal::ChangeRing;
using testing::OpenOrDie;
using testing::SmallPool;
using Separators = std::vector<std::pair<std::string, uint64_t>>;

// The separators a walk of the pool's chain finds, as an open builds them:
// "" for the first leaf, each other leaf's least key. Read through a
// mapping of the pool file of its own.
Separators WalkChain(const std::string& pool) {
  const int fd = open(pool.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << pool;
  struct stat st;
  EXPECT_EQ(fstat(fd, &st), 0);
  const uint64_t length = st.st_size;
  void* mapped = mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  EXPECT_NE(mapped, MAP_FAILED);
  if (mapped == MAP_FAILED) return {};
  const char* base = static_cast<const char*>(mapped);
  internal::Root root;
  std::memcpy(&root, base + internal::kRootOffset, sizeof(root));
  Separators chain;
  for (uint64_t offset = root.head_leaf; offset != 0 && chain.size() < length / internal::kLeafBytes;) {
    const auto* leaf = reinterpret_cast<const internal::Leaf*>(base + offset);
    if (chain.empty()) {
      chain.emplace_back("", offset);
    } else {
      EXPECT_GT(leaf->header.count, 0) << "an empty leaf in the chain at offset " << offset;
      if (leaf->header.count == 0) break;
      const std::string_view least = internal::RecordKey(base, length, leaf->slots[leaf->header.perm[0]].record);
      chain.emplace_back(std::string(least), offset);
    }
    offset = leaf->header.next;
  }
  munmap(mapped, length);
  return chain;
}

Separators Contents(const internal::SeparatorMap& map) {
  Separators contents;
  for (const auto& entry : map) contents.emplace_back(internal::SeparatorMap::String(entry.first), entry.second);
  return contents;
}

// Another process's view of the pool: a map built from the chain at some
// commit, then kept up to date from the change ring alone.
class Follower {
 public:
  explicit Follower(const std::string& pool) : pool_(pool) {
    const int fd = open(pool.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0) << pool;
    auto slot = internal::ReaderSlot::Attach(env::Env::Default(), fd, /*writable=*/false);
    close(fd);
    EXPECT_TRUE(slot.ok()) << slot.status();
    if (!slot.ok()) return;
    slot_ = std::move(*slot);
    ring_.emplace(slot_->change_ring());
    // The cursor before the walk: no later commit is missed.
    cursor_ = ring_->Now();
    applied_ = ring_->published();
    for (const auto& [separator, leaf] : WalkChain(pool)) map_.Set(separator, leaf);
  }

  // Reads and applies every change published since the last call; how
  // many there were.
  size_t CatchUp() {
    if (!ring_.has_value()) return 0;
    applied_ = ring_->published();
    if (!applied_.has_value()) return 0;
    std::vector<ChangeRing::Change> changes;
    auto followed = ring_->Follow(&cursor_, *applied_, &changes);
    EXPECT_TRUE(followed.ok()) << followed.status();
    EXPECT_EQ(followed.value_or(ChangeRing::Followed::kOverrun), ChangeRing::Followed::kCaughtUp);
    for (const ChangeRing::Change& change : changes) {
      EXPECT_LE(change.commit, *applied_);
      EXPECT_GE(change.commit, last_change_commit_) << "changes out of commit order";
      last_change_commit_ = change.commit;
      // A writable open's first entry: whatever its recovery changed in
      // place is in no change. Counted; this follower's map must match
      // the chain by the separator changes alone (no recovery here).
      if (change.kind == internal::kWalkAgainKind) {
        ++walk_agains_;
        continue;
      }
      EXPECT_EQ(change.kind, internal::kSeparatorChangeKind);
      const absl::Status applied = internal::ApplySeparatorChange(change.payload, &map_);
      EXPECT_TRUE(applied.ok()) << applied;
    }
    return changes.size();
  }

  // The map, caught up, against a walk of the chain now.
  void ExpectMatchesChain(const std::string& when) {
    CatchUp();
    ASSERT_EQ(Contents(map_), WalkChain(pool_)) << when;
  }

  std::optional<uint64_t> published() const { return ring_->published(); }
  int walk_agains() const { return walk_agains_; }

 private:
  std::string pool_;
  std::unique_ptr<internal::ReaderSlot> slot_;
  std::optional<ChangeRing> ring_;
  ChangeRing::Cursor cursor_;
  std::optional<uint64_t> applied_;
  uint64_t last_change_commit_ = 0;
  int walk_agains_ = 0;
  internal::SeparatorMap map_;
};

std::string KeyOf(uint64_t i) {
  char key[17];
  std::snprintf(key, sizeof(key), "key%012llu", static_cast<unsigned long long>(i));
  return key;
}

// The newest commit the writable open of this process made, as its slot
// in the reader table shows it.
std::optional<uint64_t> LastCommitOfThisProcess(const std::string& pool) {
  auto readers = Store::Readers(pool);
  EXPECT_TRUE(readers.ok()) << readers.status();
  if (!readers.ok()) return std::nullopt;
  for (const ReaderInfo& reader : *readers) {
    if (reader.pid == getpid() && reader.writable) return reader.last_commit;
  }
  return std::nullopt;
}

class PublishedChangesTest : public ::testing::Test {
 protected:
  void SetUp() override { pool_ = dir_.path() + "/pool"; }

  TempDir dir_;
  std::string pool_;
};

TEST_F(PublishedChangesTest, AFollowersMapMatchesTheChainThroughEveryKindOfChange) {
  auto store = OpenOrDie(pool_, SmallPool(8ull << 20, 256ull << 20));
  ASSERT_NE(store, nullptr);
  Follower follower(pool_);
  std::mt19937_64 random(21);
  std::vector<uint64_t> present;

  // Appends, durable: the append split.
  for (uint64_t i = 0; i < 3000; i += 2) {
    ASSERT_TRUE(store->Put(WriteOptions{true}, KeyOf(i), "v").ok());
    present.push_back(i);
  }
  follower.ExpectMatchesChain("after sequential durable puts");
  EXPECT_EQ(follower.published(), LastCommitOfThisProcess(pool_));

  // Keys between them, unsynced, in batches: splits that keep either half,
  // and leaves a batch splits twice (replaced by two new halves).
  for (int batch = 0; batch < 30; ++batch) {
    WriteBatch writes;
    for (int i = 0; i < 50; ++i) {
      const uint64_t key = 2 * (random() % 1500) + 1;
      writes.Put(KeyOf(key), std::string(1 + random() % 150, 'u'));
      present.push_back(key);
    }
    ASSERT_TRUE(store->Write(WriteOptions{false}, writes).ok());
    follower.ExpectMatchesChain("after unsynced batch " + std::to_string(batch));
  }
  std::sort(present.begin(), present.end());
  present.erase(std::unique(present.begin(), present.end()), present.end());

  // Deletes, one commit each: among them leaves' least keys (the
  // separator moves to the next key) and whole leaves.
  std::shuffle(present.begin(), present.end(), random);
  const size_t deleted = present.size() * 2 / 3;
  for (size_t i = 0; i < deleted; ++i) {
    ASSERT_TRUE(store->Delete(WriteOptions{i % 2 == 0}, KeyOf(present[i])).ok());
    if (i % 16 == 0) follower.ExpectMatchesChain("after deleting " + KeyOf(present[i]));
  }
  present.erase(present.begin(), present.begin() + deleted);
  std::sort(present.begin(), present.end());
  follower.ExpectMatchesChain("after the deletes");

  // The first leaf emptied: its successor takes "".
  const Separators before = WalkChain(pool_);
  ASSERT_GE(before.size(), 3u);
  WriteBatch first_leaf;
  for (uint64_t key : present) {
    if (KeyOf(key) >= before[1].first) break;
    first_leaf.Delete(KeyOf(key));
  }
  ASSERT_TRUE(store->Write(WriteOptions{true}, first_leaf).ok());
  const Separators after = WalkChain(pool_);
  EXPECT_EQ(after.front().second, before[1].second) << "the second leaf did not become the first";
  follower.ExpectMatchesChain("after the first leaf emptied");

  // A transaction that reads and writes across leaves.
  auto transaction = store->BeginTransaction();
  std::string value;
  ASSERT_TRUE(transaction->Get(KeyOf(present.back()), &value).ok());
  for (uint64_t i = 0; i < 400; ++i) ASSERT_TRUE(transaction->Put(KeyOf(3000 + i), value).ok());
  ASSERT_TRUE(transaction->Delete(KeyOf(present.front())).ok());
  ASSERT_TRUE(transaction->Commit(WriteOptions{true}).ok());
  follower.ExpectMatchesChain("after a transaction");
  EXPECT_EQ(follower.published(), LastCommitOfThisProcess(pool_));
}

TEST_F(PublishedChangesTest, AWriteThatFailsPublishesNothing) {
  auto store = OpenOrDie(pool_, SmallPool(8ull << 20, 8ull << 20));
  ASSERT_NE(store, nullptr);
  Follower follower(pool_);
  // Fill the pool until a batch that splits leaves on its way fails for
  // want of space, and is abandoned.
  absl::Status status;
  uint64_t next = 0;
  std::optional<uint64_t> published_before;
  while (status.ok()) {
    published_before = follower.published();
    WriteBatch batch;
    for (int i = 0; i < 500; ++i) batch.Put(KeyOf(next++), std::string(900, 'f'));
    status = store->Write(WriteOptions{true}, batch);
  }
  ASSERT_TRUE(absl::IsResourceExhausted(status)) << status;
  EXPECT_EQ(follower.published(), published_before) << "a commit was published for a write that failed";
  follower.ExpectMatchesChain("after the failed write");
  // The store goes on, and so does what it publishes.
  ASSERT_TRUE(store->Delete(WriteOptions{true}, KeyOf(0)).ok());
  follower.ExpectMatchesChain("after a delete that followed");
  EXPECT_EQ(follower.published(), LastCommitOfThisProcess(pool_));
}

TEST_F(PublishedChangesTest, AFollowerGoesOnAcrossTheWritersReopenFromTheSeparatorImage) {
  auto store = OpenOrDie(pool_, SmallPool());
  ASSERT_NE(store, nullptr);
  Follower follower(pool_);
  for (uint64_t i = 0; i < 2000; ++i) ASSERT_TRUE(store->Put(WriteOptions{false}, KeyOf(i * 7 % 2000), "x").ok());
  // A clean close commits the separator image; the follower's slot keeps
  // the region, and the ring, in place.
  ASSERT_TRUE(store->Close().ok());
  store.reset();
  follower.ExpectMatchesChain("after the writer closed");
  store = OpenOrDie(pool_, Options());
  ASSERT_NE(store, nullptr);
  // The first write leaves the image for a map built from it: deletes of
  // least keys and of whole leaves must find the same separators there.
  for (uint64_t i = 0; i < 2000; i += 3) ASSERT_TRUE(store->Delete(WriteOptions{false}, KeyOf(i)).ok());
  follower.ExpectMatchesChain("after deletes by the reopened writer");
  EXPECT_EQ(follower.published(), LastCommitOfThisProcess(pool_));
  EXPECT_EQ(follower.walk_agains(), 1) << "the reopen, and only it, tells followers to walk again";
}

}  // namespace
}  // namespace pmstore
