// Simulated power failure over a random workload (tests/store/crash_sim/):
// every crash image must recover to the state after some commit since the
// last durable one (the acknowledged state when no unsynced write is
// pending), or with the write in flight; pass `check`; and accept new
// writes. At least a fifth of the images are taken inside unsynced runs.
// Those are recovered as after a power failure (another boot); the memory
// at each crash point inside a run is also recovered as after a kill (the
// same boot), and must hold every acknowledged write.
//
// Four shards with their own seeds run as separate ctest tests, so ctest
// -j runs them side by side; each asserts its own share of the images.
// PMSTORE_CRASH_SEED=N replays a printed seed (run the failing shard with
// --gtest_filter); PMSTORE_CRASH_IMAGES=N sets the images for the whole
// run (all shards together). Sanitizer builds check fewer by default.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "store/crash_sim/simulator.h"
#include "support/temp_dir.h"

namespace pmstore {
namespace {

constexpr int kShards = 4;
#if defined(PMSTORE_SANITIZE_BUILD)
constexpr uint64_t kDefaultImages = 8000;  // instrumented code runs 3-10x slower
constexpr const char* kBuildNote = " (sanitizer build: reduced default)";
#else
constexpr uint64_t kDefaultImages = 100000;
constexpr const char* kBuildNote = "";
#endif

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::strtoull(text, nullptr, 10) : fallback;
}

void RunShard(int shard) {
  const uint64_t total = EnvOr("PMSTORE_CRASH_IMAGES", kDefaultImages);
  const uint64_t seed = EnvOr("PMSTORE_CRASH_SEED", std::random_device()() ^ (uint64_t{std::random_device()()} << 32));
  TempDir dir("/dev/shm");
  crash_sim::Config config;
  config.seed = seed;
  config.target_images = (total + kShards - 1) / kShards;
  config.dir = dir.path();
  std::printf("crash shard %d: seed %llu (replay: PMSTORE_CRASH_SEED=%llu), target %llu of %llu images%s\n", shard,
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(config.target_images), static_cast<unsigned long long>(total),
              kBuildNote);
  std::fflush(stdout);
  const crash_sim::Result r = crash_sim::Run(config);
  std::printf(
      "crash images recovered and checked: %llu distinct (%llu inside unsynced runs, %.0f%%; %llu identical "
      "skipped) at %llu crash points, %d ops in %.1f s (%.2f ms/image); %llu kill images\n"
      "  puts %d (overwrites %d, >= 1 MiB %d, of them >= 2 MiB %d), deletes %d, batches %d, transactions %d, "
      "unsynced runs %d, "
      "restarts after crash %d / after kill %d / after close %d, opens from a separator image %d (crash images while a close wrote one %llu), pool %llu -> %llu bytes (seed %llu)\n",
      static_cast<unsigned long long>(r.images), static_cast<unsigned long long>(r.unsynced_images),
      r.images == 0 ? 0.0 : 100.0 * static_cast<double>(r.unsynced_images) / static_cast<double>(r.images),
      static_cast<unsigned long long>(r.duplicates),
      static_cast<unsigned long long>(r.crash_points), r.ops, r.seconds,
      r.images == 0 ? 0.0 : 1000.0 * r.seconds / static_cast<double>(r.images),
      static_cast<unsigned long long>(r.kill_images), r.puts, r.overwrites, r.large_puts, r.tail_puts,
      r.deletes, r.batches, r.transactions, r.unsynced_runs, r.crash_restarts, r.kill_restarts, r.close_restarts,
      r.image_opens, static_cast<unsigned long long>(r.closing_images), static_cast<unsigned long long>(r.initial_file_bytes), static_cast<unsigned long long>(r.final_file_bytes),
      static_cast<unsigned long long>(seed));
  EXPECT_EQ(r.failure, "") << "seed " << seed;
  EXPECT_GE(r.images, config.target_images);
  if (config.target_images >= 2000) {
    // The workload covered what it is meant to (small runs may not).
    EXPECT_GT(r.overwrites, 0);
    EXPECT_GT(r.large_puts, 0);
    EXPECT_GT(r.deletes, 0);
    EXPECT_GT(r.batches, 0);
    EXPECT_GT(r.transactions, 0);
    EXPECT_GT(r.unsynced_runs, 0);
    // Images inside unsynced runs are checked as closely as the others,
    // and are a fair share of them.
    EXPECT_GE(r.unsynced_images * 5, r.images) << "fewer than 20% of the images inside unsynced runs";
    EXPECT_GT(r.crash_restarts + r.close_restarts, 0);
    // Kills inside runs were checked, and a store reopened after one.
    EXPECT_GT(r.kill_images, 0u);
    EXPECT_GT(r.kill_restarts, 0);
    EXPECT_GT(r.final_file_bytes, r.initial_file_bytes) << "the pool never grew";
  }
  if (r.close_restarts > 0) {
    // Clean closes wrote separator images and reopens used them; crash
    // points inside that write were recovered like any other.
    EXPECT_GT(r.image_opens, 0);
    EXPECT_GT(r.closing_images, 0u);
  }
}

TEST(StoreCrashTest, EveryCrashImageRecoversToAcknowledgedStateShard0) { RunShard(0); }
TEST(StoreCrashTest, EveryCrashImageRecoversToAcknowledgedStateShard1) { RunShard(1); }
TEST(StoreCrashTest, EveryCrashImageRecoversToAcknowledgedStateShard2) { RunShard(2); }
TEST(StoreCrashTest, EveryCrashImageRecoversToAcknowledgedStateShard3) { RunShard(3); }

}  // namespace
}  // namespace pmstore
