// Killed processes lose nothing they acknowledged, durable or not.
//
// A child process runs a deterministic workload against a pool and writes
// the index of every operation that returned OK to a pipe; the parent
// SIGKILLs it at a random moment (during open and recovery too), reopens
// the pool and requires it to hold exactly the acknowledged operations,
// plus, atomically, at most the one operation that was in flight. Then
// the next child continues from there, so recovery runs on pools that
// were already recovered many times.
//
// The unsynced variants write mostly with sync=false (one write in eight
// durable, a Sync now and then): a kill lands inside an unsynced run,
// often in the middle of a commit, and everything acknowledged before it
// must still be there (the same boot: doc/FORMAT.md, "Unsynced runs").
//
// PMSTORE_KILL_CYCLES (default 500 per pair of tests; the unsynced pair
// 200 in sanitizer builds, where each cycle costs three to five times as
// much) and PMSTORE_TEST_SEED replay a run.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <random>

#include "support/temp_dir.h"
#include "support/tmpfs_mount.h"
#include "workload.h"

namespace pmstore::crashtest {
namespace {

constexpr int kKeyspace = 400;
#if defined(PMSTORE_SANITIZE_BUILD)
constexpr uint64_t kUnsyncedCycles = 200;
#else
constexpr uint64_t kUnsyncedCycles = 500;
#endif

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 10) : fallback;
}

Options PoolOptions() {
  Options o;
  o.create_if_missing = true;
  o.initial_size = 16ull << 20;
  o.max_size = 512ull << 20;
  return o;
}

enum class Writes { kDurable, kMostlyUnsynced };

// Operation i's options: with kMostlyUnsynced, one in eight is durable.
WriteOptions OptionsFor(Writes writes, uint64_t i) {
  return WriteOptions{.sync = writes == Writes::kDurable || (i * 0x9E3779B97F4A7C15ull) >> 61 == 0};
}

// Runs operations from `first` on, acknowledging each on `ack_fd`, until
// killed. Never returns.
[[noreturn]] void RunChild(const std::string& path, const Workload& workload, Writes writes, uint64_t first,
                           int ack_fd) {
  auto store = Store::Open(path, PoolOptions());
  if (!store.ok()) _exit(3);
  for (uint64_t i = first;; ++i) {
    if (!workload.Apply(**store, workload.At(i), OptionsFor(writes, i)).ok()) _exit(4);
    if (writes == Writes::kMostlyUnsynced && i % 97 == 96 && !(*store)->Sync().ok()) _exit(6);
    if (write(ack_fd, &i, sizeof(i)) != sizeof(i)) _exit(5);
  }
}

struct Tally {
  uint64_t kills = 0, acknowledged = 0, in_flight_applied = 0;
};

// `slow_open`: an open takes longer than the 50 ms a kill waits at most
// (a whole device mapped in the VM under emulation), so every other cycle
// the kill waits for the writer's first acknowledgement, and lands mid-
// workload; the others still land in the open and its recovery.
void KillLoop(const std::string& path, uint64_t cycles, Writes writes, bool slow_open = false) {
  const uint64_t seed = EnvOr("PMSTORE_TEST_SEED", std::random_device()());
  std::printf("kill test: seed=%llu cycles=%llu pool=%s writes=%s (replay with PMSTORE_TEST_SEED=%llu)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(cycles), path.c_str(),
              writes == Writes::kDurable ? "durable" : "mostly unsynced", static_cast<unsigned long long>(seed));
  const Workload workload(seed, kKeyspace);
  std::mt19937_64 rng(seed);
  Model model;
  uint64_t next = 0;
  Tally tally;
  for (uint64_t cycle = 0; cycle < cycles; ++cycle) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(fds[0]);
      RunChild(path, workload, writes, next, fds[1]);
    }
    close(fds[1]);
    uint64_t acked = 0, last = 0;
    bool any = false;
    if (slow_open && cycle % 2 == 1) {
      any = read(fds[0], &acked, sizeof(acked)) == sizeof(acked);  // blocks until the first ack, or the writer's end
      ASSERT_TRUE(any && acked == next) << "cycle " << cycle << ": no first acknowledgement";
      last = acked;
    }
    // Most kills land mid-workload; some during open and recovery.
    usleep(static_cast<useconds_t>(rng() % 50000));
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer exited by itself with " << WEXITSTATUS(status)
                                     << " (3: open failed, 4: a write failed, 6: Sync failed) at cycle " << cycle;
    while (read(fds[0], &acked, sizeof(acked)) == sizeof(acked)) {
      ASSERT_EQ(acked, any ? last + 1 : next) << "acknowledgements arrive in order";
      last = acked;
      any = true;
    }
    close(fds[0]);
    if (any) {
      for (uint64_t i = next; i <= last; ++i) model.Apply(workload.At(i));
      tally.acknowledged += last + 1 - next;
      next = last + 1;
    }

    auto store = Store::Open(path, PoolOptions());
    ASSERT_TRUE(store.ok()) << "cycle " << cycle << ": " << store.status();
    // The operation in flight either happened entirely or not at all.
    std::string diff = model.Diff(**store, workload);
    if (!diff.empty()) {
      Model with_next = model;
      with_next.Apply(workload.At(next));
      const std::string diff_next = with_next.Diff(**store, workload);
      ASSERT_EQ(diff_next, "") << "cycle " << cycle << ", seed " << seed << ": lost or torn data: " << diff
                               << " / with op " << next << " applied: " << diff_next;
      model = with_next;
      ++next;
      ++tally.in_flight_applied;
    }
    const CheckReport check = (*store)->CheckNow();
    ASSERT_TRUE(check.clean()) << "cycle " << cycle << ": " << check.problems.front();
    ++tally.kills;
  }
  std::printf("kill test: %llu kills survived, %llu acknowledged operations kept, %llu in-flight operations "
              "found applied\n",
              static_cast<unsigned long long>(tally.kills), static_cast<unsigned long long>(tally.acknowledged),
              static_cast<unsigned long long>(tally.in_flight_applied));
  if (slow_open) {
    EXPECT_GE(tally.acknowledged, cycles / 2) << "every other cycle waits for an acknowledgement";
  }
}

void KillLoopOnTmpfsWithCacheLineFlushes(Writes writes, uint64_t cycles) {
  TmpfsMount mount("size=1g,huge=always");
  SKIP_UNLESS_MOUNTED(mount);
  setenv("PMEM2_FORCE_GRANULARITY", "CACHE_LINE", 1);
  KillLoop(mount.dir() + "/pool", EnvOr("PMSTORE_KILL_CYCLES", cycles) / 2, writes);
  unsetenv("PMEM2_FORCE_GRANULARITY");
}

// A pool on device DAX: PMSTORE_TEST_DEVICE names the device (the VM's
// /dev/daxX.Y, tests/dax/pmstore_on_devdax.sh), whose pool is destroyed
// first; skipped without one.
void KillLoopOnDeviceDax(Writes writes) {
  const char* device = std::getenv("PMSTORE_TEST_DEVICE");
  if (device == nullptr) GTEST_SKIP() << "PMSTORE_TEST_DEVICE names no device DAX device";
  const absl::Status destroyed = Store::Destroy(device);
  ASSERT_TRUE(destroyed.ok() || absl::IsNotFound(destroyed)) << destroyed;
  const uint64_t cycles = EnvOr("PMSTORE_KILL_CYCLES", 500) / 2;
  KillLoop(device, cycles, writes, /*slow_open=*/true);
}

TEST(KilledWriterTest, ReopenKeepsEveryAcknowledgedWriteOnDeviceDax) { KillLoopOnDeviceDax(Writes::kDurable); }

TEST(KilledUnsyncedWriterTest, ReopenKeepsEveryAcknowledgedUnsyncedWriteOnDeviceDax) {
  KillLoopOnDeviceDax(Writes::kMostlyUnsynced);
}

TEST(KilledWriterTest, ReopenKeepsEveryAcknowledgedWriteOnExt4) {
  TempDir dir;
  KillLoop(dir.File("pool"), EnvOr("PMSTORE_KILL_CYCLES", 500) / 2, Writes::kDurable);
}

TEST(KilledWriterTest, ReopenKeepsEveryAcknowledgedWriteOnTmpfsWithCacheLineFlushes) {
  KillLoopOnTmpfsWithCacheLineFlushes(Writes::kDurable, 500);
}

TEST(KilledUnsyncedWriterTest, ReopenKeepsEveryAcknowledgedUnsyncedWriteOnExt4) {
  TempDir dir;
  KillLoop(dir.File("pool"), EnvOr("PMSTORE_KILL_CYCLES", kUnsyncedCycles) / 2, Writes::kMostlyUnsynced);
}

TEST(KilledUnsyncedWriterTest, ReopenKeepsEveryAcknowledgedUnsyncedWriteOnTmpfsWithCacheLineFlushes) {
  KillLoopOnTmpfsWithCacheLineFlushes(Writes::kMostlyUnsynced, kUnsyncedCycles);
}

}  // namespace
}  // namespace pmstore::crashtest
