// Recovery of an unsynced run cut short (doc/FORMAT.md, "Unsynced runs"):
// the boot id in the undo header tells a killed process (the same boot:
// keep the run) from a power failure (another boot: back to the base).
// Images here are the pool file read while its store is still open, that
// is, memory as a killed process would leave it; the boot is switched
// through the test-only seam. The crash simulator (store_crash_test)
// checks both kinds at every crash point of a random workload.
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "gtest/gtest.h"
#include "pmstore/env/boot_id.h"
#include "pmstore/format/layout.h"
#include "pmstore/format/undo_log.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

using internal::BootId;
using testing::OpenOrDie;
using testing::SmallPool;

constexpr WriteOptions kUnsynced{.sync = false};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// Opens the pool at `path` as if in another boot.
class AnotherBoot {
 public:
  AnotherBoot() : real_(internal::CurrentBootId()) { internal::SetBootIdForTesting(BootId{{0x0123, 0x4567}}); }
  ~AnotherBoot() { internal::SetBootIdForTesting(real_); }

 private:
  BootId real_;
};

std::string ValueOf(Store& store, const std::string& key) {
  std::string value;
  const absl::Status status = store.Get(key, &value);
  return status.ok() ? value : std::string(absl::StatusCodeToString(status.code()));
}

// A pool with "base" = "durable" made durable, then an unsynced run: "base"
// overwritten (live lines change: undo entries) and "new" added; read
// while the store is open (the run is in memory only).
std::string ImageInsideARun(const std::string& dir) {
  const std::string path = dir + "/pool";
  auto store = OpenOrDie(path, SmallPool());
  EXPECT_TRUE(store->Put("base", "durable").ok());
  EXPECT_TRUE(store->Put(kUnsynced, "base", "unsynced").ok());
  EXPECT_TRUE(store->Put(kUnsynced, "new", "unsynced too").ok());
  std::string image = ReadFile(path);
  EXPECT_TRUE(store->Close().ok());
  return image;
}

TEST(UnsyncedRecoveryTest, SameImageKeepsTheRunInThisBootAndReturnsToTheBaseInAnother) {
  TempDir dir("/dev/shm");
  const std::string image = ImageInsideARun(dir.path());
  const std::string same = dir.File("same-boot"), other = dir.File("other-boot");
  WriteFile(same, image);
  WriteFile(other, image);
  {
    auto store = OpenOrDie(same, Options());
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(ValueOf(*store, "base"), "unsynced");
    EXPECT_EQ(ValueOf(*store, "new"), "unsynced too");
    EXPECT_TRUE(store->CheckNow().clean());
  }
  {
    AnotherBoot reboot;
    auto store = OpenOrDie(other, Options());
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(ValueOf(*store, "base"), "durable");
    EXPECT_EQ(ValueOf(*store, "new"), "NOT_FOUND");
    EXPECT_TRUE(store->CheckNow().clean());
    // The pool recovered in the same boot closed the run: it no longer
    // rolls back in another.
    auto kept = OpenOrDie(same, Options());
    ASSERT_NE(kept, nullptr);
    EXPECT_EQ(ValueOf(*kept, "new"), "unsynced too");
  }
}

TEST(UnsyncedRecoveryTest, UnknownBootAlwaysReturnsToTheBase) {
  TempDir dir("/dev/shm");
  const std::string path = dir.File("image");
  WriteFile(path, ImageInsideARun(dir.path()));
  const BootId real = internal::CurrentBootId();
  internal::SetBootIdForTesting(BootId());  // no /proc
  auto store = OpenOrDie(path, Options());
  internal::SetBootIdForTesting(real);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(ValueOf(*store, "base"), "durable");
  EXPECT_EQ(ValueOf(*store, "new"), "NOT_FOUND");
}

// The undo slot's start in `image`: the slot whose first word is the
// undo magic.
size_t UndoSlot(const std::string& image) {
  for (size_t slot = 0; slot < 2; ++slot) {
    const size_t at = internal::kLogOffset + slot * internal::kLogSlotSize;
    uint64_t magic;
    std::memcpy(&magic, image.data() + at, 8);
    if (magic == internal::kUndoMagic) return at;
  }
  ADD_FAILURE() << "no undo header in the image";
  return 0;
}

// The last commit stopped before its root words were applied: the root
// still counts one key fewer (and its checksum matches that), and the
// journal is sealed. `sealed`: whether the process had sealed it.
std::string KilledBeforeTheRootWasApplied(std::string image, bool sealed) {
  internal::Root root;
  std::memcpy(&root, image.data() + internal::kRootOffset, sizeof(root));
  root.key_count -= 1;
  root.checksum = internal::RootChecksum(root);
  std::memcpy(image.data() + internal::kRootOffset, &root, sizeof(root));
  internal::ApplyJournal journal;
  const size_t at = UndoSlot(image) + internal::kApplyJournalOffset;
  std::memcpy(&journal, image.data() + at, sizeof(journal));
  EXPECT_GT(journal.count, 0u) << "the last commit's words are in the journal";
  journal.sealed = sealed ? internal::kApplyingMagic : 0;
  std::memcpy(image.data() + at, &journal, sizeof(journal));
  return image;
}

TEST(UnsyncedRecoveryTest, CommitKilledHalfwayThroughItsApplyIsCompletedInTheSameBoot) {
  TempDir dir("/dev/shm");
  const std::string image = ImageInsideARun(dir.path());
  const std::string path = dir.File("image");
  WriteFile(path, KilledBeforeTheRootWasApplied(image, /*sealed=*/true));
  auto store = OpenOrDie(path, Options());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(ValueOf(*store, "new"), "unsynced too");
  const CheckReport report = store->CheckNow();
  EXPECT_TRUE(report.clean()) << report.problems.front();
  EXPECT_EQ(store->GetStats().keys, 2u);
}

TEST(UnsyncedRecoveryTest, WithoutItsJournalHalfACommitWouldBeDamage) {
  // What the journal is for: the same half-applied commit, unsealed, is a
  // pool whose root disagrees with its index.
  TempDir dir("/dev/shm");
  const std::string path = dir.File("image");
  WriteFile(path, KilledBeforeTheRootWasApplied(ImageInsideARun(dir.path()), /*sealed=*/false));
  auto store = OpenOrDie(path, Options());
  ASSERT_NE(store, nullptr);
  EXPECT_FALSE(store->CheckNow().clean());
}

TEST(BootIdTest, ParsesTheKernelsTextAndRejectsAnythingElse) {
  const BootId id = internal::ParseBootId("4f0e75b3-e8de-45f4-a91a-822a4e68cb91\n");
  EXPECT_EQ(id.words[0], 0x4f0e75b3e8de45f4ull);
  EXPECT_EQ(id.words[1], 0xa91a822a4e68cb91ull);
  EXPECT_FALSE(internal::ParseBootId("").known());
  EXPECT_FALSE(internal::ParseBootId("4f0e75b3-e8de-45f4-a91a-822a4e68cb9").known());
  EXPECT_FALSE(internal::ParseBootId("4f0e75b3-e8de-45f4-a91a-822a4e68cb91ff").known());
  EXPECT_FALSE(internal::ParseBootId("xf0e75b3-e8de-45f4-a91a-822a4e68cb91").known());
  EXPECT_TRUE(internal::CurrentBootId().known()) << "this machine has /proc/sys/kernel/random/boot_id";
}

}  // namespace
}  // namespace pmstore
