// Damaged and hostile pools, swept deterministically: a valid reference
// pool truncated at many lengths, one bit flipped in every word of every
// header and index field, and files that are no pool at all. For each,
// Check, Open, a verified Get of every key and a full iteration must end
// in a clear error or a consistent store (damage_harness.h); run under
// ASan/UBSan, an out-of-bounds read or a crash fails it too.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>

#include "damage/damage_harness.h"
#include "gtest/gtest.h"
#include "support/temp_dir.h"

namespace pmstore::damage {
namespace {

using namespace internal;  // NOLINT: the sweep names most of the format

class DamageTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("/dev/shm");
    history_ = new History;
    const std::string reference = dir_->File("reference");
    std::string why;
    ASSERT_TRUE(BuildReferencePool(reference, history_, &why)) << why;
    image_ = new std::string(ReadFile(reference));
    ASSERT_GT(image_->size(), sizeof(Superblock));
    std::memcpy(&sb_, image_->data(), sizeof(sb_));
    std::memcpy(&root_, image_->data() + kRootOffset, sizeof(root_));
  }
  static void TearDownTestSuite() {
    delete image_;
    delete history_;
    delete dir_;
  }
  void TearDown() override { std::printf("damaged inputs tried: %llu\n", static_cast<unsigned long long>(tried_)); }

  std::string path() const { return dir_->File("pool"); }

  // Runs the harness on `bytes` as the pool file; every violation fails.
  void Try(std::string_view bytes, const std::string& what) {
    ASSERT_TRUE(WriteFile(path(), bytes));
    Expect(what);
  }
  void Expect(const std::string& what) {
    ++tried_;
    const Outcome out = ExerciseDamagedPool(path(), *history_);
    opened_ += out.opened;
    for (const auto& v : out.violations) ADD_FAILURE() << what << ": " << v;
  }

  // One bit flipped, for several bits of each 8-byte word in [offset,
  // offset + 8 * words): low bits (alignment, small counts), middle, and
  // the top bits (the log's verification flags).
  void FlipWords(uint64_t offset, uint64_t words, const std::string& what) {
#ifdef PMSTORE_SANITIZE_BUILD
    // Fewer bits per word where each open costs ten times more: every word
    // is still hit, low, middle and top.
    static constexpr int kBits[] = {0, 17, 47, 63};
#else
    static constexpr int kBits[] = {0, 1, 3, 8, 17, 31, 32, 47, 62, 63};
#endif
    for (uint64_t w = 0; w < words; ++w) {
      for (int bit : kBits) {
        const uint64_t byte = offset + 8 * w + bit / 8;
        ASSERT_LT(byte, image_->size());
        std::string damaged = *image_;
        damaged[byte] = static_cast<char>(damaged[byte] ^ (1 << (bit % 8)));
        Try(damaged, absl::StrCat(what, ": bit ", bit, " of word at offset ", offset + 8 * w));
        if (HasFatalFailure()) return;
      }
    }
  }

  template <typename T>
  static T At(uint64_t offset) {
    T value;
    std::memcpy(&value, image_->data() + offset, sizeof(T));
    return value;
  }

  // Walks the reference pool's leaf chain, calling visit(leaf offset, leaf).
  static void ForEachLeaf(const std::function<void(uint64_t, const Leaf&)>& visit) {
    for (uint64_t offset = root_.head_leaf, n = 0; offset != 0 && n < 1000; ++n) {
      const Leaf leaf = At<Leaf>(offset);
      visit(offset, leaf);
      offset = leaf.header.next;
    }
  }

  static TempDir* dir_;
  static History* history_;
  static std::string* image_;
  static Superblock sb_;
  static Root root_;
  uint64_t tried_ = 0;
  uint64_t opened_ = 0;
};

TempDir* DamageTest::dir_ = nullptr;
History* DamageTest::history_ = nullptr;
std::string* DamageTest::image_ = nullptr;
Superblock DamageTest::sb_;
Root DamageTest::root_;

TEST_F(DamageTest, ReferencePoolIsCleanAndComplete) {
  Try(*image_, "the undamaged pool");
  auto report = Store::Check(path());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->clean());
  EXPECT_GE(root_.num_chunks, 2u) << "the large value needs a run of its own";
  uint64_t leaves = 0;
  ForEachLeaf([&](uint64_t, const Leaf&) { ++leaves; });
  EXPECT_GE(leaves, 5u);
}

TEST_F(DamageTest, TruncatedAtManyLengthsFailsClearly) {
  std::vector<uint64_t> lengths = {0, 1, 8, sizeof(Superblock) - 1, sizeof(Superblock), 4095, 4096};
  for (uint64_t l = 8192; l <= sb_.heap_offset; l += 4096) lengths.push_back(l);
  for (uint64_t c = 0; c <= root_.num_chunks; ++c) {
    const uint64_t boundary = sb_.heap_offset + c * kChunkSize;
    for (uint64_t l : {boundary - 4096, boundary - 1, boundary, boundary + 1, boundary + 4096}) lengths.push_back(l);
  }
  lengths.push_back(image_->size() - 1);
  uint64_t opened_whole = 0;
  for (uint64_t length : lengths) {
    if (length >= image_->size()) continue;
    Try(std::string_view(*image_).substr(0, length), absl::StrCat("truncated at ", length));
    // A pool missing any chunk it uses must not open.
    if (length < sb_.heap_offset + root_.num_chunks * kChunkSize) {
      auto store = Store::Open(path(), Options());
      EXPECT_FALSE(store.ok()) << "truncated at " << length << " opened";
      if (!store.ok()) {
        EXPECT_NE(store.status().message().find(path()), std::string::npos) << store.status();
      }
    } else {
      ++opened_whole;
    }
  }
  EXPECT_GT(tried_, 1000u);
}

TEST_F(DamageTest, FlippedBitInTheSuperblock) {
  FlipWords(0, sizeof(Superblock) / 8, "superblock");
  // Every bit of the superblock is covered by its checksum or its magic.
  EXPECT_EQ(opened_, 0u);
}

TEST_F(DamageTest, FlippedBitInTheRootLine) { FlipWords(kRootOffset, kRootWords, "root line"); }

TEST_F(DamageTest, FlippedBitInTheRedoLog) {
  for (uint64_t slot = 0; slot < 2; ++slot) {
    const uint64_t header = kLogOffset + slot * kLogSlotSize;
    const LogHeader h = At<LogHeader>(header);
    ASSERT_NE(h.seq, 0u) << "slot " << slot << " holds a commit";
    const uint64_t entries = std::min<uint64_t>(h.count, 16);
    FlipWords(header, sizeof(LogHeader) / 8 + 2 * entries, absl::StrCat("redo log slot ", slot));
  }
}

TEST_F(DamageTest, FlippedBitInTheChunkTable) {
  FlipWords(kChunkTableOffset, root_.num_chunks + 1, "chunk table");
}

TEST_F(DamageTest, FlippedBitInIndexLeaves) {
  // The first leaf: header, fingerprints, first slots; then the header of
  // every other leaf (the chain, counts, permutations).
  const uint64_t head = root_.head_leaf;
  FlipWords(head, kLeafHeaderWords + 1, "first leaf");
  FlipWords(head + offsetof(Leaf, slots), 6, "first leaf's slots");
  uint64_t n = 0;
  ForEachLeaf([&](uint64_t offset, const Leaf&) {
    if (n++ > 0 && !HasFatalFailure()) FlipWords(offset, 3, absl::StrCat("leaf ", n));
  });
}

TEST_F(DamageTest, FlippedBitInRecordHeaders) {
  const Leaf first = At<Leaf>(root_.head_leaf);
  ASSERT_GT(first.header.count, 0);
  const uint64_t record = first.slots[first.header.perm[0]].record;
  FlipWords(record, sizeof(RecordHeader) / 8 + 1, "first record");
  uint64_t large = 0;
  ForEachLeaf([&](uint64_t, const Leaf& leaf) {
    for (int i = 0; i < leaf.header.count; ++i) {
      const uint64_t r = leaf.slots[leaf.header.perm[i]].record;
      if ((At<RecordHeader>(r).flags & kRecordLargeValue) != 0) large = r;
    }
  });
  ASSERT_NE(large, 0u) << "the reference pool holds a large value";
  FlipWords(large, sizeof(RecordHeader) / 8 + 1, "large record");
  // The large value's first and last bytes: verified reads must notice.
  const uint64_t value = At<uint64_t>(large + sizeof(RecordHeader));
  FlipWords(value, 1, "large value");
  FlipWords(value + At<RecordHeader>(large).value_len - 8, 1, "large value's end");
}

TEST_F(DamageTest, HostileFilesFailClearly) {
  std::string garbage(6u << 20, '\0');
  uint64_t x = 88172645463325252ull;
  for (char& c : garbage) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    c = static_cast<char>(x);
  }
  Try(garbage, "random bytes");
  Try(std::string_view(garbage).substr(0, 100), "100 random bytes");
  Try("", "zero-length file");
  // The right magic, then garbage; a whole superblock, then garbage.
  std::string magic = garbage;
  std::memcpy(magic.data(), kMagic, sizeof(kMagic));
  Try(magic, "magic then garbage");
  std::string header = garbage;
  std::memcpy(header.data(), image_->data(), sizeof(Superblock));
  Try(header, "superblock then garbage");
  std::string metadata = garbage;
  std::memcpy(metadata.data(), image_->data(), sb_.heap_offset);
  Try(metadata, "metadata then garbage heap");
  // A pool of another format version, with a valid checksum.
  std::string newer = *image_;
  Superblock other = sb_;
  other.version = kFormatVersion + 1;
  other.checksum = SuperblockChecksum(other);
  std::memcpy(newer.data(), &other, sizeof(other));
  Try(newer, "a newer format version");
  {
    auto store = Store::Open(path(), Options());
    ASSERT_FALSE(store.ok());
    EXPECT_TRUE(absl::IsFailedPrecondition(store.status())) << store.status();
    EXPECT_NE(store.status().message().find(absl::StrCat("version ", kFormatVersion + 1)), std::string::npos)
        << store.status();
  }

  // Not regular files.
  ASSERT_TRUE(WriteFile(path(), *image_));
  const std::string link = dir_->File("link");
  ASSERT_EQ(symlink(path().c_str(), link.c_str()), 0);
  ++tried_;
  Outcome through_link = ExerciseDamagedPool(link, *history_);
  EXPECT_TRUE(through_link.opened) << "a symlink to a pool opens the pool";
  EXPECT_TRUE(through_link.violations.empty());
  const std::string dangling = dir_->File("dangling");
  ASSERT_EQ(symlink(dir_->File("nowhere").c_str(), dangling.c_str()), 0);
  ++tried_;
  auto store = Store::Open(dangling, Options());
  EXPECT_TRUE(absl::IsNotFound(store.status())) << store.status();
  Options create;
  create.create_if_missing = true;
  create.initial_size = 8ull << 20;
  store = Store::Open(dangling, create);
  if (!store.ok()) {
    EXPECT_NE(store.status().message().find(dangling), std::string::npos) << store.status();
  }
  store = absl::NotFoundError("closed");
  for (const auto& entry : std::filesystem::directory_iterator(dir_->path())) {
    EXPECT_EQ(entry.path().filename().string().find(".creating."), std::string::npos) << entry.path();
  }
  ++tried_;
  auto directory = Store::Open(dir_->path(), Options());
  EXPECT_TRUE(absl::IsInvalidArgument(directory.status())) << directory.status();
  auto check = Store::Check(dir_->path());
  EXPECT_FALSE(check.ok());
  unlink(link.c_str());
  unlink(dangling.c_str());
  unlink(dir_->File("nowhere").c_str());
}

}  // namespace
}  // namespace pmstore::damage
