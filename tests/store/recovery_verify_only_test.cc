// Recovery that may not write (a read-only open of device DAX, mapped
// without write permission): RedoLog::Replay and UndoLog::Recover with
// verify_only change nothing, pass a pool whose last commit is in place,
// and refuse one that a crash or a kill left to recover. Here on a real
// pool file mapped PROT_READ (a write would fault, failing the test); the
// device itself is tested in the VM (store_destroy_test's DeviceDax tests).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "gtest/gtest.h"
#include "pmstore/format/redo_log.h"
#include "pmstore/format/superblock.h"
#include "pmstore/format/undo_log.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"
#include "support/temp_dir.h"

namespace pmstore {
namespace {

using testing::OpenOrDie;
using testing::SmallPool;

// Verify-only recovery persists nothing.
class NoPersister : public internal::Persister {
 public:
  absl::Status Flush(const void*, size_t) override { return Called(); }
  absl::Status Drain() override { return Called(); }
  absl::Status SyncLength() override { return Called(); }

 private:
  absl::Status Called() {
    ADD_FAILURE() << "verify-only recovery asked to persist";
    return absl::InternalError("persisted");
  }
};

// The pool file at `path` mapped shared and read-only, as a read-only open
// of device DAX maps the device.
class ReadOnlyView {
 public:
  explicit ReadOnlyView(const std::string& path) {
    fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd_ < 0 || fstat(fd_, &st) != 0) return;
    length_ = st.st_size;
    void* base = mmap(nullptr, length_, PROT_READ, MAP_SHARED, fd_, 0);
    if (base == MAP_FAILED) return;
    view_ = {static_cast<char*>(base), length_, path};
    auto sb = internal::ParseSuperblock(view_.base, sizeof(internal::Superblock), length_, path);
    if (sb.ok()) sb_ = *sb;
  }
  ~ReadOnlyView() {
    if (view_.base != nullptr) munmap(view_.base, length_);
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return view_.base != nullptr && sb_.heap_offset != 0; }

  absl::Status Replay(internal::LogHeader* last) {
    NoPersister persister;
    uint64_t next_seq = 0;
    return internal::RedoLog::Replay(view_, sb_.heap_offset, internal::LeafGeometry::Of(sb_), persister, &next_seq,
                                     last, /*verify_only=*/true);
  }
  absl::Status RecoverUndo() {
    NoPersister persister;
    uint64_t min_next_seq = 1;
    return internal::UndoLog::Recover(view_, persister, &min_next_seq, /*verify_only=*/true);
  }
  // A word the newest commit wrote below the heap (the root line or the
  // chunk table, never a leaf whose change would make the commit look
  // undone): its offset, or 0.
  uint64_t MetadataWordOfNewestCommit() const {
    const internal::LogHeader* newest = nullptr;
    for (uint64_t slot = 0; slot < 2; ++slot) {
      const auto* h = reinterpret_cast<const internal::LogHeader*>(internal::RedoLog::SlotOf(view_.base, slot));
      if (h->seq != 0 && (newest == nullptr || h->seq > newest->seq)) newest = h;
    }
    if (newest == nullptr) return 0;
    const auto* entries = reinterpret_cast<const internal::LogEntry*>(newest + 1);
    for (uint64_t i = 0; i < newest->count; ++i) {
      const uint64_t offset = entries[i].offset;
      if ((offset & internal::kVerifyMask) == 0 && offset < sb_.heap_offset) return offset;
    }
    return 0;
  }

 private:
  int fd_ = -1;
  uint64_t length_ = 0;
  internal::PoolView view_{nullptr, 0, ""};
  internal::Superblock sb_{};
};

class RecoveryVerifyOnlyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = OpenOrDie(path_, SmallPool());
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(store->Put("k" + std::to_string(i), "v").ok());
    ASSERT_TRUE(store->Close().ok());
  }

  TempDir dir_{"/dev/shm"};
  const std::string path_ = dir_.File("pool");
};

TEST_F(RecoveryVerifyOnlyTest, PassesAPoolWhoseLastCommitIsInPlace) {
  ReadOnlyView view(path_);
  ASSERT_TRUE(view.ok());
  internal::LogHeader last{};
  const absl::Status replayed = view.Replay(&last);
  EXPECT_TRUE(replayed.ok()) << replayed;
  EXPECT_GT(last.seq, 0u) << "the last commit is found as replay finds it";
  const absl::Status undone = view.RecoverUndo();
  EXPECT_TRUE(undone.ok()) << undone;
}

TEST_F(RecoveryVerifyOnlyTest, RefusesACommitNotInPlaceAndAWritableOpenRecoversIt) {
  uint64_t offset = 0;
  {
    ReadOnlyView view(path_);
    ASSERT_TRUE(view.ok());
    offset = view.MetadataWordOfNewestCommit();
    ASSERT_NE(offset, 0u);
  }
  // The word as if the commit's apply had not reached it yet.
  const int fd = open(path_.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  uint64_t word = 0;
  ASSERT_EQ(pread(fd, &word, 8, offset), 8);
  const uint64_t flipped = word ^ 1;
  ASSERT_EQ(pwrite(fd, &flipped, 8, offset), 8);
  {
    ReadOnlyView view(path_);
    internal::LogHeader last{};
    const absl::Status replayed = view.Replay(&last);
    EXPECT_TRUE(absl::IsFailedPrecondition(replayed)) << replayed;
    EXPECT_NE(replayed.message().find("open the pool for writing once"), std::string::npos) << replayed;
  }
  uint64_t after = 0;
  ASSERT_EQ(pread(fd, &after, 8, offset), 8);
  EXPECT_EQ(after, flipped) << "verifying changed the pool";

  ASSERT_TRUE(OpenOrDie(path_, Options())->Close().ok());  // a writable open replays the commit
  ASSERT_EQ(pread(fd, &after, 8, offset), 8);
  EXPECT_EQ(after, word);
  close(fd);
  ReadOnlyView view(path_);
  internal::LogHeader last{};
  const absl::Status replayed = view.Replay(&last);
  EXPECT_TRUE(replayed.ok()) << replayed;
}

TEST_F(RecoveryVerifyOnlyTest, RefusesARunOfUnsyncedWritesCutShortByAKill) {
  ASSERT_TRUE(testing::KillMidUnsyncedRun(path_, 10));

  {
    ReadOnlyView view(path_);
    ASSERT_TRUE(view.ok());
    const absl::Status undone = view.RecoverUndo();
    EXPECT_TRUE(absl::IsFailedPrecondition(undone)) << undone;
    EXPECT_NE(undone.message().find("unsynced writes"), std::string::npos) << undone;
  }
  ASSERT_TRUE(OpenOrDie(path_, Options())->Close().ok());
  ReadOnlyView view(path_);
  const absl::Status undone = view.RecoverUndo();
  EXPECT_TRUE(undone.ok()) << undone;
}

}  // namespace
}  // namespace pmstore
