// The writer turn across processes (share/cross_process_turn.h): processes
// take it in turns, a taker learns that the holder died inside its turn,
// and a taker that could not recover leaves it unrecoverable until every
// process has left. Real processes attached to the real /dev/shm region,
// real kills.
#include "pmstore/share/cross_process_turn.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "pmstore/share/lock_region.h"
#include "store/lock_region_test_util.h"

namespace pmstore::internal {
namespace {

using Taken = CrossProcessTurn::Taken;

class CrossProcessTurnTest : public testing::LockRegionTest {
 protected:
  // Forks a child that attaches, takes the turn, says so and waits to be
  // killed; returns once it holds the turn.
  pid_t ChildHoldingTheTurn() const {
    int ready[2];
    if (pipe(ready) != 0) return -1;
    const pid_t child = fork();
    if (child == 0) {
      close(ready[0]);
      std::unique_ptr<ReaderSlot> slot = Attach();
      if (slot == nullptr || !slot->cross_process_turn().Take().ok()) _exit(1);
      if (write(ready[1], "t", 1) != 1) _exit(1);
      for (;;) pause();
    }
    close(ready[1]);
    char said = 0;
    const bool holds = read(ready[0], &said, 1) == 1;
    close(ready[0]);
    return holds ? child : -1;
  }

  static void Kill(pid_t child) {
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
  }
};

TEST_F(CrossProcessTurnTest, ProcessesTakeTurns) {
  // A counter in memory both processes share, read and written back under
  // the turn with a yield in between: without mutual exclusion the two
  // lose each other's increments.
  constexpr int kRounds = 2000;
  auto* counter = static_cast<uint64_t*>(
      mmap(nullptr, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(counter, MAP_FAILED);
  *counter = 0;
  std::unique_ptr<ReaderSlot> slot = Attach();
  ASSERT_NE(slot, nullptr);

  auto run = [&](CrossProcessTurn turn) {
    for (int i = 0; i < kRounds; ++i) {
      if (!turn.Take().ok()) return false;
      const uint64_t seen = *counter;
      sched_yield();
      *counter = seen + 1;
      turn.Give();
    }
    return true;
  };
  const pid_t child = fork();
  if (child == 0) {
    std::unique_ptr<ReaderSlot> own = Attach();
    _exit(own != nullptr && run(own->cross_process_turn()) ? 0 : 1);
  }
  const bool parent_ok = run(slot->cross_process_turn());
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child could not take the turn";
  EXPECT_TRUE(parent_ok) << "the parent could not take the turn";
  EXPECT_EQ(*counter, 2u * kRounds) << "increments were lost: the two processes held the turn at once";
  munmap(counter, sizeof(uint64_t));
}

TEST_F(CrossProcessTurnTest, TheNextTakerLearnsThatTheHolderDiedAndRecovers) {
  std::unique_ptr<ReaderSlot> slot = Attach();  // keeps the region alive past the child
  ASSERT_NE(slot, nullptr);
  CrossProcessTurn turn = slot->cross_process_turn();
  const pid_t child = ChildHoldingTheTurn();
  ASSERT_GT(child, 0);
  auto while_held = turn.TryTake();
  ASSERT_TRUE(while_held.ok()) << while_held.status();
  EXPECT_EQ(*while_held, std::nullopt) << "the turn was free while another process held it";

  Kill(child);
  auto taken = turn.Take();
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ(*taken, Taken::kHolderDied);
  turn.Recovered();
  turn.Give();
  taken = turn.Take();
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ(*taken, Taken::kGivenBack) << "a recovered turn still reported a dead holder";
  turn.Give();
}

TEST_F(CrossProcessTurnTest, ATakerThatCouldNotRecoverLeavesTheTurnUnrecoverableUntilEveryProcessLeaves) {
  std::unique_ptr<ReaderSlot> slot = Attach();
  ASSERT_NE(slot, nullptr);
  const pid_t child = ChildHoldingTheTurn();
  ASSERT_GT(child, 0);
  Kill(child);
  auto taken = slot->cross_process_turn().Take();
  ASSERT_TRUE(taken.ok()) << taken.status();
  ASSERT_EQ(*taken, Taken::kHolderDied);
  slot->cross_process_turn().Give();  // no Recovered(): the recovery failed

  auto refused = slot->cross_process_turn().Take();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  EXPECT_NE(refused.status().message().find("unrecoverable"), std::string::npos) << refused.status();
  EXPECT_NE(refused.status().message().find("Close the pool in every process"), std::string::npos) << refused.status();

  // What the message promises: once every process has left, the next one
  // makes the region anew.
  slot.reset();
  slot = Attach();
  ASSERT_NE(slot, nullptr);
  taken = slot->cross_process_turn().Take();
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ(*taken, Taken::kGivenBack);
  slot->cross_process_turn().Give();
}

TEST_F(CrossProcessTurnTest, ARegionMadeAnewForgetsAHolderThatDiedAlone) {
  // The pool's own open recovers what a process that died alone left; the
  // region the next process makes has a free turn.
  const pid_t child = ChildHoldingTheTurn();
  ASSERT_GT(child, 0);
  Kill(child);
  std::unique_ptr<ReaderSlot> slot = Attach();
  ASSERT_NE(slot, nullptr);
  auto taken = slot->cross_process_turn().TryTake();
  ASSERT_TRUE(taken.ok()) << taken.status();
  ASSERT_TRUE(taken->has_value()) << "the dead process's turn was still held";
  EXPECT_EQ(**taken, Taken::kGivenBack);
  slot->cross_process_turn().Give();
}

}  // namespace
}  // namespace pmstore::internal
