// pmstore: a crash-consistent key/object store in a pool file that is
// mapped into memory, 2 MiB aligned, and persisted with cache-line flushes
// where the media allows it (see doc/STORE.md and doc/FORMAT.md).
//
//   auto store = pmstore::Store::Open("/mnt/pmem/pool", {.create_if_missing = true});
//   if (!store.ok()) return store.status();
//   absl::Status s = (*store)->Put({}, "key", "value");
//
// Thread-safety: every method may be called from any number of threads at
// once. Readers (Get, MultiGet, Contains, iterators, GetStats, CheckNow)
// never block each other, with one exception: after an open from the
// separator image (a clean close) the first write, GetStats or CheckNow
// loads the allocator's view of the pool, and keeps readers out while it
// does (12 ms at 10 M keys, doc/FORMAT.md "Separator image"). Writers
// (Put, Delete, Write, a transaction's Commit, Sync, Close) take turns; GetSnapshot and
// releasing a snapshot (so NewIterator and an
// iterator's destruction too) take a writer's turn for a moment. A
// writer keeps readers out while it stages its write in memory and while
// it applies its commit (microseconds); it lets them in while it waits for
// an msync (page granularity), except for a write that splits or empties
// an index leaf (about one new key in 25). The fence at cache-line
// granularity, shorter than letting readers in and out, keeps them out.
// Sync and Close let readers in while they write back, and keep them out
// only for the bookkeeping at the end. At page granularity, where every
// durable commit is an msync, durable writes that wait behind another
// thread's commit are committed together with the next one (group
// commit): one msync for all of them, each returning once that commit is
// durable; a write that fails in such a group (the pool full, say) is
// retried alone, so its failure is no other write's. Readers see a write once it is
// acknowledged, and never a write that failed. One process at a time may
// open a pool for writing: the file is locked; any number of others may
// open it read-only (Options::read_only) beside it, and each of their read
// calls sees every commit made before it began (options.h says what they
// cost and what they cannot do yet); Options::exclusive keeps an open
// alone with the pool.
//
// Fork: a store must not be used across fork (LMDB's rule): its mapping
// and lock are shared with the parent, which goes on using them. In a
// child forked after the open, every call returns FailedPrecondition
// (saying so) and changes nothing; GetStats returns only the path;
// destroying the store there persists nothing and leaves the parent's
// pool alone. Open the pool again in the child instead.
//
// Errors, as absl::Status with a one-line message naming the file:
//   NotFound            Get on a missing key; Open on a missing file
//                       without create_if_missing
//   AlreadyExists       Open with error_if_exists on an existing file;
//                       CopyTo onto an existing file
//   InvalidArgument     key longer than kMaxKeySize; not a pool (bad
//                       magic); a batch too large for one commit; a
//                       read through another store's snapshot
//   FailedPrecondition  unsupported format version; granularity weaker
//                       than required; the pool is open for writing
//                       in another process (to a writable open), or
//                       exclusively, or an exclusive open finds it open
//                       there (the message names a pid and how it holds
//                       the pool), or already open in this process
//                       (a process opens a pool once, as LMDB does);
//                       any call after Close; any call in
//                       a child forked after the open (below)
//   PermissionDenied    a write or Sync on a read-only open; a writable
//                       open of a file the user may not write (the
//                       message says to open it read-only)
//   Aborted             a snapshot, iterator or transaction of a read-only
//                       open reached a leaf that the writer of another
//                       process changed after it began, and the leaf
//                       image ring no longer holds it as it was: some
//                       32 000 leaf images recorded since; or the next
//                       writable open recovered the pool in place since
//                       (the writer died inside a commit) (begin it
//                       again)
//   Unavailable         a read of a read-only open met a leaf left
//                       mid-commit for over a second: the writer of
//                       another process died inside a commit
//   DataLoss            truncated file; checksum failure
//   ResourceExhausted   the pool is full and may not grow further, or the
//                       file system is full when it grows; the failed
//                       write changed nothing and later writes are
//                       accepted (an msync or fdatasync that fails for lack
//                       of space is a failure to persist, below)
//   others              a failing system call, named with the file and
//                       strerror, e.g. "msync(/mnt/pool, 4096 bytes at
//                       offset 8192): Input/output error"
//
// A failure to make data durable (msync, fdatasync, or fallocate and the
// ftruncate that undoes it while the pool grows, for any reason but a full
// file system) fails the write, Sync or Close that needed it, and poisons
// the store: every later Put, Delete, Write and Sync returns that error
// (same code, the message says so) until the pool is reopened; reads go on
// and see the state before the failed write; Close returns it too. Nothing
// acknowledged before is lost: reopen once the device or file system is
// fixed (after a remount: until then the page cache may hold pages the
// device refused), and the pool recovers to a state that holds every
// acknowledged write; the failed write itself may or may not be there,
// whole or not at all, like a write in flight at a crash. No I/O error
// makes the library abort the process.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pmstore/iterator.h"
#include "pmstore/options.h"
#include "pmstore/pinned_value.h"
#include "pmstore/snapshot.h"
#include "pmstore/stats.h"
#include "pmstore/transaction.h"
#include "pmstore/write_batch.h"

namespace pmstore {

inline constexpr size_t kMaxKeySize = 64 * 1024;

// One open of a pool, as the pool's reader table lists it (Store::Readers;
// LMDB's mdb_reader_list). Every open of the pool by any process holds a
// slot until it closes.
struct ReaderInfo {
  uint32_t slot = 0;
  int64_t pid = 0;
  bool writable = false;       // opened for writing; else read-only
  bool stale = false;          // its process is gone without closing the pool
  int64_t opened_unix_ns = 0;  // when it opened the pool (CLOCK_REALTIME)
  // The oldest commit that a PinnedValue, snapshot, iterator or
  // transaction of that open still reads (LMDB's reader txnid; compare
  // Snapshot::sequence); none when nothing of it reads. Space freed by
  // later commits waits for it. After the oldest is released while
  // younger ones remain, an older one may show until that open's next
  // commit.
  std::optional<uint64_t> pinned_commit;
  // For a writable open, the newest commit it made, or found when it
  // opened the pool (LMDB's last transaction id); none for a read-only
  // open. Its pins, and those of other opens, lag behind it: a pin far
  // behind keeps the space of every commit since.
  std::optional<uint64_t> last_commit;
};

// What Store::Check found. clean() is true when problems is empty.
struct CheckReport {
  uint64_t keys = 0;
  uint64_t leaves = 0;
  uint64_t records_verified = 0;
  uint64_t bytes_verified = 0;
  std::vector<std::string> problems;  // one line each
  bool clean() const { return problems.empty(); }
};

class Store {
 public:
  // Opens (or creates, per `options`) the pool at `path`, replays the
  // commit that a crash may have left half applied, and locks the file.
  // Open reads the index in place: after a clean close through the
  // separator image the close wrote (no walk; Stats says which), else by
  // walking the leaf chain once (about one leaf per 30 keys), never the
  // records.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& path, const Options& options);

  // Removes the pool at `path`, as RocksDB's DestroyDB: a pool file is
  // unlinked (the removal made durable); on device DAX the superblock's
  // magic is erased durably, so the device holds no pool and an open with
  // create_if_missing formats it anew. Refuses a pool open anywhere, in
  // this process too (FailedPrecondition naming the holder), and a file or
  // device that holds no pool's magic (InvalidArgument; a damaged pool
  // whose magic is intact is removed); NotFound when nothing is at `path`
  // or the device holds no pool. The pool's reader table goes too when
  // processes that died with the pool open left it behind.
  static absl::Status Destroy(const std::string& path);

  // Verifies every checksum and structure of the pool at `path` without
  // changing it: opened read-only (Options::read_only), so it needs only
  // read permission and may run beside other opens of other processes.
  // Beside a writable one it checks the newest commit, holding the
  // writer's next commit off until it is done (CheckNow); an exclusive
  // open refuses it. A pool a crash left mid-commit is checked as recovery
  // leaves it. A pool on device DAX, whose read-only open cannot recover
  // it, is opened for writing when it needs recovery: a commit a crash cut
  // short is then recovered in place before the check. A status that is
  // not OK means the pool could not be examined at all (missing, not a
  // pool, open exclusively).
  static absl::StatusOr<CheckReport> Check(const std::string& path);

  // The reader table of the pool at `path`: one entry per open of it by
  // any process, in slot order, with the slots of processes that died
  // without closing it marked stale. Reads the table only, never the pool,
  // so it answers while other processes hold the pool, and needs read
  // permission alone. Empty when no process has the pool open. NotFound
  // when nothing is at `path`; InvalidArgument for a directory. An open
  // that could not reach the table (no /dev/shm, no permission to write
  // the table) is not listed; doc/STORE.md says when.
  static absl::StatusOr<std::vector<ReaderInfo>> Readers(const std::string& path);

  // Frees the stale slots of the pool at `path` (LMDB's mdb_reader_check)
  // and returns how many. An open takes a stale slot anyway, and a write
  // that finds the pool full while a stale slot's pin holds space back
  // clears them itself; clearing them keeps Readers to the living.
  // PermissionDenied when this user may not write the table (it has the
  // pool file's permission bits).
  static absl::StatusOr<int> ClearStaleReaders(const std::string& path);

  // Closes the store if Close was not called, as Close does; a failure it
  // cannot return is printed on stderr. Pinned values, iterators and
  // snapshots must be gone.
  virtual ~Store() = default;

  // Stores `value` under `key`, replacing any old value. Durable on return
  // when options.sync. Keys: 0..kMaxKeySize bytes. Values: any size the
  // pool can hold; values of 2 MiB and more start 2 MiB aligned;
  // values of 1-2 MiB and the tails of larger ones take 64 KiB pages.
  virtual absl::Status Put(const WriteOptions& options, std::string_view key, std::string_view value) = 0;
  // Removes `key`; OK when it was absent too.
  virtual absl::Status Delete(const WriteOptions& options, std::string_view key) = 0;
  // Applies all of `batch` as one commit: all or nothing, also across a crash.
  virtual absl::Status Write(const WriteOptions& options, const WriteBatch& batch) = 0;

  // Copies the value of `key` (as of options.snapshot, when set) into
  // *value. NotFound (and *value untouched) when absent; that status has
  // no message, so a miss allocates nothing.
  virtual absl::Status Get(const ReadOptions& options, std::string_view key, std::string* value) = 0;
  // The value of `key` in place, valid while *pinned is held (also after
  // options.snapshot is released). NotFound when absent.
  virtual absl::Status Get(const ReadOptions& options, std::string_view key, PinnedValue* pinned) = 0;
  virtual absl::StatusOr<bool> Contains(std::string_view key) = 0;

  // Get for every key of `keys` at once (RocksDB's MultiGet): returns one
  // status per key, the one Get would return (OK, NotFound, DataLoss with
  // verify_checksums, FailedPrecondition after Close). *values gets
  // keys.size() entries: (*values)[i] is keys[i]'s value when the status
  // is OK, else empty. A key that appears twice is looked up twice.
  //
  // Faster than a loop of Get from a few keys on: the lookups' memory
  // accesses (index leaf, slot, record) are issued for a chunk of keys
  // stage by stage before any is waited on, so their cache misses overlap
  // instead of following one another (doc/STORE.md, "MultiGet").
  //
  // Each value is whole and acknowledged, as with Get. Without
  // options.snapshot, not a snapshot of the batch: as with that many Gets,
  // a write made meanwhile may be seen for some keys and not for others
  // (writers are let in between chunks of 32 keys). With one, every key
  // is read as of that snapshot.
  virtual std::vector<absl::Status> MultiGet(const ReadOptions& options, std::span<const std::string_view> keys,
                                             std::vector<std::string>* values) = 0;
  // The same without copies, in RocksDB's array form: `keys`, `values`
  // and `statuses` hold `count` entries each; values[i] is reset, then
  // pinned as Get's PinnedValue form pins it when statuses[i] is OK.
  virtual void MultiGet(const ReadOptions& options, size_t count, const std::string_view* keys, PinnedValue* values,
                        absl::Status* statuses) = 0;

  // An iterator over the keys selected by `range` as of options.snapshot,
  // or, without one, as of a snapshot it takes itself and releases when
  // destroyed; see iterator.h.
  virtual std::unique_ptr<Iterator> NewIterator(const ReadOptions& options, const IterateOptions& range) = 0;

  // The state after the last acknowledged commit, for reads that name it
  // in ReadOptions::snapshot (snapshot.h). Never fails; waits for a
  // write in progress to finish. Destroying it releases it. Made after
  // Close, it reads as the store does then (FailedPrecondition).
  virtual std::unique_ptr<Snapshot> GetSnapshot() = 0;

  // A read-write transaction that begins at the state after the last
  // acknowledged commit (transaction.h). Never fails; waits for a write in
  // progress to finish, as GetSnapshot does (it holds a snapshot). Made
  // after Close, its reads and Commit return FailedPrecondition.
  virtual std::unique_ptr<Transaction> BeginTransaction(const TransactionOptions& options) = 0;
  std::unique_ptr<Transaction> BeginTransaction() { return BeginTransaction(TransactionOptions()); }

  // Makes writes made with sync=false durable. Not OK when that failed
  // (the store is then poisoned, see above) or when the store was already
  // poisoned or closed.
  virtual absl::Status Sync() = 0;

  // Makes every write durable, then unmaps the pool and unlocks the file,
  // so that another process may open it. OK when everything acknowledged
  // is durable; else the failure (a poisoned store returns its error).
  // Every later call, Close included, returns the same status (Close) or
  // FailedPrecondition (the others). Pinned values, iterators and
  // snapshots must be gone first. Otherwise: a pinned value's view points
  // into the unmapped pool; an iterator or a snapshot reads
  // FailedPrecondition from then on, and must still be destroyed before
  // the store is.
  virtual absl::Status Close() = 0;

  virtual Stats GetStats() = 0;
  // Check() on the open store (takes the read lock while it runs).
  virtual CheckReport CheckNow() = 0;

  // --- Copy (doc/STORE.md "Copy") ---
  // Copies the store as of `options.snapshot` (nullptr: as of a snapshot
  // CopyTo takes itself, when it starts) into a new pool at `dest_path`,
  // while this and other threads go on reading and writing. The copy is
  // written under a temporary name beside `dest_path`
  // (`DEST.copying.PID.N`), made durable, and only then renamed to
  // `dest_path` (RENAME_NOREPLACE, then the directory is fsynced):
  // `dest_path` never names a half-made pool, and on any failure nothing
  // is left behind. CopyTo is a reader of this store: it blocks no
  // other reader, and keeps writers out only while its iterator copies a
  // few hundred entries at a time. The new pool has the
  // source's geometry: its current size as initial size (allocated up
  // front, so a full disk fails at once; its close may grow it for the
  // separator image, doc/FORMAT.md) and its maximum size (doubled when the
  // source is a format version 1 pool: the copy, in the current format,
  // converts it), and the source file's permission bits (less the umask);
  // it is written packed, in key order. `progress`, when set, is called on the
  // calling thread after each chunk written (about every 4 MiB or 1024
  // keys) with the keys and key+value bytes copied so far.
  // Values are copied as an iterator reads them, and the copy gets
  // checksums of its own: run CheckNow first when the source may be
  // damaged.
  // `dest_path` may be a device DAX device that holds no pool: the copy
  // fills it, hidden (its magic erased) until the copy is durable, so a
  // crash midway leaves a device that holds no pool.
  // Errors: AlreadyExists when `dest_path` exists, or is a device that
  // holds a pool (it is left untouched);
  // ResourceExhausted when the file system is full; FailedPrecondition
  // after Close; DataLoss when the source is damaged; others as Open's
  // for the destination (a missing directory is NotFound).
  using CopyProgress = std::function<void(uint64_t keys_copied, uint64_t bytes_copied)>;
  virtual absl::Status CopyTo(const ReadOptions& options, const std::string& dest_path,
                              const CopyProgress& progress) = 0;
  absl::Status CopyTo(const ReadOptions& options, const std::string& dest_path) {
    return CopyTo(options, dest_path, nullptr);
  }
  absl::Status CopyTo(const std::string& dest_path) { return CopyTo(ReadOptions(), dest_path, nullptr); }

  // Convenience overloads with default options.
  absl::Status Put(std::string_view key, std::string_view value) { return Put(DefaultWrite(), key, value); }
  absl::Status Delete(std::string_view key) { return Delete(DefaultWrite(), key); }
  absl::Status Write(const WriteBatch& batch) { return Write(DefaultWrite(), batch); }
  absl::Status Get(std::string_view key, std::string* value) { return Get(ReadOptions(), key, value); }

 protected:
  Store() = default;
  virtual WriteOptions DefaultWrite() const = 0;
};

}  // namespace pmstore
