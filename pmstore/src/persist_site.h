// Names for every place the store makes data durable (a Persister flush,
// drain or length sync), so that a crash test can remove one at a time and
// show that the crash simulator notices.
//
// PMSTORE_PERSIST(site, call) is an expression with call's absl::Status.
// In the library it is exactly `call` (PersistSiteRuns is constexpr true). Only a test build that defines
// PMSTORE_PERSIST_MUTANTS (the test-only pmstore_mutants library) gets the
// switch: there a disabled site is skipped and reads as OK.
//
// Thread-compatible in mutant builds: tests set the switch while no store
// is writing.
#pragma once

#include <cstddef>

#include "absl/status/status.h"

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
  // Growth (pool.cc GrowPool): the file's new length (Persister::SyncLength).
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
// The site a mutant build skips (kCount: none).
inline PersistSite g_disabled_persist_site = PersistSite::kCount;
inline bool PersistSiteRuns(PersistSite site) { return site != g_disabled_persist_site; }
#else
constexpr bool PersistSiteRuns(PersistSite) { return true; }
#endif

// `call` (an absl::Status expression) made at the site named by the value
// `site_value`; PMSTORE_PERSIST names the site by its enumerator.
#define PMSTORE_PERSIST_AT(site_value, ...) \
  (::pmstore::internal::PersistSiteRuns(site_value) ? (__VA_ARGS__) : ::absl::OkStatus())
#define PMSTORE_PERSIST(site, ...) PMSTORE_PERSIST_AT(::pmstore::internal::PersistSite::site, __VA_ARGS__)

}  // namespace pmstore::internal
