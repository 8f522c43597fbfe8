// The leaf image ring: index leaves as they were before a commit changed
// them in place, for the snapshots and iterators of other processes
// (doc/FORMAT.md, "Many processes on one pool", "Leaves as a snapshot
// saw them"). A follower's snapshot reads one commit, `seen`; a leaf that
// a later commit changed in place holds that commit's state, and without
// the leaf as it was, the snapshot could only give up (Aborted). The
// writer copies each leaf a commit changes before it applies the commit,
// and notes each leaf the commit writes whole (one that did not exist
// before it); a reader asks for the leaf as commit `seen` left it.
//
// A ring of kLeafImageSlots entries in the lock region, after the change
// ring, written by the holder of the writer turn and read by anyone
// without a lock. Entries hash into buckets by leaf offset and link to
// the previous entry of their bucket, so a reader follows one short chain
// back from the newest entry to the commits its snapshot may miss. The
// writer never waits: a reader whose chain reaches an entry overwritten
// since (a snapshot older than the ring holds) learns that it cannot know
// (kUnknown) and gives up as before. Only the slot part of a leaf is kept
// (format/leaf.h Leaf): the records and cells it names are kept by the
// reader's pin, as they are for an unchanged leaf.
//
// The region file is sparse, and a page of tmpfs is made when first
// written: were /dev/shm full then, the write would raise SIGBUS. So the
// writer reserves the ring's pages (fallocate) a run of entries at a time
// before it first writes them, and where /dev/shm has no room for more it
// wraps early, over the entries it has: the ring is shorter, never a
// crash. (The region's creation reserves everything before the entries,
// and their first run.)
//
// Depends on format/ (the leaf's size), env/ (fallocate) and the region's
// layout. A handle into a ReaderSlot's mapping, valid while the slot is.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "pmstore/env/env.h"
#include "pmstore/format/leaf.h"

namespace pmstore::internal {

// 32 768 leaves, at most 44 MB of the region: a writer (each leaf's
// image is kept once for a snapshot however often the leaf changes) may
// change that many leaves, a pool of some million keys, before a snapshot
// of another process that began earlier is given up. A busy pool's
// region holds the whole ring; an idle one's, what its writers wrote.
inline constexpr size_t kLeafImageSlots = 32768;
inline constexpr size_t kLeafImageBuckets = 32768;
// Entries reserved at a time (some 344 KiB).
inline constexpr size_t kLeafImageReserveRun = 256;

class LeafImageRing {
 public:
  enum class Found {
    kImage,    // the leaf as commit `seen` left it, in the copy
    kBorn,     // a commit after `seen` wrote the leaf whole: it was no leaf then
    kNone,     // no commit after `seen` changed the leaf
    kUnknown,  // the ring no longer holds what `seen` needs
  };
  // The pseudo-leaf whose entries are changes of the chain's head: born
  // from the head before (offset 0 is the superblock's, never a leaf's).
  static constexpr uint64_t kChainHead = 0;

  // The region open as `fd`, whose pages Record reserves through `env`;
  // env null: the region is memory throughout (nothing to reserve).
  LeafImageRing(void* region, env::Env* env, int fd) : region_(region), env_(env), fd_(fd) {}

  // --- the writer, holding the turn, before it stamps the leaves ---
  // The leaf at `leaf` as it is before `commit` changes it, copied from
  // `before`; `before` null: `commit` writes the leaf whole, with keys
  // taken from the leaf at `from` (0: none).
  void Record(uint64_t commit, uint64_t leaf, const Leaf* before, uint64_t from = 0);
  // Makes what Record wrote visible to a reader that loads a version word
  // stored after it (release order).
  static void Recorded();

  // --- readers, in any process ---
  // The leaf at `leaf` as the newest commit up to `seen` left it, for a
  // reader that found its version word above `seen` (Record's entries are
  // visible to it then), or kBorn with `*from` the leaf it took its keys
  // from. `copy` (null: none wanted) may be written on any answer.
  Found ImageAt(uint64_t leaf, uint64_t seen, Leaf* copy, uint64_t* from) const;

 private:
  // Reserves the next run of entries' pages; false when /dev/shm has no
  // room for them (then the ring wraps before them).
  bool ReserveMore();

  void* region_;
  env::Env* env_;
  int fd_;
};

}  // namespace pmstore::internal
