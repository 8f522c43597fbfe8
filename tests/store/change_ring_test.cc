// The change ring (share/change_ring.h): a reader of another process reads
// every change of every published commit, in order, and nothing staged
// but unpublished; one that fell a lap behind is told to rebuild, never
// handed a torn change, even while the writer laps it; what a writer that
// died staged is dropped by the next holder of the turn. Real processes
// attached to the real /dev/shm region.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pmstore/share/lock_region.h"
#include "store/lock_region_test_util.h"

namespace pmstore::internal {
namespace {

using Followed = ChangeRing::Followed;

// A payload that says which commit and which change of it it is, long
// enough (and of varied length) that entries straddle the ring's end, and
// self-checking: every byte after the tag repeats one derived from it.
std::string PayloadOf(uint64_t commit, int index, size_t length) {
  std::string payload = std::to_string(commit) + "/" + std::to_string(index) + ":";
  payload.resize(std::max(length, payload.size()), static_cast<char>('a' + (commit * 7 + index) % 26));
  return payload;
}

bool Intact(const ChangeRing::Change& change) {
  const size_t colon = change.payload.find(':');
  if (colon == std::string::npos) return false;
  const std::string tag = std::to_string(change.commit) + "/";
  if (change.payload.compare(0, tag.size(), tag) != 0) return false;
  const int index = std::stoi(change.payload.substr(tag.size(), colon - tag.size()));
  const char fill = static_cast<char>('a' + (change.commit * 7 + index) % 26);
  for (size_t i = colon + 1; i < change.payload.size(); ++i) {
    if (change.payload[i] != fill) return false;
  }
  return change.kind == index % 3;
}

class ChangeRingTest : public testing::LockRegionTest {
 protected:
  void SetUp() override {
    LockRegionTest::SetUp();
    slot_ = Attach();
    ASSERT_NE(slot_, nullptr);
  }

  // Commit `commit` as a writer makes it: under the turn, `changes`
  // changes staged, then published.
  static void Commit(const ReaderSlot& slot, uint64_t commit, int changes, size_t length) {
    CrossProcessTurn turn = slot.cross_process_turn();
    ChangeRing ring = slot.change_ring();
    ASSERT_TRUE(turn.Take().ok());
    for (int i = 0; i < changes; ++i) {
      ASSERT_TRUE(ring.Stage(commit, static_cast<uint8_t>(i % 3), PayloadOf(commit, i, length)).ok());
    }
    ring.Publish(commit);
    turn.Give();
  }

  std::unique_ptr<ReaderSlot> slot_;
};

TEST_F(ChangeRingTest, AReaderOfAnotherProcessReadsEveryPublishedChangeInOrder) {
  constexpr uint64_t kCommits = 3000;  // about 300 KiB of changes: less than a lap
  ChangeRing ring = slot_->change_ring();
  EXPECT_EQ(ring.published(), std::nullopt) << "a new region has published nothing";
  ChangeRing::Cursor cursor = ring.Now();
  std::fflush(nullptr);
  const pid_t writer = fork();
  if (writer == 0) {
    std::unique_ptr<ReaderSlot> own = Attach();
    if (own == nullptr) _exit(1);
    for (uint64_t commit = 1; commit <= kCommits; ++commit) {
      Commit(*own, commit, 1 + commit % 3, 20 + commit % 50);
    }
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  // Follow as every read call of a process would: when the published
  // commit moved, read the changes up to it.
  std::vector<ChangeRing::Change> read;
  uint64_t applied = 0;
  while (applied < kCommits) {
    const std::optional<uint64_t> published = ring.published();
    if (!published.has_value() || *published == applied) continue;
    auto followed = ring.Follow(&cursor, *published, &read);
    ASSERT_TRUE(followed.ok()) << followed.status();
    ASSERT_EQ(*followed, Followed::kCaughtUp);
    applied = *published;
  }
  int status = 0;
  ASSERT_EQ(waitpid(writer, &status, 0), writer);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  size_t next = 0;
  for (uint64_t commit = 1; commit <= kCommits; ++commit) {
    for (int i = 0; i < static_cast<int>(1 + commit % 3); ++i, ++next) {
      ASSERT_LT(next, read.size()) << "changes of commit " << commit << " were not read";
      EXPECT_EQ(read[next].commit, commit);
      EXPECT_EQ(read[next].payload, PayloadOf(commit, i, 20 + commit % 50));
      EXPECT_EQ(read[next].kind, i % 3);
    }
  }
  EXPECT_EQ(next, read.size()) << "changes were read twice or out of nowhere";
}

TEST_F(ChangeRingTest, NothingStagedIsReadUntilItsCommitIsPublishedAndReadsStopAtTheCommitAskedFor) {
  ChangeRing ring = slot_->change_ring();
  ChangeRing::Cursor cursor = ring.Now();
  ASSERT_TRUE(ring.Stage(1, 0, "one").ok());
  std::vector<ChangeRing::Change> read;
  ASSERT_EQ(*ring.Follow(&cursor, 1, &read), Followed::kCaughtUp);
  EXPECT_TRUE(read.empty()) << "a change was read before its commit was published";

  ring.Publish(1);
  ASSERT_TRUE(ring.Stage(2, 1, "two").ok());
  ring.Publish(2);
  EXPECT_EQ(ring.published(), 2u);
  ASSERT_EQ(*ring.Follow(&cursor, 1, &read), Followed::kCaughtUp);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].payload, "one");
  ASSERT_EQ(*ring.Follow(&cursor, 2, &read), Followed::kCaughtUp);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[1].commit, 2u);
  EXPECT_EQ(read[1].payload, "two");
  ASSERT_EQ(*ring.Follow(&cursor, 2, &read), Followed::kCaughtUp);
  EXPECT_EQ(read.size(), 2u) << "a change was read twice";
}

TEST_F(ChangeRingTest, AReaderALapBehindIsToldToRebuildAndGoesOnFromNow) {
  ChangeRing ring = slot_->change_ring();
  ChangeRing::Cursor behind = ring.Now();
  uint64_t commit = 0;
  for (size_t staged = 0; staged <= kChangeRingBytes; staged += 1000) {
    Commit(*slot_, ++commit, 1, 1000);
  }
  std::vector<ChangeRing::Change> read = {ChangeRing::Change{.commit = 99, .kind = 0, .payload = "kept"}};
  const ChangeRing::Cursor was = behind;
  ASSERT_EQ(*ring.Follow(&behind, commit, &read), Followed::kOverrun);
  EXPECT_EQ(behind.position, was.position) << "an overrun moved the cursor";
  ASSERT_EQ(read.size(), 1u) << "an overrun left changes behind";

  ChangeRing::Cursor now = ring.Now();  // after rebuilding from the pool
  Commit(*slot_, ++commit, 2, 10);
  read.clear();
  ASSERT_EQ(*ring.Follow(&now, commit, &read), Followed::kCaughtUp);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_TRUE(Intact(read[0]) && Intact(read[1]));
}

TEST_F(ChangeRingTest, AReaderLappedWhileItReadsIsNeverHandedATornChange) {
  // A writer process stages big changes as fast as it can, lapping the
  // ring every few dozen, while this process follows, copying changes the
  // writer is overwriting: every change it is handed must be whole; a lap
  // it missed must be an overrun. The writer goes on until the reader has
  // seen both many times over (on a loaded machine the reader may be
  // lapped for thousands of commits in a row), or for 2 000 000 commits.
  ChangeRing ring = slot_->change_ring();
  std::fflush(nullptr);
  const pid_t writer = fork();
  if (writer == 0) {
    std::unique_ptr<ReaderSlot> own = Attach();
    if (own == nullptr) _exit(1);
    for (uint64_t commit = 1; commit <= 2000000; ++commit)
      Commit(*own, commit, 1 + commit % 2, 100 + commit * 37 % 60000);
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  // The writer is killed once the reader is done, or has failed.
  struct KillOnExit {
    pid_t pid;
    ~KillOnExit() {
      if (pid <= 0) return;
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } kill_writer{writer};
  ChangeRing::Cursor cursor = ring.Now();
  uint64_t changes_read = 0, overruns = 0;
  for (;;) {
    if (changes_read >= 1000 && overruns >= 10 && ring.published().value_or(0) >= 20000) break;
    const std::optional<uint64_t> published = ring.published();
    std::vector<ChangeRing::Change> read;
    if (published.has_value()) {
      auto followed = ring.Follow(&cursor, *published, &read);
      ASSERT_TRUE(followed.ok()) << followed.status();
      if (*followed == Followed::kOverrun) {
        ++overruns;
        cursor = ring.Now();
      }
    }
    for (const ChangeRing::Change& change : read) {
      ASSERT_TRUE(Intact(change)) << "a torn change of commit " << change.commit << " was handed out";
    }
    changes_read += read.size();
    if (waitpid(writer, nullptr, WNOHANG) == writer) {
      kill_writer.pid = 0;
      break;
    }
  }
  EXPECT_GT(overruns, 0u) << "the writer never lapped the reader: the test checks nothing";
  EXPECT_GT(changes_read, 0u);
}

TEST_F(ChangeRingTest, AReaderPinsTheNewestPublishedCommitAndTheWriterSeesThePin) {
  ChangeRing ring = slot_->change_ring();
  // Before any commit: commit 0, the most a reader can hold back.
  EXPECT_EQ(slot_->PinNewestPublished(ring), 0u);
  EXPECT_EQ(slot_->OldestPinned(), 0u);
  Commit(*slot_, 1, 1, 10);
  Commit(*slot_, 2, 1, 10);
  EXPECT_EQ(slot_->PinNewestPublished(ring), 2u);
  std::unique_ptr<ReaderSlot> writer = Attach();
  ASSERT_NE(writer, nullptr);
  EXPECT_EQ(writer->OldestPinned(), 2u) << "the writer does not see the reader's pin";
  slot_->PublishPinned(std::nullopt, std::nullopt);
  EXPECT_EQ(writer->OldestPinned(), std::nullopt);
}

TEST_F(ChangeRingTest, WhatAWriterThatDiedStagedIsDroppedByTheNextHolder) {
  ChangeRing ring = slot_->change_ring();
  Commit(*slot_, 1, 1, 10);
  ChangeRing::Cursor cursor = ring.Now();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    std::unique_ptr<ReaderSlot> own = Attach();
    if (own == nullptr || !own->cross_process_turn().Take().ok()) _exit(1);
    for (int i = 0; i < 3; ++i) (void)own->change_ring().Stage(2, 0, "never published");
    if (write(ready[1], "s", 1) != 1) _exit(1);
    for (;;) pause();
  }
  char said = 0;
  ASSERT_EQ(read(ready[0], &said, 1), 1);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);

  CrossProcessTurn turn = slot_->cross_process_turn();
  auto taken = turn.Take();
  ASSERT_TRUE(taken.ok()) << taken.status();
  ASSERT_EQ(*taken, CrossProcessTurn::Taken::kHolderDied);
  ring.DropStaged();
  ASSERT_TRUE(ring.Stage(2, 1, PayloadOf(2, 1, 40)).ok());  // commit 2 made again, by the recovering writer
  ring.Publish(2);
  turn.Recovered();
  turn.Give();

  std::vector<ChangeRing::Change> read;
  ASSERT_EQ(*ring.Follow(&cursor, 2, &read), Followed::kCaughtUp);
  ASSERT_EQ(read.size(), 1u) << "what the dead writer staged was read";
  EXPECT_EQ(read[0].payload, PayloadOf(2, 1, 40));
}

TEST_F(ChangeRingTest, AChangeOverTheLimitIsRefusedAndStagesNothing) {
  ChangeRing ring = slot_->change_ring();
  ChangeRing::Cursor cursor = ring.Now();
  const absl::Status refused = ring.Stage(1, 0, std::string(kMaxChangePayload + 1, 'x'));
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
  ASSERT_TRUE(ring.Stage(1, 0, std::string(kMaxChangePayload, 'y')).ok());
  ring.Publish(1);
  std::vector<ChangeRing::Change> read;
  ASSERT_EQ(*ring.Follow(&cursor, 1, &read), Followed::kCaughtUp);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].payload.size(), kMaxChangePayload);
}

}  // namespace
}  // namespace pmstore::internal
