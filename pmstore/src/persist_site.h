// Names for every place the store makes data durable (a Persister flush
// or drain, or the fdatasync that makes a grown file's length durable), so
// that a crash test can remove one at a time and show that the crash
// simulator notices.
//
// In the library every PMSTORE_PERSIST(site, call) is exactly `call`. Only
// a test build that defines PMSTORE_PERSIST_MUTANTS (the test-only
// pmstore_mutants library) gets the switch: there a site can be disabled,
// and a test may observe each site that ran.
//
// Thread-compatible in mutant builds: tests set the switch while no store
// is writing.
#pragma once

#include <cstddef>

namespace pmstore::internal {

enum class PersistSite : int {
  // Format (pool.cc): everything but the magic, then the magic last.
  kFormatMetadataFlush,
  kFormatBitmapFlush,
  kFormatLeafFlush,
  kFormatDrain,
  kFormatMagicFlush,
  kFormatMagicDrain,
  // Recovery (pool.cc ReplayLog): the replayed words.
  kReplayFlush,
  kReplayDrain,
  // Growth (pool.cc GrowPool): the file's new length.
  kGrowSync,
  // Pages written by sync=false commits (StoreImpl::FlushUnsynced, from
  // a sync=true commit, Sync or close).
  kUnsyncedPagesFlush,
  // The commit point (StoreImpl::Commit).
  kCommitInPlaceFlush,
  kCommitLogFlush,
  kCommitAppliedFlush,
  kCommitDrain,
  // Store::Sync and close.
  kSyncAppliedFlush,
  kSyncDrain,
  kCloseAppliedFlush,
  kCloseDrain,
  kCount
};

inline constexpr const char* kPersistSiteNames[] = {
    "format-metadata-flush", "format-bitmap-flush", "format-leaf-flush", "format-drain",
    "format-magic-flush",    "format-magic-drain",  "replay-flush",      "replay-drain",
    "grow-fdatasync",        "unsynced-pages-flush", "commit-in-place-flush", "commit-log-flush",
    "commit-applied-flush",  "commit-drain",        "sync-applied-flush", "sync-drain",
    "close-applied-flush",   "close-drain",
};
static_assert(sizeof(kPersistSiteNames) / sizeof(kPersistSiteNames[0]) == static_cast<size_t>(PersistSite::kCount));

inline const char* PersistSiteName(PersistSite site) { return kPersistSiteNames[static_cast<int>(site)]; }

#if defined(PMSTORE_PERSIST_MUTANTS)
// The site a mutant build skips (kCount: none), and an observer called
// after each site that ran.
inline PersistSite g_disabled_persist_site = PersistSite::kCount;
inline void (*g_persist_site_ran)(PersistSite site) = nullptr;

#define PMSTORE_PERSIST(site, ...)                                                         \
  do {                                                                                     \
    if (::pmstore::internal::g_disabled_persist_site != ::pmstore::internal::PersistSite::site) { \
      __VA_ARGS__;                                                                         \
      if (::pmstore::internal::g_persist_site_ran != nullptr) {                            \
        ::pmstore::internal::g_persist_site_ran(::pmstore::internal::PersistSite::site);   \
      }                                                                                    \
    }                                                                                      \
  } while (0)
#else
#define PMSTORE_PERSIST(site, ...) \
  do {                             \
    __VA_ARGS__;                   \
  } while (0)
#endif

}  // namespace pmstore::internal
