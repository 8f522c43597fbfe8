// Shows that the crash simulator catches the removal of each flush, fence
// and sync the store makes (pmstore/src/persist_site.h). Linked against the
// test-only pmstore_mutants library, where one site at a time can be
// skipped; for each, the simulator runs with fixed seeds and must report a
// failure: a lost acknowledged write, half a batch, a check that is not
// clean, or a recovery that fails.
#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pmstore/src/persist_site.h"
#include "store/crash_sim/simulator.h"
#include "support/temp_dir.h"

namespace pmstore {
namespace {

using internal::PersistSite;

constexpr uint64_t kSeeds[] = {11, 12, 13};

// Removals no crash can expose, and why (doc/FORMAT.md, "Persistence
// sites"). Anything else the simulator misses is a blind spot to fix.
struct Redundant {
  PersistSite site;
  const char* why;
};
constexpr Redundant kRedundant[] = {
    {PersistSite::kFormatDrain,
     "the magic's drain persists the rest of the format as well, and the pool is published under its "
     "name only after that drain"},
    {PersistSite::kReplayDrain,
     "the next drain (the first commit's fence, or close) persists the replayed words; the one log "
     "record a commit overwrites before that fence is the older one, whose words the newest commit's "
     "fence had already made durable"},
    {PersistSite::kSyncAppliedFlush,
     "the lines hold the last sync=true commit's applied words, whose log record stays durable until a "
     "later commit overwrites it, and that commit flushes them first (its fence, or the Sync ending its "
     "unsynced run)"},
    {PersistSite::kCloseAppliedFlush,
     "the lines hold the last sync=true commit's applied words, whose log record is durable and is "
     "replayed at the next open"},
};
const char* RedundantWhy(PersistSite site) {
  for (const Redundant& r : kRedundant) {
    if (r.site == site) return r.why;
  }
  return nullptr;
}

struct Outcome {
  std::string failure;  // the first one; empty when no seed exposed the removal
  uint64_t seed = 0;
  uint64_t images = 0;
};

// Runs the simulator with `site` removed, seed after seed until one fails.
// `seeds`: how many of kSeeds to try (the intact store and the redundant
// removals run one: they are expected to pass, and that costs a full run).
Outcome RunWithout(PersistSite site, size_t seeds) {
  Outcome outcome;
  internal::g_disabled_persist_site = site;
  for (size_t i = 0; i < seeds; ++i) {
    const uint64_t seed = kSeeds[i];
    TempDir dir("/dev/shm");
    crash_sim::Config config;
    config.seed = seed;
    config.target_images = 4000;
    config.max_ops = 1000;
    config.restarts_per_1000_ops = 50;  // recovery and close sites run only there
    config.dir = dir.path();
    const crash_sim::Result r = crash_sim::Run(config);
    outcome.images += r.images;
    if (!r.failure.empty()) {
      outcome.failure = r.failure;
      outcome.seed = seed;
      break;
    }
  }
  internal::g_disabled_persist_site = PersistSite::kCount;
  return outcome;
}

TEST(StoreCrashMutantsTest, SimulatorCatchesEveryPersistenceRemoval) {
  const Outcome intact = RunWithout(PersistSite::kCount, 1);
  EXPECT_EQ(intact.failure, "") << "the store with every site in place fails with seed " << intact.seed;

  std::printf("%-24s %-10s %s\n", "removed site", "caught", "first failure (seed)");
  for (int i = 0; i < static_cast<int>(PersistSite::kCount); ++i) {
    const auto site = static_cast<PersistSite>(i);
    const char* why = RedundantWhy(site);
    const Outcome outcome = RunWithout(site, why != nullptr ? 1 : std::size(kSeeds));
    const bool caught = !outcome.failure.empty();
    std::printf("%-24s %-10s %s\n", internal::PersistSiteName(site),
                caught ? "yes" : (why != nullptr ? "redundant" : "NO"),
                caught ? (outcome.failure + " (seed " + std::to_string(outcome.seed) + ")").c_str()
                       : (why != nullptr ? why : ("missed in " + std::to_string(outcome.images) + " images").c_str()));
    std::fflush(stdout);
    if (why == nullptr) {
      EXPECT_TRUE(caught) << "removing " << internal::PersistSiteName(site) << " went unnoticed in " << outcome.images
                          << " images";
    } else {
      EXPECT_FALSE(caught) << internal::PersistSiteName(site) << " is listed as redundant but its removal fails: "
                           << outcome.failure;
    }
  }
}

}  // namespace
}  // namespace pmstore
