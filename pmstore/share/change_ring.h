// The change ring: what the writer of any process tells the other
// processes about each commit, and the newest commit published
// (doc/FORMAT.md, "Many processes on one pool", 2.). Parts of what a
// reader follows live in each process's memory (the separator map, the
// allocator's view); a commit's writer stages one change for each thing
// that memory must learn (a leaf added or removed with its separator, a
// chunk claimed or returned), then publishes the commit. A reader of
// another process compares the published commit with the newest it has
// applied (one load of a shared line) and, when they differ, follows the
// ring from where it stopped: a cost in proportion to what changed, never
// a walk of the pool.
//
// A byte ring of kChangeRingBytes in the lock region, written by the
// holder of the writer turn (cross_process_turn.h) and read by anyone,
// without a lock. The writer never waits for a reader: one that fell
// further behind than the ring holds learns it (kOverrun) and rebuilds its
// memory from the pool, as an open does. Entries are published a commit at
// a time: a writer that dies while staging leaves nothing a reader can
// read, and the next holder drops what it staged (DropStaged).
//
// The kinds and payloads of changes are the store's to define; the ring
// carries bytes. A handle into a ReaderSlot's mapping, valid while the
// slot is; not in a forked child.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace pmstore::internal {

// 1 MiB: about 20 000 changes with 16-byte separators.
inline constexpr size_t kChangeRingBytes = size_t{1} << 20;
// The largest payload of one change: a separator of the longest key
// (store.h, kMaxKeySize) with room to spare.
inline constexpr size_t kMaxChangePayload = 96 * 1024;

class ChangeRing {
 public:
  struct Change {
    uint64_t commit = 0;
    uint8_t kind = 0;
    std::string payload;
  };
  // Where a reader is in the ring: the position after the last change it
  // read.
  struct Cursor {
    uint64_t position = 0;
  };
  enum class Followed {
    kCaughtUp,  // every change of the commits asked for was read
    kOverrun,   // the ring no longer holds them: rebuild from the pool
  };

  // The ring of the region mapped at `region`, named `path` in messages.
  ChangeRing(void* region, std::string path) : region_(region), path_(std::move(path)) {}

  // Makes the ring in a region being made: empty, nothing published.
  static void MakeIn(void* region);

  // --- the writer, holding the turn ---
  // Stages `payload` as a change of `commit` (the commit being made),
  // readable once the commit is published. InvalidArgument over
  // kMaxChangePayload.
  absl::Status Stage(uint64_t commit, uint8_t kind, std::string_view payload);
  // The writer is about to apply `commit` in place: until it is
  // published, a leaf whose version word holds `commit` is being changed
  // (format/leaf.h ReadStableLeaf), and every leaf is while it holds
  // kApplyingEveryLeaf (a recovery). Before those words are stored.
  void BeginApplying(uint64_t commit);
  // A recovery in place follows (after BeginApplying(kApplyingEveryLeaf),
  // before the pool is written): it may change leaves of commits that
  // snapshots of other processes read, without their version words.
  void CountRecovery();
  // Publishes `commit` with every change staged for it: release order, so
  // a reader that sees it sees everything the writer wrote before. Ends
  // BeginApplying.
  void Publish(uint64_t commit);
  // Forgets what a writer that died holding the turn staged and never
  // published (CrossProcessTurn::Taken::kHolderDied).
  void DropStaged();

  // --- readers, in any process ---
  // The newest commit published; nullopt before any since the region was
  // made. Acquire order: one load of a line the writer writes once a
  // commit.
  std::optional<uint64_t> published() const;
  // The commit a writer is applying in place now, 0 when none. Acquire
  // order.
  uint64_t applying() const;
  // Whether `commit` is the newest published and no writer is applying
  // one. A reader that finds the pool Quiet before it reads in place, and
  // StillQuiet after, read what `commit` left: a writer announces every
  // change to what a published commit can reach (BeginApplying) before
  // it makes it, and a recovery too (format/leaf.h kApplyingEveryLeaf).
  bool Quiet(std::optional<uint64_t> commit) const;
  // Quiet after the caller's reads since (an acquire fence first: a
  // write of a commit's apply that they saw makes its announcement seen).
  bool StillQuiet(std::optional<uint64_t> commit) const;
  // Recoveries counted so far (CountRecovery). A reader that loads it
  // after reading the pool (this is an acquire fence, then the load) and
  // finds it as it was before read nothing a recovery since wrote.
  uint64_t recoveries() const;
  // A cursor after every change published so far: a reader that takes it
  // before it reads the pool misses no later change.
  Cursor Now() const;
  // Appends to `changes` the changes after `*cursor` of commits up to
  // `through` (published, so at most published()), in the order they were
  // staged, and moves the cursor past them. kOverrun, with the cursor and
  // `changes` as they were, when the writer has overwritten some of them.
  // DataLoss when the ring holds something that is not an entry (a region
  // scribbled on).
  absl::StatusOr<Followed> Follow(Cursor* cursor, uint64_t through, std::vector<Change>* changes) const;

 private:
  void* region_;
  std::string path_;
};

}  // namespace pmstore::internal
