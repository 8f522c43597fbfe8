// The lock region's layout (doc/FORMAT.md, "The lock region"), shared by
// the files of share/ and by nothing above them: the reader table
// (lock_region.cc), the writer turn (cross_process_turn.cc) and the change
// ring (change_ring.cc) read the same mapping.
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "pmstore/format/leaf.h"
#include "pmstore/share/change_ring.h"
#include "pmstore/share/leaf_image_ring.h"
#include "pmstore/share/lock_region.h"

namespace pmstore::internal::region {

inline constexpr uint64_t kMagic = 0x4b434f4c54534d50;  // "PMSTLOCK", little-endian
// Bumped with every change of the layout below. A process that finds
// another version in use refuses rather than misread it; once every
// process has left, the next one makes the region anew in its own.
// Version 2 added the slots' pinned commit; version 3 the writer turn, the
// change ring, the highest slot taken and the slots' last commit; version
// 4 the commit being applied; version 5 the leaf image ring; version 6
// the slots' newest pinned commit, a ring of 32 768 leaf images and its
// pages reserved, the recoveries in place.
inline constexpr uint32_t kVersion = 6;

struct Header {
  uint64_t magic;
  uint32_t version;
  uint32_t slot_count;
  uint64_t pool_dev;
  uint64_t pool_ino;
  // One past the highest slot taken since the region was made: a writer
  // looking for the oldest pin reads no further.
  std::atomic<uint32_t> slots_high;
};

// The writer turn: one commit at a time across the processes (FORMAT.md,
// "Many processes on one pool", 1. and 2.). Lines of their own: the mutex
// is written by each commit, the published commit read by every read call
// of every process, the ring's reservation by every change staged.
struct alignas(64) TurnWords {
  pthread_mutex_t mutex;  // process-shared and robust, made with the region
};
struct alignas(64) PublishedWords {
  // 1 + the newest commit a writer of any process applied in place; 0
  // when none has been published since the region was made.
  std::atomic<uint64_t> commit;
  // Bytes of the change ring written and readable, since the region was
  // made: every change of the published commits, stored before `commit`.
  std::atomic<uint64_t> written;
  // The commit a writer is applying in place, 0 when none: a leaf whose
  // version word holds it is being changed (format/leaf.h). Stored before
  // those words, cleared when the commit is published.
  std::atomic<uint64_t> applying;
  // Recoveries that changed the pool in place (a commit replayed, a run's
  // apply completed) since the region was made: where no version word
  // says which leaves they changed, so a follower's snapshot begun before
  // one can no longer tell its commit's leaves from the recovered ones.
  // Counted after `applying` takes kApplyingEveryLeaf, before the pool is
  // written.
  std::atomic<uint64_t> recoveries;
};
struct alignas(64) RingWords {
  // Bytes of the change ring a writer has begun to write: a reader whose
  // copy of an entry lies more than the ring's size behind it may have
  // copied bytes being overwritten. Stored before the bytes.
  std::atomic<uint64_t> reserved;
};

struct alignas(64) ImageWords {
  // Entries of the leaf image ring begun since the region was made: the
  // next one goes to slot `next % kLeafImageSlots`.
  std::atomic<uint64_t> next;
  // The newest commit of an entry overwritten so far: a reader whose
  // chain meets an overwritten entry lost nothing after its commit `seen`
  // when this is at most `seen`. Stored before the entry is.
  std::atomic<uint64_t> lost_through;
  // Entries whose pages are reserved (leaf_image_ring.h): the first run
  // when the region is made, more as the writer reaches them.
  std::atomic<uint64_t> reserved;
};
// An entry of the leaf image ring (leaf_image_ring.h). `position` is 1 +
// the entry's place in the sequence of entries, 0 while the writer writes
// the entry: a reader keeps what it copied only when `position` was the
// one it looked for before and after.
struct alignas(64) ImageEntry {
  std::atomic<uint64_t> position;
  uint64_t leaf;      // the leaf's offset in the pool
  uint64_t commit;    // the commit that changed the leaf or wrote it whole
  uint64_t born;      // 1: written whole by `commit`, no leaf before it
  uint64_t from;      // born: the leaf whose keys it took (0: none)
  uint64_t previous;  // 1 + the position of the bucket's entry before, 0: none
  alignas(64) Leaf image;
};

// A slot a cache line of its own: owners write theirs without disturbing
// another process's.
struct alignas(64) SlotWords {
  std::atomic<int64_t> pid;  // 0: free; written last when taken, first when freed
  std::atomic<uint32_t> flags;
  std::atomic<int64_t> opened_unix_ns;
  // 1 + the oldest commit a pin, snapshot, iterator or transaction of
  // the owner's open reads; 0 when none does (an empty pool's commit 0
  // may be pinned). LMDB's mr_txnid.
  std::atomic<uint64_t> pinned_commit;
  // 1 + the newest commit such a pin reads, or newer (it may stay up
  // after that pin went, until the last goes); 0 when none does. A writer
  // copies a leaf's image only for a pin from the leaf's last change on.
  std::atomic<uint64_t> newest_pinned;
  // 1 + the newest commit a writable open made, or found when it opened;
  // 0 for a read-only open. What its pins lag behind.
  std::atomic<uint64_t> last_commit;
};
static_assert(std::atomic<int64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free &&
                  std::atomic<uint64_t>::is_always_lock_free,
              "the region is shared between processes: its atomics may hold no lock");

inline constexpr uint32_t kSlotWritable = 1;

inline constexpr size_t kTurnOffset = 64;
inline constexpr size_t kPublishedOffset = 128;
inline constexpr size_t kRingWordsOffset = 192;
inline constexpr size_t kImageWordsOffset = 256;
inline constexpr size_t kHeaderBytes = 4096;
inline constexpr size_t kRingOffset = kHeaderBytes + kReaderSlots * sizeof(SlotWords);
// The image ring's buckets (1 + the position of each one's newest entry,
// 0: none), then its entries.
inline constexpr size_t kImageBucketsOffset = kRingOffset + kChangeRingBytes;
inline constexpr size_t kImageEntriesOffset = kImageBucketsOffset + kLeafImageBuckets * sizeof(uint64_t);
inline constexpr size_t kBytes = kImageEntriesOffset + kLeafImageSlots * sizeof(ImageEntry);
static_assert(sizeof(Header) <= kTurnOffset && kTurnOffset + sizeof(TurnWords) <= kPublishedOffset &&
                  kPublishedOffset + sizeof(PublishedWords) <= kRingWordsOffset &&
                  kRingWordsOffset + sizeof(RingWords) <= kImageWordsOffset &&
                  kImageWordsOffset + sizeof(ImageWords) <= kHeaderBytes,
              "the header's parts overlap");

inline Header* HeaderOf(void* region) { return static_cast<Header*>(region); }
inline TurnWords* TurnOf(void* region) {
  return reinterpret_cast<TurnWords*>(static_cast<char*>(region) + kTurnOffset);
}
inline PublishedWords* PublishedOf(void* region) {
  return reinterpret_cast<PublishedWords*>(static_cast<char*>(region) + kPublishedOffset);
}
inline RingWords* RingWordsOf(void* region) {
  return reinterpret_cast<RingWords*>(static_cast<char*>(region) + kRingWordsOffset);
}
inline ImageWords* ImageWordsOf(void* region) {
  return reinterpret_cast<ImageWords*>(static_cast<char*>(region) + kImageWordsOffset);
}
inline std::atomic<uint64_t>* ImageBucketsOf(void* region) {
  return reinterpret_cast<std::atomic<uint64_t>*>(static_cast<char*>(region) + kImageBucketsOffset);
}
inline ImageEntry* ImageEntriesOf(void* region) {
  return reinterpret_cast<ImageEntry*>(static_cast<char*>(region) + kImageEntriesOffset);
}
inline char* RingOf(void* region) { return static_cast<char*>(region) + kRingOffset; }
inline SlotWords* SlotsOf(void* region) {
  return reinterpret_cast<SlotWords*>(static_cast<char*>(region) + kHeaderBytes);
}

}  // namespace pmstore::internal::region
