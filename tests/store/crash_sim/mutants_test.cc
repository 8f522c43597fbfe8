// Shows that the crash simulator catches the removal of each flush, fence
// and sync the store makes (pmstore/persist/persist_site.h). Linked against the
// test-only pmstore_mutants library, where one site at a time can be
// skipped; for each, the simulator runs with fixed seeds and must report a
// failure: a lost acknowledged write, half a batch, a check that is not
// clean, or a recovery that fails.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pmstore/persist/persist_site.h"
#include "store/crash_sim/simulator.h"
#include "support/temp_dir.h"

namespace pmstore {
namespace {

using internal::PersistSite;

constexpr uint64_t kSeeds[] = {11, 12, 13};
// Seeds a redundant removal must pass: all three (one seed once missed a
// removal that was not redundant after all), one in sanitizer builds,
// where each image costs three to five times as much.
#if defined(PMSTORE_SANITIZE_BUILD)
constexpr size_t kRedundantSeeds = 1;
#else
constexpr size_t kRedundantSeeds = std::size(kSeeds);
#endif

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
    {PersistSite::kUndoRestoreDrain,
     "the log replay that follows drains too: an unsynced run is open only while its base commit's "
     "record is in the log, and recovery replays that record"},
    {PersistSite::kRunCompleteEndDrain,
     "the log replay that follows drains too, and it replays the empty record that retired the run's base"},
    {PersistSite::kSyncAppliedFlush,
     "outside an unsynced run everything acknowledged is durable already: the lines hold the last "
     "commit's applied words, whose log record is durable and replayed at the next open, and the next "
     "commit (or the end of the next unsynced run) flushes them before that record is overwritten"},
    {PersistSite::kSyncDrain, "it drains only the sync-applied-flush, which is redundant (above)"},
    {PersistSite::kCloseAppliedFlush,
     "as for sync-applied-flush: outside an unsynced run the last commit's record is durable and "
     "replayed at the next open"},
    {PersistSite::kCloseDrain, "it drains only the close-applied-flush, which is redundant (above)"},
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
// `seeds`: how many of kSeeds to try, `images` each (the intact store runs
// one: the crash test's shards cover it; a redundant removal runs
// kRedundantSeeds, with half the images).
Outcome RunSeeds(PersistSite site, size_t seeds, uint64_t images) {
  Outcome outcome;
  internal::g_disabled_persist_site = site;
  for (size_t i = 0; i < seeds; ++i) {
    const uint64_t seed = kSeeds[i];
    TempDir dir("/dev/shm");
    crash_sim::Config config;
    config.seed = seed;
    config.target_images = images;
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

// RunSeeds in a child process. Every image is recovered by a Store::Open,
// and libpmem2 (1.12.1) leaks address space at each close: a virtual
// memory reservation releases only the size asked for, not the alignment
// padding it reserved with it, one mapping each time. 28 sites' worth of
// images in one process would reach vm.max_map_count.
Outcome RunWithout(PersistSite site, size_t seeds, uint64_t images = 4000) {
  int fds[2];
  if (pipe(fds) != 0) return Outcome{"pipe failed", 0, 0};
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    const Outcome outcome = RunSeeds(site, seeds, images);
    const std::string message =
        std::to_string(outcome.seed) + " " + std::to_string(outcome.images) + " " + outcome.failure;
    const bool sent = write(fds[1], message.data(), message.size()) == static_cast<ssize_t>(message.size());
    _exit(sent ? 0 : 1);
  }
  close(fds[1]);
  std::string message;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof(buffer))) > 0;) message.append(buffer, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  Outcome outcome;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    outcome.failure = "the simulation died (wait status " + std::to_string(status) + ")";
    return outcome;
  }
  std::istringstream in(message);
  in >> outcome.seed >> outcome.images;
  std::getline(in >> std::ws, outcome.failure);
  return outcome;
}

TEST(StoreCrashMutantsTest, SimulatorCatchesEveryPersistenceRemoval) {
  const Outcome intact = RunWithout(PersistSite::kCount, 1);
  EXPECT_EQ(intact.failure, "") << "the store with every site in place fails with seed " << intact.seed;

  // PMSTORE_MUTANT=NAME: only that site (to study one removal).
  const char* only = std::getenv("PMSTORE_MUTANT");
  std::printf("%-24s %-10s %s\n", "removed site", "caught", "first failure (seed)");
  for (int i = 0; i < static_cast<int>(PersistSite::kCount); ++i) {
    const auto site = static_cast<PersistSite>(i);
    if (only != nullptr && std::string(only) != internal::PersistSiteName(site)) continue;
    const char* why = RedundantWhy(site);
    const Outcome outcome = why != nullptr ? RunWithout(site, kRedundantSeeds, 2000) : RunWithout(site, std::size(kSeeds));
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
