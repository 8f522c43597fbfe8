// pmstore/share/: what the processes that have one pool open share beside
// the pool itself: the pool's lock region, a small file in /dev/shm named
// for the pool file's device and inode (doc/FORMAT.md, "The lock
// region"). It holds the reader table: one slot per open of the pool in
// any process, with the oldest commit the open reads, LMDB's reader table
// and `mdb_stat -r`; the writer turn across processes
// (cross_process_turn.h); the change ring that publishes each commit
// to the other processes (change_ring.h); and the leaf image ring that
// keeps leaves as they were for their snapshots (leaf_image_ring.h).
// Depends on env/ and base/, and on format/ for the size of a leaf; the
// store (db/) attaches each open to it.
//
// Memory, not media: the region lives in a tmpfs and is made anew by the
// first process to attach after every process has left it (and so after
// every boot), as LMDB resets its lock file. The last process to leave
// removes it.
//
// Who is alive is the kernel's to say, not a pid's: each slot's owner
// holds an OFD write lock on the region byte kSlotLockBase + slot, which
// the kernel drops when the owner's last descriptor closes, on death
// included. A slot that names a pid and whose byte nobody holds is stale:
// its process died without closing the pool. A pid alone would mislead
// once the kernel gives it to another process, and a dead process's pid
// plus boot id only tells a reboot apart. A forked child's copy of the
// descriptor, or of the region's mapping, would keep the parent's locks
// held after the parent died, so the child gets no mapping
// (MADV_DONTFORK) and its descriptor is pointed at /dev/null as the fork
// returns there (a store must not be used across fork).
//
// Locks on the region file, all OFD: byte 0 (the init lock) is held for
// writing while a process makes, joins or removes the region, and for
// reading while one reads the table; byte 1 (the use lock) is held for
// reading by every attached process, so whoever takes it for writing
// knows nobody is attached.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pmstore/env/env.h"
#include "pmstore/share/change_ring.h"
#include "pmstore/share/cross_process_turn.h"
#include "pmstore/share/leaf_image_ring.h"

namespace pmstore::internal {

// Where lock regions live: a tmpfs every process of the machine sees.
inline constexpr const char* kLockRegionDirectory = "/dev/shm";
inline constexpr uint32_t kReaderSlots = 1024;

// One slot of the reader table, as ListReaders reads it.
struct ReaderSlotInfo {
  uint32_t slot = 0;
  int64_t pid = 0;
  bool writable = false;                  // opened for writing (else read-only)
  bool stale = false;                     // its process is gone; ClearStaleReaders frees it
  int64_t opened_unix_ns = 0;             // when it was taken (CLOCK_REALTIME)
  std::optional<uint64_t> pinned_commit;  // the oldest commit its open reads
  std::optional<uint64_t> last_commit;    // a writable open's newest commit
};

// The lock region of the pool file `pool_st` (its stat): the path of the
// region file.
std::string LockRegionPath(const struct stat& pool_st);

// This process's slot in a pool's reader table, held from Attach until
// destruction, which frees the slot and, when no other process is
// attached, removes the region. Thread-compatible.
class ReaderSlot {
 public:
  // Joins (or makes) the region of the pool open as `pool_fd` and takes a
  // free or stale slot. The region file gets the pool file's permission
  // bits. ResourceExhausted when every slot is held by a live process;
  // FailedPrecondition when the region is of another layout version (an
  // older or newer pmstore has the pool open); the failing call's error
  // otherwise (no /dev/shm, no permission to write the region).
  static absl::StatusOr<std::unique_ptr<ReaderSlot>> Attach(env::Env* env, int pool_fd, bool writable);

  ~ReaderSlot();
  ReaderSlot(const ReaderSlot&) = delete;
  ReaderSlot& operator=(const ReaderSlot&) = delete;

  uint32_t index() const { return index_; }
  // Publishes the oldest commit that any pin, snapshot, iterator or
  // transaction of this open reads (nullopt: none), for `pmstore readers`
  // and for the writer's rule on reusing freed space, and the newest (or
  // a newer one), for its rule on copying leaf images (NewestOtherPin).
  // Both or neither. Not in a forked child (the region is not mapped
  // there).
  void PublishPinned(std::optional<uint64_t> oldest, std::optional<uint64_t> newest);
  // A writable open publishes the newest commit it made (or found at
  // open), for `pmstore readers`, where a pin's lag behind it shows. Not in
  // a forked child.
  void PublishLastCommit(uint64_t commit);
  // The oldest commit pinned by any open of the pool, in any process, this
  // one included (nullopt: none): space freed by a later commit is
  // reusable only once this has reached it. A slot whose process died
  // counts until it is cleared or taken again. The writer calls it after
  // it published the commit whose freed space it would release. Not in a
  // forked child.
  std::optional<uint64_t> OldestPinned() const;
  // The newest commit an open of another slot pins (a dead one's counts
  // too; nullopt: none pins): a writer that has announced a commit
  // (ChangeRing::BeginApplying) asks, to copy the image of a leaf only
  // when some other process may read the leaf as it is, i.e. pins a commit
  // at or after the leaf's last change. Relaxed loads, no fence (one per
  // commit cost a durable Put 7 %): a reader that pins as the
  // announcement is still on its way may be missed, and its snapshot then
  // says Aborted at a leaf that commit changed; it never reads a wrong one.
  std::optional<uint64_t> NewestOtherPin() const;
  // The reader's half of that rule, for a reader of another process than
  // the writer's, which reads the pool as the writer changes it: pins the
  // newest commit published in `ring` (0 when none is) and returns it.
  // LMDB's store-then-recheck: the pin is stored, then the published
  // commit loaded again, until they agree; with OldestPinned's order
  // either the writer sees the pin or the reader sees the newer commit,
  // so no space the reader may reach is reused under it. Not in a forked
  // child.
  uint64_t PinNewestPublished(const ChangeRing& ring);
  // Frees the stale slots of this slot's region (ClearStaleReaders, from
  // an open of the pool): a writer whose freed space a dead process's pin
  // holds back gets it back, as LMDB's writer runs mdb_reader_check. How
  // many it freed.
  absl::StatusOr<int> ClearStale();
  const std::string& region_path() const { return path_; }
  // The pool's writer turn, in this slot's mapping: valid while the slot
  // is, and not in a forked child.
  CrossProcessTurn cross_process_turn() const { return CrossProcessTurn(region_, path_); }
  // The pool's change ring, likewise.
  ChangeRing change_ring() const { return ChangeRing(region_, path_); }
  // The pool's leaf image ring, likewise.
  LeafImageRing leaf_images() const { return LeafImageRing(region_, env_, fd_); }

 private:
  ReaderSlot(env::Env* env, std::string path, int fd, void* region, uint32_t index, uint64_t fork_generation);

  env::Env* env_;
  std::string path_;
  int fd_;
  void* region_;
  uint32_t index_;
  uint64_t fork_generation_;  // a child forked since may not free the parent's slot
};

// The held and stale slots of the pool file `pool_st` (its stat), in slot
// order; empty when no process has the pool open (the region does not
// exist). Needs only read permission on the region.
absl::StatusOr<std::vector<ReaderSlotInfo>> ListReaders(env::Env* env, const struct stat& pool_st);

// Frees the stale slots of the pool file `pool_st`, as mdb_reader_check
// does, and returns their count (0 when the region does not exist).
// PermissionDenied when this user may not write the region.
absl::StatusOr<int> ClearStaleReaders(env::Env* env, const struct stat& pool_st);

// Removes the lock region of the pool file `pool_st` (its stat) when no
// process is attached to it: what processes that died with the pool open
// left, which nothing else removes once the pool itself is gone
// (Store::Destroy). OK when there is none or a process is attached.
absl::Status RemoveLeftoverRegion(env::Env* env, const struct stat& pool_st);

// How long a region nobody is attached to is kept: its stale slots name
// the processes that died with the pool open (pmstore readers), until the
// next open of the pool makes it anew.
inline constexpr int64_t kLeftoverRegionAgeNs = int64_t{24} * 3600 * 1'000'000'000;

// The lock regions in kLockRegionDirectory (paths), `except` aside.
std::vector<std::string> RegionFiles(const std::string& except);

// Removes those of the regions at `paths` that nobody is attached to and
// nobody has attached to for kLeftoverRegionAgeNs before `now_unix_ns`:
// those of pools whose processes were killed, which may be long gone
// (each keeps the pages it reserved, 1.7 MB and more, in a tmpfs that is
// memory). A region being made, joined or left at that moment, one of
// another layout version, or one this user may not write is passed over.
// How many were removed. Each open that makes its pool's region removes
// the leftovers of RegionFiles.
int RemoveLeftoverRegions(env::Env* env, const std::vector<std::string>& paths, int64_t now_unix_ns);

}  // namespace pmstore::internal
