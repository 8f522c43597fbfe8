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
  // Recovery (undo_log.cc): the lines an unsynced run changed, written back.
  kUndoRestoreFlush,
  kUndoRestoreDrain,
  // Recovery in the same boot (undo_log.cc): a killed process's run is
  // kept; the whole pool is made durable, then its base record retired.
  kRunCompleteFlush,
  kRunCompleteDrain,
  kRunCompleteEndFlush,
  kRunCompleteEndDrain,
  // Growth (pool.cc GrowPool): the file's new length (Persister::SyncLength).
  kGrowSync,
  // The commit point (StoreImpl::Commit).
  kCommitInPlaceFlush,
  kCommitCellFlush,  // records written into leaf cells (format version 2)
  kCommitLogFlush,
  kCommitAppliedFlush,
  kCommitDrain,
  // An unsynced run (store_write.cc, undo_log.cc): its base record when the
  // log had none, its undo header, each line's old contents before it
  // changes, then at its end everything it wrote, and the empty record
  // that retires the base and so closes the run.
  kRunBaseFlush,
  kRunBeginFlush,
  kUndoSaveFlush,
  kUndoSaveDrain,
  kUnsyncedPagesFlush,
  kRunAppliedFlush,
  kRunDataDrain,
  kRunEndFlush,
  kRunEndDrain,
  // Store::Sync and close, outside a run.
  kSyncAppliedFlush,
  kSyncDrain,
  kCloseAppliedFlush,
  kCloseDrain,
  // A clean close (store_image.cc): the separator image, durable before
  // the commit that names it.
  kCloseImageFlush,
  kCloseImageDrain,
  kCount
};

inline constexpr const char* kPersistSiteNames[] = {
    "format-metadata-flush", "format-bitmap-flush", "format-leaf-flush",   "format-drain",
    "format-magic-flush",    "format-magic-drain",  "replay-flush",        "replay-drain",
    "undo-restore-flush",    "undo-restore-drain",  "run-complete-flush",  "run-complete-drain",
    "run-complete-end-flush", "run-complete-end-drain", "grow-fdatasync",      "commit-in-place-flush",
    "commit-cell-flush",     "commit-log-flush",      "commit-applied-flush", "commit-drain",       "run-base-flush",
    "run-begin-flush",       "undo-save-flush",     "undo-save-drain",     "unsynced-pages-flush",
    "run-applied-flush",     "run-data-drain",      "run-end-flush",       "run-end-drain",
    "sync-applied-flush",    "sync-drain",          "close-applied-flush", "close-drain",
    "close-image-flush",     "close-image-drain",
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
